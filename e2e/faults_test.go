package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// specDecoys puts 100 PangolinResources that PIC does not own among the Ingresses it
// serves, before it first reconciles them: 20 hold the very names PIC would give its
// resources (with no owner, with PIC's labels only, or with the owner reference only),
// 40 carry PIC's labels for an Ingress but no owner reference, 40 a controller
// reference to an Ingress but no uid label. After PIC has served every free host and
// then reconciled every Ingress once more, no decoy has changed.
func specDecoys(t *testing.T, p Provider) {
	const ingresses, hostsEach = 10, 5
	e := newEnv(t, p, "decoys")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	pic := e.startPIC(PICOptions{})[0]

	// Opted out at first, so that the decoys exist before PIC's first look.
	var ings []*networkingv1.Ingress
	for i := range ingresses {
		ing := ingress(e.ns, fmt.Sprintf("app-%02d", i), "pangolin", e.host(fmt.Sprintf("app-%02d-h0", i)), "web", 8080)
		for h := 1; h < hostsEach; h++ {
			rule := *ing.Spec.Rules[0].DeepCopy()
			rule.Host = e.host(fmt.Sprintf("app-%02d-h%d", i, h))
			ing.Spec.Rules = append(ing.Spec.Rules, rule)
		}
		ing.Annotations = map[string]string{"pangolin.ingress.k8s.io/enabled": "false"}
		e.create(ing)
		ings = append(ings, ing)
	}
	labels := func(ing *networkingv1.Ingress) map[string]string {
		return map[string]string{labelUID: string(ing.UID), "pic.ingress.k8s.io/name": ing.Name,
			"pic.ingress.k8s.io/namespace": e.ns, "app.kubernetes.io/managed-by": "pangolin-ingress-controller"}
	}
	controllerRef := func(ing *networkingv1.Ingress) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: ing.Name, UID: ing.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	var decoys []tunnelv1alpha1.PangolinResource
	squatted := map[string]bool{} // hosts whose resource name a decoy holds
	for k := range 20 {
		ing, host := ings[k%ingresses], ings[k%ingresses].Spec.Rules[k/ingresses].Host
		name := engine.ResourceName(route.Origin{Kind: "Ingress", Namespace: e.ns, Name: ing.Name, UID: ing.UID}, host)
		decoys = append(decoys, e.foreignResource(name, host, func(r *tunnelv1alpha1.PangolinResource) {
			switch k % 3 {
			case 1:
				r.Labels = labels(ing)
			case 2:
				r.OwnerReferences = controllerRef(ing)
			}
		}))
		squatted[host] = true
	}
	for k := range 40 {
		ing := ings[k%ingresses]
		decoys = append(decoys, e.foreignResource(fmt.Sprintf("decoy-labels-%02d", k), ing.Spec.Rules[k%hostsEach].Host,
			func(r *tunnelv1alpha1.PangolinResource) { r.Labels = labels(ing) }))
		decoys = append(decoys, e.foreignResource(fmt.Sprintf("decoy-owner-%02d", k), ing.Spec.Rules[(k+2)%hostsEach].Host,
			func(r *tunnelv1alpha1.PangolinResource) { r.OwnerReferences = controllerRef(ing) }))
	}
	require.Len(t, decoys, 100)

	for _, ing := range ings {
		e.updateIngress(ing.Name, func(i *networkingv1.Ingress) { delete(i.Annotations, "pangolin.ingress.k8s.io/enabled") })
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, ing := range ings {
			var want []string
			for _, rule := range ing.Spec.Rules {
				if !squatted[rule.Host] {
					want = append(want, rule.Host)
				}
			}
			var got []string
			for _, r := range e.owned(c, e.ns, ing.UID) {
				got = append(got, publishedHost(r))
			}
			assert.ElementsMatch(c, want, got, "hosts served for %s: every host whose name is free", ing.Name)
		}
	}, eventually, tick)
	for _, ing := range ings { // each has two squatted hosts
		e.eventuallyWarning(ing, "NameConflict")
	}

	// A second full pass: every Ingress touched, and reconciled once more.
	before := e.reconciles(t, pic, "ingress")
	for _, ing := range ings {
		e.updateIngress(ing.Name, func(i *networkingv1.Ingress) { i.Labels = map[string]string{"touched": "yes"} })
	}
	e.eventuallyReconciled(pic, "ingress", before, ingresses)
	for _, d := range decoys {
		e.requireUntouched(d)
	}
}

// specWriteFaults: a hand-deleted resource comes back; another writer updating PIC's
// resource while PIC updates it too does not make PIC loop or lose the other writer's
// annotation; when the Ingress that owns a contested host is deleted, the next one
// takes the host over, and the garbage collector removes the old resource.
func specWriteFaults(t *testing.T, p Provider) {
	e := newEnv(t, p, "writefaults")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	e.service("api", 9090)
	pic := e.startPIC(PICOptions{})[0]

	e.create(ingress(e.ns, "app", "pangolin", e.host("app"), "web", 8080))
	app := e.getIngress("app")
	first := e.eventuallyOne(app, func(*assert.CollectT, tunnelv1alpha1.PangolinResource) {})

	t.Run("a hand-deleted resource is recreated", func(t *testing.T) {
		require.NoError(t, e.c.Delete(e.ctx, &first))
		again := e.eventuallyOne(app, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
			assert.NotEqual(c, first.UID, r.UID, "the deleted resource itself")
			assert.Equal(c, e.host("app"), publishedHost(r))
		})
		first = again
	})

	t.Run("a concurrent writer causes no hot loop", func(t *testing.T) {
		updatesBefore := e.writes(pic, "update")
		// The other writer: an annotation of its own, written as fast as the API server
		// takes it, for at least 3 s and until PIC has updated the backend, so that PIC's
		// update races with it.
		var (
			wg      sync.WaitGroup
			written int
			last    string
			stop    = make(chan struct{})
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				value := fmt.Sprint(i)
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					var r tunnelv1alpha1.PangolinResource
					if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(&first), &r); err != nil {
						return err
					}
					if r.Annotations == nil {
						r.Annotations = map[string]string{}
					}
					r.Annotations["example.com/other-writer"] = value
					return e.c.Update(e.ctx, &r)
				})
				if err == nil {
					written, last = written+1, value
				}
			}
		}()
		writing := time.Now()
		e.updateIngress("app", func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{
				Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090},
			}
		})
		e.eventuallyOne(app, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
			assert.Equal(c, e.svcAddr("api", 9090), testenv.Backend(r))
		})
		// The scenario is a duration: the other writer writes for 3 s in all.
		time.Sleep(3*time.Second - time.Since(writing))
		close(stop)
		wg.Wait()
		t.Logf("the other writer made %d updates", written)
		require.Positive(t, written)
		e.eventuallyOne(app, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
			assert.Equal(c, first.UID, r.UID, "updated in place")
			assert.Equal(c, e.svcAddr("api", 9090), testenv.Backend(r))
			assert.Equal(c, last, r.Annotations["example.com/other-writer"], "the other writer's annotation")
		})
		// One update is needed; each conflict costs a retry with backoff (2 or 3 in all
		// here). A loop would send one per event of the other writer, hundreds in 3 s; the
		// bound leaves room for a busy machine, where more reads are stale.
		updates := e.writes(pic, "update") - updatesBefore
		t.Logf("PIC sent %v updates (conflicts included)", updates)
		assert.LessOrEqual(t, updates, 20.0, "PIC's updates while another writer wrote %d times", written)
	})

	t.Run("deleting the winner of a contested host hands it over", func(t *testing.T) {
		shared := e.host("shared")
		e.create(ingress(e.ns, "older", "pangolin", shared, "web", 8080))
		older := e.getIngress("older")
		olderRes := e.eventuallyOne(older, func(*assert.CollectT, tunnelv1alpha1.PangolinResource) {})
		testenv.NextCreationSecond()
		e.create(ingress(e.ns, "younger", "pangolin", shared, "api", 9090))
		younger := e.getIngress("younger")
		warning := e.eventuallyWarning(younger, "HostConflict")
		assert.Contains(t, warning.Note, "older", "the Warning names the winner")
		require.Empty(t, names(e.owned(t, e.ns, younger.UID)), "the loser has no resource")

		require.NoError(t, e.c.Delete(e.ctx, older, client.PropagationPolicy(metav1.DeletePropagationBackground)))
		e.eventuallyOne(younger, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
			assert.Equal(c, shared, publishedHost(r))
			assert.Equal(c, e.svcAddr("api", 9090), testenv.Backend(r))
		})
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			err := e.c.Get(e.ctx, client.ObjectKeyFromObject(&olderRes), &tunnelv1alpha1.PangolinResource{})
			assert.True(c, apierrors.IsNotFound(err), "the deleted winner's resource is garbage-collected: %v", err)
		}, eventually, tick)
	})
}
