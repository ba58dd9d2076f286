package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// The server the "real" side is pointed at: an in-repo server, reached only through its
// HTTP API, with an org, a domain and sites of its own, so that nothing the bench takes
// from its in-repo fixture (org bench, domain1 = example.com, site 1 "default") can pass
// for them.
const (
	realOrg      = "acme"
	realDomainID = "dom-bench"
	realDomain   = "bench.example.org"
	realSiteNice = "bench-site"
	realSiteID   = 7
	otherSiteID  = 3
)

// realKeySecret is the part of the key after the dot: it must show nowhere.
var realKeySecret = pangolinsim.RootKey.Secret

// aServer is an in-repo server standing for a real Pangolin, with two decoy resources
// the bench must leave alone: one on the host the in-repo run would use, one under
// another run's prefix. It records the site of every target create.
type aServer struct {
	*simtest.Server
	decoys map[string]int // host → resource id

	mu          sync.Mutex
	targetSites []int
}

func newAServer(t *testing.T) *aServer {
	t.Helper()
	s := &aServer{
		Server: simtest.NewServer(pangolinsim.Options{
			Org:     realOrg,
			Domains: []pangolinsim.Domain{{ID: realDomainID, BaseDomain: realDomain, Verified: true}},
			Sites: []pangolinsim.Site{
				{ID: otherSiteID, NiceID: "elsewhere", Name: "elsewhere"},
				{ID: realSiteID, NiceID: realSiteNice, Name: "bench"},
			},
		}),
		decoys: map[string]int{},
	}
	t.Cleanup(s.Close)
	api, err := pangolinapi.New(pangolinapi.Config{BaseURL: s.BaseURL(), Org: realOrg, APIKey: pangolinsim.RootKey.Token()})
	require.NoError(t, err)
	ctx := context.Background()
	for _, sub := range []string{"direct-00000", "pic-bench-decoy-direct-00000"} {
		r, err := api.CreateResource(ctx, sub+"."+realDomain, pangolinapi.Host{DomainID: realDomainID, Subdomain: sub})
		require.NoError(t, err)
		_, err = api.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{
			SiteID: otherSiteID, IP: "10.0.0.1", Port: 80, Method: pangolinapi.MethodHTTP, Enabled: true,
		})
		require.NoError(t, err)
		s.decoys[r.FullDomain] = r.ResourceID
	}
	s.SetFault(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/target") {
			var body struct {
				SiteID int `json:"siteId"`
			}
			data, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(data, &body)
			s.mu.Lock()
			s.targetSites = append(s.targetSites, body.SiteID)
			s.mu.Unlock()
		}
		return false
	})
	s.ResetCounts()
	return s
}

// sites are the sites the targets created since the fixture named.
func (s *aServer) sites() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.targetSites...)
}

// requireOnlyDecoys checks that the server holds the decoys, untouched, and nothing else.
func (s *aServer) requireOnlyDecoys(t *testing.T) {
	t.Helper()
	got := map[string]int{}
	for _, r := range s.Resources() {
		got[r.FullDomain] = r.ID
		if _, ok := s.decoys[r.FullDomain]; ok {
			ts := s.Targets(r.ID)
			if assert.Len(t, ts, 1, "%s keeps its target", r.FullDomain) {
				assert.Equal(t, otherSiteID, ts[0].SiteID, r.FullDomain)
				assert.Equal(t, 80, ts[0].Port, r.FullDomain)
			}
		}
	}
	assert.Equal(t, s.decoys, got, "the decoys, with their ids, and nothing else")
}

// setRealEnv sets the five settings as a user would, pointing at s.
func setRealEnv(t *testing.T, s *aServer) {
	t.Setenv("PIC_CONTRACT_PANGOLIN_URL", s.BaseURL())
	t.Setenv("PIC_CONTRACT_PANGOLIN_API_KEY", pangolinsim.RootKey.Token())
	t.Setenv("PIC_CONTRACT_PANGOLIN_ORG", realOrg)
	t.Setenv("PIC_CONTRACT_PANGOLIN_SITE", realSiteNice)
	t.Setenv("PIC_CONTRACT_PANGOLIN_DOMAIN", realDomain)
}

// TestDirectAgainstAServerURL points the direct part at a server by URL, as at a real
// Pangolin: the in-repo server, used through its HTTP API only.
func TestDirectAgainstAServerURL(t *testing.T) {
	t.Run("settings", func(t *testing.T) {
		all := map[string]string{
			"PIC_CONTRACT_PANGOLIN_URL":     "https://pangolin.example.com/v1",
			"PIC_CONTRACT_PANGOLIN_API_KEY": "abcdefghijklmno.s3cr3t-value",
			"PIC_CONTRACT_PANGOLIN_ORG":     "acme",
			"PIC_CONTRACT_PANGOLIN_SITE":    "murky-site",
			"PIC_CONTRACT_PANGOLIN_DOMAIN":  "example.com",
		}
		with := func(changes map[string]string) map[string]string {
			out := map[string]string{}
			for k, v := range all {
				out[k] = v
			}
			for k, v := range changes {
				out[k] = v
			}
			return out
		}
		for _, tc := range []struct {
			name    string
			env     map[string]string
			want    *realPangolin
			wantErr []string // substrings of the error
		}{
			{name: "none: the in-repo server", env: map[string]string{}},
			{name: "all five", env: all, want: &realPangolin{URL: "https://pangolin.example.com/v1", APIKey: "abcdefghijklmno.s3cr3t-value",
				Org: "acme", Site: "murky-site", Domain: "example.com"}},
			{name: "some: the missing ones named", env: with(map[string]string{"PIC_CONTRACT_PANGOLIN_SITE": "", "PIC_CONTRACT_PANGOLIN_DOMAIN": ""}),
				wantErr: []string{"missing PIC_CONTRACT_PANGOLIN_SITE, PIC_CONTRACT_PANGOLIN_DOMAIN"}},
			{name: "a URL that is not one", env: with(map[string]string{"PIC_CONTRACT_PANGOLIN_URL": "pangolin.example.com"}),
				wantErr: []string{"PIC_CONTRACT_PANGOLIN_URL"}},
			{name: "a URL with credentials", env: with(map[string]string{"PIC_CONTRACT_PANGOLIN_URL": "https://u:hunter2@pangolin.example.com/v1"}),
				wantErr: []string{"PIC_CONTRACT_PANGOLIN_URL"}},
			{name: "a key without its dot", env: with(map[string]string{"PIC_CONTRACT_PANGOLIN_API_KEY": "s3cr3t-value"}),
				wantErr: []string{"PIC_CONTRACT_PANGOLIN_API_KEY"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, k := range realPangolinEnv {
					t.Setenv(k, tc.env[k])
				}
				got, err := realPangolinFromEnv()
				if tc.wantErr != nil {
					require.Error(t, err)
					for _, want := range tc.wantErr {
						assert.Contains(t, err.Error(), want)
					}
					assert.NotContains(t, err.Error(), "s3cr3t", "the key stays out of errors")
					assert.NotContains(t, err.Error(), "hunter2", "a password in the URL too")
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				if got != nil {
					printed := fmt.Sprintf("%v %+v %#v %s", got, got, got, got.APIKey)
					data, err := json.Marshal(got)
					require.NoError(t, err)
					assert.NotContains(t, printed+string(data), "s3cr3t", "the key is printed redacted")
				}
			})
		}
	})

	t.Run("route patterns", func(t *testing.T) {
		for path, want := range map[string]string{
			"/v1/org/acme/domains":               "/v1/org/:orgId/domains",
			"/v1/org/acme/domain/dom-1":          "/v1/org/:orgId/domain/:domainId",
			"/v1/org/acme/site/bench-site":       "/v1/org/:orgId/site/:niceId",
			"/v1/site/7":                         "/v1/site/:siteId",
			"/v1/org/acme/resources":             "/v1/org/:orgId/resources",
			"/v1/org/acme/resource":              "/v1/org/:orgId/resource",
			"/v1/resource/12":                    "/v1/resource/:resourceId",
			"/v1/resource/12/":                   "/v1/resource/:resourceId",
			"/v1/resource/12/targets":            "/v1/resource/:resourceId/targets",
			"/v1/resource/12/target":             "/v1/resource/:resourceId/target",
			"/v1/resource/12/policies":           "/v1/resource/:resourceId/policies",
			"/v1/resource/12/rule/3":             "/v1/resource/:resourceId/rule/:ruleId",
			"/v1/public-resource/12":             "/v1/public-resource/:resourceId",
			"/v1/target/40":                      "/v1/target/:targetId",
			"/v1/org/resource/resource/resource": "/v1/org/:orgId/resource/:resourceId",
		} {
			got, _ := routePattern(path)
			assert.Equal(t, want, got, path)
		}
		_, params := routePattern("/v1/resource/12/target")
		assert.Equal(t, map[string]string{"resourceId": "12"}, params)
	})

	t.Run("publishing through the proxy, and the sweep", func(t *testing.T) {
		srv := newAServer(t)
		setRealEnv(t, srv)
		cfg, err := realPangolinFromEnv()
		require.NoError(t, err)
		require.NotNil(t, cfg)
		ctx := context.Background()
		pt, err := newRealServer(ctx, *cfg, t.Logf)
		require.NoError(t, err)
		closed := false
		defer func() {
			if !closed {
				_ = pt.close(ctx)
			}
		}()
		assert.Regexp(t, `^pic-bench-[0-9a-f]{8}-$`, pt.hostPrefix())
		assert.Equal(t, realDomain, pt.baseDomain())
		s := shape{Name: "direct", Ingresses: 5, HostsPerIngress: 1, HostPrefix: pt.hostPrefix(), Domain: pt.baseDomain()}

		run, err := pt.freshStart(ctx)
		require.NoError(t, err)
		e := run.endpoint()
		assert.Equal(t, realSiteID, e.SiteID)
		assert.Equal(t, realDomainID, e.DomainID)
		assert.NotEqual(t, srv.BaseURL(), e.URL, "PIC and the plain clients go through the proxy")
		assert.Contains(t, e.PICFlags, "--default-tunnel="+realSiteNice)
		srv.ResetCounts()
		secs, err := plainPublish(ctx, run, s, 4, true)
		require.NoError(t, err)
		assert.Positive(t, secs)

		// Every request went through the proxy, counted under the server's own keys.
		assert.Equal(t, srv.Counts(), run.counts())
		assert.Equal(t, 5, run.counts()["PUT /v1/org/:orgId/resource"])
		assert.Equal(t, srv.Reads(), run.reads())
		assert.Equal(t, srv.Writes(), run.writes())
		n, err := run.published(ctx)
		require.NoError(t, err)
		assert.Equal(t, 5, n, "every target create seen")
		list, err := run.resources(ctx)
		require.NoError(t, err)
		require.Len(t, list, 5, "the bench's resources, not the decoys")
		for i := range 5 {
			r, ok, err := run.resourceOn(ctx, s.host(i, 0))
			require.NoError(t, err)
			require.True(t, ok, s.host(i, 0))
			ts, err := run.targets(ctx, r.ID)
			require.NoError(t, err)
			require.Len(t, ts, 1, s.host(i, 0))
			assert.Equal(t, realSiteID, ts[0].SiteID)
			blocked, err := run.blockAccess(ctx, r.ID)
			require.NoError(t, err)
			assert.False(t, blocked)
		}
		assert.Equal(t, []int{realSiteID, realSiteID, realSiteID, realSiteID, realSiteID}, srv.sites())

		// A fresh start removes the run's resources, and only them.
		run.release()
		run, err = pt.freshStart(ctx)
		require.NoError(t, err)
		srv.requireOnlyDecoys(t)
		assert.Empty(t, run.counts())
		n, err = run.published(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)

		// So does close.
		_, err = plainPublish(ctx, run, s, 4, false)
		require.NoError(t, err)
		assert.Len(t, srv.Resources(), 5+len(srv.decoys))
		closed = true
		require.NoError(t, pt.close(ctx))
		srv.requireOnlyDecoys(t)
	})

	t.Run("the direct part", func(t *testing.T) {
		testenv.SkipIfShort(t)
		// As main does: the harness's own clients log nothing worth reading.
		ctrllog.SetLogger(logr.Discard())
		srv := newAServer(t)
		setRealEnv(t, srv)
		opts, err := optionsFromEnv()
		require.NoError(t, err)
		require.NotNil(t, opts.RealPangolin)
		dir := t.TempDir()
		var logMu sync.Mutex
		var logs bytes.Buffer
		opts.Binary = managerBinary(t)
		opts.WorkDir = filepath.Join(dir, "work")
		opts.Repeat = 1
		// Its steady state at 2 s resync, 24 s drift, as TestSmoke's.
		opts.DirectScale = 150
		opts.Logf = func(format string, args ...any) {
			logMu.Lock()
			fmt.Fprintf(&logs, format+"\n", args...)
			logMu.Unlock()
			t.Logf(format, args...)
		}
		variant, err := testenv.VariantByName(testenv.VariantFork)
		require.NoError(t, err)
		b := &bench{opts: opts, res: newResults(opts, nil), picDefaults: config.Default()}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		require.NoError(t, b.directMode(ctx, variant, 5), "PIC's logs are in %s", opts.WorkDir)

		d := b.res.Direct
		require.NotNil(t, d)
		u, err := url.Parse(srv.URL)
		require.NoError(t, err)
		assert.Equal(t, serverReal, d.Server)
		assert.Equal(t, u.Host, d.ServerHost)
		assert.Zero(t, d.ServiceTimeMs, "the real server's pace is its own")
		assert.Zero(t, d.MaxConcurrent)
		assert.Len(t, d.PublishPICRuns, 1)
		assert.Positive(t, d.PublishPICSeconds, "every host published with a target")
		assert.Positive(t, d.PublishPlainSeconds)
		assert.Positive(t, d.PublishBareSeconds)
		// Counted through the proxy: a create, its marks and a target per host at least.
		assert.GreaterOrEqual(t, d.ConvergeWrites, 3*5)
		assert.Greater(t, d.ConvergeRequests, d.ConvergeWrites)
		assert.Positive(t, d.ChangeRequests)
		assert.Positive(t, d.RestartRequests)
		assert.Zero(t, d.RestartWrites, "a restarted PIC writes nothing to a converged Pangolin")
		assert.Positive(t, d.SteadyRequests)
		assert.Positive(t, d.Refreshes, "refreshes counted by their domain lists")
		assert.Positive(t, d.FullRefreshes, "a full refresh in the window")
		assert.Zero(t, d.ResyncWrites)
		assert.Positive(t, d.RepairDeleted, "a resource deleted by hand was created again")
		assert.Positive(t, d.RepairTargetEdit, "a target edited by hand was restored")
		assert.Positive(t, d.RepairBlockAccess, "blockAccess set by hand was restored")

		// PIC's targets and the plain clients' are on the site the settings name.
		sites := srv.sites()
		assert.GreaterOrEqual(t, len(sites), 3*5, "the plain, bare and PIC runs' targets")
		for _, site := range sites {
			assert.Equal(t, realSiteID, site)
		}
		// Nothing of the run is left, and nothing else was touched.
		srv.requireOnlyDecoys(t)

		data, err := json.Marshal(b.res)
		require.NoError(t, err)
		logMu.Lock()
		printed := logs.String()
		logMu.Unlock()
		for what, text := range map[string]string{"the log": printed, "the JSON": string(data), "the table": b.res.table()} {
			assert.NotContains(t, text, realKeySecret, "the key in %s", what)
		}
		assert.Contains(t, string(data), `"server":"real"`)
	})
}
