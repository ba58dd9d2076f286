package e2e

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// specPorts runs in the direct spec's world, PIC started with the service, tcproute
// and udproute sources: a LoadBalancer Service with a TCP and a UDP port is published
// as raw resources with its address in its status, follows a port edit and its delete;
// a younger Service on a taken port gets PortConflict; a TCPRoute is published on its
// listener's port; and a pod's readiness probe becomes the target's health check.
func specPorts(t *testing.T, d *directWorld, pangolin *Pangolin) {
	e := d.env
	svcAddr := e.svcAddr

	// The status shows the host of pangolin.url (loadBalancerAddress is not set): an IP
	// is written as one, with ipMode Proxy.
	u, err := url.Parse(pangolin.URL)
	require.NoError(t, err)
	address := corev1.LoadBalancerIngress{Hostname: u.Hostname()}
	if net.ParseIP(u.Hostname()) != nil {
		address = corev1.LoadBalancerIngress{IP: u.Hostname(), IPMode: ptr.To(corev1.LoadBalancerIPModeProxy)}
	}

	game := loadBalancerService(e.ns, "game",
		corev1.ServicePort{Name: "game", Port: 27015, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "query", Port: 27015, Protocol: corev1.ProtocolUDP})
	e.create(game)

	t.Run("a LoadBalancer Service's TCP and UDP ports are published, with the address in its status", func(t *testing.T) {
		d.eventuallyPorts(map[string][]string{"tcp-27015": {svcAddr("game", 27015)}, "udp-27015": {svcAddr("game", 27015)}})
		want := address
		want.Ports = []corev1.PortStatus{{Port: 27015, Protocol: corev1.ProtocolTCP}, {Port: 27015, Protocol: corev1.ProtocolUDP}}
		e.eventuallyServiceStatus(game, []corev1.LoadBalancerIngress{want})
	})

	t.Run("the public-ports annotation moves a port", func(t *testing.T) {
		e.updateService("game", func(s *corev1.Service) {
			s.Annotations = map[string]string{pic.AnnotationPublicPorts: "query=27016"}
		})
		d.eventuallyPorts(map[string][]string{"tcp-27015": {svcAddr("game", 27015)}, "udp-27016": {svcAddr("game", 27015)}})
		want := address
		want.Ports = []corev1.PortStatus{{Port: 27015, Protocol: corev1.ProtocolTCP}, {Port: 27016, Protocol: corev1.ProtocolUDP}}
		e.eventuallyServiceStatus(game, []corev1.LoadBalancerIngress{want})
	})

	t.Run("a port moved while Pangolin refuses raw resources keeps the live port", func(t *testing.T) {
		d.server.SetDenyRawResources(true)
		e.updateService("game", func(s *corev1.Service) {
			s.Annotations = map[string]string{pic.AnnotationPublicPorts: "query=27016,game=27017"}
		})
		assert.Contains(t, e.eventuallyWarningOn(game, pic.ReasonReplacementRefused).Note, "public port 27015/tcp stays published as it is")
		assert.Contains(t, e.eventuallyWarningOn(game, pic.ReasonPangolinError).Note, "Raw resources are not allowed")
		assert.Equal(t, map[string][]string{"tcp-27015": {svcAddr("game", 27015)}, "udp-27016": {svcAddr("game", 27015)}}, rawServed(d.server),
			"the live port stays")

		e.updateService("game", func(s *corev1.Service) {
			s.Annotations = map[string]string{pic.AnnotationPublicPorts: "query=27016"}
		})
		d.server.SetDenyRawResources(false)
		d.eventuallyPorts(map[string][]string{"tcp-27015": {svcAddr("game", 27015)}, "udp-27016": {svcAddr("game", 27015)}})
	})

	t.Run("a younger Service on a taken port gets PortConflict naming the owner", func(t *testing.T) {
		testenv.NextCreationSecond() // the owner must be older
		squat := loadBalancerService(e.ns, "squat", corev1.ServicePort{Name: "game", Port: 27015, Protocol: corev1.ProtocolTCP})
		e.create(squat)
		assert.Contains(t, e.eventuallyWarningOn(squat, pic.ReasonPortConflict).Note, "Service "+e.ns+"/game")
		assert.Equal(t, map[string][]string{"tcp-27015": {svcAddr("game", 27015)}, "udp-27016": {svcAddr("game", 27015)}}, rawServed(d.server))
		require.NoError(t, e.c.Delete(e.ctx, squat))
	})

	t.Run("a TCPRoute is published on its listener's port", func(t *testing.T) {
		d.gateway(t, "ports", gatewayv1.Listener{Name: "pg", Protocol: gatewayv1.TCPProtocolType, Port: 15432})
		e.create(&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "postgres", Namespace: e.ns},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}},
		})
		route := &gatewayv1.TCPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "postgres", Namespace: e.ns},
			Spec: gatewayv1.TCPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "ports"}}},
				Rules: []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: "postgres", Port: ptr.To(gatewayv1.PortNumber(5432))},
				}}}},
			},
		}
		e.create(route)
		d.eventuallyPorts(map[string][]string{
			"tcp-27015": {svcAddr("game", 27015)}, "udp-27016": {svcAddr("game", 27015)}, "tcp-15432": {svcAddr("postgres", 5432)},
		})
		require.NoError(t, e.c.Delete(e.ctx, route))
		d.eventuallyPorts(map[string][]string{"tcp-27015": {svcAddr("game", 27015)}, "udp-27016": {svcAddr("game", 27015)}})
	})

	t.Run("deleting the Service removes its ports", func(t *testing.T) {
		require.NoError(t, e.c.Delete(e.ctx, game))
		d.eventuallyPorts(map[string][]string{})
	})
}

func loadBalancerService(namespace, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: ptr.To("pangolin.io/tunnel"),
			Selector: map[string]string{"app": name}, Ports: ports,
		},
	}
}

// readinessPod is a pod of app whose container serves port and is ready when an HTTP
// GET of path answers: only its spec matters to PIC, which reads the probe.
func readinessPod(namespace, app string, port int32, path string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-0", Namespace: namespace, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
				PeriodSeconds: 7, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 4,
			},
		}}},
	}
}

// healthCheckedThrough are the annotations of an object that asks for health checks
// and is published through the site niceId.
func healthCheckedThrough(site string) map[string]string {
	return map[string]string{pic.AnnotationHealthCheck: "true", pic.AnnotationTunnelName: site}
}

// rawServed is what Pangolin serves on its TCP and UDP entry points: entry point →
// servers.
func rawServed(server *simtest.Server) map[string][]string {
	out := map[string][]string{}
	for _, r := range server.RawRouters() {
		out[r.EntryPoint] = append(out[r.EntryPoint], r.Servers...)
	}
	return out
}

func (d *directWorld) eventuallyPorts(want map[string][]string) {
	d.t.Helper()
	require.EventuallyWithT(d.t, func(c *assert.CollectT) { assert.Equal(c, want, rawServed(d.server)) }, eventually, tick)
}

// gateway creates a GatewayClass of PIC's, named after the namespace and name (classes
// are cluster-wide), and a Gateway name of it with listener; both go with the test.
func (d *directWorld) gateway(t *testing.T, name string, listener gatewayv1.Listener) {
	e := d.env
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "pangolin-" + e.ns + "-" + name},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName},
	}
	e.create(class)
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class.Name), Listeners: []gatewayv1.Listener{listener}},
	}
	e.create(gw)
	t.Cleanup(func() {
		_ = e.c.Delete(e.ctx, gw)
		_ = e.c.Delete(e.ctx, class)
	})
}

func (e *env) updateService(name string, mutate func(*corev1.Service)) {
	e.t.Helper()
	require.NoError(e.t, testenv.Update(e.ctx, e.c, client.ObjectKey{Namespace: e.ns, Name: name}, mutate, eventually))
}

func (e *env) eventuallyServiceStatus(svc *corev1.Service, want []corev1.LoadBalancerIngress) {
	e.t.Helper()
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var got corev1.Service
		assert.NoError(c, e.c.Get(e.ctx, client.ObjectKeyFromObject(svc), &got))
		assert.Equal(c, want, got.Status.LoadBalancer.Ingress)
	}, eventually, tick)
}

// eventuallyWarningOn waits for a Warning with reason regarding obj, and returns it.
func (e *env) eventuallyWarningOn(obj client.Object, reason string) eventsv1.Event {
	e.t.Helper()
	var found eventsv1.Event
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var list eventsv1.EventList
		if !assert.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(obj.GetNamespace()))) {
			return
		}
		i := slices.IndexFunc(list.Items, func(ev eventsv1.Event) bool {
			return ev.Type == corev1.EventTypeWarning && ev.Reason == reason && ev.Regarding.UID == obj.GetUID()
		})
		if assert.GreaterOrEqual(c, i, 0, "a Warning %s regarding %s", reason, obj.GetName()) {
			found = list.Items[i]
		}
	}, eventually, tick)
	return found
}

// specServicePorts runs PIC in PangolinResource mode with the service source: a
// LoadBalancer Service's TCP and UDP ports become PangolinResources with protocol and
// proxyConfig (both CRD variants carry them), and deleting the Service lets the garbage
// collector remove them through their owner references, PIC sending no delete.
func specServicePorts(t *testing.T, p Provider) {
	e := newEnv(t, p, "ports")
	e.tunnel(e.ns, "default")
	pic := e.startPIC(PICOptions{GatewayAPI: true, Args: []string{"--sources=ingress,service"}})[0]

	svc := loadBalancerService(e.ns, "db",
		corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "dns", Port: 5353, Protocol: corev1.ProtocolUDP})
	e.create(svc)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		published := map[string]string{}
		for _, r := range e.owned(c, e.ns, svc.UID) {
			if assert.NotNil(c, r.Spec.ProxyConfig, "%s has no proxyConfig", r.Name) {
				published[fmt.Sprintf("%s:%d", r.Spec.Protocol, r.Spec.ProxyConfig.ProxyPort)] = testenv.Backend(r)
			}
			assert.Nil(c, r.Spec.HTTPConfig, "%s: a port has no httpConfig", r.Name)
		}
		assert.Equal(c, map[string]string{"tcp:5432": e.svcAddr("db", 5432), "udp:5353": e.svcAddr("db", 5353)}, published)
	}, eventually, tick)

	deletes := e.writes(pic, "delete")
	require.NoError(t, e.c.Delete(e.ctx, svc, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Empty(c, names(e.owned(c, e.ns, svc.UID)), "PangolinResources of the deleted Service")
	}, eventually, tick)
	assert.Equal(t, deletes, e.writes(pic, "delete"), "the garbage collector removes a deleted Service's resources, not PIC")
}
