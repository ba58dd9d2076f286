package pangolinsim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// reply is one decoded answer. Body is the raw text, Env the JSON envelope (nil for HTML).
type reply struct {
	Status int
	Body   string
	Env    map[string]any
}

func (r reply) message() string {
	m, _ := r.Env["message"].(string)
	return m
}

func (r reply) data() map[string]any {
	d, _ := r.Env["data"].(map[string]any)
	return d
}

// opt changes a raw request: headers, mostly.
type opt func(*http.Request)

func withToken(token string) opt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

func withHeader(k, v string) opt { return func(r *http.Request) { r.Header.Set(k, v) } }

func noContentType(r *http.Request) { r.Header.Del("Content-Type") }

func noAuth(r *http.Request) { r.Header.Del("Authorization") }

// do sends a raw request with the root key and, with a body, a JSON Content-Type.
func do(t *testing.T, s *simtest.Server, method, path, body string, opts ...opt) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+pangolinsim.RootKey.Token())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := reply{Status: resp.StatusCode, Body: string(b)}
	_ = json.Unmarshal(b, &out.Env)
	return out
}

func newServer(t *testing.T, opts pangolinsim.Options) *simtest.Server {
	s := simtest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// createApp creates app.example.com and returns its id.
func createApp(t *testing.T, s *simtest.Server, name, subdomain string) int {
	t.Helper()
	r := do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"`+name+`","mode":"http","subdomain":"`+subdomain+`","domainId":"domain1"}`)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	return int(r.data()["resourceId"].(float64))
}

func TestProtocol(t *testing.T) {
	orgKey := pangolinsim.Key{ID: "orgkey000000001", Secret: "s3cret", Org: "interop"}
	readOnly := pangolinsim.Key{ID: "readonly0000001", Secret: "s3cret", Org: "interop", Actions: []string{"listResources"}}
	s := newServer(t, pangolinsim.Options{Keys: []pangolinsim.Key{pangolinsim.RootKey, orgKey, readOnly}})
	const create = "/v1/org/interop/resource"

	cases := []struct {
		name         string
		method, path string
		body         string
		opts         []opt
		wantStatus   int
		wantMessage  string // the envelope's message, exactly
		wantContains string // for non-JSON bodies
	}{
		{name: "health answers without a key", method: "GET", path: "/v1/", opts: []opt{noAuth}, wantStatus: 200, wantMessage: "Healthy"},
		{name: "a request without a key is refused", method: "GET", path: "/v1/org/interop/resources", opts: []opt{noAuth}, wantStatus: 401, wantMessage: "API key required"},
		{name: "a scheme other than Bearer counts as no key", method: "GET", path: "/v1/org/interop/resources", opts: []opt{withHeader("Authorization", "Basic abc")}, wantStatus: 401, wantMessage: "API key required"},
		{name: "an unknown key id is invalid", method: "GET", path: "/v1/org/interop/resources", opts: []opt{withToken("nosuchkey000000.x")}, wantStatus: 401, wantMessage: "Invalid API key"},
		{name: "a wrong secret is invalid", method: "GET", path: "/v1/org/interop/resources", opts: []opt{withToken(pangolinsim.RootKey.ID + ".wrong")}, wantStatus: 401, wantMessage: "Invalid API key"},
		{name: "a token without a dot is an invalid key", method: "GET", path: "/v1/org/interop/resources", opts: []opt{withToken("nodotatall")}, wantStatus: 401, wantMessage: "Invalid API key"},
		{name: "an existing key id without its secret is a server error", method: "GET", path: "/v1/org/interop/resources", opts: []opt{withToken(pangolinsim.RootKey.ID)}, wantStatus: 500, wantMessage: "An error occurred checking API key"},
		{name: "an existing key id with an empty secret is invalid", method: "GET", path: "/v1/org/interop/resources", opts: []opt{withToken(pangolinsim.RootKey.ID + ".")}, wantStatus: 401, wantMessage: "Invalid API key"},
		{name: "an unknown route needs a key first", method: "GET", path: "/v1/nothing/here", opts: []opt{noAuth}, wantStatus: 401, wantMessage: "API key required"},
		{name: "an unknown route is an HTML 404", method: "GET", path: "/v1/org/interop/resource/some-nice-id", wantStatus: 404, wantContains: "<pre>Cannot GET /v1/org/interop/resource/some-nice-id</pre>"},
		{name: "the nested target delete route does not exist", method: "DELETE", path: "/v1/resource/1/target/1", wantStatus: 404, wantContains: "<pre>Cannot DELETE /v1/resource/1/target/1</pre>"},
		{name: "an unknown method on a known path is an HTML 404", method: "PATCH", path: "/v1/resource/1", body: "{}", wantStatus: 404, wantContains: "Cannot PATCH /v1/resource/1"},
		{name: "an org key cannot act in another org", method: "GET", path: "/v1/org/other/resources", opts: []opt{withToken(orgKey.Token())}, wantStatus: 403, wantMessage: "Key does not have access to this organization"},
		{name: "a key without the action is refused", method: "GET", path: "/v1/org/interop/domains", opts: []opt{withToken(readOnly.Token())}, wantStatus: 403, wantMessage: "Key does not have permission perform this action"},
		{name: "a key without the action still gets 404 for a missing object", method: "DELETE", path: "/v1/resource/99999", opts: []opt{withToken(readOnly.Token())}, wantStatus: 404, wantMessage: "Resource with ID 99999 not found"},
		{name: "the root key lists a missing org as empty", method: "GET", path: "/v1/org/nope/resources", wantStatus: 200, wantMessage: "Resources retrieved successfully"},
		{name: "creating in a missing org is 404", method: "PUT", path: "/v1/org/nope/resource", body: `{"name":"a","mode":"http","domainId":"domain1"}`, wantStatus: 404, wantMessage: "Organization with ID nope not found"},
		{name: "a body without Content-Type is a bare 500", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1"}`, opts: []opt{noContentType}, wantStatus: 500, wantMessage: "An error occurred"},
		{name: "malformed JSON is a 400 before authentication", method: "PUT", path: create, body: `{x`, opts: []opt{noAuth}, wantStatus: 400, wantContains: "JSON at position 1"},
		{name: "an unknown key is refused", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1","foo":1}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "foo"`},
		{name: "create refuses a niceId", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1","niceId":"my-nice"}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "niceId"`},
		{name: "several unknown keys are listed in input order", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1","sso":false,"enabled":false}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized keys: "sso", "enabled"`},
		{name: "create refuses blockAccess", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1","blockAccess":true}`, wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "blockAccess"`},
		{name: "an empty subdomain is refused", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1","subdomain":""}`, wantStatus: 400, wantMessage: "Validation error: Invalid subdomain format; Subdomain must be at least 1 character long"},
		{name: "an invalid subdomain label is refused", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"domain1","subdomain":"bad_sub"}`, wantStatus: 400, wantMessage: "Validation error: Invalid subdomain"},
		{name: "an unknown domain is refused", method: "PUT", path: create, body: `{"name":"a","mode":"http","domainId":"nope"}`, wantStatus: 400, wantMessage: "Domain with ID nope not found"},
		{name: "a missing domain id is refused", method: "PUT", path: create, body: `{"name":"a","mode":"http"}`, wantStatus: 400, wantMessage: `Validation error: Invalid input: expected string, received undefined at "domainId"`},
		{name: "create needs a mode", method: "PUT", path: create, body: `{"name":"a","domainId":"domain1"}`, wantStatus: 400, wantMessage: "mode is required when deprecated fields are not provided"},
		{name: "http with udp is not a combination", method: "PUT", path: create, body: `{"name":"a","http":true,"protocol":"udp","domainId":"domain1"}`, wantStatus: 400, wantMessage: "Invalid deprecated http/protocol combination"},
		{name: "resources refuse limit and offset", method: "GET", path: "/v1/org/interop/resources?limit=1&offset=0", wantStatus: 400, wantMessage: `Validation error: Unrecognized keys: "limit", "offset"`},
		{name: "resources take a malformed page size silently", method: "GET", path: "/v1/org/interop/resources?pageSize=abc", wantStatus: 200, wantMessage: "Resources retrieved successfully"},
		{name: "sites refuse limit", method: "GET", path: "/v1/org/interop/sites?limit=1", wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "limit"`},
		{name: "domains refuse page", method: "GET", path: "/v1/org/interop/domains?page=1", wantStatus: 400, wantMessage: `Validation error: Unrecognized key: "page"`},
		{name: "a resource cannot be fetched by niceId", method: "GET", path: "/v1/resource/some-nice-id", wantStatus: 404, wantMessage: "Resource with ID some-nice-id not found"},
		{name: "a site is found by niceId", method: "GET", path: "/v1/org/interop/site/murky-merriams-shrew", wantStatus: 200, wantMessage: "Site retrieved successfully"},
		{name: "a missing target is 404", method: "DELETE", path: "/v1/target/78", wantStatus: 404, wantMessage: "Target with ID 78 not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, tc.method, tc.path, tc.body, tc.opts...)
			assert.Equal(t, tc.wantStatus, r.Status, r.Body)
			if tc.wantMessage != "" {
				assert.Equal(t, tc.wantMessage, r.message(), r.Body)
			}
			if tc.wantContains != "" {
				assert.Contains(t, r.Body, tc.wantContains)
			}
			if r.Status >= 400 && r.Env != nil && tc.wantMessage != "" && tc.wantMessage != "An error occurred checking API key" {
				assert.Equal(t, false, r.Env["success"])
				assert.Equal(t, true, r.Env["error"])
				assert.Equal(t, float64(r.Status), r.Env["status"])
			}
		})
	}
	assert.Empty(t, s.Resources(), "no failed call may leave a resource behind")
}

func TestResources(t *testing.T) {
	t.Run("create applies the defaults and reports sso three ways", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		r := do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"app.example.com","http":true,"protocol":"tcp","subdomain":"app","domainId":"domain1"}`)
		require.Equal(t, 201, r.Status, r.Body)
		assert.Equal(t, "Http resource created successfully", r.message())
		d := r.data()
		assert.Equal(t, "app.example.com", d["fullDomain"])
		assert.Equal(t, true, d["enabled"])
		assert.Equal(t, true, d["ssl"])
		assert.Equal(t, false, d["blockAccess"])
		assert.Nil(t, d["sso"], "the create response shows the raw column")
		assert.NotEmpty(t, d["niceId"])
		id := int(d["resourceId"].(float64))

		get := do(t, s, "GET", "/v1/resource/"+itoa(id), "")
		assert.Equal(t, true, get.data()["sso"], "GET shows the policy's value")
		list := do(t, s, "GET", "/v1/org/interop/resources", "")
		item := list.data()["resources"].([]any)[0].(map[string]any)
		assert.Equal(t, float64(1), item["sso"], "the list shows 0/1")
		assert.NotContains(t, item, "subdomain")
		assert.NotContains(t, item, "blockAccess")
	})

	t.Run("the apex has a null subdomain", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		r := do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"apex","mode":"http","domainId":"domain1"}`)
		require.Equal(t, 201, r.Status, r.Body)
		assert.Nil(t, r.data()["subdomain"])
		assert.Equal(t, "example.com", r.data()["fullDomain"])
	})

	t.Run("an upper-case subdomain is kept but the host is lower-cased", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		r := do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"u","mode":"http","subdomain":"UPPER","domainId":"domain1"}`)
		require.Equal(t, 201, r.Status, r.Body)
		assert.Equal(t, "UPPER", r.data()["subdomain"])
		assert.Equal(t, "upper.example.com", r.data()["fullDomain"])
	})

	t.Run("a cname domain serves only its base domain", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{Domains: []pangolinsim.Domain{{ID: "c1", BaseDomain: "cname.example.net", Type: "cname", Verified: true}}})
		r := do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"c","mode":"http","subdomain":"www","domainId":"c1"}`)
		require.Equal(t, 201, r.Status, r.Body)
		assert.Nil(t, r.data()["subdomain"])
		assert.Equal(t, "cname.example.net", r.data()["fullDomain"])
	})

	t.Run("duplicate hosts are accepted", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		a := createApp(t, s, "app.example.com", "app")
		b := createApp(t, s, "app-dup", "app")
		assert.NotEqual(t, a, b)
		for _, r := range s.Resources() {
			assert.Equal(t, "app.example.com", r.FullDomain)
		}
	})

	t.Run("the list is ordered by name and searched by query", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		createApp(t, s, "zeta", "z")
		createApp(t, s, "alpha", "a")
		mid := createApp(t, s, "Mid", "m")
		require.Equal(t, 200, do(t, s, "POST", "/v1/resource/"+itoa(mid), `{"niceId":"needle-nice"}`).Status)
		list := do(t, s, "GET", "/v1/org/interop/resources", "").data()["resources"].([]any)
		var names []string
		for _, it := range list {
			names = append(names, it.(map[string]any)["name"].(string))
		}
		assert.Equal(t, []string{"Mid", "alpha", "zeta"}, names, "byte-wise by name, not by id")

		found := do(t, s, "GET", "/v1/org/interop/resources?query=NEEDLE", "").data()
		require.Len(t, found["resources"], 1)
		assert.Equal(t, "needle-nice", found["resources"].([]any)[0].(map[string]any)["niceId"])
	})

	t.Run("pages hold pageSize items from page 1", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		for _, n := range []string{"a", "b", "c"} {
			createApp(t, s, n, n)
		}
		page2 := do(t, s, "GET", "/v1/org/interop/resources?page=2&pageSize=2", "").data()
		require.Len(t, page2["resources"], 1)
		assert.Equal(t, "c", page2["resources"].([]any)[0].(map[string]any)["name"])
		assert.Equal(t, map[string]any{"total": float64(3), "pageSize": float64(2), "page": float64(2)}, page2["pagination"])
	})

	t.Run("a subdomain alone changes the column but not the host", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		id := createApp(t, s, "a.b", "a.b")
		r := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"subdomain":null}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Nil(t, r.data()["subdomain"])
		assert.Equal(t, "a.b.example.com", r.data()["fullDomain"])
	})

	t.Run("subdomain and domainId together move the host", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		id := createApp(t, s, "app", "app")
		r := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"subdomain":"shop","domainId":"domain1"}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Equal(t, "HTTP resource updated successfully", r.message())
		assert.Equal(t, "shop.example.com", r.data()["fullDomain"])
	})

	t.Run("domainId without subdomain moves the resource to the apex", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{Domains: []pangolinsim.Domain{
			{ID: "domain1", BaseDomain: "example.com", Verified: true},
			{ID: "domain2", BaseDomain: "apps.example.org", Verified: true},
		}})
		id := createApp(t, s, "hc", "hc")
		r := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"domainId":"domain2"}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Nil(t, r.data()["subdomain"])
		assert.Equal(t, "apps.example.org", r.data()["fullDomain"])
		require.Len(t, s.Routers(), 0, "no target, no router")
	})

	t.Run("the update response carries the effective booleans", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		id := createApp(t, s, "a", "a")
		r := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"applyRules":true,"sso":false}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Equal(t, false, r.data()["sso"])
		assert.Equal(t, false, r.data()["emailWhitelistEnabled"])
		assert.Equal(t, true, r.data()["applyRules"])
		r = do(t, s, "POST", "/v1/resource/"+itoa(id), `{"name":"renamed"}`)
		assert.Equal(t, false, r.data()["sso"], "not null: the policy's value, as GET shows it")
		r = do(t, s, "POST", "/v1/resource/"+itoa(id), `{"headers":[{"name":"X-Env","value":"a"}]}`)
		assert.Equal(t, `[{"name":"X-Env","value":"a"}]`, r.data()["headers"], "a JSON string in the update response")
		get := do(t, s, "GET", "/v1/resource/"+itoa(id), "").data()
		assert.IsType(t, []any{}, get["headers"], "an array in GET")
	})

	t.Run("niceId updates follow the observed rules", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		a := createApp(t, s, "a", "a")
		b := createApp(t, s, "b", "b")
		cases := []struct {
			name, body  string
			wantStatus  int
			wantMessage string
		}{
			{"a valid niceId is set", `{"niceId":"app-example-com"}`, 200, "HTTP resource updated successfully"},
			{"setting the same niceId again is fine", `{"niceId":"app-example-com"}`, 200, "HTTP resource updated successfully"},
			{"an underscore is refused", `{"niceId":"bad_nice"}`, 400, `Validation error: NiceId can only contain letters, numbers, and dashes at "niceId"`},
			{"a dot is refused", `{"niceId":"app.example.com"}`, 400, `Validation error: NiceId can only contain letters, numbers, and dashes at "niceId"`},
		}
		for _, tc := range cases {
			r := do(t, s, "POST", "/v1/resource/"+itoa(a), tc.body)
			assert.Equal(t, tc.wantStatus, r.Status, tc.name)
			assert.Equal(t, tc.wantMessage, r.message(), tc.name)
		}
		r := do(t, s, "POST", "/v1/resource/"+itoa(b), `{"niceId":"app-example-com"}`)
		assert.Equal(t, 409, r.Status)
		assert.Equal(t, `A resource with niceId "app-example-com" already exists`, r.message())
	})

	t.Run("an empty update is refused", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		id := createApp(t, s, "a", "a")
		r := do(t, s, "POST", "/v1/resource/"+itoa(id), `{}`)
		assert.Equal(t, 400, r.Status)
		assert.Equal(t, "Validation error: At least one field must be provided for update", r.message())
	})

	t.Run("sso written by an update shows in GET", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		id := createApp(t, s, "a", "a")
		require.Equal(t, 200, do(t, s, "POST", "/v1/resource/"+itoa(id), `{"sso":false,"blockAccess":true}`).Status)
		get := do(t, s, "GET", "/v1/resource/"+itoa(id), "").data()
		assert.Equal(t, false, get["sso"])
		assert.Equal(t, true, get["blockAccess"])
	})

	t.Run("deleting a resource deletes its targets", func(t *testing.T) {
		s := newServer(t, pangolinsim.Options{})
		id := createApp(t, s, "a", "a")
		tr := do(t, s, "PUT", "/v1/resource/"+itoa(id)+"/target", `{"ip":"a.svc","port":80,"method":"http","siteId":1}`)
		require.Equal(t, 201, tr.Status, tr.Body)
		tid := int(tr.data()["targetId"].(float64))
		del := do(t, s, "DELETE", "/v1/resource/"+itoa(id), "")
		assert.Equal(t, 200, del.Status)
		assert.Equal(t, "Resource deleted successfully", del.message())
		assert.Nil(t, del.Env["data"])
		assert.Equal(t, 404, do(t, s, "GET", "/v1/target/"+itoa(tid), "").Status)
		again := do(t, s, "DELETE", "/v1/resource/"+itoa(id), "")
		assert.Equal(t, 404, again.Status)
		assert.Equal(t, "Resource with ID "+itoa(id)+" not found", again.message())
	})

	t.Run("an org key gets 403 on another org's resource", func(t *testing.T) {
		orgKey := pangolinsim.Key{ID: "orgkey000000001", Secret: "s", Org: "interop"}
		s := newServer(t, pangolinsim.Options{Keys: []pangolinsim.Key{pangolinsim.RootKey, orgKey}})
		other := s.SeedResource(pangolinsim.Resource{Org: "other", Name: "theirs", DomainID: "domain1", Enabled: true})
		r := do(t, s, "GET", "/v1/resource/"+itoa(other.ID), "", withToken(orgKey.Token()))
		assert.Equal(t, 403, r.Status)
		assert.Equal(t, "Key does not have access to this organization", r.message())
	})
}

func TestSitesAreListedByName(t *testing.T) {
	s := newServer(t, pangolinsim.Options{Sites: []pangolinsim.Site{
		{ID: 1, NiceID: "murky-merriams-shrew", Name: "k8s-local"},
		{ID: 2, NiceID: "quiet-heron", Name: "edge-local"},
	}})
	sites := do(t, s, "GET", "/v1/org/interop/sites", "").data()["sites"].([]any)
	require.Len(t, sites, 2)
	assert.Equal(t, "edge-local", sites[0].(map[string]any)["name"], "by name, not by id")
	assert.Equal(t, "k8s-local", sites[1].(map[string]any)["name"])
}

func TestTargets(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	id := createApp(t, s, "app.example.com", "app")
	base := "/v1/resource/" + itoa(id)

	cases := []struct {
		name        string
		body        string
		wantStatus  int
		wantMessage string
	}{
		{"a full target is created", `{"ip":"api.demo.svc.cluster.local","port":9090,"method":"http","enabled":true,"siteId":1,"path":"^/api(/.*)?$","pathMatchType":"regex","priority":104}`, 201, "Target created successfully"},
		{"a method is not validated", `{"ip":"a.svc","port":80,"method":"gopher","siteId":1}`, 201, "Target created successfully"},
		{"a target without a method is created", `{"ip":"a.svc","port":80,"siteId":1}`, 201, "Target created successfully"},
		{"an unknown site is 404", `{"ip":"a.svc","port":80,"method":"http","siteId":99}`, 404, "Site with ID 99 not found"},
		{"an invalid ip is refused", `{"ip":"not a host!","port":80,"method":"http","siteId":1}`, 400, `Validation error: Invalid input at "ip"`},
		{"an unknown match type is refused", `{"ip":"a.svc","port":80,"method":"http","siteId":1,"path":"/x","pathMatchType":"glob"}`, 400, `Validation error: Invalid option: expected one of "exact"|"prefix"|"regex" at "pathMatchType"`},
		{"priority 0 is too small", `{"ip":"a.svc","port":80,"method":"http","siteId":1,"priority":0}`, 400, `Validation error: Too small: expected number to be >=1 at "priority"`},
		{"priority 1001 is too big", `{"ip":"a.svc","port":80,"method":"http","siteId":1,"priority":1001}`, 400, `Validation error: Too big: expected number to be <=1000 at "priority"`},
		{"a health check needs a host name", `{"ip":"a.svc","port":80,"method":"http","siteId":1,"hcEnabled":true}`, 400, `Validation error: HcHostname is required when hcEnabled is true at "hcHostname"`},
		{"an unknown key is refused", `{"ip":"a.svc","port":80,"method":"http","siteId":1,"weight":3}`, 400, `Validation error: Unrecognized key: "weight"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "PUT", base+"/target", tc.body)
			assert.Equal(t, tc.wantStatus, r.Status, r.Body)
			assert.Equal(t, tc.wantMessage, r.message())
		})
	}

	list := do(t, s, "GET", base+"/targets", "")
	require.Equal(t, 200, list.Status, list.Body)
	targets := list.data()["targets"].([]any)
	require.Len(t, targets, 3)
	first := targets[0].(map[string]any)
	assert.Equal(t, "^/api(/.*)?$", first["path"])
	assert.Equal(t, "regex", first["pathMatchType"])
	assert.Equal(t, float64(104), first["priority"])
	assert.Equal(t, float64(100), targets[1].(map[string]any)["priority"], "priority defaults to 100")
	assert.Equal(t, map[string]any{"total": float64(3), "limit": float64(1000), "offset": float64(0)}, list.data()["pagination"])

	t.Run("targets refuse pageSize", func(t *testing.T) {
		r := do(t, s, "GET", base+"/targets?pageSize=10", "")
		assert.Equal(t, 400, r.Status)
		assert.Equal(t, `Validation error: Unrecognized key: "pageSize"`, r.message())
	})

	tid := itoa(int(first["targetId"].(float64)))
	t.Run("an update needs siteId and ip", func(t *testing.T) {
		r := do(t, s, "POST", "/v1/target/"+tid, `{"port":8081}`)
		assert.Equal(t, 400, r.Status)
		assert.Equal(t, `Validation error: Invalid input: expected number, received undefined at "siteId"; Invalid input: expected string, received undefined at "ip"`, r.message())
	})

	t.Run("an update keeps what it leaves out and null clears the path", func(t *testing.T) {
		r := do(t, s, "POST", "/v1/target/"+tid, `{"siteId":1,"ip":"web.demo.svc.cluster.local","port":8081}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Equal(t, "Target updated successfully", r.message())
		assert.Equal(t, "regex", r.data()["pathMatchType"])
		assert.Equal(t, float64(104), r.data()["priority"])
		assert.NotNil(t, r.data()["internalPort"], "an update assigns an internal port")
		assert.Contains(t, r.data()["name"], "api.demo.svc.cluster.local:9090", "the health check's name keeps the old ip:port")

		r = do(t, s, "POST", "/v1/target/"+tid, `{"siteId":1,"ip":"web.demo.svc.cluster.local","path":null,"pathMatchType":null}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Nil(t, r.data()["path"])
		assert.Nil(t, r.data()["pathMatchType"])
	})

	t.Run("a target is deleted once", func(t *testing.T) {
		r := do(t, s, "DELETE", "/v1/target/"+tid, "")
		assert.Equal(t, 200, r.Status)
		assert.Equal(t, "Target deleted successfully", r.message())
		r = do(t, s, "DELETE", "/v1/target/"+tid, "")
		assert.Equal(t, 404, r.Status)
		assert.Equal(t, "Target with ID "+tid+" not found", r.message())
	})
}

func TestRouters(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	seed := func(name, sub string, enabled bool) pangolinsim.Resource {
		return s.SeedResource(pangolinsim.Resource{Name: name, Subdomain: &sub, DomainID: "domain1", Enabled: enabled, SSL: true})
	}
	app := seed("app.example.com", "app", true)
	off := seed("off", "off", false)
	dup := seed("app-dup2", "app", true)
	shop := seed("Shop (renamed)", "shop", true)
	tgt := func(rid int, ip, method, path, match string, prio int, enabled bool) {
		s.SeedTarget(pangolinsim.Target{ResourceID: rid, SiteID: 1, IP: ip, Port: 80, Method: method, Path: path, PathMatchType: match, Priority: prio, Enabled: enabled})
	}
	tgt(app.ID, "api", "http", "^/api(/.*)?$", "regex", 104, true)
	tgt(app.ID, "web", "http", "/", "prefix", 100, true)
	tgt(app.ID, "web2", "http", "/", "prefix", 100, true)
	tgt(app.ID, "web2", "http", "/", "prefix", 100, true) // a duplicate server collapses
	tgt(app.ID, "h", "http", "healthz", "exact", 0, true)
	tgt(app.ID, "p", "", "/nomethod", "prefix", 100, true)
	tgt(app.ID, "gone", "http", "/gone", "prefix", 100, false)
	tgt(app.ID, "r", "http", "^/r$", "regex", 100, true)
	tgt(off.ID, "x", "http", "", "", 100, true)
	tgt(dup.ID, "d", "https", "", "", 100, true)
	tgt(shop.ID, "s", "h2c", "/", "prefix", 0, true)

	badger := []string{"badger"}
	want := []pangolinsim.Router{
		{Name: "1-2f-prefix-app-example-com-router", ResourceID: 1, Host: "app.example.com", Rule: "Host(`app.example.com`) && PathPrefix(`/`)", Priority: 1, Servers: []string{"http://web:80", "http://web2:80"}, Middlewares: badger},
		{Name: "1-2fnomethod-prefix-app-example-com-router", ResourceID: 1, Host: "app.example.com", Rule: "Host(`app.example.com`) && PathPrefix(`/nomethod`)", Priority: 113, Servers: []string{}, Middlewares: badger},
		{Name: "1-5e2fapi282f2e2a293f24-regex-app-example-com-router", ResourceID: 1, Host: "app.example.com", Rule: "Host(`app.example.com`) && PathRegexp(`^/api(/.*)?$`)", Priority: 104, Servers: []string{"http://api:80"}, Middlewares: badger},
		{Name: "1-5e2fr24-regex-app-example-com-router", ResourceID: 1, Host: "app.example.com", Rule: "Host(`app.example.com`) && PathRegexp(`^/r$`)", Priority: 112, Servers: []string{"http://r:80"}, Middlewares: badger},
		{Name: "1-healthz-exact-app-example-com-router", ResourceID: 1, Host: "app.example.com", Rule: "Host(`app.example.com`) && Path(`/healthz`)", Priority: 115, Servers: []string{"http://h:80"}, Middlewares: badger},
		{Name: "3-app-dup2-router", ResourceID: 3, Host: "app.example.com", Rule: "Host(`app.example.com`)", Priority: 100, Servers: []string{"https://d:80"}, Middlewares: badger},
		{Name: "4-2f-prefix-Shop-renamed-router", ResourceID: 4, Host: "shop.example.com", Rule: "Host(`shop.example.com`) && PathPrefix(`/`)", Priority: 1, Servers: []string{"h2c://s:80"}, Middlewares: badger},
	}
	assert.Equal(t, want, s.Routers())
	assert.Equal(t, map[string][]string{
		"app.example.com":  {"http://web:80", "http://web2:80", "http://api:80", "http://r:80", "http://h:80", "https://d:80"},
		"shop.example.com": {"h2c://s:80"},
	}, s.Served(), "every router's servers, by host, in router order")
}

// TestRouterNameCollisions replays the reference's worked example (resource 125, four
// prefix targets) and its rewrite-path collision: names are cut at 50 characters, and
// the group read later takes the name.
func TestRouterNameCollisions(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	for range 124 {
		s.SeedResource(pangolinsim.Resource{Name: "filler", DomainID: "domain1"})
	}
	sub := "naming"
	res := s.SeedResource(pangolinsim.Resource{Name: "naming.example.com", Subdomain: &sub, DomainID: "domain1", Enabled: true, SSL: true})
	require.Equal(t, 125, res.ID)
	a44 := strings.Repeat("a", 44)
	a43 := strings.Repeat("a", 43)
	for i, path := range []string{"/" + a44 + "1", "/" + a44 + "2", "/" + a43 + "3x", "/" + a43 + "4x"} {
		s.SeedTarget(pangolinsim.Target{ResourceID: res.ID, SiteID: 1, IP: "t" + itoa(138+i), Port: 80, Method: "http", Path: path, PathMatchType: "prefix", Enabled: true})
	}
	routers := s.Routers()
	require.Len(t, routers, 3, "the first two paths share a name: one of them is lost")
	assert.Equal(t, "125-2f"+a43+"3-naming-example-com-router", routers[0].Name)
	assert.Equal(t, "125-2f"+a43+"4-naming-example-com-router", routers[1].Name)
	assert.Equal(t, "125-2f"+a44+"-naming-example-com-router", routers[2].Name)
	assert.Equal(t, "Host(`naming.example.com`) && PathPrefix(`/"+a44+"2`)", routers[2].Rule, "the later group overwrites")
	assert.Equal(t, []string{"http://t139:80"}, routers[2].Servers)

	assert.Equal(t, "125-2f"+a44, pangolinsim.RouterKey(125, "/"+a44+"1", "prefix", "", ""))
	assert.Equal(t, "71-5e2fapi282f2e2a293f24-regex", pangolinsim.RouterKey(71, "^/api(/.*)?$", "regex", "", ""))
	assert.Equal(t, "124", pangolinsim.RouterKey(124, "", "", "", ""))
	assert.Equal(t, "1-e92f", pangolinsim.RouterKey(1, "\u00e9/", "exact", "", "")[:6], "a UTF-16 code unit, unpadded")
}

func TestConcurrentCreates(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPut, s.URL+"/v1/org/interop/resource", strings.NewReader(`{"name":"same","mode":"http","subdomain":"same","domainId":"domain1"}`))
			req.Header.Set("Authorization", "Bearer "+pangolinsim.RootKey.Token())
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				statuses[i] = resp.StatusCode
				_ = resp.Body.Close()
			}
		})
	}
	wg.Wait()
	for _, st := range statuses {
		assert.Equal(t, http.StatusCreated, st)
	}
	res := s.Resources()
	require.Len(t, res, 20)
	seen := map[string]bool{}
	for i, r := range res {
		assert.Equal(t, i+1, r.ID, "ids are dense and deterministic")
		assert.False(t, seen[r.NiceID], "niceIds are unique")
		seen[r.NiceID] = true
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestAnySite(t *testing.T) {
	strict := newServer(t, pangolinsim.Options{})
	assert.Equal(t, http.StatusNotFound, do(t, strict, "GET", "/v1/org/interop/site/edge", "").Status,
		"without AnySite an unknown site does not exist")

	s := newServer(t, pangolinsim.Options{AnySite: true})
	r := do(t, s, "GET", "/v1/org/interop/site/edge", "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.Equal(t, "edge", r.data()["niceId"])
	assert.Equal(t, true, r.data()["online"])
	assert.Equal(t, float64(2), r.data()["siteId"], "the next id after the fixture's site 1")
	again := do(t, s, "GET", "/v1/org/interop/site/edge", "")
	assert.Equal(t, r.data()["siteId"], again.data()["siteId"], "asked twice, one site")
	assert.Len(t, s.Sites(), 2)
	assert.Equal(t, http.StatusNotFound, do(t, s, "GET", "/v1/org/other/site/edge", "").Status,
		"sites appear in the server's org only")
}

// TestRewritesAndHeaders replays the reference's section 14 on resource 124 hc-test:
// each rewrite's middleware and router name, a rewrite without a path left out of the
// routing, and the headers middleware after badger and the rewrite.
func TestRewritesAndHeaders(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	for range 123 {
		s.SeedResource(pangolinsim.Resource{Name: "filler", DomainID: "domain1"})
	}
	sub := "hc"
	res := s.SeedResource(pangolinsim.Resource{Name: "hc-test", Subdomain: &sub, DomainID: "domain1", Enabled: true, SSL: true})
	require.Equal(t, 124, res.ID)
	target := func(body string) {
		r := do(t, s, "PUT", "/v1/resource/124/target", `{"siteId":1,"ip":"web.hc.svc","port":80,"method":"http",`+body+`}`)
		require.Equal(t, 201, r.Status, r.Body)
	}
	target(`"path":"/api","pathMatchType":"prefix","rewritePath":"/","rewritePathType":"stripPrefix"`)
	target(`"path":"/old","pathMatchType":"exact","rewritePath":"/new","rewritePathType":"exact"`)
	target(`"path":"/v1","pathMatchType":"prefix","rewritePath":"/api/v1","rewritePathType":"prefix"`)
	target(`"path":"^/u/(.*)$","pathMatchType":"regex","rewritePath":"/users/$1","rewritePathType":"regex"`)
	target(`"rewritePath":"/x","rewritePathType":"prefix"`)

	rewrites := map[string]string{}
	for _, r := range s.Routers() {
		require.NotNil(t, r.Rewrite, r.Name)
		rewrites[r.Name] = r.Rewrite.String()
		assert.Equal(t, []string{"badger", "rewrite-r124-" + strings.TrimSuffix(r.Name, "-hc-test-router")}, r.Middlewares)
	}
	assert.Equal(t, map[string]string{
		"124-2fapi-prefix-stripPrefix-hc-test-router":              "stripPrefix /api",
		"124-2fold-exact-new-exact-hc-test-router":                 "replacePathRegex ^/old$ -> /new",
		"124-2fv1-prefix-api-v1-prefix-hc-test-router":             "replacePathRegex ^/v1(.*) -> /api/v1$1",
		"124-5e2fu2f282e2a2924-regex-users-1-regex-hc-test-router": "replacePathRegex ^/u/(.*)$ -> /users/$1",
	}, rewrites, "the rewrite without a path has no router")

	r := do(t, s, "POST", "/v1/resource/124", `{"headers":[{"name":"X-A"}]}`)
	assert.Equal(t, 400, r.Status)
	assert.Equal(t, `Validation error: Invalid input: expected string, received undefined at "headers[0].value"`, r.message())
	r = do(t, s, "POST", "/v1/resource/124", `{"headers":[{"name":"X-Env","value":"prod"},{"name":"X-Team","value":"k8s"}],"setHostHeader":"internal.hc.svc"}`)
	require.Equal(t, 200, r.Status, r.Body)
	for _, rt := range s.Routers() {
		if rt.Name != "124-2fapi-prefix-stripPrefix-hc-test-router" {
			continue
		}
		assert.Equal(t, []string{"badger", "rewrite-r124-124-2fapi-prefix-stripPrefix", "124-2fapi-prefix-stripPrefix-headers-middleware"}, rt.Middlewares)
		assert.Equal(t, map[string]string{"X-Env": "prod", "X-Team": "k8s", "Host": "internal.hc.svc"}, rt.RequestHeaders)
	}
	config := do(t, s, "GET", pangolinsim.TraefikConfigPath, "").Body
	assert.Contains(t, config, `"124-2fapi-prefix-stripPrefix-headers-middleware":{"headers":{"customRequestHeaders":{"Host":"internal.hc.svc","X-Env":"prod","X-Team":"k8s"}}}`)
	assert.Contains(t, config, `"rewrite-r124-124-2fapi-prefix-stripPrefix":{"stripPrefix":{"prefixes":["/api"]}}`)

	r = do(t, s, "POST", "/v1/resource/124", `{"headers":null,"setHostHeader":null}`)
	require.Equal(t, 200, r.Status, r.Body)
	for _, rt := range s.Routers() {
		assert.Nil(t, rt.RequestHeaders, "cleared")
		assert.Len(t, rt.Middlewares, 2)
	}
}

// A resource's targets are its own, and the count of resources that route somewhere
// follows creates and deletes of targets, of resources and of sites.
func TestTargetsBelongToTheirResource(t *testing.T) {
	s := newServer(t, pangolinsim.Options{Sites: []pangolinsim.Site{
		{ID: 1, NiceID: "murky-merriams-shrew", Name: "k8s-local"},
		{ID: 2, NiceID: "edge", Name: "edge"},
	}})
	app := createApp(t, s, "app.example.com", "app")
	api := createApp(t, s, "api.example.com", "api")
	createApp(t, s, "idle.example.com", "idle")
	addTarget := func(resource, site int, ip string) string {
		r := do(t, s, "PUT", "/v1/resource/"+itoa(resource)+"/target", `{"ip":"`+ip+`","port":80,"method":"http","siteId":`+itoa(site)+`}`)
		require.Equal(t, 201, r.Status, r.Body)
		return itoa(int(r.data()["targetId"].(float64)))
	}
	ips := func(resource int) []string {
		var out []string
		for _, tg := range s.Targets(resource) {
			out = append(out, tg.IP)
		}
		return out
	}
	first := addTarget(app, 1, "one.svc")
	addTarget(api, 1, "two.svc")
	addTarget(app, 1, "three.svc")
	addTarget(api, 2, "edge.svc")

	assert.Equal(t, []string{"one.svc", "three.svc"}, ips(app))
	assert.Equal(t, []string{"two.svc", "edge.svc"}, ips(api))
	assert.Equal(t, 2, s.ResourcesWithTargets(), "app and api route somewhere, idle does not")

	require.Equal(t, 200, do(t, s, "DELETE", "/v1/target/"+first, "").Status)
	assert.Equal(t, []string{"three.svc"}, ips(app))
	assert.Equal(t, 2, s.ResourcesWithTargets())
	assert.Equal(t, 404, do(t, s, "GET", "/v1/target/"+first, "").Status, "a deleted target is not found")

	require.Equal(t, 200, do(t, s, "DELETE", "/v1/resource/"+itoa(app), "").Status)
	assert.Empty(t, ips(app), "a deleted resource's targets go with it")
	assert.Equal(t, 1, s.ResourcesWithTargets())

	require.Equal(t, 200, do(t, s, "DELETE", "/v1/site/2", "").Status)
	assert.Equal(t, []string{"two.svc"}, ips(api), "a deleted site's targets go with it")
	assert.Equal(t, 1, s.ResourcesWithTargets())
}
