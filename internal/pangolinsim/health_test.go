package pangolinsim_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// withNewtSite is a fake with the default local site (1) and a Newt site (2).
func withNewtSite(t *testing.T) *simtest.Server {
	return newServer(t, pangolinsim.Options{Sites: []pangolinsim.Site{
		{ID: 1, NiceID: "murky-merriams-shrew", Name: "k8s-local", Type: "local"},
		{ID: 2, NiceID: "edge-newt", Name: "edge", Type: "newt"},
	}})
}

// TestHealthCheckValidation replays the reference's section 13 table: what the server
// refuses, with its words.
func TestHealthCheckValidation(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	base := "/v1/resource/" + itoa(createApp(t, s, "app", "app"))
	const target = `"ip":"web.hc.svc","port":80,"method":"http","siteId":1`
	cases := []struct {
		name, hc    string
		wantStatus  int
		wantMessage string
	}{
		{"hcEnabled without hcHostname", `"hcEnabled":true`, 400, `Validation error: HcHostname is required when hcEnabled is true at "hcHostname"`},
		{"a blank hcHostname is none", `"hcEnabled":true,"hcHostname":"  "`, 400, `Validation error: HcHostname is required when hcEnabled is true at "hcHostname"`},
		{"hcInterval 0 is two issues", `"hcInterval":0`, 400, `Validation error: Too small: expected number to be >0 at "hcInterval"; Too small: expected number to be >=1 at "hcInterval"`},
		{"hcTimeout 0", `"hcTimeout":0`, 400, `Validation error: Too small: expected number to be >0 at "hcTimeout"; Too small: expected number to be >=1 at "hcTimeout"`},
		{"hcUnhealthyThreshold 0", `"hcUnhealthyThreshold":0`, 400, `Validation error: Too small: expected number to be >0 at "hcUnhealthyThreshold"; Too small: expected number to be >=1 at "hcUnhealthyThreshold"`},
		{"hcPort 0", `"hcPort":0`, 400, `Validation error: Too small: expected number to be >0 at "hcPort"`},
		{"an empty hcPath", `"hcPath":""`, 400, `Validation error: Too small: expected string to have >=1 characters at "hcPath"`},
		{"a header without a value", `"hcHeaders":[{"name":"a"}]`, 400, `Validation error: Invalid input: expected string, received undefined at "hcHeaders[0].value"`},
		{"free strings are stored", `"hcScheme":"gopher","hcMode":"nonsense","hcMethod":"BREW","hcPath":"no-slash"`, 201, "Target created successfully"},
		{"any hcStatus is stored", `"hcStatus":-1`, 201, "Target created successfully"},
		{"null is no value", `"hcInterval":null,"hcPath":null,"hcEnabled":false`, 201, "Target created successfully"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "PUT", base+"/target", `{`+target+`,`+tc.hc+`}`)
			assert.Equal(t, tc.wantStatus, r.Status, r.Body)
			assert.Equal(t, tc.wantMessage, r.message())
		})
	}
}

// TestHealthCheckStorage: no defaults, hcHeaders a string in the create and update
// answers and an array in GET and the list, an update that leaves hcEnabled out turns
// the check off.
func TestHealthCheckStorage(t *testing.T) {
	s := withNewtSite(t)
	rid := createApp(t, s, "app", "app")
	base := "/v1/resource/" + itoa(rid)

	created := do(t, s, "PUT", base+"/target", `{"ip":"web.hc.svc","port":80,"method":"http","siteId":2,"hcEnabled":true,"hcHostname":"web.hc.svc","hcHeaders":[{"name":"X-Probe","value":"1"}]}`)
	require.Equal(t, 201, created.Status, created.Body)
	d := created.data()
	for _, k := range []string{"hcInterval", "hcTimeout", "hcPath", "hcMode", "hcPort", "hcHealthyThreshold", "hcUnhealthyThreshold"} {
		assert.Nil(t, d[k], "%s: the server fills in no default", k)
	}
	assert.Equal(t, `[{"name":"X-Probe","value":"1"}]`, d["hcHeaders"], "a JSON string in the create answer")
	tid := strconv.Itoa(int(d["targetId"].(float64)))

	got := do(t, s, "GET", "/v1/target/"+tid, "").data()
	assert.Equal(t, []any{map[string]any{"name": "X-Probe", "value": "1"}}, got["hcHeaders"], "an array in GET")
	listed := do(t, s, "GET", base+"/targets", "").data()["targets"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{map[string]any{"name": "X-Probe", "value": "1"}}, listed["hcHeaders"], "an array in the list")

	updated := do(t, s, "POST", "/v1/target/"+tid, `{"siteId":2,"ip":"web.hc.svc","hcPath":"/healthz"}`)
	require.Equal(t, 200, updated.Status, updated.Body)
	assert.Equal(t, false, updated.data()["hcEnabled"], "left out of an update, hcEnabled is stored false")
	assert.Nil(t, updated.data()["hcHeaders"], "left out of an update, hcHeaders is stored null")
	assert.Equal(t, "web.hc.svc", updated.data()["hcHostname"], "other fields left out keep their values")
	assert.Equal(t, "/healthz", updated.data()["hcPath"])
}

// TestHealthCheckHealth: hcHealth after create and update by site type, and what
// Traefik serves of it (the reference's sections 6.1 and 13).
func TestHealthCheckHealth(t *testing.T) {
	const check = `"hcEnabled":true,"hcHostname":"web.hc.svc"`
	cases := []struct {
		name       string
		site       int
		create     string // hc fields of the create
		update     string // hc fields of an update; "" for none
		newtReport string // health a Newt report sets after the writes; "" for none
		wantHealth string
		wantServed bool
	}{
		{"no check: unknown, served", 1, `"hcEnabled":false`, "", "", "unknown", true},
		{"local site, check at create: unhealthy, left out", 1, check, "", "", "unhealthy", false},
		{"local site, any update: unknown, back in", 1, check, `"hcEnabled":true,"hcHostname":"web.hc.svc"`, "", "unknown", true},
		{"newt site, check at create: unhealthy until Newt reports", 2, check, "", "", "unhealthy", false},
		{"newt site, Newt reports healthy: served", 2, check, "", "healthy", "healthy", true},
		{"newt site, an update that keeps the check keeps the health", 2, check, `"hcEnabled":true,"hcPath":"/ready"`, "", "unhealthy", false},
		{"newt site, turned on by an update: unhealthy", 2, `"hcEnabled":false`, check, "", "unhealthy", false},
		{"newt site, turned off: unknown, back in", 2, check, `"hcEnabled":false`, "", "unknown", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := withNewtSite(t)
			rid := createApp(t, s, "app", "app")
			site := itoa(tc.site)
			r := do(t, s, "PUT", "/v1/resource/"+itoa(rid)+"/target", `{"ip":"web.hc.svc","port":80,"method":"http","siteId":`+site+`,`+tc.create+`}`)
			require.Equal(t, 201, r.Status, r.Body)
			tid := int(r.data()["targetId"].(float64))
			if tc.update != "" {
				r = do(t, s, "POST", "/v1/target/"+itoa(tid), `{"siteId":`+site+`,"ip":"web.hc.svc",`+tc.update+`}`)
				require.Equal(t, 200, r.Status, r.Body)
			}
			if tc.newtReport != "" {
				s.SetTargetHealth(tid, tc.newtReport)
			}
			got := do(t, s, "GET", "/v1/target/"+itoa(tid), "").data()
			assert.Equal(t, tc.wantHealth, got["hcHealth"])
			assert.Equal(t, tc.wantHealth, s.Targets(rid)[0].HCHealth)
			served := len(s.Routers()) == 1 && len(s.Routers()[0].Servers) == 1
			assert.Equal(t, tc.wantServed, served, "in its Traefik service: %v", s.Routers())
		})
	}
}

// TestHealthyBackends: with Options.HealthyBackends, a Newt agent reports every
// checked target on an online Newt site healthy once it is written; the write's own
// answer is the server's, from before the report. Other sites are untouched.
func TestHealthyBackends(t *testing.T) {
	const check = `"hcEnabled":true,"hcHostname":"web.hc.svc"`
	cases := []struct {
		name       string
		site       int
		create     string
		update     string // hc fields of an update; "" for none
		wantHealth string
	}{
		{"newt site, check at create: healthy once written", 2, check, "", "healthy"},
		{"newt site, turned on by an update: healthy", 2, `"hcEnabled":false`, check, "healthy"},
		{"newt site, no check: unknown", 2, `"hcEnabled":false`, "", "unknown"},
		{"offline newt site: no agent reports", 3, check, "", "unhealthy"},
		{"local site: no agent reports", 1, check, "", "unhealthy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, pangolinsim.Options{HealthyBackends: true, Sites: []pangolinsim.Site{
				{ID: 1, NiceID: "murky-merriams-shrew", Name: "k8s-local", Type: "local"},
				{ID: 2, NiceID: "edge-newt", Name: "edge", Type: "newt"},
				{ID: 3, NiceID: "gone-newt", Name: "gone", Type: "newt", Offline: true},
			}})
			rid := createApp(t, s, "app", "app")
			site := itoa(tc.site)
			r := do(t, s, "PUT", "/v1/resource/"+itoa(rid)+"/target", `{"ip":"web.hc.svc","port":80,"method":"http","siteId":`+site+`,`+tc.create+`}`)
			require.Equal(t, 201, r.Status, r.Body)
			if tc.create == check {
				assert.Equal(t, "unhealthy", r.data()["hcHealth"], "the create answers before Newt reports")
			}
			tid := int(r.data()["targetId"].(float64))
			if tc.update != "" {
				r = do(t, s, "POST", "/v1/target/"+itoa(tid), `{"siteId":`+site+`,"ip":"web.hc.svc",`+tc.update+`}`)
				require.Equal(t, 200, r.Status, r.Body)
			}
			got := do(t, s, "GET", "/v1/target/"+itoa(tid), "").data()
			assert.Equal(t, tc.wantHealth, got["hcHealth"])
		})
	}
}
