package pangolin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// newtSite is a Newt site of healthWorld's, beside the default local site.
const newtSite = "edge-newt"

func healthWorld(t *testing.T) *world {
	return newWorld(t, func(o *pangolinsim.Options) {
		o.Sites = []pangolinsim.Site{
			{ID: 1, NiceID: site, Name: "k8s-local", Type: "local"},
			{ID: 2, NiceID: newtSite, Name: "edge", Type: "newt"},
		}
	})
}

var (
	httpProbe = route.HealthCheck{Mode: "http", Scheme: "http", Path: "/healthz", Port: 8080,
		IntervalSeconds: 10, TimeoutSeconds: 1, HealthyThreshold: 1, UnhealthyThreshold: 3}
	tcpProbe = route.HealthCheck{Mode: "tcp", Port: 5432, IntervalSeconds: 5}
)

// checked is r through tunnel, its backends checked by probe.
func checked(r route.Route, tunnel string, probe route.HealthCheck) route.Route {
	r.Tunnel.Name = tunnel
	r.Paths = append([]route.PathRule(nil), r.Paths...)
	for i := range r.Paths {
		r.Paths[i].Backend.Health = probe
	}
	return r
}

// TestHealthChecks: each step reconciles one object's route and says what Pangolin
// then holds of its one target, and which writes it took.
func TestHealthChecks(t *testing.T) {
	app := ingress("shop", "app")
	db := service("prod", "db")
	httpRoute := web(app, "app.example.com", 80)
	tcpRoute := rawRoute(db, route.ProtocolTCP, 5432, 5432)
	httpHost := backend("web", "shop", 80).Host
	tcpHost := "db.prod.svc.cluster.local"

	type step struct {
		route       route.Route
		wantWrites  []string // the write requests, with the target's id as :id
		wantEnabled bool
		wantHC      pangolinsim.HealthCheck // compared when wantEnabled
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"an http check is created with the target", []step{
			{route: checked(httpRoute, newtSite, httpProbe), wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: httpHost, Port: 8080, Mode: "http", Scheme: "http", Path: "/healthz", Method: "GET",
					Interval: 10, Timeout: 1, HealthyThreshold: 1, UnhealthyThreshold: 3}},
		}},
		{"a raw target gets a tcp check", []step{
			{route: checked(tcpRoute, newtSite, tcpProbe), wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: tcpHost, Port: 5432, Mode: "tcp", Interval: 5}},
		}},
		{"a changed probe updates the target in place", []step{
			{route: checked(httpRoute, newtSite, httpProbe), wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: httpHost, Port: 8080, Mode: "http", Scheme: "http", Path: "/healthz", Method: "GET",
					Interval: 10, Timeout: 1, HealthyThreshold: 1, UnhealthyThreshold: 3}},
			{route: checked(httpRoute, newtSite, tcpProbe), wantWrites: []string{"POST /v1/target/:id"}, wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: httpHost, Port: 5432, Mode: "tcp", Interval: 5}},
		}},
		{"a check no longer asked is turned off in place", []step{
			{route: checked(httpRoute, newtSite, httpProbe), wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: httpHost, Port: 8080, Mode: "http", Scheme: "http", Path: "/healthz", Method: "GET",
					Interval: 10, Timeout: 1, HealthyThreshold: 1, UnhealthyThreshold: 3}},
			{route: checked(httpRoute, newtSite, route.HealthCheck{}), wantWrites: []string{"POST /v1/target/:id"}},
		}},
		{"a check asked later is added in place", []step{
			{route: checked(tcpRoute, newtSite, route.HealthCheck{})},
			{route: checked(tcpRoute, newtSite, tcpProbe), wantWrites: []string{"POST /v1/target/:id"}, wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: tcpHost, Port: 5432, Mode: "tcp", Interval: 5}},
		}},
		{"on a local site no check is sent, and nothing is written again", []step{
			{route: checked(httpRoute, site, httpProbe)},
			{route: checked(httpRoute, site, httpProbe), wantWrites: []string{}},
		}},
		{"moving to a Newt site sends the check", []step{
			{route: checked(tcpRoute, site, tcpProbe)},
			{route: checked(tcpRoute, newtSite, tcpProbe), wantWrites: []string{"POST /v1/target/:id"}, wantEnabled: true,
				wantHC: pangolinsim.HealthCheck{Hostname: tcpHost, Port: 5432, Mode: "tcp", Interval: 5}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := healthWorld(t)
			w.fault(nil)
			for i, s := range tc.steps {
				w.mu.Lock()
				w.requests = nil
				w.mu.Unlock()
				w.converge(s.route.Origin, s.route)
				var targets []pangolinsim.Target
				for _, r := range w.fake.Resources() {
					targets = append(targets, w.fake.Targets(r.ID)...)
				}
				require.Len(t, targets, 1, "step %d", i)
				tg := targets[0]
				if s.wantWrites != nil {
					want := []string{}
					for _, wr := range s.wantWrites {
						want = append(want, strings.Replace(wr, ":id", itoa(tg.ID), 1))
					}
					assert.Equal(t, want, append([]string{}, w.writesLogged()...), "step %d: writes", i)
				}
				assert.Equal(t, s.wantEnabled, tg.HCEnabled, "step %d: hcEnabled", i)
				if s.wantEnabled {
					assert.Equal(t, s.wantHC, tg.HC, "step %d: the check stored", i)
				}
			}
		})
	}
}

// TestConvergedHealthChecksAreNotWritten: after a restart and across resyncs, full
// refreshes included, a target with its check costs no write, on a Newt site (read
// back from Pangolin) and on a local site (the mirror's note of what was left unsent is
// rebuilt by the first reconcile, which writes nothing).
func TestConvergedHealthChecksAreNotWritten(t *testing.T) {
	for _, tunnel := range []string{newtSite, site} {
		t.Run(tunnel, func(t *testing.T) {
			w := healthWorld(t)
			app, db := ingress("shop", "app"), service("prod", "db")
			httpRoute := checked(web(app, "app.example.com", 80), tunnel, httpProbe)
			tcpRoute := checked(rawRoute(db, route.ProtocolTCP, 5432, 5432), tunnel, tcpProbe)
			w.converge(app, httpRoute)
			w.converge(db, tcpRoute)

			c := onClock(w) // a restart, on the test's clock
			w.fake.ResetCounts()
			w.converge(app, httpRoute)
			w.converge(db, tcpRoute)
			assert.Zero(t, w.fake.Writes(), "after a restart: %v", w.fake.Counts())

			for range 2 {
				c.Add(DefaultDriftPeriod)
				require.NoError(t, w.sink.Refresh(w.ctx))
				w.fake.ResetCounts()
				for _, r := range []route.Route{httpRoute, tcpRoute} {
					o := w.converge(r.Origin, r)
					assert.True(t, o.plan.Empty(), "%s read back as asked after a full resync: %+v", r.Host, o.plan)
				}
				assert.Zero(t, w.fake.Writes(), "across a full resync: %v", w.fake.Counts())
			}
		})
	}
}

// TestLocalSiteTargetsStayServed: on a local site the target created carries no check,
// so Pangolin serves it at once (with one, it would be left out until its next update).
func TestLocalSiteTargetsStayServed(t *testing.T) {
	w := healthWorld(t)
	app := ingress("shop", "app")
	w.converge(app, checked(web(app, "app.example.com", 80), site, httpProbe))
	tg := w.fake.Targets(w.resourceOn("app.example.com").ID)
	require.Len(t, tg, 1)
	assert.False(t, tg[0].HCEnabled, "no hcEnabled sent")
	assert.Equal(t, "unknown", tg[0].HCHealth)
	routers := w.fake.Routers()
	require.Len(t, routers, 1)
	assert.Equal(t, []string{"http://web.shop.svc.cluster.local:80"}, routers[0].Servers, "served")
}

// TestInvalidHealthCheckIsAWarning: a check Pangolin would refuse is not sent, the
// backend is published without it with a Warning, and is not tried again until it
// changes.
func TestInvalidHealthCheckIsAWarning(t *testing.T) {
	w := healthWorld(t)
	app := ingress("shop", "app")
	r := checked(web(app, "app.example.com", 80), newtSite, route.HealthCheck{Mode: "grpc", Port: 9000})
	o := w.reconcile(app, r)
	require.NoError(t, o.err)
	require.Len(t, o.rejections, 1)
	assert.Equal(t, pic.ReasonHealthCheckUnsupported, o.rejections[0].Reason)
	assert.Contains(t, o.rejections[0].Message, `health check mode "grpc" is not http or tcp`)
	assert.Equal(t, "/", o.rejections[0].Path, "the host is published: a rule, not the host, lost something")
	tg := w.fake.Targets(w.resourceOn("app.example.com").ID)
	require.Len(t, tg, 1)
	assert.False(t, tg[0].HCEnabled)

	w.fake.ResetCounts()
	o = w.reconcile(app, r)
	require.NoError(t, o.err)
	assert.True(t, o.plan.Empty(), "not planned again")
	assert.Zero(t, w.fake.Writes())
}

// TestHealthCheckEditedInPangolinIsWrittenBack: a check edited by hand is read by the
// next full refresh as drift, and written back in place.
func TestHealthCheckEditedInPangolinIsWrittenBack(t *testing.T) {
	w := healthWorld(t)
	c := onClock(w)
	app := ingress("shop", "app")
	r := checked(web(app, "app.example.com", 80), newtSite, httpProbe)
	w.converge(app, r)
	tg := w.fake.Targets(w.resourceOn("app.example.com").ID)[0]
	hc := healthCheckOf(r.Paths[0].Backend)
	hc.Interval = 99
	_, err := w.api.UpdateTarget(w.ctx, tg.ID, pangolinapi.TargetUpdate{SiteID: tg.SiteID, IP: tg.IP, Health: hc})
	require.NoError(t, err)

	c.Add(DefaultDriftPeriod)
	require.NoError(t, w.sink.Refresh(w.ctx))
	w.converge(app, r)
	got := w.fake.Targets(w.resourceOn("app.example.com").ID)
	require.Len(t, got, 1)
	assert.Equal(t, tg.ID, got[0].ID, "in place")
	assert.Equal(t, 10, got[0].HC.Interval, "written back")
}
