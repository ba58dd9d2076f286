package integration_test

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
	"github.com/stefb69/pangolin-ingress-controller/sources/loadbalancer"
)

// withPorts runs every source that publishes TCP and UDP ports.
func withPorts(c *config.Config) {
	c.Sources = []string{ingress.Name, loadbalancer.Name, gatewayapi.TCPRouteName, gatewayapi.UDPRouteName}
}

// rawServed is what the fake Pangolin serves on its TCP and UDP entry points: entry
// point → servers.
func rawServed(fake *simtest.Server) map[string][]string {
	out := map[string][]string{}
	for _, r := range fake.RawRouters() {
		out[r.EntryPoint] = append(out[r.EntryPoint], r.Servers...)
	}
	return out
}

func eventuallyRawServed(t *testing.T, fake *simtest.Server, want map[string][]string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, want, rawServed(fake)) }, wait, tick)
}

func loadBalancer(name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: ptr.To("pangolin.io/tunnel"),
			Selector: map[string]string{"app": name}, Ports: ports,
		},
	}
}

// TestServicesAsPorts: a Service of type LoadBalancer of PIC's class is published as
// raw resources in direct mode, with its address in its status; a port edit moves it,
// a younger Service on the same port is refused, and a delete removes it.
func TestServicesAsPorts(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		startDirect(t, env, fake, ns, withPorts)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		db := "db." + ns + ".svc.cluster.local"

		w.create(loadBalancer("db",
			corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP},
			corev1.ServicePort{Name: "dns", Port: 5353, Protocol: corev1.ProtocolUDP}))
		eventuallyRawServed(t, fake, map[string][]string{"tcp-5432": {db + ":5432"}, "udp-5353": {db + ":5353"}})
		w.eventuallyEvent(pic.ReasonCreated)

		t.Run("the status shows Pangolin's address with the ports served", func(t *testing.T) {
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				var svc corev1.Service
				assert.NoError(c, w.c.Get(w.ctx, types.NamespacedName{Namespace: ns, Name: "db"}, &svc))
				assert.Equal(c, []corev1.LoadBalancerIngress{{
					IP: "127.0.0.1", IPMode: ptr.To(corev1.LoadBalancerIPModeProxy),
					Ports: []corev1.PortStatus{{Port: 5353, Protocol: corev1.ProtocolUDP}, {Port: 5432, Protocol: corev1.ProtocolTCP}},
				}}, svc.Status.LoadBalancer.Ingress)
			}, wait, tick)
		})
		t.Run("a port edit moves the resource", func(t *testing.T) {
			update(t, w, "db", func(s *corev1.Service) { s.Spec.Ports[0].Port = 5433 })
			eventuallyRawServed(t, fake, map[string][]string{"tcp-5433": {db + ":5433"}, "udp-5353": {db + ":5353"}})
		})
		t.Run("a younger Service on the same port is refused, naming the owner", func(t *testing.T) {
			testenv.NextCreationSecond() // db2 must be younger
			w.create(loadBalancer("db2", corev1.ServicePort{Name: "pg", Port: 5433, Protocol: corev1.ProtocolTCP}))
			assert.Contains(t, w.eventuallyEventIn(ns, pic.ReasonPortConflict), "Service "+ns+"/db")
			assert.Equal(t, map[string][]string{"tcp-5433": {db + ":5433"}, "udp-5353": {db + ":5353"}}, rawServed(fake))
		})
		t.Run("deleting the owner hands the port over", func(t *testing.T) {
			require.NoError(t, w.c.Delete(w.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}))
			eventuallyRawServed(t, fake, map[string][]string{"tcp-5433": {"db2." + ns + ".svc.cluster.local:5433"}})
		})
		t.Run("a Service of another class is left alone", func(t *testing.T) {
			other := loadBalancer("metallb", corev1.ServicePort{Name: "x", Port: 7000, Protocol: corev1.ProtocolTCP})
			other.Spec.LoadBalancerClass = ptr.To("metallb.io/metallb")
			before := reconciles(t, loadbalancer.Name)
			w.create(other)
			require.Eventually(t, func() bool { return reconciles(t, loadbalancer.Name) > before }, wait, tick, "a reconcile of the Service")
			assert.Equal(t, map[string][]string{"tcp-5433": {"db2." + ns + ".svc.cluster.local:5433"}}, rawServed(fake))
			var svc corev1.Service
			require.NoError(t, w.c.Get(w.ctx, client.ObjectKeyFromObject(other), &svc))
			assert.Empty(t, svc.Status.LoadBalancer.Ingress)
		})
	})
}

// TestHostPolicyPortsBoundANamespacesPorts: once the hostPolicy lists ports, a
// namespace publishes the public ports of its rules and no other; a port published
// before the policy was narrowed goes at the Service's next reconcile.
func TestHostPolicyPortsBoundANamespacesPorts(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		policy := func(ports ...string) func(*config.Config) {
			return func(c *config.Config) {
				c.HostPolicy = hostpolicy.Policy{{Namespaces: []string{ns}, Hosts: []string{"*." + ns + ".example.com"}, Ports: ports}}
			}
		}
		stop := startDirect(t, env, fake, ns, withPorts, policy("45000-45099/tcp", "5432/tcp"))
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		db := "db." + ns + ".svc.cluster.local"

		w.create(loadBalancer("db", corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}))
		w.create(loadBalancer("ssh", corev1.ServicePort{Name: "ssh", Port: 2222, Protocol: corev1.ProtocolTCP}))
		eventuallyRawServed(t, fake, map[string][]string{"tcp-5432": {db + ":5432"}})
		assert.Contains(t, w.eventuallyNote("ssh", pic.ReasonPortNotAllowed),
			"public port 2222/tcp is not published: the hostPolicy of PIC's configuration lets namespace "+ns+" publish only 45000-45099/tcp, 5432/tcp")

		// The platform team narrows the policy; PIC restarts with it.
		stop()
		startDirect(t, env, fake, ns, withPorts, policy("45000-45099/tcp"))
		eventuallyRawServed(t, fake, map[string][]string{})
		// The first reconcile after the restart finds the port published and says so;
		// later ones, with nothing left on it, say it is not published.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Contains(c, w.notes(c, "db", pic.ReasonPortNotAllowed),
				"public port 5432/tcp is published no more: the hostPolicy of PIC's configuration lets namespace "+ns+" publish only 45000-45099/tcp")
		}, wait, tick)
	})
}

func update(t *testing.T, w *world, name string, mutate func(*corev1.Service)) {
	t.Helper()
	require.NoError(t, testenv.Update(w.ctx, w.c, types.NamespacedName{Namespace: w.ns, Name: name}, mutate, wait))
}

// TestTCPRouteAsPort: a TCPRoute attached to a TCP listener of PIC's Gateway is
// published on the listener's port; a younger route on the same listener is refused
// with PortConflict in its status, and takes the port once the first is deleted.
func TestTCPRouteAsPort(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		startDirect(t, env, fake, ns, withPorts)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		class := "pangolin-" + ns
		w.create(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}})
		t.Cleanup(func() {
			_ = w.c.Delete(context.Background(), &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: class}})
		})
		w.create(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "public"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class),
				Listeners: []gatewayv1.Listener{{Name: "pg", Protocol: gatewayv1.TCPProtocolType, Port: 15432}}},
		})
		w.service("postgres", 5432)
		tcpRoute := func(name string) *gatewayv1.TCPRoute {
			return &gatewayv1.TCPRoute{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: gatewayv1.TCPRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
					Rules: []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{{
						BackendObjectReference: gatewayv1.BackendObjectReference{Name: "postgres", Port: ptr.To(gatewayv1.PortNumber(5432))},
					}}}},
				},
			}
		}
		target := "postgres." + ns + ".svc.cluster.local:5432"
		w.create(tcpRoute("first"))
		eventuallyRawServed(t, fake, map[string][]string{"tcp-15432": {target}})
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, metav1.ConditionTrue, routeAccepted(t, w, "first").Status)
		}, wait, tick)

		testenv.NextCreationSecond() // second must be younger
		w.create(tcpRoute("second"))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			cond := routeAccepted(t, w, "second")
			assert.Equal(c, metav1.ConditionFalse, cond.Status)
			assert.Equal(c, pic.ReasonPortConflict, cond.Reason)
		}, wait, tick)
		require.NoError(t, w.c.Delete(w.ctx, &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}}))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, metav1.ConditionTrue, routeAccepted(t, w, "second").Status)
		}, wait, tick)
		assert.Equal(t, map[string][]string{"tcp-15432": {target}}, rawServed(fake))
		resources := fake.Resources()
		sort.Slice(resources, func(i, j int) bool { return resources[i].ID < resources[j].ID })
		assert.Equal(t, "tcp:15432 (TCPRoute "+ns+"/second)", resources[len(resources)-1].Name)
	})
}

// routeAccepted is the Accepted condition of PIC's status entry for a TCPRoute's first
// parent; empty until PIC wrote one.
func routeAccepted(t *testing.T, w *world, name string) metav1.Condition {
	var tr gatewayv1.TCPRoute
	if err := w.c.Get(w.ctx, types.NamespacedName{Namespace: w.ns, Name: name}, &tr); err != nil || len(tr.Status.Parents) == 0 {
		return metav1.Condition{}
	}
	if c := meta.FindStatusCondition(tr.Status.Parents[0].Conditions, string(gatewayv1.RouteConditionAccepted)); c != nil {
		return *c
	}
	return metav1.Condition{}
}
