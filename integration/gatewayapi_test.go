package integration_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

// withHTTPRoutes opts the httproute source in, as PIC_SOURCES=ingress,httproute does.
func withHTTPRoutes(c *config.Config) {
	c.Sources = []string{ingress.Name, gatewayapi.Name}
}

// gatewayWorld is a world with a GatewayClass of PIC's (named after the test's namespace,
// since classes are cluster-wide) and a Gateway "public" with one HTTP listener.
type gatewayWorld struct {
	*world
	class string
}

func startGateway(t *testing.T, env *testenv.Env, listener gatewayv1.Listener) *gatewayWorld {
	w := &gatewayWorld{world: start(t, env, withHTTPRoutes)}
	w.class = "pangolin-" + w.ns
	w.create(&gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: w.class},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName},
	})
	w.tunnel("default")
	w.service("web", 8080)
	w.create(&gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "public"},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(w.class), Listeners: []gatewayv1.Listener{listener}},
	})
	return w
}

func httpListener(hostname string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}
	if hostname != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(hostname))
	}
	return l
}

// httpRoute is a route to Service web:8080 in namespace ns (the world's when empty)
// through Gateway public of the world's namespace.
func (w *gatewayWorld) httpRoute(name, ns string, hostnames ...string) *gatewayv1.HTTPRoute {
	hr := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
				Name: "public", Namespace: ptr.To(gatewayv1.Namespace(w.ns)),
			}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To(gatewayv1.PortNumber(8080))},
			}}}}},
		},
	}
	for _, h := range hostnames {
		hr.Spec.Hostnames = append(hr.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	return hr
}

// routeCondition waits until PIC's status entry for the route's first parent has
// condition t with status and reason, for the route's current generation.
func (w *gatewayWorld) routeCondition(hr *gatewayv1.HTTPRoute, t gatewayv1.RouteConditionType, status metav1.ConditionStatus, reason gatewayv1.RouteConditionReason) {
	w.t.Helper()
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		var got gatewayv1.HTTPRoute
		if !assert.NoError(c, w.c.Get(w.ctx, client.ObjectKeyFromObject(hr), &got)) {
			return
		}
		var ours []gatewayv1.RouteParentStatus
		for _, p := range got.Status.Parents {
			if p.ControllerName == pic.GatewayControllerName {
				ours = append(ours, p)
			}
		}
		if !assert.Len(c, ours, 1, "PIC's status.parents entries") {
			return
		}
		cond := meta.FindStatusCondition(ours[0].Conditions, string(t))
		if assert.NotNil(c, cond, "condition %s", t) {
			assert.Equal(c, status, cond.Status, "%s: %s", t, cond.Message)
			assert.Equal(c, string(reason), cond.Reason)
			assert.Equal(c, got.Generation, cond.ObservedGeneration)
		}
	}, wait, tick)
}

func (w *gatewayWorld) updateRoute(hr *gatewayv1.HTTPRoute, mutate func(*gatewayv1.HTTPRoute)) {
	w.t.Helper()
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		var got gatewayv1.HTTPRoute
		if !assert.NoError(c, w.c.Get(w.ctx, client.ObjectKeyFromObject(hr), &got)) {
			return
		}
		mutate(&got)
		assert.NoError(c, w.c.Update(w.ctx, &got))
	}, wait, tick)
}

func (w *gatewayWorld) updateGateway(mutate func(*gatewayv1.Gateway)) {
	w.t.Helper()
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		var gw gatewayv1.Gateway
		if !assert.NoError(c, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "public"}, &gw)) {
			return
		}
		mutate(&gw)
		assert.NoError(c, w.c.Update(w.ctx, &gw))
	}, wait, tick)
}

func TestHTTPRouteAttachAndDetach(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		hr := w.httpRoute("web", "", w.host("app"))
		w.create(hr)

		got := w.eventuallyHosts(w.host("app"))
		ref := metav1.GetControllerOf(ptr.To(got[w.host("app")]))
		require.NotNil(t, ref)
		assert.Equal(t, "HTTPRoute", ref.Kind)
		assert.Equal(t, hr.UID, ref.UID)
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)
		w.routeCondition(hr, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, gatewayv1.RouteReasonResolvedRefs)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var class gatewayv1.GatewayClass
			assert.NoError(c, w.c.Get(w.ctx, client.ObjectKey{Name: w.class}, &class))
			assert.True(c, meta.IsStatusConditionTrue(class.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted)))
			var gw gatewayv1.Gateway
			assert.NoError(c, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "public"}, &gw))
			assert.True(c, meta.IsStatusConditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted)))
			assert.True(c, meta.IsStatusConditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)))
			if assert.Len(c, gw.Status.Listeners, 1) {
				assert.EqualValues(c, 1, gw.Status.Listeners[0].AttachedRoutes)
			}
		}, wait, tick)

		t.Run("the status is written once and kept stable", func(t *testing.T) {
			// PIC writes no route or Gateway spec: its writes to them are status writes.
			statusWrites := func() []map[string]int {
				return []map[string]int{w.requests.writesTo(w.ns, "httproutes"), w.requests.writesTo(w.ns, "gateways")}
			}
			statusBefore := statusWrites()
			writesBefore := w.requests.writesTo(w.ns, "pangolinresources")
			upToDate := w.upToDate(gatewayapi.Name, hr.Name)
			gatewayReconciled := reconciles(t, "gateway")
			// A change to the Gateway brings every attached route back to reconcile,
			// and the Gateway's own status controller too; so does a new Service.
			w.updateGateway(func(gw *gatewayv1.Gateway) {
				gw.Annotations = map[string]string{"example.com/touched": "yes"}
			})
			w.service("sentinel", 9000)
			w.eventuallyUpToDateSince(upToDate, gatewayapi.Name, hr.Name)
			w.eventuallyReconciledSince(gatewayReconciled, "gateway")
			assert.Equal(t, statusBefore, statusWrites(),
				"a reconcile with nothing new wrote a status (the API server drops no-op updates, so only the requests show it)")
			assert.Equal(t, writesBefore, w.requests.writesTo(w.ns, "pangolinresources"), "a reconcile with nothing new wrote PangolinResources")
		})

		t.Run("removing the parentRef detaches the route", func(t *testing.T) {
			w.updateRoute(hr, func(r *gatewayv1.HTTPRoute) {
				r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "someone-elses"}}
			})
			w.eventuallyHosts()
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				var got gatewayv1.HTTPRoute
				assert.NoError(c, w.c.Get(w.ctx, client.ObjectKeyFromObject(hr), &got))
				assert.Empty(c, got.Status.Parents, "PIC's entry of a detached route")
			}, wait, tick)
		})
	})
}

func TestHTTPRouteHostnameIntersection(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		w.updateGateway(func(gw *gatewayv1.Gateway) {
			gw.Spec.Listeners[0].Hostname = ptr.To(gatewayv1.Hostname("*." + w.ns + ".example.com"))
		})
		// One hostname matches the listener's wildcard; the other is outside it.
		hr := w.httpRoute("web", "", w.host("app"), "app.elsewhere.example.org")
		w.create(hr)
		w.eventuallyHosts(w.host("app"))
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)

		none := w.httpRoute("none", "", "app.elsewhere.example.org")
		w.create(none)
		w.routeCondition(none, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteReasonNoMatchingListenerHostname)
		w.eventuallyEvent(string(gatewayv1.RouteReasonNoMatchingListenerHostname))
		w.eventuallyHosts(w.host("app"))
	})
}

func TestHTTPRouteAllowedRoutes(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		other := testenv.NewNamespace(t, w.c)
		w.create(serviceIn(other, "web", 8080))
		// The tunnel of an unqualified default name lives beside the Gateway.
		hr := w.httpRoute("web", other, w.host("team"))
		w.create(hr)
		// The listener's default is namespaces: Same.
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteReasonNotAllowedByListeners)
		w.eventuallyEventIn(other, string(gatewayv1.RouteReasonNotAllowedByListeners))

		t.Run("a selector on the namespace's labels admits it", func(t *testing.T) {
			w.updateGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.Listeners[0].AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{
					From:     ptr.To(gatewayv1.NamespacesFromSelector),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pangolin-test": w.ns}},
				}}
			})
			var ns corev1.Namespace
			require.NoError(t, w.c.Get(w.ctx, client.ObjectKey{Name: other}, &ns))
			ns.Labels = map[string]string{"pangolin-test": w.ns}
			require.NoError(t, w.c.Update(w.ctx, &ns))
			if env.Variant.Name == testenv.VariantFork {
				w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)
				return
			}
			// Admitted by the listener, then refused by the engine: the original CRD
			// cannot reach a tunnel beside the Gateway, in another namespace.
			w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteConditionReason(pic.ReasonTunnelNamespaceUnsupported))
		})
		t.Run("a listener for other kinds refuses it", func(t *testing.T) {
			w.updateGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.Listeners[0].AllowedRoutes = &gatewayv1.AllowedRoutes{
					Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)},
					Kinds:      []gatewayv1.RouteGroupKind{{Kind: "GRPCRoute"}},
				}
			})
			w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteReasonNotAllowedByListeners)
		})
	})
}

func serviceIn(ns, name string, port int32) *corev1.Service {
	svc := serviceObject(name, port)
	svc.Namespace = ns
	return svc
}

func TestHTTPRouteReferenceGrant(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		backends := testenv.NewNamespace(t, w.c)
		w.create(serviceIn(backends, "shared", 9090))
		hr := w.httpRoute("web", "", w.host("shared"))
		hr.Spec.Rules[0].BackendRefs[0].Name = "shared"
		hr.Spec.Rules[0].BackendRefs[0].Namespace = ptr.To(gatewayv1.Namespace(backends))
		hr.Spec.Rules[0].BackendRefs[0].Port = ptr.To(gatewayv1.PortNumber(9090))
		w.create(hr)
		w.routeCondition(hr, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionFalse, gatewayv1.RouteReasonRefNotPermitted)
		w.eventuallyEvent(string(gatewayv1.RouteReasonRefNotPermitted))
		assert.Empty(t, w.resources(), "published without a ReferenceGrant")

		grant := &gatewayv1.ReferenceGrant{
			ObjectMeta: metav1.ObjectMeta{Name: "routes-of-" + w.ns, Namespace: backends},
			Spec: gatewayv1.ReferenceGrantSpec{
				From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: gatewayv1.Namespace(w.ns)}},
				To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
			},
		}
		w.create(grant)
		got := w.eventuallyHosts(w.host("shared"))
		assert.Equal(t, "shared."+backends+".svc.cluster.local:9090", testenv.Backend(got[w.host("shared")]))
		w.routeCondition(hr, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, gatewayv1.RouteReasonResolvedRefs)

		// Revoking the grant unpublishes the host.
		require.NoError(t, w.c.Delete(w.ctx, grant))
		w.eventuallyHosts()
		w.routeCondition(hr, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionFalse, gatewayv1.RouteReasonRefNotPermitted)
	})
}

func TestHTTPRouteMerge(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		w.service("api", 9090)
		older := w.httpRoute("site", "", w.host("shop"))
		w.create(older)
		w.eventuallyHosts(w.host("shop"))
		testenv.NextCreationSecond()
		younger := w.httpRoute("api", "", w.host("shop"))
		younger.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
			Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/api"),
		}}}
		younger.Spec.Rules[0].BackendRefs[0].Name = "api"
		younger.Spec.Rules[0].BackendRefs[0].Port = ptr.To(gatewayv1.PortNumber(9090))
		// A catch-all too, which the older route's "/" shadows while it owns the host:
		// without one the original CRD (a single target) could not publish the host alone.
		catchAll := younger.Spec.Rules[0].DeepCopy()
		catchAll.Matches = nil
		younger.Spec.Rules = append(younger.Spec.Rules, *catchAll)
		w.create(younger)
		w.routeCondition(younger, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)

		// One resource for the host, owned by the oldest route.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			all := w.resources()
			if !assert.Len(c, all, 1) {
				return
			}
			r := all[w.host("shop")]
			ref := metav1.GetControllerOf(&r)
			if assert.NotNil(c, ref) {
				assert.Equal(c, older.UID, ref.UID, "the merged host belongs to the oldest route")
			}
			if w.fork {
				// Path routing: the younger route's /api rule is in the same resource.
				var backends []string
				for _, target := range r.Spec.Targets {
					backends = append(backends, target.IP)
				}
				assert.Contains(c, backends, "api."+w.ns+".svc.cluster.local")
				assert.Contains(c, backends, "web."+w.ns+".svc.cluster.local")
			}
		}, wait, tick)

		// The owner lets the host go: the younger route takes it over, without a resync.
		w.updateRoute(older, func(r *gatewayv1.HTTPRoute) {
			r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(w.host("elsewhere"))}
		})
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			r, ok := w.resources()[w.host("shop")]
			if !assert.True(c, ok, "host %s is published", w.host("shop")) {
				return
			}
			ref := metav1.GetControllerOf(&r)
			if assert.NotNil(c, ref) {
				assert.Equal(c, younger.UID, ref.UID, "the next route took the host over")
			}
			assert.Equal(c, "api."+w.ns+".svc.cluster.local:9090", testenv.Backend(r), "its catch-all now serves /")
		}, wait, tick)
	})
}

func TestHTTPRouteUnsupportedMatch(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		hr := w.httpRoute("web", "", w.host("headers"))
		hr.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Canary", Value: "1"}},
		}}
		w.create(hr)
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteReasonUnsupportedValue)
		w.eventuallyEvent(string(gatewayv1.RouteReasonUnsupportedValue))
		assert.Empty(t, w.resources(), "a route half-served without its header match")

		// Dropping the match makes it publishable.
		w.updateRoute(hr, func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].Matches = nil })
		w.eventuallyHosts(w.host("headers"))
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)
	})
}

// TestWithoutGatewayAPICRDs: with the httproute source asked for but no Gateway API
// CRDs installed, PIC starts and keeps serving Ingresses.
func TestWithoutGatewayAPICRDs(t *testing.T) {
	testenv.SkipIfShort(t)
	variant, err := testenv.VariantByName(testenv.VariantFork)
	require.NoError(t, err)
	env, err := testenv.StartEnv(variant, false)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })

	w := start(t, env, withHTTPRoutes)
	w.tunnel("default")
	w.service("web", 8080)
	w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
	w.eventuallyHosts(w.host("app"))
}

// TestHTTPRouteHeldHostStaysClaimed: a route whose backend has gone away for a while
// keeps what it published, and keeps its host too: a younger claimant is refused
// meanwhile rather than published beside it.
func TestHTTPRouteHeldHostStaysClaimed(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		shop := w.host("shop")
		w.service("api", 9090)
		older := w.httpRoute("site", "", shop)
		w.create(older)
		w.eventuallyHosts(shop)
		require.NoError(t, w.c.Delete(w.ctx, serviceIn(w.ns, "web", 8080)))
		w.routeCondition(older, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionFalse, gatewayv1.RouteReasonBackendNotFound)

		testenv.NextCreationSecond()
		w.create(ingressFor("legacy", "pangolin", rule(shop, "/", "api", 9090)))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "HTTPRoute "+w.ns+"/site", "the warning names the holder")
		w.eventuallyOwners(shop, w.ns+"/site")
	})
}

// TestHTTPRouteListenerHostClaimants: a route without hostnames is served under its
// Gateway's listener hostname. Changing or deleting it reaches the other claimants of
// that host at once, as it does for a route that names its hosts.
func TestHTTPRouteListenerHostClaimants(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		shop := w.host("shop")
		w.updateGateway(func(gw *gatewayv1.Gateway) { gw.Spec.Listeners[0].Hostname = ptr.To(gatewayv1.Hostname(shop)) })
		w.service("api", 9090)
		older := w.httpRoute("site", "")
		w.create(older)
		w.eventuallyHosts(shop)
		testenv.NextCreationSecond()

		if w.fork {
			// Path routing: a younger route's rules are merged into the older's resource,
			// and an edit of the younger one reaches it.
			younger := w.httpRoute("api", "")
			younger.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
				Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/api"),
			}}}
			younger.Spec.Rules[0].BackendRefs[0].Name = "api"
			younger.Spec.Rules[0].BackendRefs[0].Port = ptr.To(gatewayv1.PortNumber(9090))
			w.create(younger)
			apiPaths := func(c *assert.CollectT) []string {
				r, ok := w.resources()[shop]
				if !assert.True(c, ok, "host %s is published", shop) {
					return nil
				}
				var paths []string
				for _, target := range r.Spec.Targets {
					if target.IP == "api."+w.ns+".svc.cluster.local" {
						paths = append(paths, target.Path)
					}
				}
				return paths
			}
			// A prefix is written as a regular expression ("^/api(/.*)?$"), which matches
			// the path and what lies below it, but not /apix.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				paths := apiPaths(c)
				assert.Len(c, paths, 1)
				assert.Contains(c, strings.Join(paths, " "), "/api")
			}, wait, tick)
			w.updateRoute(younger, func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].Matches[0].Path.Value = ptr.To("/v2") })
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				paths := apiPaths(c)
				assert.Len(c, paths, 1)
				assert.Contains(c, strings.Join(paths, " "), "/v2")
			}, wait, tick)
			require.NoError(t, w.c.Delete(w.ctx, younger))
			require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Empty(c, apiPaths(c)) }, wait, tick)
		}

		// An Ingress naming the listener's host loses to the older route, and gets the
		// host the moment the route is deleted.
		legacyUpToDate := w.upToDate("ingress", "legacy")
		w.create(ingressFor("legacy", "pangolin", rule(shop, "/", "api", 9090)))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "HTTPRoute "+w.ns+"/site")
		// The Ingress's reconcile is over: only the deletion can wake it.
		w.eventuallyUpToDateSince(legacyUpToDate, "ingress", "legacy")
		require.NoError(t, w.c.Delete(w.ctx, older))
		// No garbage collector runs in envtest: the deleted route's resource stays.
		w.eventuallyOwners(shop, w.ns+"/site", w.ns+"/legacy")
	})
}

// TestGatewayListenerHostnameMoves: changing a listener's hostname moves the routes
// without hostnames attached to it, and an Ingress claiming the hostname they leave
// gets it at once.
func TestGatewayListenerHostnameMoves(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		shop, moved := w.host("shop"), w.host("moved")
		w.updateGateway(func(gw *gatewayv1.Gateway) { gw.Spec.Listeners[0].Hostname = ptr.To(gatewayv1.Hostname(shop)) })
		w.service("api", 9090)
		w.create(w.httpRoute("site", ""))
		w.eventuallyHosts(shop)
		testenv.NextCreationSecond()

		legacyUpToDate := w.upToDate("ingress", "legacy")
		w.create(ingressFor("legacy", "pangolin", rule(shop, "/", "api", 9090)))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "HTTPRoute "+w.ns+"/site")
		// The Ingress's reconcile is over: only the Gateway's change can wake it.
		w.eventuallyUpToDateSince(legacyUpToDate, "ingress", "legacy")
		w.updateGateway(func(gw *gatewayv1.Gateway) { gw.Spec.Listeners[0].Hostname = ptr.To(gatewayv1.Hostname(moved)) })
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, []string{w.ns + "/legacy"}, w.ownersOf(c, shop), "owners of %s", shop)
			assert.Equal(c, []string{w.ns + "/site"}, w.ownersOf(c, moved), "owners of %s", moved)
		}, wait, tick)
	})
}

// TestRefusedRouteClaimsNothing: a route its Gateway does not admit claims none of its
// hostnames, even while a missing backend holds what it has: an Ingress naming one of
// them is published.
func TestRefusedRouteClaimsNothing(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		other := testenv.NewNamespace(t, w.c)
		free := w.host("free")
		refused := w.httpRoute("squat", other, free)
		refused.Spec.Rules[0].BackendRefs[0].Name = "missing"
		w.create(refused)
		// The listener admits routes of its own namespace only.
		w.routeCondition(refused, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteReasonNotAllowedByListeners)
		testenv.NextCreationSecond()

		w.create(ingressFor("shop", "pangolin", rule(free, "/", "web", 8080)))
		w.eventuallyOwners(free, w.ns+"/shop")
	})
}

// TestHTTPRouteMergeFollowsBackends: a younger route waiting for its Service is merged
// into the older route's resource as soon as the Service appears.
func TestHTTPRouteMergeFollowsBackends(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		shop := w.host("shop")
		w.create(w.httpRoute("site", "", shop))
		w.eventuallyHosts(shop)
		testenv.NextCreationSecond()
		younger := w.httpRoute("api", "", shop)
		younger.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
			Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/api"),
		}}}
		younger.Spec.Rules[0].BackendRefs[0].Name = "api"
		younger.Spec.Rules[0].BackendRefs[0].Port = ptr.To(gatewayv1.PortNumber(9090))
		olderUpToDate := w.upToDate(gatewayapi.Name, "site")
		w.create(younger)
		w.routeCondition(younger, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionFalse, gatewayv1.RouteReasonBackendNotFound)
		// The younger route woke the older one, whose reconcile is over: only the
		// Service can bring the merge.
		w.eventuallyUpToDateSince(olderUpToDate, gatewayapi.Name, "site")

		w.service("api", 9090)
		w.routeCondition(younger, gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, gatewayv1.RouteReasonResolvedRefs)
		if !w.fork {
			// One target per resource: the original CRD cannot carry the /api rule, and
			// the older route's catch-all stays what is published.
			assert.Equal(t, "web."+w.ns+".svc.cluster.local:8080", testenv.Backend(w.resources()[shop]))
			return
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var backends []string
			for _, target := range w.resources()[shop].Spec.Targets {
				backends = append(backends, target.IP)
			}
			assert.Contains(c, backends, "api."+w.ns+".svc.cluster.local", "the younger route's /api rule in the merged resource")
		}, wait, tick)
	})
}

// TestGatewayProgrammedFollowsTunnel: a Gateway's Programmed condition is the sink's
// word on its tunnel, and follows the tunnel's appearance through the sink's own watch.
func TestGatewayProgrammedFollowsTunnel(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env, withHTTPRoutes)
		class := "pangolin-" + w.ns
		w.create(&gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: class},
			Spec:       gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName},
		})
		w.create(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "public"},
			Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class), Listeners: []gatewayv1.Listener{httpListener("")}},
		})
		programmed := func(want metav1.ConditionStatus) {
			t.Helper()
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				var gw gatewayv1.Gateway
				assert.NoError(c, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "public"}, &gw))
				cond := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
				if assert.NotNil(c, cond) {
					assert.Equal(c, want, cond.Status, cond.Message)
				}
			}, wait, tick)
		}
		programmed(metav1.ConditionFalse)
		w.tunnel("default")
		programmed(metav1.ConditionTrue)
	})
}

// TestHTTPRouteRefusalInStatus: a route the engine refuses after attaching it (an older
// Ingress publishes its host) says so in its parent status, with the reason of the
// Warning event; once the Ingress goes, the route is published and Accepted again.
func TestHTTPRouteRefusalInStatus(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := startGateway(t, env, httpListener(""))
		shop := w.host("shop")
		w.service("api", 9090)
		legacy := ingressFor("legacy", "pangolin", rule(shop, "/", "api", 9090))
		w.create(legacy)
		w.eventuallyOwners(shop, w.ns+"/legacy")
		testenv.NextCreationSecond()

		hr := w.httpRoute("site", "", shop)
		w.create(hr)
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, gatewayv1.RouteConditionReason(pic.ReasonHostConflict))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "Ingress "+w.ns+"/legacy")

		require.NoError(t, w.c.Delete(w.ctx, legacy))
		w.routeCondition(hr, gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, gatewayv1.RouteReasonAccepted)
	})
}
