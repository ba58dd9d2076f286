package gatewayapi

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// TestRouteReconcileReadsEachServicesPodsOnce: an HTTPRoute sharing its hosts with an
// older route evaluates that route to merge with it; one reconcile reads the pods of the
// Service both use once, however many hosts they share.
func TestRouteReconcileReadsEachServicesPodsOnce(t *testing.T) {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "public"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{
			{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80},
		}},
	}
	route := func(name string, created time.Time) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created)},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
				Hostnames:       []gatewayv1.Hostname{"x.example.com", "y.example.com"},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef("web", 80)}}}},
			},
		}
	}
	now := time.Now()
	objs := []client.Object{
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
		gw,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
		route("older", now.Add(-time.Hour)), route("younger", now),
	}
	cache := indexedCache(objs...)
	podLists := 0
	pods := interceptor.NewClient(fake.NewClientBuilder().WithScheme(apis.Scheme()).Build(),
		interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			podLists++
			return c.List(ctx, list, opts...)
		}})
	conf := Config{Tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}, BackendScheme: "http", ClusterDomain: "cluster.local",
		Health: sources.HealthChecks{Default: true, Pods: pods}}
	s := &Source{&gatewayAPI{client: cache, config: conf, kinds: []routeKind{httpRoutes}}}

	res, err := s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "prod", Name: "younger"}, &gatewayv1.HTTPRoute{}))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"x.example.com", "y.example.com"}, res.MergedInto, "both hosts are published through the older route")
	assert.Equal(t, 1, podLists, "the pods of Service web, read once for both routes and both hosts")
}

// TestARouteMergesOnlyIntoAHostItsNamespaceMayPublish: with a hostPolicy, a route of a
// namespace the policy does not let publish a host cannot reach it by sharing it with an
// older route of another namespace on the same Gateway: its paths (a /login beside the
// owner's /) are not merged into the owner's resource, and it is published alone, for
// the core to refuse (HostNotAllowed). Without the policy, routes of any namespace the
// listener admits merge, as the Gateway API has them.
func TestARouteMergesOnlyIntoAHostItsNamespaceMayPublish(t *testing.T) {
	all := gatewayv1.NamespacesFromAll
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "edge"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{{
			Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}},
		}}},
	}
	prefix := gatewayv1.PathMatchPathPrefix
	route := func(namespace, path string, created time.Time) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web", UID: types.UID("uid-" + namespace), CreationTimestamp: metav1.NewTime(created)},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
				Hostnames:       []gatewayv1.Hostname{"app.team-a.example.com"},
				Rules: []gatewayv1.HTTPRouteRule{{
					Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &prefix, Value: ptr.To(path)}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef("web", 80)}},
				}},
			},
		}
	}
	service := func(namespace string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	now := time.Now()
	policy := hostpolicy.Policy{
		{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}},
		{NamespaceSelector: "tenant=b", Hosts: []string{"*.team-b.example.com"}},
	}
	cases := []struct {
		name   string
		policy hostpolicy.Policy
		merged bool
	}{
		{name: "a namespace the hostPolicy keeps off the host is not merged into it", policy: policy, merged: false},
		{name: "without a hostPolicy, the younger route of another namespace is merged", policy: nil, merged: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := []client.Object{
				&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
				gw,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "infra"}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"tenant": "b"}}},
				service("team-a"), service("team-b"),
				route("team-a", "/", now.Add(-time.Hour)), route("team-b", "/login", now),
			}
			conf := Config{Tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}, BackendScheme: "http", ClusterDomain: "cluster.local", HostPolicy: c.policy}
			s := &Source{&gatewayAPI{client: indexedCache(objs...), config: conf, kinds: []routeKind{httpRoutes}}}

			owner, err := s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "team-a", Name: "web"}, &gatewayv1.HTTPRoute{}))
			require.NoError(t, err)
			require.Len(t, owner.Routes, 1)
			paths := pathsOf(owner.Routes[0])
			younger, err := s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "team-b", Name: "web"}, &gatewayv1.HTTPRoute{}))
			require.NoError(t, err)
			if c.merged {
				assert.ElementsMatch(t, []string{"/", "/login"}, paths, "the owner's resource serves both routes")
				assert.Equal(t, []string{"app.team-a.example.com"}, younger.MergedInto)
				assert.Empty(t, younger.Routes)
				return
			}
			assert.Equal(t, []string{"/"}, paths, "team-b's /login is not served on team-a's host")
			assert.Empty(t, younger.MergedInto)
			require.Len(t, younger.Routes, 1, "published alone, for the core's HostNotAllowed")
			assert.Equal(t, "app.team-a.example.com", younger.Routes[0].Host)
			assert.Equal(t, "team-b", younger.Routes[0].Origin.Namespace)
		})
	}
}

// indexedCache is a fake cache holding objs, with the indexes the Gateway API sources
// declare, as the core builds the manager's cache.
func indexedCache(objs ...client.Object) client.Client {
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objs...)
	for _, idx := range plugin.DistinctIndexes(Factory.Indexes(&config.Config{ClusterDomain: "cluster.local"})) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	return builder.Build()
}

// pathsOf are the paths a route publishes, in order.
func pathsOf(rt route.Route) []string {
	var out []string
	for _, p := range rt.Paths {
		out = append(out, p.Path)
	}
	return out
}

// stored is the object with key as the core hands it to a source: read from the cache,
// into obj.
func stored[T client.Object](t *testing.T, c client.Reader, key types.NamespacedName, obj T) T {
	t.Helper()
	require.NoError(t, c.Get(context.Background(), key, obj))
	return obj
}

// TestARouteNoParentAdmitsHoldsNothing: a typo or a Service not there yet holds what a
// route published only while a Gateway admits it. A route no listener admits any more,
// or whose namespace may not use the Gateway's tunnel, keeps nothing, whatever else is
// wrong with it: otherwise a tenant could keep a host taken from it with a typo.
func TestARouteNoParentAdmitsHoldsNothing(t *testing.T) {
	same, all := gatewayv1.NamespacesFromSame, gatewayv1.NamespacesFromAll
	gateway := func(from gatewayv1.FromNamespaces) *gatewayv1.Gateway {
		return &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "edge"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{{
				Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80,
				AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}},
			}}},
		}
	}
	route := func(namespace, backend string, annotations map[string]string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web", UID: types.UID("uid-" + namespace), Annotations: annotations},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
				Hostnames:       []gatewayv1.Hostname{"app.example.com"},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef(backend, 80)}}}},
			},
		}
	}
	typo := map[string]string{pic.AnnotationSSO: "maybe"}
	cases := []struct {
		name    string
		gateway *gatewayv1.Gateway
		route   *gatewayv1.HTTPRoute
		tunnels tunnel.Resolver
		held    []string // the reasons of the rejections that hold
	}{
		{name: "a typo on a route a listener admits holds what it published",
			gateway: gateway(all), route: route("team-b", "web", typo),
			held: []string{pic.ReasonInvalidAnnotation}},
		{name: "a typo on a route no listener admits holds nothing",
			gateway: gateway(same), route: route("team-b", "web", typo)},
		{name: "a typo on a route whose namespace may not use the tunnel holds nothing",
			gateway: gateway(all), route: route("team-b", "web", typo),
			tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default", AllowedNamespaces: []string{"infra"}}}},
		{name: "a Service missing from a route no listener admits holds nothing",
			gateway: gateway(same), route: route("team-b", "absent", nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := []client.Object{
				&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
				c.gateway,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "infra"}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
				&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
				c.route,
			}
			tunnels := c.tunnels
			if tunnels.Default.Name == "" {
				tunnels = tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}
			}
			conf := Config{Tunnels: tunnels, BackendScheme: "http", ClusterDomain: "cluster.local"}
			s := &Source{&gatewayAPI{client: indexedCache(objs...), config: conf, kinds: []routeKind{httpRoutes}}}

			res, err := s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "team-b", Name: "web"}, &gatewayv1.HTTPRoute{}))
			require.NoError(t, err)
			assert.Empty(t, res.Routes)
			require.NotEmpty(t, res.Rejections, "the route is told why it is not published")
			var held []string
			for _, rj := range res.Rejections {
				if rj.Hold {
					held = append(held, rj.Reason)
				}
			}
			assert.Equal(t, c.held, held)
		})
	}
}

// TestAnUnprotectedRouteIsMergedIntoNoOne: a route that requires an AccessPolicy
// (annotation require-access-policy) that does not protect it publishes nothing new,
// and its paths are not served through an older route that shares its host either,
// under that route's access: here the AccessPolicy CRD is not installed, so the policy
// cannot apply.
func TestAnUnprotectedRouteIsMergedIntoNoOne(t *testing.T) {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "public"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{
			{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80},
		}},
	}
	prefix := gatewayv1.PathMatchPathPrefix
	route := func(name, path string, created time.Time, annotations map[string]string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created), Annotations: annotations},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
				Hostnames:       []gatewayv1.Hostname{"x.example.com"},
				Rules: []gatewayv1.HTTPRouteRule{{
					Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &prefix, Value: ptr.To(path)}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef("web", 80)}},
				}},
			},
		}
	}
	now := time.Now()
	objs := []client.Object{
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
		gw,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
		route("site", "/", now.Add(-time.Hour), nil),
		route("admin", "/admin", now, map[string]string{pic.AnnotationRequireAccessPolicy: "staff-only"}),
	}
	conf := Config{Tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}, BackendScheme: "http", ClusterDomain: "cluster.local"}
	s := &Source{&gatewayAPI{client: indexedCache(objs...), config: conf, kinds: []routeKind{httpRoutes}}}

	site, err := s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "prod", Name: "site"}, &gatewayv1.HTTPRoute{}))
	require.NoError(t, err)
	require.Len(t, site.Routes, 1)
	assert.Equal(t, []string{"/"}, pathsOf(site.Routes[0]), "admin's /admin is not served under site's access")

	admin, err := s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "prod", Name: "admin"}, &gatewayv1.HTTPRoute{}))
	require.NoError(t, err)
	assert.Empty(t, admin.Routes)
	assert.Empty(t, admin.MergedInto, "nor said to be")
	var reasons []string
	for _, rj := range admin.Rejections {
		reasons = append(reasons, rj.Reason)
	}
	assert.Equal(t, []string{pic.ReasonAccessPolicyRequired}, reasons)
}
