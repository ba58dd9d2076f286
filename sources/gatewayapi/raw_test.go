package gatewayapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// rawWorld is a Gateway "public" of PIC's in namespace prod with an HTTP listener, TCP
// listeners on 15432 and 16432, and a UDP listener on 53; Services postgres (5432) and
// dns (53).
func rawWorld() []client.Object {
	return []client.Object{
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
		&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "public"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{
				{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80},
				{Name: "pg", Protocol: gatewayv1.TCPProtocolType, Port: 15432},
				{Name: "pg-alt", Protocol: gatewayv1.TCPProtocolType, Port: 16432},
				{Name: "dns", Protocol: gatewayv1.UDPProtocolType, Port: 53},
			}},
		},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "postgres"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "dns"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}}}},
	}
}

func backendRef(name string, port int32) gatewayv1.BackendRef {
	return gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(port))}}
}

func tcpRoute(name string, ref gatewayv1.ParentReference, backends ...gatewayv1.BackendRef) *gatewayv1.TCPRoute {
	return &gatewayv1.TCPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, UID: types.UID("uid-" + name)},
		Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{ref}},
			Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: backends}},
		},
	}
}

func udpRoute(name string, ref gatewayv1.ParentReference, backends ...gatewayv1.BackendRef) *gatewayv1.UDPRoute {
	return &gatewayv1.UDPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, UID: types.UID("uid-" + name)},
		Spec: gatewayv1.UDPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{ref}},
			Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: backends}},
		},
	}
}

// newRawSource is the source of kind over objs, through the indexes its factory
// declares, with PIC serving every route kind.
func newRawSource(t *testing.T, kind routeKind, objs ...client.Object) *RawSource {
	t.Helper()
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objs...)
	indexes := append(TCPRouteFactory.Indexes(&config.Config{}), UDPRouteFactory.Indexes(&config.Config{})...)
	for _, idx := range plugin.DistinctIndexes(indexes) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	conf := Config{Tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}, BackendScheme: "http", ClusterDomain: "cluster.local"}
	return &RawSource{gatewayAPI: &gatewayAPI{client: builder.Build(), config: conf, kinds: allRouteKinds}, kind: kind}
}

func TestRawRoutes(t *testing.T) {
	public := gatewayv1.ParentReference{Name: "public"}
	section := func(name string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Name: "public", SectionName: ptr.To(gatewayv1.SectionName(name))}
	}
	postgres := route.Backend{Host: "postgres.prod.svc.cluster.local", Port: 5432, Scheme: "tcp"}
	origin := func(kind, name string) route.Origin {
		return route.Origin{Group: gatewayv1.GroupName, Version: "v1", Kind: kind, Namespace: "prod", Name: name, UID: types.UID("uid-" + name)}
	}
	rawRoute := func(o route.Origin, p route.Protocol, port int32, b route.Backend) route.Route {
		return route.Route{Origin: o, Host: route.PortKey(p, port), Protocol: p, Port: port,
			Tunnel: route.TunnelRef{Namespace: "prod", Name: "default"}, Paths: []route.PathRule{{Backend: b}}}
	}
	withAnnotations := func(r *gatewayv1.TCPRoute, annotations map[string]string) *gatewayv1.TCPRoute {
		r.Annotations = annotations
		return r
	}
	otherKind := backendRef("bucket", 9000)
	otherKind.Kind = ptr.To(gatewayv1.Kind("Bucket"))
	otherKind.Group = ptr.To(gatewayv1.Group("storage.example.com"))

	cases := []struct {
		name  string
		kind  routeKind
		route client.Object
		// routes are the raw routes published; accepted and resolved the conditions of
		// the route's one parent, by reason.
		routes           []route.Route
		accepted         string
		resolved         string
		rejectionReasons []string
		held             bool
	}{
		{
			name:     "a TCPRoute publishes the port of each TCP listener it attaches to, not the backend's, and ignores the other listeners",
			kind:     tcpRoutes,
			route:    tcpRoute("db", public, backendRef("postgres", 5432)),
			routes:   []route.Route{rawRoute(origin("TCPRoute", "db"), route.ProtocolTCP, 15432, postgres), rawRoute(origin("TCPRoute", "db"), route.ProtocolTCP, 16432, postgres)},
			accepted: "Accepted", resolved: "ResolvedRefs",
		},
		{
			name:     "sectionName selects one TCP listener: one port",
			kind:     tcpRoutes,
			route:    tcpRoute("db", section("pg-alt"), backendRef("postgres", 5432)),
			routes:   []route.Route{rawRoute(origin("TCPRoute", "db"), route.ProtocolTCP, 16432, postgres)},
			accepted: "Accepted", resolved: "ResolvedRefs",
		},
		{
			name:     "a UDPRoute publishes the UDP listener's port over udp",
			kind:     udpRoutes,
			route:    udpRoute("dns", public, backendRef("dns", 53)),
			routes:   []route.Route{rawRoute(origin("UDPRoute", "dns"), route.ProtocolUDP, 53, route.Backend{Host: "dns.prod.svc.cluster.local", Port: 53, Scheme: "udp"})},
			accepted: "Accepted", resolved: "ResolvedRefs",
		},
		{
			name:             "a TCPRoute selecting a UDP listener is not allowed by it",
			kind:             tcpRoutes,
			route:            tcpRoute("db", section("dns"), backendRef("postgres", 5432)),
			accepted:         string(gatewayv1.RouteReasonNotAllowedByListeners),
			resolved:         "ResolvedRefs",
			rejectionReasons: []string{string(gatewayv1.RouteReasonNotAllowedByListeners)},
		},
		{
			name:             "a UDPRoute selecting the HTTP listener is not allowed by it",
			kind:             udpRoutes,
			route:            udpRoute("dns", section("http"), backendRef("dns", 53)),
			accepted:         string(gatewayv1.RouteReasonNotAllowedByListeners),
			resolved:         "ResolvedRefs",
			rejectionReasons: []string{string(gatewayv1.RouteReasonNotAllowedByListeners)},
		},
		{
			name:             "two backendRefs are a split a Pangolin port cannot make: refused",
			kind:             tcpRoutes,
			route:            tcpRoute("db", public, backendRef("postgres", 5432), backendRef("postgres", 5432)),
			accepted:         string(gatewayv1.RouteReasonUnsupportedValue),
			resolved:         "ResolvedRefs",
			rejectionReasons: []string{string(gatewayv1.RouteReasonUnsupportedValue)},
		},
		{
			name:             "no backendRef: refused",
			kind:             tcpRoutes,
			route:            tcpRoute("db", public),
			accepted:         string(gatewayv1.RouteReasonUnsupportedValue),
			resolved:         "ResolvedRefs",
			rejectionReasons: []string{string(gatewayv1.RouteReasonUnsupportedValue)},
		},
		{
			name:             "a Service not found is BackendNotFound, held and retried",
			kind:             tcpRoutes,
			route:            tcpRoute("db", public, backendRef("nowhere", 5432)),
			accepted:         "Accepted",
			resolved:         string(gatewayv1.RouteReasonBackendNotFound),
			rejectionReasons: []string{string(gatewayv1.RouteReasonBackendNotFound)},
			held:             true,
		},
		{
			name:             "a port the Service does not have is BackendNotFound",
			kind:             tcpRoutes,
			route:            tcpRoute("db", public, backendRef("postgres", 5433)),
			accepted:         "Accepted",
			resolved:         string(gatewayv1.RouteReasonBackendNotFound),
			rejectionReasons: []string{string(gatewayv1.RouteReasonBackendNotFound)},
			held:             true,
		},
		{
			name:             "a backendRef to another kind than Service is InvalidKind",
			kind:             tcpRoutes,
			route:            tcpRoute("db", public, otherKind),
			accepted:         "Accepted",
			resolved:         string(gatewayv1.RouteReasonInvalidKind),
			rejectionReasons: []string{string(gatewayv1.RouteReasonInvalidKind)},
		},
		{
			name:  "annotations a port has no use for are reported, and do not stop it",
			kind:  tcpRoutes,
			route: withAnnotations(tcpRoute("db", section("pg"), backendRef("postgres", 5432)), map[string]string{pic.AnnotationSubdomain: "db"}),
			routes: []route.Route{
				rawRoute(origin("TCPRoute", "db"), route.ProtocolTCP, 15432, postgres),
			},
			accepted: "Accepted", resolved: "ResolvedRefs",
			rejectionReasons: []string{pic.ReasonInvalidAnnotation},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newRawSource(t, tc.kind, append(rawWorld(), tc.route)...)
			res, err := src.Routes(context.Background(), stored(t, src.client, client.ObjectKeyFromObject(tc.route), tc.kind.object()))
			require.NoError(t, err)
			for i := range res.Routes {
				res.Routes[i].Origin.Created = route.Origin{}.Created // the fake client's times
			}
			assert.Equal(t, tc.routes, res.Routes)
			assert.True(t, res.Managed && res.OwnsStatus, "a route attached to a Gateway of PIC's is PIC's")
			require.Len(t, res.Parents, 1)
			reasons := map[string]string{}
			for _, c := range res.Parents[0].Conditions {
				reasons[c.Type] = c.Reason
			}
			assert.Equal(t, map[string]string{"Accepted": tc.accepted, "ResolvedRefs": tc.resolved}, reasons)
			var got []string
			held := false
			for _, rj := range res.Rejections {
				got = append(got, rj.Reason)
				held = held || rj.Hold
			}
			assert.Equal(t, tc.rejectionReasons, got)
			assert.Equal(t, tc.held, held, "Hold")
		})
	}
}

func TestRawClaims(t *testing.T) {
	ctx := context.Background()
	db := tcpRoute("db", gatewayv1.ParentReference{Name: "public"}, backendRef("postgres", 5432))
	alt := tcpRoute("alt", gatewayv1.ParentReference{Name: "public", SectionName: ptr.To(gatewayv1.SectionName("pg-alt"))}, backendRef("postgres", 5432))
	dns := udpRoute("dns", gatewayv1.ParentReference{Name: "public"}, backendRef("dns", 53))
	objs := append(rawWorld(), db, alt, dns)
	tcp, udp := newRawSource(t, tcpRoutes, objs...), newRawSource(t, udpRoutes, objs...)

	assert.Equal(t, []string{"tcp:15432", "tcp:16432"}, tcp.Hosts(ctx, db), "a TCPRoute claims the port of every TCP listener it selects")
	assert.Equal(t, []string{"tcp:16432"}, tcp.Hosts(ctx, alt))
	assert.Equal(t, []string{"udp:53"}, udp.Hosts(ctx, dns))

	claimants := func(src *RawSource, key string) []string {
		claims, err := src.Claimants(ctx, key)
		require.NoError(t, err)
		var names []string
		for _, c := range claims {
			names = append(names, c.Origin.Name)
		}
		return names
	}
	assert.Equal(t, []string{"db"}, claimants(tcp, "tcp:15432"))
	assert.ElementsMatch(t, []string{"db", "alt"}, claimants(tcp, "tcp:16432"), "both claim the port: the core's oldest-claim rule settles it")
	assert.Equal(t, []string{"dns"}, claimants(udp, "udp:53"))
	assert.Empty(t, claimants(tcp, "udp:53"), "a UDP port is no TCPRoute's")
	assert.Empty(t, claimants(tcp, "tcp:80"), "no TCP listener on port 80")
	assert.Empty(t, claimants(tcp, "app.example.com"), "a host is no port")

	gw := objs[1]
	assert.Equal(t, []string{"tcp:15432", "tcp:16432"}, tcpRoutes.portKeys(gw), "the Gateway moves the claims of its TCP listeners' ports")
	assert.Equal(t, []string{"tcp:15432", "tcp:16432", "udp:53"}, indexListenerPorts(gw))
}

func TestListenerKinds(t *testing.T) {
	listener := func(p gatewayv1.ProtocolType, kinds ...gatewayv1.Kind) gatewayv1.Listener {
		l := gatewayv1.Listener{Name: "l", Protocol: p}
		if len(kinds) > 0 {
			l.AllowedRoutes = &gatewayv1.AllowedRoutes{}
			for _, k := range kinds {
				l.AllowedRoutes.Kinds = append(l.AllowedRoutes.Kinds, gatewayv1.RouteGroupKind{Kind: k})
			}
		}
		return l
	}
	kindsOf := func(gks []gatewayv1.RouteGroupKind) []string {
		out := []string{}
		for _, gk := range gks {
			out = append(out, string(gk.Kind))
		}
		return out
	}
	cases := []struct {
		name      string
		listener  gatewayv1.Listener
		served    []routeKind
		supported []string
		invalid   []string
	}{
		{"a TCP listener supports TCPRoutes where PIC serves them", listener(gatewayv1.TCPProtocolType), allRouteKinds, []string{"TCPRoute"}, nil},
		{"a UDP listener supports UDPRoutes where PIC serves them", listener(gatewayv1.UDPProtocolType), allRouteKinds, []string{"UDPRoute"}, nil},
		{"a TCP listener supports nothing where PIC serves HTTPRoutes only", listener(gatewayv1.TCPProtocolType), []routeKind{httpRoutes}, []string{}, nil},
		{"an HTTP listener naming TCPRoute: not supported there", listener(gatewayv1.HTTPProtocolType, "HTTPRoute", "TCPRoute"), allRouteKinds, []string{"HTTPRoute"}, []string{"TCPRoute"}},
		{"a TCP listener naming UDPRoute: not supported there", listener(gatewayv1.TCPProtocolType, "UDPRoute"), allRouteKinds, []string{}, []string{"UDPRoute"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := listenerKinds(tc.listener, tc.served)
			assert.Equal(t, tc.supported, kindsOf(got.supported))
			assert.Equal(t, tc.invalid, got.invalid)
		})
	}
}

func TestServedKinds(t *testing.T) {
	mapper := func(kinds ...string) meta.RESTMapper {
		m := meta.NewDefaultRESTMapper(nil)
		for _, k := range kinds {
			m.Add(schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: k}, meta.RESTScopeNamespace)
		}
		// TCPRoute served at v1alpha2 only, as by a Gateway API bundle before v1.6.
		m.Add(schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1alpha2", Kind: kindUDPRoute}, meta.RESTScopeNamespace)
		return m
	}
	base := []string{"GatewayClass", "Gateway", "ReferenceGrant", kindHTTPRoute}
	names := func(kinds []routeKind) []string {
		var out []string
		for _, k := range kinds {
			out = append(out, k.name)
		}
		return out
	}
	cases := []struct {
		name    string
		sources []string
		mapper  meta.RESTMapper
		want    []string
	}{
		{"configured and installed", []string{"httproute", "tcproute", "udproute"}, mapper(append(base, kindTCPRoute, kindUDPRoute)...), []string{kindHTTPRoute, kindTCPRoute, kindUDPRoute}},
		{"installed but not configured", []string{"httproute"}, mapper(append(base, kindTCPRoute, kindUDPRoute)...), []string{kindHTTPRoute}},
		{"configured, UDPRoute served at v1alpha2 only", []string{"httproute", "tcproute", "udproute"}, mapper(append(base, kindTCPRoute)...), []string{kindHTTPRoute, kindTCPRoute}},
		{"configured without httproute", []string{"tcproute"}, mapper(append(base, kindTCPRoute)...), []string{kindTCPRoute}},
		{"render: every configured kind counts as installed", []string{"ingress", "udproute"}, nil, []string{kindUDPRoute}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := servedKinds(&config.Config{Sources: tc.sources}, tc.mapper)
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(got))
		})
	}
}

// TestGatewayCountReadsNoPods: a Gateway's status counts the routes each listener
// accepts; health checks change no route's verdict, so counting reads no pods, where
// the route's own reconcile reads its backend's pods for its check.
func TestGatewayCountReadsNoPods(t *testing.T) {
	objs := rawWorld()
	for _, o := range objs {
		if svc, ok := o.(*corev1.Service); ok && svc.Name == "postgres" {
			svc.Spec.Selector = map[string]string{"app": "postgres"}
		}
	}
	objs = append(objs, tcpRoute("db", gatewayv1.ParentReference{Name: "public", SectionName: ptr.To(gatewayv1.SectionName("pg"))}, backendRef("postgres", 5432)))
	s := newRawSource(t, tcpRoutes, objs...)
	s.kinds = []routeKind{tcpRoutes} // the fake client has the raw kinds' indexes only
	podLists := 0
	s.config.Health = sources.HealthChecks{Default: true, Pods: interceptor.NewClient(fake.NewClientBuilder().WithScheme(apis.Scheme()).Build(),
		interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			podLists++
			return c.List(ctx, list, opts...)
		}})}

	var gw gatewayv1.Gateway
	require.NoError(t, s.client.Get(context.Background(), types.NamespacedName{Namespace: "prod", Name: "public"}, &gw))
	counts, err := s.attachedCounts(context.Background(), &gw)
	require.NoError(t, err)
	assert.Equal(t, int32(1), counts["pg"], "the TCPRoute is counted on its listener")
	assert.Zero(t, podLists, "counting read pods")

	_, err = s.Routes(context.Background(), stored(t, s.client, types.NamespacedName{Namespace: "prod", Name: "db"}, s.kind.object()))
	require.NoError(t, err)
	assert.Equal(t, 1, podLists, "the route's reconcile reads its backend's pods once")
}
