package integration_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
)

// publishersOf returns the owners ("namespace/name") of the PangolinResources that
// publish host, after their overrides, across namespaces.
func (w *world) publishersOf(c *assert.CollectT, host string) []string {
	var list tunnelv1alpha1.PangolinResourceList
	assert.NoError(c, w.c.List(w.ctx, &list))
	var owners []string
	for _, r := range list.Items {
		if r.Spec.HTTPConfig != nil && r.Spec.HTTPConfig.Subdomain+"."+r.Spec.HTTPConfig.DomainName == host && len(r.OwnerReferences) > 0 {
			owners = append(owners, r.Namespace+"/"+r.OwnerReferences[0].Name)
		}
	}
	return owners
}

// in is w seen from namespace ns: its objects, and its up-to-date counts.
func (w *world) in(ns string) *world {
	other := *w
	other.ns = ns
	return &other
}

func (w *world) eventuallyPublishers(host string, owners ...string) {
	w.t.Helper()
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		assert.ElementsMatch(c, owners, w.publishersOf(c, host), "owners of the resources publishing %s", host)
	}, wait, tick)
}

// squatter is tenant B's Ingress: a host of its own, turned by the subdomain annotation
// into subdomain.<its domain>, served on path.
func squatter(namespace, host, path, subdomain string) *networkingv1.Ingress {
	ing := ingressFor("squat", "pangolin", rule(host, path, "web", 8080))
	ing.Namespace = namespace
	ing.Annotations = map[string]string{pic.AnnotationSubdomain: subdomain}
	return ing
}

// An older tenant owns a host; a younger one, in another namespace, writes a host of its
// own and the subdomain annotation that publishes it on the owner's host. It gets a
// HostConflict and publishes nothing; the owner is untouched; the owner's deletion
// hands the host over, as for a literal conflict.
func TestOverrideOntoOwnedHost(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		tenantB := testenv.NewNamespace(t, env.Client)
		for _, ns := range []string{w.ns, tenantB} {
			w.tunnelIn(ns, "default")
			svc := serviceObject("web", 8080)
			svc.Namespace = ns
			w.create(svc)
		}
		owned := w.host("app") // app.<ns>.example.com: subdomain app.<ns> of example.com
		owner := ingressFor("owner", "pangolin", rule(owned, "/", "web", 8080))
		w.create(owner)
		w.eventuallyPublishers(owned, w.ns+"/owner")
		testenv.NextCreationSecond()

		b := w.in(tenantB)
		squatUpToDate := b.upToDate("ingress", "squat")
		w.create(squatter(tenantB, w.host("x"), "/", "app."+w.ns))
		note := w.eventuallyEventIn(tenantB, pic.ReasonHostConflict)
		assert.Contains(t, note, owned)
		assert.Contains(t, note, "Ingress "+w.ns+"/owner", "the warning names the owner")
		// What a wrong reconcile of the squatter would write, it has written once one of
		// them finds nothing to change.
		b.eventuallyUpToDateSince(squatUpToDate, "ingress", "squat")
		assert.Equal(t, []string{w.ns + "/owner"}, w.publishersOf(&assert.CollectT{}, owned), "the owner alone publishes its host")
		var ofB tunnelv1alpha1.PangolinResourceList
		require.NoError(t, w.c.List(w.ctx, &ofB))
		for _, r := range ofB.Items {
			assert.NotEqual(t, tenantB, r.Namespace, "nothing is published for the younger tenant: %s", r.Name)
		}

		require.NoError(t, w.c.Delete(w.ctx, owner))
		// No garbage collector runs in envtest: the deleted Ingress's resource stays.
		w.eventuallyPublishers(owned, w.ns+"/owner", tenantB+"/squat")
	})
}

// The same attack in direct mode, with the access the squatter asks for: its resource
// would sit beside the owner's on the owner's host, its longer path first.
func TestDirectOverrideOntoOwnedHost(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		tenantA := testenv.NewNamespace(t, env.Client)
		tenantB := testenv.NewNamespace(t, env.Client)
		w, _ := startDirectWorld(t, env, fake, tenantA, func(cfg *config.Config) { cfg.WatchNamespaces = []string{tenantA, tenantB} })
		for _, ns := range []string{tenantA, tenantB} {
			svc := serviceObject("web", 8080)
			svc.Namespace = ns
			w.create(svc)
		}
		urlA, urlB := "http://web."+tenantA+".svc.cluster.local:8080", "http://web."+tenantB+".svc.cluster.local:8080"

		owner := ingressFor("owner", "pangolin", rule("app.example.com", "/", "web", 8080))
		w.create(owner)
		eventuallyServed(t, fake, map[string][]string{"app.example.com": {urlA}})
		testenv.NextCreationSecond()

		b := w.in(tenantB)
		squatUpToDate := b.upToDate("ingress", "squat")
		squat := squatter(tenantB, "x.example.com", "/login", "app")
		squat.Annotations[pic.AnnotationSSO] = "false"
		w.create(squat)
		assert.Contains(t, w.eventuallyEventIn(tenantB, pic.ReasonHostConflict), "Ingress "+tenantA+"/owner")
		b.eventuallyUpToDateSince(squatUpToDate, "ingress", "squat")
		assert.Equal(t, map[string][]string{"app.example.com": {urlA}}, fake.Served(), "the owner alone is served on its host")
		var onHost []pangolinsim.Resource
		for _, r := range fake.Resources() {
			if r.FullDomain == "app.example.com" {
				onHost = append(onHost, r)
			}
		}
		require.Len(t, onHost, 1, "one resource on the owner's host")
		assert.True(t, onHost[0].SSO, "the owner's resource keeps its SSO")

		require.NoError(t, w.c.Delete(w.ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: "owner"}}))
		eventuallyServed(t, fake, map[string][]string{"app.example.com": {urlB}})
	})
}

// An HTTPRoute takes its host from a listener and publishes it elsewhere through the
// subdomain annotation: it claims the host it publishes, against an older Ingress
// (which keeps its host), and, once it owns it, against a younger Ingress naming that
// host (found through the route's override key, since the route's own index cannot see
// the listener).
func TestHTTPRouteOverrideClaimsPublishedHost(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		listenerHost, published := w.host("x"), w.host("app")
		w.updateGateway(func(gw *gatewayv1.Gateway) { gw.Spec.Listeners[0].Hostname = ptr.To(gatewayv1.Hostname(listenerHost)) })
		overriding := func(name string) *gatewayv1.HTTPRoute {
			hr := w.httpRoute(name, "")
			hr.Annotations = map[string]string{pic.AnnotationSubdomain: "app." + w.ns}
			return hr
		}

		owner := ingressFor("owner", "pangolin", rule(published, "/", "web", 8080))
		w.create(owner)
		w.eventuallyPublishers(published, w.ns+"/owner")
		testenv.NextCreationSecond()
		squatUpToDate := w.upToDate(gatewayapi.Name, "squat")
		w.create(overriding("squat"))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "Ingress "+w.ns+"/owner")
		w.eventuallyUpToDateSince(squatUpToDate, gatewayapi.Name, "squat")
		assert.Equal(t, []string{w.ns + "/owner"}, w.publishersOf(&assert.CollectT{}, published), "the Ingress alone publishes its host")

		// The Ingress lets the host go: the route takes it, and a younger Ingress naming
		// it loses to the route.
		w.updateIngress("owner", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = w.host("elsewhere") })
		w.eventuallyPublishers(published, w.ns+"/squat")
		testenv.NextCreationSecond()
		lateUpToDate := w.upToDate("ingress", "late")
		w.create(ingressFor("late", "pangolin", rule(published, "/", "web", 8080)))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var list eventsv1.EventList
			assert.NoError(c, w.c.List(w.ctx, &list, client.InNamespace(w.ns)))
			found := false
			for _, e := range list.Items {
				found = found || e.Reason == pic.ReasonHostConflict && e.Regarding.Name == "late" && strings.Contains(e.Note, "HTTPRoute "+w.ns+"/squat")
			}
			assert.True(c, found, "HostConflict for the younger Ingress, naming the route")
		}, wait, tick)
		w.eventuallyUpToDateSince(lateUpToDate, "ingress", "late")
		assert.Equal(t, []string{w.ns + "/squat"}, w.publishersOf(&assert.CollectT{}, published), "the route alone publishes its host")
	})
}

// In direct mode, an HTTPRoute that takes x.example.com from its listener and publishes
// it as app.example.com through the subdomain annotation loses to the older Ingress
// that owns app.example.com, and takes the host once that Ingress is deleted.
func TestDirectHTTPRouteOverrideOntoOwnedHost(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		tenantA := testenv.NewNamespace(t, env.Client)
		tenantB := testenv.NewNamespace(t, env.Client)
		a, _ := startDirectWorld(t, env, fake, tenantA, withHTTPRoutes, func(cfg *config.Config) { cfg.WatchNamespaces = []string{tenantA, tenantB} })
		w := a.in(tenantB)
		for _, ns := range []string{tenantA, tenantB} {
			svc := serviceObject("web", 8080)
			svc.Namespace = ns
			w.create(svc)
		}
		urlA, urlB := "http://web."+tenantA+".svc.cluster.local:8080", "http://web."+tenantB+".svc.cluster.local:8080"

		owner := ingressFor("owner", "pangolin", rule("app.example.com", "/", "web", 8080))
		owner.Namespace = tenantA
		w.create(owner)
		eventuallyServed(t, fake, map[string][]string{"app.example.com": {urlA}})
		testenv.NextCreationSecond()

		gw := &gatewayWorld{world: w, class: "pangolin-" + tenantB}
		w.create(&gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: gw.class},
			Spec:       gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName},
		})
		w.create(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "public"},
			Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(gw.class), Listeners: []gatewayv1.Listener{httpListener("x.example.com")}},
		})
		squat := gw.httpRoute("squat", tenantB)
		squat.Annotations = map[string]string{pic.AnnotationSubdomain: "app", pic.AnnotationSSO: "false"}
		squatUpToDate := w.upToDate(gatewayapi.Name, "squat")
		w.create(squat)
		assert.Contains(t, w.eventuallyEventIn(tenantB, pic.ReasonHostConflict), "Ingress "+tenantA+"/owner")
		w.eventuallyUpToDateSince(squatUpToDate, gatewayapi.Name, "squat")
		assert.Equal(t, map[string][]string{"app.example.com": {urlA}}, fake.Served(), "the owner alone is served on its host")

		require.NoError(t, w.c.Delete(w.ctx, owner))
		eventuallyServed(t, fake, map[string][]string{"app.example.com": {urlB}})
	})
}
