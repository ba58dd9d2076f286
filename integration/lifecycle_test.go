package integration_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	wait = 30 * time.Second
	tick = 100 * time.Millisecond
)

// world is one test's view of a real API server with PIC running against it.
type world struct {
	t    *testing.T
	ctx  context.Context
	c    client.Client
	ns   string
	fork bool
	// requests counts what this PIC sent to the API server, for "writes nothing" checks
	// that a no-op update (which the API server does not persist) would pass unseen.
	requests *requestLog
	// reconciled counts the reconciles that found nothing to change, per object.
	reconciled *reconcileCounts
}

// requestLog counts the writes a PIC sends, by namespaced resource and method.
type requestLog struct {
	mu     sync.Mutex
	writes map[string]map[string]int
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			resource := namespacedResource(req.URL.Path)
			l.mu.Lock()
			if l.writes == nil {
				l.writes = map[string]map[string]int{}
			}
			if l.writes[resource] == nil {
				l.writes[resource] = map[string]int{}
			}
			l.writes[resource][req.Method]++
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// namespacedResource is "<ns>/<resource>" for a namespaced request path
// (.../namespaces/<ns>/<resource>[/<name>...]), or "" for any other path.
func namespacedResource(p string) string {
	segments := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segments {
		if s == "namespaces" && i+2 < len(segments) {
			return segments[i+1] + "/" + segments[i+2]
		}
	}
	return ""
}

// writesTo is the number of writes this PIC sent for resource in namespace, by method.
// Unlike PIC's metrics, it counts only this test's PIC and namespace: the envtest API
// server keeps earlier tests' objects, which this PIC reconciles too.
func (l *requestLog) writesTo(namespace, resource string) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for method, n := range l.writes[namespace+"/"+resource] {
		out[method] = n
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// start runs PIC (the real manager, every source and the sink) against env, and
// returns when it is running. It stops with the test.
func start(t *testing.T, env *testenv.Env, configure ...func(*config.Config)) *world {
	t.Helper()
	return startWith(t, env, nil, "", configure...)
}

// startWith is start with PIC's transport wrapped by wrap, to watch or disturb what PIC
// sends to the API server. ns, if set, is the world's namespace (created beforehand).
func startWith(t *testing.T, env *testenv.Env, wrap func(http.RoundTripper) http.RoundTripper, ns string, configure ...func(*config.Config)) *world {
	t.Helper()
	reconciled := &reconcileCounts{}
	ctx, cancel := context.WithCancel(log.IntoContext(context.Background(), logr.Discard()))
	cfg := config.Default()
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress = "0", "0"
	cfg.ResyncPeriod = time.Hour // tests must not pass thanks to a resync
	for _, c := range configure {
		c(cfg)
	}
	requests := &requestLog{}
	rc := rest.CopyConfig(env.Config)
	rc.Wrap(requests.wrap)
	if wrap != nil {
		rc.Wrap(wrap)
	}
	mgr, err := manager.New(ctx, cfg, rc, builtin.Registry, manager.OnReconciled(reconciled.record))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.True(t, mgr.GetCache().WaitForCacheSync(ctx))
	if ns == "" {
		ns = testenv.NewNamespace(t, env.Client)
	}
	return &world{t: t, ctx: ctx, c: env.Client, ns: ns, fork: env.Variant.Name == testenv.VariantFork, requests: requests, reconciled: reconciled}
}

// reconciles is how many reconciles the controller of source has finished, in this
// process.
func reconciles(t *testing.T, source string) float64 {
	return counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": source})
}

// eventuallyReconciledSince waits until the controller of source has finished a
// reconcile since it had finished before: a "nothing was written" check that follows
// proves something only once the reconcile it is about has run.
func (w *world) eventuallyReconciledSince(before float64, source string) {
	w.t.Helper()
	require.Eventually(w.t, func() bool { return reconciles(w.t, source) > before }, wait, tick, "a %s reconcile", source)
}

// host is a public host unique to the test: the envtest API server is shared by the
// package's tests, and host ownership is cluster-wide.
func (w *world) host(name string) string { return name + "." + w.ns + ".example.com" }

func (w *world) create(obj client.Object) {
	w.t.Helper()
	if obj.GetNamespace() == "" {
		obj.SetNamespace(w.ns)
	}
	require.NoError(w.t, w.c.Create(w.ctx, obj))
}

// tunnel creates a PangolinTunnel that the operator reports Ready, as it does once
// the tunnel is up. PIC rechecks the routes of a tunnel that is not Ready every 30 s:
// with such tunnels, a test could pass on a recheck instead of the watch it is about.
func (w *world) tunnel(name string) { w.tunnelIn(w.ns, name) }

func (w *world) tunnelIn(namespace, name string) {
	t := &tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	w.create(t)
	t.Status.Status = tunnelv1alpha1.StatusReady
	meta.SetStatusCondition(&t.Status.Conditions, metav1.Condition{Type: tunnelv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Connected"})
	require.NoError(w.t, w.c.Status().Update(w.ctx, t))
}

// unreadyTunnel creates a PangolinTunnel the operator has not reported on yet.
func (w *world) unreadyTunnel(name string) *tunnelv1alpha1.PangolinTunnel {
	t := &tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: name}}
	w.create(t)
	return t
}

func (w *world) service(name string, port int32) {
	w.create(serviceObject(name, port))
}

func serviceObject(name string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port}}},
	}
}

func ingressFor(name, class string, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To(class), Rules: rules},
	}
}

func rule(host, path, service string, port int32) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{
			Path: path, PathType: ptr.To(networkingv1.PathTypePrefix),
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: port}}},
		}},
	}}}
}

// resources lists the PangolinResources in the test namespace, by public host.
func (w *world) resources() map[string]tunnelv1alpha1.PangolinResource {
	var list tunnelv1alpha1.PangolinResourceList
	require.NoError(w.t, w.c.List(w.ctx, &list, client.InNamespace(w.ns)))
	out := map[string]tunnelv1alpha1.PangolinResource{}
	for _, r := range list.Items {
		if r.Spec.HTTPConfig != nil {
			out[r.Spec.HTTPConfig.Subdomain+"."+r.Spec.HTTPConfig.DomainName] = r
		}
	}
	return out
}

func (w *world) eventuallyHosts(hosts ...string) map[string]tunnelv1alpha1.PangolinResource {
	w.t.Helper()
	var got map[string]tunnelv1alpha1.PangolinResource
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		got = w.resources()
		keys := make([]string, 0, len(got))
		for h := range got {
			keys = append(keys, h)
		}
		assert.ElementsMatch(c, hosts, keys)
	}, wait, tick)
	return got
}

func (w *world) eventuallyEvent(reason string) {
	w.t.Helper()
	w.eventuallyEventIn(w.ns, reason)
}

// eventuallyEventIn waits for an event with reason in namespace, and returns its note.
func (w *world) eventuallyEventIn(namespace, reason string) string {
	w.t.Helper()
	var note string
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		var list eventsv1.EventList
		assert.NoError(c, w.c.List(w.ctx, &list, client.InNamespace(namespace)))
		found := false
		for _, e := range list.Items {
			if e.Reason == reason {
				found, note = true, e.Note
			}
		}
		assert.True(c, found, "event %s", reason)
	}, wait, tick)
	return note
}

func (w *world) updateIngress(name string, mutate func(*networkingv1.Ingress)) {
	w.t.Helper()
	require.NoError(w.t, testenv.Update(w.ctx, w.c, client.ObjectKey{Namespace: w.ns, Name: name}, mutate, wait))
}

func TestLifecycle(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		w.service("api", 9090)

		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		got := w.eventuallyHosts(w.host("app"))
		r := got[w.host("app")]
		assert.Equal(t, "default", r.Spec.TunnelRef.Name)
		assert.Equal(t, "web."+w.ns+".svc.cluster.local:8080", testenv.Backend(r))
		require.NotEmpty(t, r.OwnerReferences)
		assert.Equal(t, "shop", r.OwnerReferences[0].Name)
		w.eventuallyEvent(pic.ReasonCreated)

		t.Run("changing the host replaces the resource", func(t *testing.T) {
			w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = w.host("shop") })
			w.eventuallyHosts(w.host("shop"))
		})
		t.Run("changing the backend updates the resource in place", func(t *testing.T) {
			before := w.resources()[w.host("shop")]
			w.updateIngress("shop", func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090}}
			})
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				after := w.resources()[w.host("shop")]
				assert.Equal(c, "api."+w.ns+".svc.cluster.local:9090", testenv.Backend(after))
				assert.Equal(c, before.UID, after.UID, "updated, not recreated")
			}, wait, tick)
		})
		t.Run("adding and removing a host adds and removes its resource", func(t *testing.T) {
			w.updateIngress("shop", func(ing *networkingv1.Ingress) {
				ing.Spec.Rules = append(ing.Spec.Rules, rule(w.host("admin"), "/", "web", 8080))
			})
			w.eventuallyHosts(w.host("shop"), w.host("admin"))
			w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules = ing.Spec.Rules[:1] })
			w.eventuallyHosts(w.host("shop"))
		})
		t.Run("a hand edit of the spec is restored", func(t *testing.T) {
			r := w.resources()[w.host("shop")]
			r.Spec.HTTPConfig.Subdomain = "hijacked"
			require.NoError(t, w.c.Update(w.ctx, &r))
			w.eventuallyHosts(w.host("shop"))
		})
		t.Run("a hand-deleted resource is recreated", func(t *testing.T) {
			r := w.resources()[w.host("shop")]
			require.NoError(t, w.c.Delete(w.ctx, &r))
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				again, ok := w.resources()[w.host("shop")]
				assert.True(c, ok)
				assert.NotEqual(c, r.UID, again.UID)
			}, wait, tick)
		})
		t.Run("a reconcile with nothing to change writes nothing", func(t *testing.T) {
			before := w.requests.writesTo(w.ns, "pangolinresources")
			upToDate := w.upToDate("ingress", "shop")
			// An unrelated label change triggers a reconcile of the Ingress.
			w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Labels = map[string]string{"touched": "yes"} })
			w.eventuallyUpToDateSince(upToDate, "ingress", "shop")
			assert.Equal(t, before, w.requests.writesTo(w.ns, "pangolinresources"))
		})
		t.Run("opting out removes the resources and opting in restores them", func(t *testing.T) {
			w.updateIngress("shop", func(ing *networkingv1.Ingress) {
				ing.Annotations = map[string]string{pic.AnnotationEnabled: "false"}
			})
			w.eventuallyHosts()
			w.updateIngress("shop", func(ing *networkingv1.Ingress) { delete(ing.Annotations, pic.AnnotationEnabled) })
			w.eventuallyHosts(w.host("shop"))
		})
		t.Run("a class change away from pangolin removes the resources", func(t *testing.T) {
			w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To("nginx") })
			w.eventuallyHosts()
		})
	})
}

func TestMissingTunnelThenCreated(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.service("web", 8080)
		w.create(ingressFor("late", "pangolin", rule(w.host("late"), "/", "web", 8080)))
		w.eventuallyEvent(pic.ReasonTunnelNotFound)
		assert.Empty(t, w.resources())
		// The tunnel's own event brings the Ingress back, well before any backoff.
		w.tunnel("default")
		w.eventuallyHosts(w.host("late"))
	})
}

// TestTunnelNotReady: the PangolinResources of a tunnel the operator has not reported
// Ready yet are written anyway (the operator serves them once it is), and the user is
// told why nothing is served yet.
func TestTunnelNotReady(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.unreadyTunnel("default")
		w.service("web", 8080)
		w.create(ingressFor("early", "pangolin", rule(w.host("early"), "/", "web", 8080)))
		w.eventuallyHosts(w.host("early"))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonTunnelNotReady), "PangolinTunnel "+w.ns+"/default is not Ready yet")
	})
}

func TestUnownedLookalikeUntouched(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		ing := ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080))
		w.create(ing)
		owned := w.eventuallyHosts(w.host("app"))[w.host("app")]

		// A look-alike: PIC's labels with the Ingress's UID, but no owner reference.
		decoy := testenv.ForeignResource(w.ns, "decoy", w.host("gone"), w.fork)
		decoy.Labels, decoy.Annotations = owned.Labels, map[string]string{pic.AnnotationHost: w.host("gone")}
		require.NoError(t, w.c.Create(w.ctx, decoy))
		// Make PIC look at the Ingress again: the decoy must survive it.
		upToDate := w.upToDate("ingress", "shop")
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Labels = map[string]string{"touched": "yes"} })
		w.eventuallyHosts(w.host("app"), w.host("gone"))
		w.eventuallyUpToDateSince(upToDate, "ingress", "shop")
		var after tunnelv1alpha1.PangolinResource
		require.NoError(t, w.c.Get(w.ctx, client.ObjectKeyFromObject(decoy), &after))
		assert.Equal(t, decoy.ResourceVersion, after.ResourceVersion, "the decoy was not modified")

		// An object with the name PIC would use, that PIC does not own: NameConflict,
		// and the object is left as it is.
		squatter := decoy.DeepCopy()
		squatter.ObjectMeta = metav1.ObjectMeta{Namespace: w.ns,
			Name: engine.ResourceName(route.Origin{Kind: "Ingress", Namespace: w.ns, Name: "blocked"}, w.host("blocked"))}
		require.NoError(t, w.c.Create(w.ctx, squatter))
		w.create(ingressFor("blocked", "pangolin", rule(w.host("blocked"), "/", "web", 8080)))
		w.eventuallyEvent(pic.ReasonNameConflict)
		var still tunnelv1alpha1.PangolinResource
		require.NoError(t, w.c.Get(w.ctx, client.ObjectKeyFromObject(squatter), &still))
		assert.Equal(t, squatter.ResourceVersion, still.ResourceVersion, "PIC did not touch the squatter")
	})
}

// TestDeletionInProgress: once an Ingress's deletion has begun (a finalizer keeps it,
// as a foreground deletion does until the garbage collector has removed what it owns),
// PIC writes nothing for it: a resource removed meanwhile is not created again.
func TestDeletionInProgress(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		ing := ingressFor("leaving", "pangolin", rule(w.host("app"), "/", "web", 8080))
		ing.Finalizers = []string{"example.com/keep"}
		w.create(ing)
		// Whatever happens below: an Ingress stuck in deletion would be reconciled by every
		// later test's PIC.
		t.Cleanup(func() { w.updateIngress("leaving", func(ing *networkingv1.Ingress) { ing.Finalizers = nil }) })
		published := w.eventuallyHosts(w.host("app"))[w.host("app")]

		reconciled := reconciles(t, "ingress")
		require.NoError(t, w.c.Delete(w.ctx, ing))
		require.NoError(t, w.c.Delete(w.ctx, &published)) // what the garbage collector does first
		// A reconcile is counted once it returned: a create it would send has been sent.
		require.Eventually(t, func() bool { return reconciles(t, "ingress") >= reconciled+2 }, wait, tick)
		assert.Empty(t, w.resources(), "PangolinResources of an Ingress being deleted")
	})
}
