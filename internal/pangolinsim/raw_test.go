package pangolinsim_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// createRaw creates a raw resource and returns its id.
func createRaw(t *testing.T, s *simtest.Server, name, mode string, port int) int {
	t.Helper()
	r := do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"`+name+`","mode":"`+mode+`","proxyPort":`+strconv.Itoa(port)+`}`)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	return int(r.data()["resourceId"].(float64))
}

// TestRawResourceRequests: each fact of the reference's section 15, request by request.
func TestRawResourceRequests(t *testing.T) {
	const create = "/v1/org/interop/resource"
	cases := []struct {
		name        string
		deny        bool // flags.allow_raw_resources: false
		method      string
		path        string // "" is the raw resource "pg" the case starts with
		body        string
		wantStatus  int
		wantMessage string
	}{
		{name: "a TCP resource is created", method: "PUT", path: create, body: `{"name":"pg2","mode":"tcp","proxyPort":5433}`, wantStatus: 201, wantMessage: "Non-http resource created successfully"},
		{name: "a UDP resource is created", method: "PUT", path: create, body: `{"name":"dns","mode":"udp","proxyPort":5353}`, wantStatus: 201, wantMessage: "Non-http resource created successfully"},
		{name: "the deprecated http/protocol pair creates one too", method: "PUT", path: create, body: `{"name":"old","http":false,"protocol":"tcp","proxyPort":6000}`, wantStatus: 201, wantMessage: "Non-http resource created successfully"},
		{name: "a second resource on a port in use is accepted", method: "PUT", path: create, body: `{"name":"pg-dup","mode":"tcp","proxyPort":5432}`, wantStatus: 201, wantMessage: "Non-http resource created successfully"},
		{name: "port 0 is too small", method: "PUT", path: create, body: `{"name":"x","mode":"tcp","proxyPort":0}`, wantStatus: 400, wantMessage: `Validation error: Too small: expected number to be >=1 at "proxyPort"`},
		{name: "port 70000 is too big", method: "PUT", path: create, body: `{"name":"x","mode":"tcp","proxyPort":70000}`, wantStatus: 400, wantMessage: `Validation error: Too big: expected number to be <=65535 at "proxyPort"`},
		{name: "mode tcp without a port is an HTTP create", method: "PUT", path: create, body: `{"name":"x","mode":"tcp"}`, wantStatus: 400, wantMessage: `Validation error: Invalid input: expected string, received undefined at "domainId"`},
		{name: "a raw create knows no subdomain nor domainId", method: "PUT", path: create, body: `{"name":"x","mode":"tcp","proxyPort":5432,"subdomain":"a","domainId":"domain1"}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized keys: "subdomain", "domainId"`},
		{name: "mode http with a port is refused", method: "PUT", path: create, body: `{"name":"x","mode":"http","proxyPort":5432}`, wantStatus: 400, wantMessage: `Validation error: Invalid option: expected one of "tcp"|"udp" at "mode"`},
		{name: "enableProxy is no longer a key", method: "PUT", path: create, body: `{"name":"x","mode":"tcp","proxyPort":5432,"enableProxy":true}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "enableProxy"`},
		{name: "with the switch off, a create is refused", deny: true, method: "PUT", path: create, body: `{"name":"x","mode":"tcp","proxyPort":5432}`, wantStatus: 400, wantMessage: "Raw resources are not allowed"},
		{name: "the port moves", method: "POST", body: `{"proxyPort":5433,"proxyProtocol":true,"proxyProtocolVersion":2}`, wantStatus: 200, wantMessage: "Non-http Resource updated successfully"},
		{name: "sso is not a key of a raw resource", method: "POST", body: `{"sso":false}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "sso"`},
		{name: "nor is blockAccess", method: "POST", body: `{"blockAccess":true}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "blockAccess"`},
		{name: "nor a host", method: "POST", body: `{"subdomain":"a","domainId":"domain1"}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized keys: "subdomain", "domainId"`},
		{name: "the marks are set on a raw resource", method: "POST", body: `{"niceId":"pic-default-0123456789abcdef","name":"tcp:5432 (Service prod/db)"}`, wantStatus: 200, wantMessage: "Non-http Resource updated successfully"},
		{name: "an empty update is refused", method: "POST", body: `{}`, wantStatus: 400, wantMessage: "Validation error: At least one field must be provided for update"},
		{name: "with the switch off, the port cannot move", deny: true, method: "POST", body: `{"proxyPort":5441}`, wantStatus: 400, wantMessage: "Validation error: Cannot update proxyPort"},
		{name: "with the switch off, other updates still work", deny: true, method: "POST", body: `{"name":"renamed"}`, wantStatus: 200, wantMessage: "Non-http Resource updated successfully"},
		{name: "a raw resource is deleted as any other", method: "DELETE", wantStatus: 200, wantMessage: "Resource deleted successfully"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, pangolinsim.Options{DenyRawResources: tc.deny})
			pg := s.SeedResource(pangolinsim.Resource{Name: "pg", Mode: "tcp", ProxyPort: 5432, Enabled: true})
			path := tc.path
			if path == "" {
				path = "/v1/resource/" + strconv.Itoa(pg.ID)
			}
			r := do(t, s, tc.method, path, tc.body)
			assert.Equal(t, tc.wantStatus, r.Status, r.Body)
			assert.Equal(t, tc.wantMessage, r.message())
		})
	}
}

func TestRawResourceShapes(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	id := createRaw(t, s, "pg", "tcp", 5432)

	got := do(t, s, "GET", "/v1/resource/"+strconv.Itoa(id), "").data()
	for key, want := range map[string]any{"mode": "tcp", "proxyPort": float64(5432), "fullDomain": nil, "domainId": nil, "subdomain": nil, "ssl": false, "enabled": true} {
		assert.Equal(t, want, got[key], key)
	}

	updated := do(t, s, "POST", "/v1/resource/"+strconv.Itoa(id), `{"proxyPort":5433}`).data()
	assert.Equal(t, float64(5433), updated["proxyPort"])
	assert.Nil(t, updated["sso"], "the update answers with the row: the access columns are null")

	// The list shows the port and the mode of a raw resource, no host.
	createApp(t, s, "app", "app")
	list := do(t, s, "GET", "/v1/org/interop/resources", "").data()["resources"].([]any)
	require.Len(t, list, 2)
	byName := map[string]map[string]any{}
	for _, item := range list {
		m := item.(map[string]any)
		byName[m["name"].(string)] = m
	}
	assert.Equal(t, "tcp", byName["pg"]["mode"])
	assert.Equal(t, float64(5433), byName["pg"]["proxyPort"])
	assert.Nil(t, byName["pg"]["fullDomain"])
	assert.Equal(t, "http", byName["app"]["mode"])
	assert.Nil(t, byName["app"]["proxyPort"])

	// The protocol filter: tcp and udp are modes, https the HTTP resources with SSL.
	for protocol, want := range map[string]int{"tcp": 1, "udp": 0, "https": 1, "http": 0} {
		items := do(t, s, "GET", "/v1/org/interop/resources?protocol="+protocol, "").data()["resources"].([]any)
		assert.Len(t, items, want, protocol)
	}

	// A target needs no method, and its mode is the resource's.
	tg := do(t, s, "PUT", "/v1/resource/"+strconv.Itoa(id)+"/target", `{"siteId":1,"ip":"pg.db.svc","port":5432}`)
	require.Equal(t, http.StatusCreated, tg.Status, tg.Body)
	assert.Nil(t, tg.data()["method"])
	assert.Equal(t, "tcp", tg.data()["mode"])
}

func TestRawRouters(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	pg := createRaw(t, s, "pg", "tcp", 5432)
	dup := createRaw(t, s, "pg-dup", "tcp", 5432)
	dns := createRaw(t, s, "dns", "udp", 5353)
	empty := createRaw(t, s, "empty", "tcp", 7000) // no target: no router
	_ = empty
	for id, body := range map[int]string{
		pg:  `{"siteId":1,"ip":"pg.db.svc","port":5432}`,
		dup: `{"siteId":1,"ip":"pg2.db.svc","port":5432}`,
		dns: `{"siteId":1,"ip":"dns.kube-system.svc","port":53,"path":"/x","pathMatchType":"prefix"}`,
	} {
		r := do(t, s, "PUT", "/v1/resource/"+strconv.Itoa(id)+"/target", body)
		require.Equal(t, http.StatusCreated, r.Status, r.Body)
	}
	r := do(t, s, "POST", "/v1/resource/"+strconv.Itoa(dup), `{"proxyProtocol":true,"proxyProtocolVersion":2}`)
	require.Equal(t, http.StatusOK, r.Status, r.Body)

	want := []pangolinsim.RawRouter{
		{Name: "1-pg-router", ResourceID: pg, Protocol: "tcp", EntryPoint: "tcp-5432", Rule: "HostSNI(`*`)", Servers: []string{"pg.db.svc:5432"}},
		// A path, stored on a UDP target too, enters the router's name.
		{Name: "3-2fx-prefix-dns-router", ResourceID: dns, Protocol: "udp", EntryPoint: "udp-5353", Servers: []string{"dns.kube-system.svc:53"}},
		// Two resources on one port: two routers on one entry point.
		{Name: "2-pg-dup-router", ResourceID: dup, Protocol: "tcp", EntryPoint: "tcp-5432", Rule: "HostSNI(`*`)", Servers: []string{"pg2.db.svc:5432"}, ServersTransport: "pp-transport-v2@file"},
	}
	assert.ElementsMatch(t, want, s.RawRouters())
	assert.Empty(t, s.Routers(), "no HTTP router, and no badger, for a raw resource")

	var cfg map[string]json.RawMessage
	resp := do(t, s, "GET", pangolinsim.TraefikConfigPath, "")
	require.NoError(t, json.Unmarshal([]byte(resp.Body), &cfg))
	assert.JSONEq(t, `{"routers":{"1-pg-router":{"entryPoints":["tcp-5432"],"service":"1-pg-service","rule":"HostSNI(`+"`*`"+`)"},"2-pg-dup-router":{"entryPoints":["tcp-5432"],"service":"2-pg-dup-service","rule":"HostSNI(`+"`*`"+`)"}},
		"services":{"1-pg-service":{"loadBalancer":{"servers":[{"address":"pg.db.svc:5432"}]}},"2-pg-dup-service":{"loadBalancer":{"servers":[{"address":"pg2.db.svc:5432"}],"serversTransport":"pp-transport-v2@file"}}}}`, string(cfg["tcp"]))
	assert.JSONEq(t, `{"routers":{"3-2fx-prefix-dns-router":{"entryPoints":["udp-5353"],"service":"3-2fx-prefix-dns-service"}},
		"services":{"3-2fx-prefix-dns-service":{"loadBalancer":{"servers":[{"address":"dns.kube-system.svc:53"}]}}}}`, string(cfg["udp"]))
	assert.NotContains(t, cfg, "http")

	// enabled:false removes the router.
	r = do(t, s, "POST", "/v1/resource/"+strconv.Itoa(pg), `{"enabled":false}`)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	for _, rt := range s.RawRouters() {
		assert.NotEqual(t, pg, rt.ResourceID, "a disabled resource has no router")
	}
}

func TestRawResourceSwitchOffKeepsExistingRouters(t *testing.T) {
	s := newServer(t, pangolinsim.Options{DenyRawResources: true})
	pg := s.SeedResource(pangolinsim.Resource{Name: "pg", Mode: "tcp", ProxyPort: 5432, Enabled: true})
	s.SeedTarget(pangolinsim.Target{ResourceID: pg.ID, SiteID: 1, IP: "pg.db.svc", Port: 5432, Enabled: true})
	require.Len(t, s.RawRouters(), 1, "the switch refuses writes; what exists stays routed")
}
