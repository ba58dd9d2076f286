package pangolinapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// secretKey's secret part is long and distinctive, so that finding it anywhere in a
// printed value means the key leaked.
var secretKey = pangolinsim.Key{ID: "leakcheck000001", Secret: "TOPSECRET-do-not-print-7f3a"}

func newFake(t *testing.T, opts pangolinsim.Options) *simtest.Server {
	t.Helper()
	opts.Keys = append(opts.Keys, pangolinsim.RootKey, secretKey)
	s := simtest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

func newClient(t *testing.T, s *simtest.Server, mod ...func(*pangolinapi.Config)) *pangolinapi.Client {
	t.Helper()
	cfg := pangolinapi.Config{BaseURL: s.BaseURL(), Org: "interop", APIKey: pangolinsim.RootKey.Token()}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := pangolinapi.New(cfg)
	require.NoError(t, err)
	return c
}

func TestNewRefusesBadConfig(t *testing.T) {
	good := pangolinapi.Config{BaseURL: "http://pangolin:3003/v1", Org: "interop", APIKey: secretKey.Token()}
	cases := []struct {
		name string
		mod  func(*pangolinapi.Config)
	}{
		{"a base URL without scheme is refused", func(c *pangolinapi.Config) { c.BaseURL = "pangolin:3003/v1" }},
		{"a base URL with credentials is refused", func(c *pangolinapi.Config) { c.BaseURL = "http://u:" + secretKey.Secret + "@pangolin/v1" }},
		{"an empty org is refused", func(c *pangolinapi.Config) { c.Org = "" }},
		{"a key without a dot is refused", func(c *pangolinapi.Config) { c.APIKey = secretKey.Secret }},
		{"a key without a secret is refused", func(c *pangolinapi.Config) { c.APIKey = secretKey.ID + "." }},
		{"an HTTP client and a CA bundle together are refused", func(c *pangolinapi.Config) {
			c.HTTPClient, c.CAPEM = http.DefaultClient, []byte("x")
		}},
		{"a CA bundle without a certificate is refused", func(c *pangolinapi.Config) { c.CAPEM = []byte("not pem") }},
		{"a negative timeout is refused", func(c *pangolinapi.Config) { c.Timeout = -time.Second }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mod(&cfg)
			_, err := pangolinapi.New(cfg)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), secretKey.Secret)
		})
	}
	_, err := pangolinapi.New(good)
	assert.NoError(t, err, "the base config itself is valid")
}

// TestKeyNeverPrinted prints the config, the client and errors every way a log line
// could, and looks for the secret.
func TestKeyNeverPrinted(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	cfg := pangolinapi.Config{BaseURL: s.BaseURL(), Org: "interop", APIKey: secretKey.Token(), Timeout: 2 * time.Second}
	c, err := pangolinapi.New(cfg)
	require.NoError(t, err)

	// A server that echoes the Authorization header into its error message, as a
	// proxy's or a debug build's error page might.
	echo := func(status int, html bool) simtest.Fault {
		return func(w http.ResponseWriter, r *http.Request) bool {
			text := "bad request from " + r.Header.Get("Authorization")
			if html {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(status)
				_, _ = fmt.Fprintf(w, "<pre>%s</pre>", text)
				return true
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"data": nil, "success": false, "error": true, "message": text, "status": status})
			return true
		}
	}
	var errs []error
	for _, f := range []simtest.Fault{echo(400, false), echo(500, false), echo(404, true), simtest.DropConnection()} {
		s.SetFault(f)
		_, err := c.GetResource(context.Background(), 1)
		require.Error(t, err)
		errs = append(errs, err)
	}
	s.SetFault(nil)
	var ae *pangolinapi.APIError
	require.ErrorAs(t, errs[0], &ae)
	assert.Contains(t, ae.Message, "bad request from Bearer", "the echo reached the client, so the check below is meaningful")

	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", cfg, "client", c)
	jsonCfg, err := json.Marshal(cfg)
	require.NoError(t, err)
	printed := []string{
		fmt.Sprint(cfg), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s", cfg),
		fmt.Sprintf("%+v", &cfg), fmt.Sprintf("%#v", &cfg),
		fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%+v", *c), fmt.Sprintf("%#v", *c),
		fmt.Sprintf("%+v", struct{ C *pangolinapi.Client }{c}), fmt.Sprintf("%+v", struct{ Cfg pangolinapi.Config }{cfg}),
		string(jsonCfg), logged.String(),
	}
	for _, e := range errs {
		printed = append(printed, e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
	}
	for i, p := range printed {
		assert.NotContains(t, p, secretKey.Secret, "printed value %d: %s", i, p)
	}
	assert.Contains(t, fmt.Sprintf("%+v", cfg), "[redacted]")
	assert.Contains(t, fmt.Sprintf("%+v", cfg), "interop", "the rest of the config is still shown")
}

func TestErrorClassification(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	html404 := func(w http.ResponseWriter, r *http.Request) bool {
		// The real server's page for a route it lacks, e.g. after a base URL typo.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body>\n<pre>Cannot GET %s</pre>\n</body></html>\n", r.URL.Path)
		return true
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	cases := []struct {
		name                         string
		fault                        simtest.Fault
		ctx                          context.Context
		call                         func(context.Context) error
		notFound, transient, client  bool
		wantStatus                   int
		wantInMessage                string
		wantUnknownRoute, wantAPIErr bool
	}{
		{name: "a missing resource is not found", call: func(ctx context.Context) error { _, err := c.GetResource(ctx, 999); return err },
			notFound: true, client: true, wantStatus: 404, wantInMessage: "Resource with ID 999 not found", wantAPIErr: true},
		{name: "an unknown route is a client error but not not-found", fault: html404, call: func(ctx context.Context) error { return c.DeleteTarget(ctx, 1) },
			client: true, wantStatus: 404, wantInMessage: "Cannot GET /v1/target/1", wantUnknownRoute: true, wantAPIErr: true},
		{name: "an outage is transient", fault: simtest.Outage(503), call: func(ctx context.Context) error { _, err := c.ListDomains(ctx); return err },
			transient: true, wantStatus: 503, wantAPIErr: true},
		{name: "a 500 is transient", fault: simtest.Outage(500), call: func(ctx context.Context) error { _, err := c.ListSites(ctx); return err },
			transient: true, wantStatus: 500, wantAPIErr: true},
		{name: "429 is transient and a client error", fault: simtest.Outage(429), call: func(ctx context.Context) error { _, err := c.ListResources(ctx, ""); return err },
			transient: true, client: true, wantStatus: 429, wantAPIErr: true},
		{name: "a dropped connection is transient", fault: simtest.DropConnection(), call: func(ctx context.Context) error { _, err := c.ListResources(ctx, ""); return err },
			transient: true},
		{name: "a validation error is a client error", call: func(ctx context.Context) error {
			_, err := c.CreateResource(ctx, "x", pangolinapi.Host{DomainID: "nope"})
			return err
		}, client: true, wantStatus: 400, wantInMessage: "Domain with ID nope not found", wantAPIErr: true},
		{name: "a bare JSON message is read", fault: func(w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"message":"An error occurred"}`))
			return true
		}, call: func(ctx context.Context) error { _, err := c.GetTarget(ctx, 1); return err },
			transient: true, wantStatus: 500, wantInMessage: "An error occurred", wantAPIErr: true},
		{name: "a canceled call is not transient", ctx: canceled, call: func(ctx context.Context) error { _, err := c.ListDomains(ctx); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.SetFault(tc.fault)
			defer s.SetFault(nil)
			callCtx := ctx
			if tc.ctx != nil {
				callCtx = tc.ctx
			}
			err := tc.call(callCtx)
			require.Error(t, err)
			assert.Equal(t, tc.notFound, pangolinapi.IsNotFound(err), "IsNotFound")
			assert.Equal(t, tc.transient, pangolinapi.IsTransient(err), "IsTransient")
			assert.Equal(t, tc.client, pangolinapi.IsClientError(err), "IsClientError")
			var ae *pangolinapi.APIError
			assert.Equal(t, tc.wantAPIErr, errors.As(err, &ae), "an APIError: %v", err)
			if ae != nil {
				assert.Equal(t, tc.wantStatus, ae.Status)
				assert.Equal(t, tc.wantUnknownRoute, ae.UnknownRoute)
				assert.Contains(t, ae.Message, tc.wantInMessage)
				assert.NotEmpty(t, ae.Operation)
				assert.Contains(t, err.Error(), ae.Operation, "the error names its operation")
			}
		})
	}
}

func TestTimeoutIsAlwaysApplied(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	s.SetFault(simtest.Hang())
	var mu sync.Mutex
	var results []string
	observe := func(op, result string, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, op+" "+result)
	}
	cases := []struct {
		name string
		mod  func(*pangolinapi.Config)
	}{
		{"the client's own transport times out", func(c *pangolinapi.Config) {}},
		{"a caller's HTTP client without a timeout still times out", func(c *pangolinapi.Config) { c.HTTPClient = &http.Client{} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			results = nil
			c := newClient(t, s, func(c *pangolinapi.Config) {
				c.Timeout, c.Observe = 150*time.Millisecond, observe
				tc.mod(c)
			})
			start := time.Now()
			_, err := c.CreateResource(context.Background(), "x", pangolinapi.Host{DomainID: "domain1"})
			require.Error(t, err)
			assert.Less(t, time.Since(start), 3*time.Second)
			assert.True(t, pangolinapi.IsTransient(err), err.Error())
			assert.True(t, errors.Is(err, context.DeadlineExceeded), err.Error())
			assert.Equal(t, []string{"createResource transport_error"}, results)
		})
	}
}

func TestObserveReportsEachRequest(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	var got []string
	c := newClient(t, s, func(c *pangolinapi.Config) {
		c.Observe = func(op, result string, _ time.Duration) {
			got = append(got, op+" "+result)
		}
	})
	ctx := context.Background()
	_, _ = c.ListDomains(ctx)
	_, _ = c.GetResource(ctx, 42)
	s.SetFault(simtest.Outage(502))
	_, _ = c.ListSites(ctx)
	s.SetFault(nil)
	assert.Equal(t, []string{"listDomains success", "getResource client_error", "listSites server_error"}, got)
	assert.Len(t, pangolinapi.Operations(), 25)
}

func TestListsPageThroughEverything(t *testing.T) {
	domains := []pangolinsim.Domain{
		{ID: "d1", BaseDomain: "one.test", Verified: true}, {ID: "d2", BaseDomain: "two.test", Verified: true},
		{ID: "d3", BaseDomain: "three.test"},
	}
	sites := []pangolinsim.Site{{ID: 1, NiceID: "s1"}, {ID: 2, NiceID: "s2"}, {ID: 3, NiceID: "s3"}}
	s := newFake(t, pangolinsim.Options{Domains: domains, Sites: sites})
	var rid int
	for i := range 5 {
		sub := fmt.Sprintf("r%d", i)
		rid = s.SeedResource(pangolinsim.Resource{Name: sub, Subdomain: &sub, DomainID: "d1", Enabled: true, SSO: i%2 == 0}).ID
	}
	for i := range 5 {
		s.SeedTarget(pangolinsim.Target{ResourceID: rid, SiteID: 1, IP: "10.0.0.1", Port: 8000 + i, Method: "http", Enabled: true})
	}
	c := newClient(t, s, func(c *pangolinapi.Config) { c.PageSize = 2 })
	ctx := context.Background()

	cases := []struct {
		name      string
		list      func() (int, error)
		want      int
		wantCalls int
		pattern   string
	}{
		{"domains page by limit and offset", func() (int, error) { l, err := c.ListDomains(ctx); return len(l), err }, 3, 2, "GET /v1/org/:orgId/domains"},
		{"sites page by page and pageSize", func() (int, error) { l, err := c.ListSites(ctx); return len(l), err }, 3, 2, "GET /v1/org/:orgId/sites"},
		{"resources page by page and pageSize", func() (int, error) { l, err := c.ListResources(ctx, ""); return len(l), err }, 5, 3, "GET /v1/org/:orgId/resources"},
		{"targets page by limit and offset", func() (int, error) { l, err := c.ListTargets(ctx, rid); return len(l), err }, 5, 3, "GET /v1/resource/:resourceId/targets"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.ResetCounts()
			n, err := tc.list()
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
			assert.Equal(t, map[string]int{tc.pattern: tc.wantCalls}, s.Counts())
		})
	}

	list, err := c.ListResources(ctx, "")
	require.NoError(t, err)
	for i, r := range list {
		assert.Equal(t, fmt.Sprintf("r%d", i), r.Name, "by name")
		assert.Equal(t, i%2 == 0, r.SSO, "the list's 0/1 sso is decoded")
	}
	targets, err := c.ListTargets(ctx, rid)
	require.NoError(t, err)
	for i, tg := range targets {
		assert.Equal(t, 8000+i, tg.Port, "in creation order")
		assert.Equal(t, rid, tg.ResourceID)
	}
}

func TestMisuseIsRefusedBeforeSending(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	cases := []struct {
		name string
		call func() error
	}{
		{"an update with nothing to change", func() error { _, err := c.UpdateResource(ctx, 1, pangolinapi.ResourceUpdate{}); return err }},
		{"a host without a domain", func() error {
			_, err := c.UpdateResource(ctx, 1, pangolinapi.ResourceUpdate{Host: &pangolinapi.Host{Subdomain: "a"}})
			return err
		}},
		{"a resource without a domain", func() error { _, err := c.CreateResource(ctx, "a", pangolinapi.Host{Subdomain: "a"}); return err }},
		{"a target without a method", func() error {
			_, err := c.CreateTarget(ctx, 1, pangolinapi.TargetSpec{SiteID: 1, IP: "a", Port: 80})
			return err
		}},
		{"a path without a match type", func() error {
			_, err := c.CreateTarget(ctx, 1, pangolinapi.TargetSpec{SiteID: 1, IP: "a", Port: 80, Method: "http", Path: "/x"})
			return err
		}},
		{"a target update without site and ip", func() error { _, err := c.UpdateTarget(ctx, 1, pangolinapi.TargetUpdate{Port: 81}); return err }},
		{"a target update with an unknown method", func() error {
			_, err := c.UpdateTarget(ctx, 1, pangolinapi.TargetUpdate{SiteID: 1, IP: "a", Method: "ftp"})
			return err
		}},
		{"a lookup of an empty niceId", func() error { _, _, err := c.FindResourceByNiceID(ctx, ""); return err }},
		{"a raw resource of mode http", func() error { _, err := c.CreateRawResource(ctx, "a", pangolinapi.ModeHTTP, 5432); return err }},
		{"a raw resource on port 0", func() error { _, err := c.CreateRawResource(ctx, "a", pangolinapi.ModeTCP, 0); return err }},
		{"a raw resource moved past 65535", func() error {
			_, err := c.UpdateResource(ctx, 1, pangolinapi.ResourceUpdate{ProxyPort: 70000})
			return err
		}},
		{"a list of raw resources of mode http", func() error { _, err := c.ListRawResources(ctx, pangolinapi.ModeHTTP); return err }},
		{"a health check without a hostname", func() error {
			_, err := c.CreateTarget(ctx, 1, pangolinapi.TargetSpec{SiteID: 1, IP: "a", Port: 80, Method: "http",
				Health: pangolinapi.HealthCheck{Enabled: true, Mode: pangolinapi.HealthModeTCP}})
			return err
		}},
		{"an http health check without a path", func() error {
			_, err := c.CreateRawTarget(ctx, 1, pangolinapi.RawTargetSpec{SiteID: 1, IP: "a", Port: 80,
				Health: pangolinapi.HealthCheck{Enabled: true, Hostname: "a", Mode: pangolinapi.HealthModeHTTP}})
			return err
		}},
		{"a health check with a negative interval", func() error {
			_, err := c.UpdateTarget(ctx, 1, pangolinapi.TargetUpdate{SiteID: 1, IP: "a",
				Health: pangolinapi.HealthCheck{Enabled: true, Hostname: "a", Mode: pangolinapi.HealthModeTCP, Interval: -1}})
			return err
		}},
		{"a health check of another mode", func() error {
			_, err := c.UpdateTarget(ctx, 1, pangolinapi.TargetUpdate{SiteID: 1, IP: "a",
				Health: pangolinapi.HealthCheck{Enabled: true, Hostname: "a", Mode: "grpc"}})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.ResetCounts()
			assert.Error(t, tc.call())
			assert.Empty(t, s.Counts(), "nothing was sent")
		})
	}
}

func TestResourceRoundTrip(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()

	r, err := c.CreateResource(ctx, "Upper", pangolinapi.Host{DomainID: "domain1", Subdomain: "UPPER"})
	require.NoError(t, err)
	assert.Equal(t, "upper", r.Subdomain, "sent lower-cased, so the stored subdomain matches the host")
	assert.Equal(t, "upper.example.com", r.FullDomain)
	assert.True(t, r.SSO, "SSO is on after create although the response says null")

	t.Run("an update that sets sso reports it", func(t *testing.T) {
		s.ResetCounts()
		off := false
		got, err := c.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{SSO: &off})
		require.NoError(t, err)
		assert.False(t, got.SSO)
		assert.Equal(t, 0, s.Reads(), "the value sent is the value now effective")
	})
	t.Run("an update that leaves sso reports the effective value in one request", func(t *testing.T) {
		s.ResetCounts()
		got, err := c.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Name: "renamed"})
		require.NoError(t, err)
		assert.False(t, got.SSO, "the policy's, not the create default")
		assert.True(t, got.SSOReported)
		assert.Equal(t, "renamed", got.Name)
		assert.Equal(t, 0, s.Reads(), "the update response carries the effective booleans")
	})
	t.Run("a host change to the apex sends a null subdomain with the domain", func(t *testing.T) {
		got, err := c.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Host: &pangolinapi.Host{DomainID: "domain1"}})
		require.NoError(t, err)
		assert.Equal(t, "example.com", got.FullDomain)
		assert.Empty(t, got.Subdomain)
	})
	t.Run("a target's path is cleared by an empty PathMatch", func(t *testing.T) {
		tg, err := c.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{SiteID: 1, IP: "web.svc", Port: 80, Method: "http", Enabled: true, Path: "/api", PathMatchType: pangolinapi.MatchPrefix, Priority: 150})
		require.NoError(t, err)
		assert.Equal(t, 150, tg.Priority)
		got, err := c.UpdateTarget(ctx, tg.TargetID, pangolinapi.TargetUpdate{SiteID: 1, IP: "web.svc", Path: &pangolinapi.PathMatch{}})
		require.NoError(t, err)
		assert.Empty(t, got.Path)
		assert.Empty(t, got.PathMatchType)
		assert.Equal(t, 150, got.Priority, "left unchanged")
		assert.Equal(t, 80, got.Port, "left unchanged")
	})
}

func TestResolveHost(t *testing.T) {
	domains := []pangolinapi.Domain{
		{DomainID: "d1", BaseDomain: "example.com", Verified: true, Type: "wildcard"},
		{DomainID: "d2", BaseDomain: "apps.example.com", Verified: true, Type: "ns"},
		{DomainID: "d3", BaseDomain: "unverified.org", Verified: false, Type: "ns"},
		{DomainID: "d4", BaseDomain: "cname.net", Verified: true, Type: "cname"},
	}
	cases := []struct {
		name    string
		host    string
		want    pangolinapi.Host
		wantErr bool
	}{
		{name: "a subdomain of a domain", host: "app.example.com", want: pangolinapi.Host{DomainID: "d1", Subdomain: "app"}},
		{name: "the apex has no subdomain", host: "example.com", want: pangolinapi.Host{DomainID: "d1"}},
		{name: "the longest base domain wins", host: "x.apps.example.com", want: pangolinapi.Host{DomainID: "d2", Subdomain: "x"}},
		{name: "a subdomain may hold dots", host: "a.b.example.com", want: pangolinapi.Host{DomainID: "d1", Subdomain: "a.b"}},
		{name: "case and a trailing dot are ignored", host: "App.Example.COM.", want: pangolinapi.Host{DomainID: "d1", Subdomain: "app"}},
		{name: "a suffix that is not a label boundary does not match", host: "badexample.com", wantErr: true},
		{name: "an unverified domain does not serve", host: "a.unverified.org", wantErr: true},
		{name: "a foreign host is refused", host: "app.other.org", wantErr: true},
		{name: "a cname domain serves its base domain", host: "cname.net", want: pangolinapi.Host{DomainID: "d4"}},
		{name: "a cname domain serves nothing below it", host: "www.cname.net", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pangolinapi.ResolveHost(tc.host, domains)
			if tc.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestWritesCarryJSON(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	var seen []string
	var mu sync.Mutex
	s.SetFault(func(_ http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.Header.Get("Content-Type")+" "+strings.Fields(r.Header.Get("Authorization"))[0])
		return false
	})
	ctx := context.Background()
	r, err := c.CreateResource(ctx, "a", pangolinapi.Host{DomainID: "domain1", Subdomain: "a"})
	require.NoError(t, err)
	_, err = c.GetResource(ctx, r.ResourceID)
	require.NoError(t, err)
	require.NoError(t, c.DeleteResource(ctx, r.ResourceID))
	assert.Equal(t, []string{"PUT application/json Bearer", "GET  Bearer", "DELETE  Bearer"}, seen)
}

func TestRewritesAndHeadersRoundTrip(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	sub := "app"
	rid := s.SeedResource(pangolinsim.Resource{Name: "app", Subdomain: &sub, DomainID: "domain1", Enabled: true}).ID
	site := s.Sites()[0].ID

	rewrite := pangolinapi.Rewrite{Path: "/v2$1", Type: "regex"}
	created, err := c.CreateTarget(ctx, rid, pangolinapi.TargetSpec{SiteID: site, IP: "api", Port: 80, Method: "http", Enabled: true,
		Path: `^/v1(/.*)?$`, PathMatchType: "regex", Rewrite: rewrite})
	require.NoError(t, err)
	assert.Equal(t, "/v2$1", created.RewritePath)
	assert.Equal(t, "regex", created.RewritePathType)
	listed, err := c.ListTargets(ctx, rid)
	require.NoError(t, err)
	assert.Equal(t, created, listed[0], "the list reads the rewrite back")

	updated, err := c.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: site, IP: "api",
		Path: &pangolinapi.PathMatch{Path: `^/v1(/.*)?$`, Type: "regex"}, Rewrite: &pangolinapi.Rewrite{}})
	require.NoError(t, err)
	assert.Empty(t, updated.RewritePath, "an empty rewrite clears it")
	assert.Empty(t, updated.RewritePathType)

	headers := []pangolinapi.Header{{Name: "X-Env", Value: "prod"}}
	res, err := c.UpdateResource(ctx, rid, pangolinapi.ResourceUpdate{Headers: &headers})
	require.NoError(t, err)
	assert.Equal(t, headers, res.Headers, "read from the update response's JSON string")
	got, err := c.GetResource(ctx, rid)
	require.NoError(t, err)
	assert.Equal(t, headers, got.Headers, "read from GET's array")
	res, err = c.UpdateResource(ctx, rid, pangolinapi.ResourceUpdate{Headers: &[]pangolinapi.Header{}})
	require.NoError(t, err)
	assert.Empty(t, res.Headers, "an empty list clears them")
}

func TestRewritesPangolinWouldDropAreRefused(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	cases := []struct {
		name string
		spec pangolinapi.TargetSpec
	}{
		{"a rewrite without a path match", pangolinapi.TargetSpec{Rewrite: pangolinapi.Rewrite{Path: "/x", Type: "prefix"}}},
		{"a rewrite path without its type", pangolinapi.TargetSpec{Path: "/a", PathMatchType: "prefix", Rewrite: pangolinapi.Rewrite{Path: "/x"}}},
		{"a rewrite type without its path", pangolinapi.TargetSpec{Path: "/a", PathMatchType: "prefix", Rewrite: pangolinapi.Rewrite{Type: "prefix"}}},
		{"an unknown rewrite type", pangolinapi.TargetSpec{Path: "/a", PathMatchType: "prefix", Rewrite: pangolinapi.Rewrite{Path: "/x", Type: "replace"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.SiteID, spec.IP, spec.Port, spec.Method = 1, "a", 80, "http"
			_, err := c.CreateTarget(ctx, 1, spec)
			require.Error(t, err)
			assert.Zero(t, s.Writes(), "nothing is sent")
		})
	}
	_, err := c.CreateTarget(ctx, 1, pangolinapi.TargetSpec{SiteID: 1, IP: "a", Port: 80, Method: "http", Path: "/a", PathMatchType: "prefix",
		Rewrite: pangolinapi.Rewrite{Type: "stripPrefix"}})
	assert.NotContains(t, fmt.Sprint(err), "rewrite", "stripPrefix may come without a path")
}

// TestRawResourceMode: a server that sends the deprecated http/protocol pair instead of
// mode still reads as a raw resource, in GET and in the list.
func TestRawResourceMode(t *testing.T) {
	legacy := `{"resourceId":7,"niceId":"n","name":"pg","http":false,"protocol":"tcp","proxyPort":5432,"fullDomain":null,"domainId":null,"enabled":true}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/resources") {
			fmt.Fprintf(w, `{"data":{"resources":[%s],"pagination":{"total":1}},"success":true,"status":200}`, legacy)
			return
		}
		fmt.Fprintf(w, `{"data":%s,"success":true,"status":200}`, legacy)
	}))
	t.Cleanup(srv.Close)
	c, err := pangolinapi.New(pangolinapi.Config{BaseURL: srv.URL + "/v1", Org: "interop", APIKey: pangolinsim.RootKey.Token()})
	require.NoError(t, err)
	got, err := c.GetResource(context.Background(), 7)
	require.NoError(t, err)
	assert.Equal(t, pangolinapi.ModeTCP, got.Mode)
	assert.Equal(t, 5432, got.ProxyPort)
	listed, err := c.ListRawResources(context.Background(), pangolinapi.ModeTCP)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, 5432, listed[0].ProxyPort)
}
