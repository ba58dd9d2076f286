package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// TestWriteConflictConverges: another writer changes PIC's PangolinResource between
// PIC's read and its write. The API server refuses PIC's update (409, stale
// resourceVersion); PIC reads again and converges: its spec wins, the other writer's
// extra label stays, the resource is updated in place, and PIC then stops writing.
func TestWriteConflictConverges(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		var (
			armed    atomic.Bool
			injected atomic.Int32
			target   atomic.Value // the resource's name
			puts     atomic.Int32 // PIC's PUTs of that resource
		)
		ns := testenv.NewNamespace(t, env.Client)
		// The other writer acts inside PIC's first update, after PIC read the object and
		// before its PUT reaches the API server.
		other := func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				name, _ := target.Load().(string)
				if req.Method == http.MethodPut && name != "" && strings.HasSuffix(req.URL.Path, "/pangolinresources/"+name) {
					puts.Add(1)
					if armed.CompareAndSwap(true, false) {
						var r tunnelv1alpha1.PangolinResource
						if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &r); err == nil {
							r.Labels["other-writer"] = "was-here"
							r.Spec.HTTPConfig.Subdomain = "hijacked"
							if err := env.Client.Update(context.Background(), &r); err == nil {
								injected.Add(1)
							}
						}
					}
				}
				return rt.RoundTrip(req)
			})
		}
		w := startWith(t, env, other, ns)
		w.tunnel("default")
		w.service("web", 8080)
		w.service("api", 9090)
		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		created := w.eventuallyHosts(w.host("app"))[w.host("app")]
		target.Store(created.Name)
		errorsBefore := counter(t, "pic_pangolinresource_writes_total", map[string]string{"operation": "update", "result": "error"})

		armed.Store(true)
		w.updateIngress("shop", func(ing *networkingv1.Ingress) {
			ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090}}
		})
		var final tunnelv1alpha1.PangolinResource
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			r, ok := w.resources()[w.host("app")]
			if !assert.True(c, ok, "the resource of %s, with PIC's subdomain", w.host("app")) {
				return
			}
			assert.Equal(c, "api."+w.ns+".svc.cluster.local:9090", testenv.Backend(r))
			assert.Equal(c, "was-here", r.Labels["other-writer"], "the other writer's label")
			final = r
		}, wait, tick)
		require.Equal(t, int32(1), injected.Load(), "the other writer did not get between PIC's read and its write: the test tests nothing")
		assert.Equal(t, created.UID, final.UID, "updated in place, not recreated")
		assert.GreaterOrEqual(t, counter(t, "pic_pangolinresource_writes_total", map[string]string{"operation": "update", "result": "error"})-errorsBefore, 1.0,
			"PIC counted the refused update")

		// No hot loop: once converged, the next reconcile of the Ingress (a touch wakes it:
		// the echo of PIC's own write does not) finds nothing to change, after a handful of
		// PUTs at most. A retry queued before convergence may land after it, and write
		// nothing either.
		upToDate := w.upToDate("ingress", "shop")
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Labels = map[string]string{"touched": "yes"} })
		w.eventuallyUpToDateSince(upToDate, "ingress", "shop")
		settled := puts.Load()
		assert.LessOrEqual(t, settled, int32(5), "PUTs of %s to converge after one conflict", created.Name)
		t.Logf("converged after one injected conflict with %d PUTs of %s", settled, created.Name)
	})
}

// decoy is a PangolinResource PIC must never touch.
type decoy struct {
	kind string
	obj  *tunnelv1alpha1.PangolinResource
}

// TestDecoysUntouched creates 105 PangolinResources that look like PIC's but are not
// (PIC's labels with a real Ingress's uid but no owner reference; the very names PIC
// would give its resources; a controller reference to the Ingress but no uid label;
// both, on a copy in another namespace), then lets PIC reconcile Ingresses whose hosts
// and names collide with all of them.
// Every decoy keeps its resourceVersion; PIC publishes the hosts whose names are free,
// and reports NameConflict for the others.
func TestDecoysUntouched(t *testing.T) {
	const (
		ingresses = 10
		hostsEach = 5
	)
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)

		// The Ingresses exist first (their UIDs go on the decoys), opted out until the
		// decoys are in place, so that PIC meets the decoys on its first real pass.
		type ing struct {
			obj   *networkingv1.Ingress
			hosts []string
		}
		var ings []ing
		for i := range ingresses {
			var rules []networkingv1.IngressRule
			var hosts []string
			for j := range hostsEach {
				h := w.host(fmt.Sprintf("app-%d-%d", i, j))
				hosts = append(hosts, h)
				rules = append(rules, rule(h, "/", "web", 8080))
			}
			obj := ingressFor(fmt.Sprintf("shop-%d", i), "pangolin", rules...)
			obj.Annotations = map[string]string{pic.AnnotationEnabled: "false"}
			w.create(obj)
			ings = append(ings, ing{obj, hosts})
		}

		newDecoy := func(name, host string) *tunnelv1alpha1.PangolinResource {
			d := testenv.ForeignResource(w.ns, name, host, w.fork)
			d.Annotations = map[string]string{pic.AnnotationHost: host}
			return d
		}
		labels := func(i ing) map[string]string {
			return map[string]string{pic.LabelOwnerUID: string(i.obj.UID), pic.LabelOwnerName: i.obj.Name,
				pic.LabelOwnerNamespace: w.ns, pic.LabelManagedBy: pic.ManagedByValue}
		}
		controllerRef := func(i ing) []metav1.OwnerReference {
			return []metav1.OwnerReference{{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: i.obj.Name, UID: i.obj.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		}
		origin := func(i ing) route.Origin {
			return route.Origin{Kind: "Ingress", Namespace: w.ns, Name: i.obj.Name, UID: i.obj.UID}
		}

		// 35 with the names PIC would use for 35 of the 50 hosts (with no owner, with
		// PIC's labels only, or with the owner reference only), 35 with PIC's labels and
		// no owner reference, 30 with a controller reference to the Ingress and no uid
		// label.
		var decoys []decoy
		squatted := map[string]bool{} // hosts whose resource name a decoy holds
		n := 0
		for i := 0; n < 35; i = (i + 1) % ingresses {
			for j := range hostsEach {
				h := ings[i].hosts[j]
				if squatted[h] {
					continue
				}
				d := newDecoy(engine.ResourceName(origin(ings[i]), h), h)
				switch n % 3 {
				case 1:
					d.Labels = labels(ings[i]) // PIC's labels, but no owner reference
				case 2:
					d.OwnerReferences = controllerRef(ings[i]) // owned, but no uid label
				}
				squatted[h] = true
				decoys = append(decoys, decoy{"name collision", d})
				n++
				break
			}
		}
		for k := range 35 {
			i := ings[k%ingresses]
			d := newDecoy(fmt.Sprintf("decoy-labels-%02d", k), i.hosts[k%hostsEach])
			d.Labels = labels(i)
			decoys = append(decoys, decoy{"labels without owner", d})
		}
		for k := range 30 {
			i := ings[k%ingresses]
			d := newDecoy(fmt.Sprintf("decoy-owner-%02d", k), i.hosts[(k+2)%hostsEach])
			d.OwnerReferences = controllerRef(i)
			decoys = append(decoys, decoy{"owner without label", d})
		}
		// An owner's resources are in its namespace: these copies elsewhere name it in
		// both ways, under the names PIC gives its own.
		elsewhere := testenv.NewNamespace(t, env.Client)
		for k := range 5 {
			i := ings[k%ingresses]
			d := newDecoy(engine.ResourceName(origin(i), i.hosts[k%hostsEach]), i.hosts[k%hostsEach])
			d.Namespace, d.Labels, d.OwnerReferences = elsewhere, labels(i), controllerRef(i)
			decoys = append(decoys, decoy{"copy in another namespace", d})
		}
		require.Len(t, decoys, 105)
		for _, d := range decoys {
			require.NoError(t, w.c.Create(w.ctx, d.obj))
		}

		// Opt every Ingress in: PIC reconciles them all, meeting the decoys.
		for _, i := range ings {
			w.updateIngress(i.obj.Name, func(obj *networkingv1.Ingress) { delete(obj.Annotations, pic.AnnotationEnabled) })
		}
		var free []string
		for _, i := range ings {
			for _, h := range i.hosts {
				if !squatted[h] {
					free = append(free, engine.ResourceName(origin(i), h))
				}
			}
		}
		owned := func(c *assert.CollectT) []string {
			var list tunnelv1alpha1.PangolinResourceList
			assert.NoError(c, w.c.List(w.ctx, &list, client.InNamespace(w.ns)))
			var out []string
			for _, r := range list.Items {
				if ref := metav1.GetControllerOf(&r); ref != nil && r.Labels[pic.LabelOwnerUID] == string(ref.UID) {
					out = append(out, r.Name)
				}
			}
			return out
		}
		isDecoy := map[client.ObjectKey]bool{}
		for _, d := range decoys {
			isDecoy[client.ObjectKeyFromObject(d.obj)] = true
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var mine []string
			for _, name := range owned(c) {
				if !isDecoy[client.ObjectKey{Namespace: w.ns, Name: name}] {
					mine = append(mine, name)
				}
			}
			assert.ElementsMatch(c, free, mine, "PIC's resources: one per host whose name is free")
			var events eventsv1.EventList
			assert.NoError(c, w.c.List(w.ctx, &events, client.InNamespace(w.ns)))
			for _, i := range ings {
				if !slices.ContainsFunc(i.hosts, func(h string) bool { return squatted[h] }) {
					continue
				}
				assert.True(c, slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
					return e.Regarding.UID == i.obj.UID && e.Type == corev1.EventTypeWarning && e.Reason == pic.ReasonNameConflict
				}), "NameConflict on %s", i.obj.Name)
			}
		}, wait, tick)

		// A second full pass: every Ingress is touched, so PIC reconciles each again.
		reconciled := reconciles(t, "ingress")
		for _, i := range ings {
			w.updateIngress(i.obj.Name, func(obj *networkingv1.Ingress) { obj.Labels = map[string]string{"touched": "yes"} })
		}
		// A reconcile is counted once it returned: a write it would send has been sent.
		require.Eventually(t, func() bool { return reconciles(t, "ingress")-reconciled >= float64(len(ings)) }, wait, tick,
			"reconciles of the %d touched Ingresses", len(ings))

		changed := 0
		for _, d := range decoys {
			var now tunnelv1alpha1.PangolinResource
			require.NoError(t, w.c.Get(w.ctx, client.ObjectKeyFromObject(d.obj), &now), "decoy %s (%s) exists", d.obj.Name, d.kind)
			if now.ResourceVersion != d.obj.ResourceVersion {
				changed++
				t.Errorf("decoy %s (%s) was modified: resourceVersion %s → %s", d.obj.Name, d.kind, d.obj.ResourceVersion, now.ResourceVersion)
			}
		}
		t.Logf("%d decoys (%d name collisions, 35 labels without owner, 30 owner without label, 5 in another namespace), %d modified; %d hosts published beside them",
			len(decoys), len(squatted), changed, len(free))
	})
}
