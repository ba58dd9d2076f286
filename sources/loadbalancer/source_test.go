package loadbalancer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

const class = "pangolin.io/tunnel"

func service(mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "games", Name: "mc", UID: "uid-mc"},
		Spec: corev1.ServiceSpec{
			Type:              corev1.ServiceTypeLoadBalancer,
			LoadBalancerClass: ptr.To(class),
			Ports: []corev1.ServicePort{
				{Name: "game", Port: 25565, Protocol: corev1.ProtocolTCP},
				{Name: "query", Port: 25565, Protocol: corev1.ProtocolUDP},
			},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func annotate(key, value string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[key] = value
	}
}

func newSource(objs ...client.Object) (*Source, client.Client) {
	c := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objs...).WithStatusSubresource(&corev1.Service{}).Build()
	return New(c, Config{
		Tunnels:       tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}},
		ClusterDomain: "cluster.local",
		Class:         class,
		Address:       "pangolin.example.com",
	}), c
}

// interceptPatches counts the status patches sent through c.
func interceptPatches(c client.Client, patches *int) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			*patches++
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

func backend(port int32, p route.Protocol) []route.PathRule {
	return []route.PathRule{{Backend: route.Backend{Host: "mc.games.svc.cluster.local", Port: port, Scheme: string(p)}}}
}

func TestRoutes(t *testing.T) {
	tun := route.TunnelRef{Namespace: "games", Name: "default"}
	cases := []struct {
		name       string
		svc        *corev1.Service
		managed    bool
		routes     []route.Route
		rejections []string
	}{
		{
			name:    "each TCP and UDP port is a raw route on its own number",
			svc:     service(),
			managed: true,
			routes: []route.Route{
				{Host: "tcp:25565", Protocol: route.ProtocolTCP, Port: 25565, Tunnel: tun, Paths: backend(25565, route.ProtocolTCP)},
				{Host: "udp:25565", Protocol: route.ProtocolUDP, Port: 25565, Tunnel: tun, Paths: backend(25565, route.ProtocolUDP)},
			},
		},
		{
			name:    "the public-ports annotation moves a port, by name or number",
			svc:     service(annotate(pic.AnnotationPublicPorts, "game=30000, 25565=30001")),
			managed: true,
			routes: []route.Route{
				{Host: "tcp:30000", Protocol: route.ProtocolTCP, Port: 30000, Tunnel: tun, Paths: backend(25565, route.ProtocolTCP)},
				{Host: "udp:30001", Protocol: route.ProtocolUDP, Port: 30001, Tunnel: tun, Paths: backend(25565, route.ProtocolUDP)},
			},
		},
		{
			name:    "the tunnel annotation chooses the tunnel",
			svc:     service(annotate(pic.AnnotationTunnelName, "edge/site-b"), func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] }),
			managed: true,
			routes: []route.Route{
				{Host: "tcp:25565", Protocol: route.ProtocolTCP, Port: 25565, Tunnel: route.TunnelRef{Namespace: "edge", Name: "site-b"}, Paths: backend(25565, route.ProtocolTCP)},
			},
		},
		{
			name: "an SCTP port is refused, the others published",
			svc: service(func(s *corev1.Service) {
				s.Spec.Ports = []corev1.ServicePort{{Name: "sig", Port: 3868, Protocol: corev1.ProtocolSCTP}, {Name: "game", Port: 25565, Protocol: corev1.ProtocolTCP}}
			}),
			managed:    true,
			routes:     []route.Route{{Host: "tcp:25565", Protocol: route.ProtocolTCP, Port: 25565, Tunnel: tun, Paths: backend(25565, route.ProtocolTCP)}},
			rejections: []string{pic.ReasonPortProtocolUnsupported},
		},
		{
			name:       "a public-ports entry naming no port is invalid, not ignored",
			svc:        service(annotate(pic.AnnotationPublicPorts, "gmae=30000")),
			managed:    true,
			rejections: []string{pic.ReasonInvalidAnnotation},
		},
		{
			name:       "a public port out of range is invalid",
			svc:        service(annotate(pic.AnnotationPublicPorts, "game=70000")),
			managed:    true,
			rejections: []string{pic.ReasonInvalidAnnotation},
		},
		{
			name: "another load-balancer class is not PIC's",
			svc:  service(func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr.To("example.com/metallb") }),
		},
		{
			name: "no class is not PIC's: the cloud's load balancer serves it",
			svc:  service(func(s *corev1.Service) { s.Spec.LoadBalancerClass = nil }),
		},
		{
			name: "a ClusterIP Service is not PIC's",
			svc:  service(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
		},
		{
			name: "enabled false opts out",
			svc:  service(annotate(pic.AnnotationEnabled, "false")),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newSource(tc.svc)
			res, err := src.Routes(context.Background(), stored(t, src.client))
			require.NoError(t, err)
			assert.Equal(t, tc.managed, res.Managed)
			for i := range tc.routes {
				tc.routes[i].Origin = *res.Origin
			}
			for i := range res.Routes {
				res.Routes[i].Access = route.Access{}
			}
			assert.Equal(t, tc.routes, res.Routes)
			var reasons []string
			for _, rj := range res.Rejections {
				reasons = append(reasons, rj.Reason)
			}
			assert.Equal(t, tc.rejections, reasons)
		})
	}
}

// TestDeniedTunnelWinsOverATypo: in a namespace the tunnel does not allow, nothing is
// published or kept, even when an annotation is also wrong (which alone would hold).
func TestDeniedTunnelWinsOverATypo(t *testing.T) {
	svc := service(annotate(pic.AnnotationPublicPorts, "gmae=30000"))
	c := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(svc).Build()
	src := New(c, Config{
		Tunnels:       tunnel.Resolver{Default: tunnel.Tunnel{Name: "default", AllowedNamespaces: []string{"prod"}}},
		ClusterDomain: "cluster.local",
		Class:         class,
		Address:       "pangolin.example.com",
	})
	res, err := src.Routes(context.Background(), stored(t, c))
	require.NoError(t, err)
	require.Len(t, res.Rejections, 1)
	assert.Equal(t, pic.ReasonTunnelNotAllowed, res.Rejections[0].Reason)
	assert.False(t, res.Rejections[0].Hold, "nothing is kept")
	assert.Empty(t, res.Routes)
}

func TestRoutesCarryTheAccessAsked(t *testing.T) {
	// The engine refuses the port (it cannot be protected): the source only reports
	// what the user asked.
	src, _ := newSource(service(annotate(pic.AnnotationSSO, "true")))
	res, err := src.Routes(context.Background(), stored(t, src.client))
	require.NoError(t, err)
	require.NotEmpty(t, res.Routes)
	assert.Equal(t, ptr.To(true), res.Routes[0].Access.SSO)
}

func TestHostsAreThePortKeys(t *testing.T) {
	src, _ := newSource()
	assert.Equal(t, []string{"tcp:30000", "udp:25565"}, src.Hosts(context.Background(), service(annotate(pic.AnnotationPublicPorts, "game=30000"))))
	assert.Empty(t, src.Hosts(context.Background(), service(func(s *corev1.Service) { s.Spec.LoadBalancerClass = nil })))
}

func TestWriteStatus(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "games", Name: "mc"}
	read := func(c client.Client) []corev1.LoadBalancerIngress {
		var svc corev1.Service
		require.NoError(t, c.Get(ctx, key, &svc))
		return svc.Status.LoadBalancer.Ingress
	}

	src, c := newSource(service())
	require.NoError(t, src.WriteStatus(ctx, stored(t, src.client), plugin.Status{Hostnames: plugin.Hostnames{Served: []string{"udp:25565", "tcp:25565"}}}))
	assert.Equal(t, []corev1.LoadBalancerIngress{{Hostname: "pangolin.example.com", Ports: []corev1.PortStatus{
		{Port: 25565, Protocol: corev1.ProtocolTCP}, {Port: 25565, Protocol: corev1.ProtocolUDP},
	}}}, read(c), "the address with every port served")

	require.NoError(t, src.WriteStatus(ctx, stored(t, src.client), plugin.Status{Hostnames: plugin.Hostnames{Served: []string{"tcp:25565"}, Pending: []string{"udp:25565", "tcp:30000"}}}))
	assert.Equal(t, []corev1.PortStatus{{Port: 25565, Protocol: corev1.ProtocolTCP}, {Port: 25565, Protocol: corev1.ProtocolUDP}}, read(c)[0].Ports,
		"a pending port already shown stays; a new pending one waits")

	require.NoError(t, src.WriteStatus(ctx, stored(t, src.client), plugin.Status{}))
	assert.Empty(t, read(c), "nothing served, no address")

	src.config.Address = "203.0.113.7"
	require.NoError(t, src.WriteStatus(ctx, stored(t, src.client), plugin.Status{Hostnames: plugin.Hostnames{Served: []string{"tcp:25565"}}}))
	assert.Equal(t, []corev1.LoadBalancerIngress{{IP: "203.0.113.7", IPMode: ptr.To(corev1.LoadBalancerIPModeProxy), Ports: []corev1.PortStatus{{Port: 25565, Protocol: corev1.ProtocolTCP}}}},
		read(c), "an IP address is an IP, reached through Pangolin (Proxy)")

	src.config.Address = ""
	require.NoError(t, src.WriteStatus(ctx, stored(t, src.client), plugin.Status{Hostnames: plugin.Hostnames{Served: []string{"tcp:25565"}}}))
	assert.Empty(t, read(c), "no address configured: PIC does not guess one")
}

func TestRoutesFollowReadiness(t *testing.T) {
	svc := service(annotate(pic.AnnotationHealthCheck, "true"), func(s *corev1.Service) {
		s.Spec.Selector = map[string]string{"app": "mc"}
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "rcon", Port: 25575, Protocol: corev1.ProtocolTCP})
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "games", Name: "mc-0", Labels: map[string]string{"app": "mc"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "server",
			Ports: []corev1.ContainerPort{{ContainerPort: 25565}, {ContainerPort: 25575}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(25565)}},
				PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
		}}},
	}
	src, c := newSource(svc, pod)
	src.config.Health.Pods = c
	res, err := src.Routes(context.Background(), stored(t, src.client))
	require.NoError(t, err)
	require.Len(t, res.Routes, 3)
	want := route.HealthCheck{Mode: "tcp", Port: 25565, IntervalSeconds: 5, TimeoutSeconds: 1, HealthyThreshold: 1, UnhealthyThreshold: 3}
	for _, r := range res.Routes {
		assert.Equal(t, want, r.Paths[0].Backend.Health, "%s: every port of the pod follows its readiness, probed on the TCP port the probe names", r.Host)
	}
	assert.Empty(t, res.Notices)
}

func TestPublicPortsMappingTwoPortsOnOneIsInvalid(t *testing.T) {
	src, _ := newSource(service(annotate(pic.AnnotationPublicPorts, "alt=80"), func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{
			{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
			{Name: "alt", Port: 8080, Protocol: corev1.ProtocolTCP},
		}
	}))
	res, err := src.Routes(context.Background(), stored(t, src.client))
	require.NoError(t, err)
	assert.Empty(t, res.Routes)
	require.Len(t, res.Rejections, 1)
	assert.Equal(t, pic.ReasonInvalidAnnotation, res.Rejections[0].Reason)
	assert.True(t, res.Rejections[0].Hold, "a typo keeps what is published")
	assert.Contains(t, res.Rejections[0].Message, `ports "http" (80) and "alt" (8080) would both be published on tcp:80`)
}

func TestStatusWithoutIPModeSupportIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	svc := service(func(s *corev1.Service) {
		// As an API server without the LoadBalancerIPMode feature stores it.
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7", Ports: []corev1.PortStatus{{Port: 25565, Protocol: corev1.ProtocolTCP}}}}
	})
	src, c := newSource(svc)
	src.config.Address = "203.0.113.7"
	patches := 0
	src.client = interceptPatches(c, &patches)
	require.NoError(t, src.WriteStatus(ctx, stored(t, src.client), plugin.Status{Hostnames: plugin.Hostnames{Served: []string{"tcp:25565"}}}))
	assert.Zero(t, patches, "the status PIC wants, less the ipMode the API server dropped: nothing to write")
}

// stored is the Service games/mc as the core hands it to the source: read from the
// cache.
func stored(t *testing.T, c client.Reader) *corev1.Service {
	t.Helper()
	var svc corev1.Service
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: "games", Name: "mc"}, &svc))
	return &svc
}
