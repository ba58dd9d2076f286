package integration_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
)

// directSite is the fake Pangolin's site: the default tunnel of a direct-mode PIC.
const directSite = "murky-merriams-shrew"

// startDirect runs PIC with the direct sink (sink: pangolin) against fake, watching ns
// only (the env is shared, and each test has its own Pangolin), and returns a stop
// function for tests that restart it; it stops with the test anyway.
func startDirect(t *testing.T, env *testenv.Env, fake *simtest.Server, ns string, configure ...func(*config.Config)) func() {
	t.Helper()
	_, stop := startDirectWorld(t, env, fake, ns, configure...)
	return stop
}

// startDirectWorld is startDirect, with the world of ns whose up-to-date counts are this
// PIC's: a restarted PIC counts from zero in the world it returns.
func startDirectWorld(t *testing.T, env *testenv.Env, fake *simtest.Server, ns string, configure ...func(*config.Config)) (*world, func()) {
	t.Helper()
	reconciled := &reconcileCounts{}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := config.Default()
	cfg.Sink = pangolin.Name
	cfg.Pangolin.URL, cfg.Pangolin.Org, cfg.Pangolin.OwnerID = fake.BaseURL(), "interop", "integration"
	cfg.Pangolin.APIKey = config.Secret(pangolinsim.RootKey.Token())
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress = "0", "0"
	cfg.ResyncPeriod = time.Hour // tests must not pass thanks to a resync
	cfg.WatchNamespaces = []string{ns}
	cfg.Tunnels.Default = tunnel.Tunnel{Name: directSite}
	for _, c := range configure {
		c(cfg)
	}
	mgr, err := manager.New(ctx, cfg, env.Config, builtin.Registry, manager.OnReconciled(reconciled.record))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	t.Cleanup(stop)
	require.True(t, mgr.GetCache().WaitForCacheSync(ctx))
	// The world outlives this PIC: a test that restarts it goes on with the same objects.
	return &world{t: t, ctx: context.Background(), c: env.Client, ns: ns, reconciled: reconciled}, stop
}

func eventuallyServed(t *testing.T, fake *simtest.Server, want map[string][]string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, want, fake.Served())
	}, wait, tick)
}

// TestDirectMode runs the whole lifecycle through Pangolin's API, with no operator and
// no PangolinResource CRD installed.
func TestDirectMode(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		outer := t // PIC runs across subtests: it stops with this test, not with one of them
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		decoy := fake.SeedResource(pangolinsim.Resource{Name: "hand-made", DomainID: "domain1", Subdomain: ptr.To("taken"), Enabled: true, SSO: true})
		fake.SeedTarget(pangolinsim.Target{ResourceID: decoy.ID, SiteID: 1, IP: "10.0.0.9", Port: 80, Method: "http", Enabled: true})
		fake.SeedResource(pangolinsim.Resource{NiceID: "pic-cluster-b-0123456789abcdef", Name: "b.example.com (Ingress shop/web)",
			DomainID: "domain1", Subdomain: ptr.To("b"), Enabled: true})
		decoys := fake.Resources()

		ns := testenv.NewNamespace(t, env.Client)
		stop := startDirect(t, env, fake, ns, withHTTPRoutes)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		w.service("web", 8080)
		w.service("api", 9090)
		webURL, apiURL := "http://web."+ns+".svc.cluster.local:8080", "http://api."+ns+".svc.cluster.local:9090"

		w.create(ingressFor("shop", "pangolin", rule("app.example.com", "/", "web", 8080)))
		eventuallyServed(t, fake, map[string][]string{"app.example.com": {webURL}, "taken.example.com": {"http://10.0.0.9:80"}})
		w.eventuallyEvent(pic.ReasonCreated)
		var app pangolinsim.Resource
		for _, r := range fake.Resources() {
			if r.FullDomain == "app.example.com" {
				app = r
			}
		}
		assert.Equal(t, "app.example.com (Ingress "+ns+"/shop)", app.Name)
		assert.True(t, strings.HasPrefix(app.NiceID, "pic-integration-"), app.NiceID)

		t.Run("editing the backend port leaves only the new target", func(t *testing.T) {
			w.updateIngress("shop", func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090}}
			})
			eventuallyServed(t, fake, map[string][]string{"app.example.com": {apiURL}, "taken.example.com": {"http://10.0.0.9:80"}})
			assert.Len(t, fake.Targets(app.ID), 1)
		})
		t.Run("a host another resource serves is taken in Pangolin, and that resource is untouched", func(t *testing.T) {
			w.create(ingressFor("squat", "pangolin", rule("taken.example.com", "/", "web", 8080)))
			assert.Contains(t, w.eventuallyEventIn(ns, pic.ReasonHostTakenInPangolin), "which PIC did not create")
			assert.Equal(t, decoys, fake.Resources()[:2])
			assert.Len(t, fake.Targets(decoy.ID), 1)
		})
		t.Run("deleting the Ingress deletes its resource", func(t *testing.T) {
			w.create(ingressFor("blog", "pangolin", rule("blog.example.com", "/", "web", 8080)))
			eventuallyServed(t, fake, map[string][]string{"app.example.com": {apiURL}, "blog.example.com": {webURL}, "taken.example.com": {"http://10.0.0.9:80"}})
			require.NoError(t, w.c.Delete(w.ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blog"}}))
			eventuallyServed(t, fake, map[string][]string{"app.example.com": {apiURL}, "taken.example.com": {"http://10.0.0.9:80"}})
		})
		t.Run("a restarted PIC writes nothing to Pangolin", func(t *testing.T) {
			stop()
			fake.ResetCounts()
			exposed, taken := len(w.notes(t, "shop", pic.ReasonExposed)), len(w.notes(t, "squat", pic.ReasonHostTakenInPangolin))
			stop = startDirect(outer, env, fake, ns, withHTTPRoutes)
			// Both Ingresses have been reconciled by the restarted PIC, from what it read
			// of Pangolin, and their plans applied: each PIC reports what it finds once,
			// in an event of its own, after it applied the plan; shop is exposed, squat
			// refused again before any write.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				assert.Greater(c, len(w.notes(c, "shop", pic.ReasonExposed)), exposed, "shop exposed again")
				assert.Greater(c, len(w.notes(c, "squat", pic.ReasonHostTakenInPangolin)), taken, "squat refused again")
			}, wait, tick)
			assert.Zero(t, fake.Writes(), "writes: %v", fake.Counts())
		})
		t.Run("an Ingress deleted while PIC is stopped is removed at the next start", func(t *testing.T) {
			stop()
			require.NoError(t, w.c.Delete(w.ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}))
			stop = startDirect(outer, env, fake, ns, withHTTPRoutes)
			eventuallyServed(t, fake, map[string][]string{"taken.example.com": {"http://10.0.0.9:80"}})
		})
		t.Run("an outage deletes nothing, and PIC converges after it", func(t *testing.T) {
			w.create(ingressFor("news", "pangolin", rule("news.example.com", "/", "web", 8080)))
			eventuallyServed(t, fake, map[string][]string{"news.example.com": {webURL}, "taken.example.com": {"http://10.0.0.9:80"}})
			deletes := fake.Deletes()
			fake.SetFault(simtest.Outage(http.StatusServiceUnavailable))
			failed := counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "ingress", "result": "error"})
			w.updateIngress("news", func(ing *networkingv1.Ingress) {
				ing.Spec.Rules = []networkingv1.IngressRule{rule("press.example.com", "/", "api", 9090)}
			})
			require.Eventually(t, func() bool {
				return counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "ingress", "result": "error"}) > failed
			}, wait, tick, "a reconcile failed on the outage")
			unavailable := w.eventuallyEventIn(ns, pic.ReasonSinkUnavailable)
			assert.Contains(t, unavailable, "503", "the Warning says what Pangolin answered")
			assert.Contains(t, unavailable, "nothing is removed")
			assert.Equal(t, deletes, fake.Deletes(), "no delete is sent during the outage: %v", fake.Counts())
			fake.SetFault(nil)
			eventuallyServed(t, fake, map[string][]string{"press.example.com": {apiURL}, "taken.example.com": {"http://10.0.0.9:80"}})
		})
		t.Run("an HTTPRoute is published through its Gateway, which is Programmed by the site", func(t *testing.T) {
			gw := &gatewayWorld{world: w, class: "pangolin"}
			w.create(&gatewayv1.GatewayClass{
				ObjectMeta: metav1.ObjectMeta{Name: gw.class},
				Spec:       gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName},
			})
			w.create(&gatewayv1.Gateway{
				ObjectMeta: metav1.ObjectMeta{Name: "public"},
				Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(gw.class), Listeners: []gatewayv1.Listener{httpListener("")}},
			})
			hr := gw.httpRoute("store", ns, "store.example.com")
			w.create(hr)
			eventuallyServed(t, fake, map[string][]string{"store.example.com": {webURL}, "press.example.com": {apiURL}, "taken.example.com": {"http://10.0.0.9:80"}})
			gw.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				var got gatewayv1.Gateway
				assert.NoError(c, w.c.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: "public"}, &got))
				assert.True(c, meta.IsStatusConditionTrue(got.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)))
			}, wait, tick)
			var named pangolinsim.Resource
			for _, r := range fake.Resources() {
				if r.FullDomain == "store.example.com" {
					named = r
				}
			}
			assert.Equal(t, "store.example.com (HTTPRoute "+ns+"/store)", named.Name)

			// Filters Pangolin can carry reach its routers; one it cannot refuses the route.
			editRoute := func(mutate func(*gatewayv1.HTTPRouteRule)) {
				require.EventuallyWithT(t, func(c *assert.CollectT) {
					var got gatewayv1.HTTPRoute
					if !assert.NoError(c, w.c.Get(w.ctx, client.ObjectKeyFromObject(hr), &got)) {
						return
					}
					mutate(&got.Spec.Rules[0])
					assert.NoError(c, w.c.Update(w.ctx, &got))
				}, wait, tick)
			}
			editRoute(func(rule *gatewayv1.HTTPRouteRule) {
				rule.Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/shop")}}}
				rule.Filters = []gatewayv1.HTTPRouteFilter{
					{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
						Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To("/")},
					}},
					{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
						Set: []gatewayv1.HTTPHeader{{Name: "X-Env", Value: "prod"}},
					}},
				}
			})
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				var store []pangolinsim.Router
				for _, r := range fake.Routers() {
					if r.Host == "store.example.com" {
						store = append(store, r)
					}
				}
				if assert.Len(c, store, 1) && assert.NotNil(c, store[0].Rewrite) {
					assert.Equal(c, "replacePathRegex ^/shop(?:/(.*))?$ -> /$1", store[0].Rewrite.String())
					assert.Equal(c, map[string]string{"X-Env": "prod"}, store[0].RequestHeaders)
				}
			}, wait, tick)
			gw.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)
			editRoute(func(rule *gatewayv1.HTTPRouteRule) {
				rule.Filters[1].RequestHeaderModifier.Remove = []string{"X-Debug"}
			})
			gw.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteReasonUnsupportedValue)
			eventuallyServed(t, fake, map[string][]string{"press.example.com": {apiURL}, "taken.example.com": {"http://10.0.0.9:80"}})

			require.NoError(t, w.c.Delete(w.ctx, hr))
			eventuallyServed(t, fake, map[string][]string{"press.example.com": {apiURL}, "taken.example.com": {"http://10.0.0.9:80"}})
		})
		assert.Equal(t, decoys, fake.Resources()[:2], "the decoys were never touched")
	})
}
