package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// ownersOf returns the names of the objects that own resources for host, across namespaces.
func (w *world) ownersOf(c *assert.CollectT, host string) []string {
	var list tunnelv1alpha1.PangolinResourceList
	assert.NoError(c, w.c.List(w.ctx, &list))
	var owners []string
	for _, r := range list.Items {
		if r.Annotations[pic.AnnotationHost] == host && len(r.OwnerReferences) > 0 {
			owners = append(owners, r.Namespace+"/"+r.OwnerReferences[0].Name)
		}
	}
	return owners
}

// eventuallyOwners waits until the resources for host, across namespaces, are owned by
// exactly owners ("namespace/name").
func (w *world) eventuallyOwners(host string, owners ...string) {
	w.t.Helper()
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		assert.ElementsMatch(c, owners, w.ownersOf(c, host), "owners of the resources for %s", host)
	}, wait, tick)
}

func TestHostConflict(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		other := testenv.NewNamespace(t, env.Client)
		for _, ns := range []string{w.ns, other} {
			w.tunnelIn(ns, "default")
			svc := serviceObject("web", 8080)
			svc.Namespace = ns
			w.create(svc)
		}
		first := ingressFor("first", "pangolin", rule(w.host("app"), "/", "web", 8080), rule(w.host("solo"), "/", "web", 8080))
		w.create(first)
		w.eventuallyOwners(w.host("app"), w.ns+"/first")
		testenv.NextCreationSecond()
		second := ingressFor("second", "pangolin", rule(w.host("app"), "/", "web", 8080), rule(w.host("own"), "/", "web", 8080))
		second.Namespace = other
		w.create(second)

		note := w.eventuallyEventIn(other, pic.ReasonHostConflict)
		assert.Contains(t, note, "Ingress "+w.ns+"/first", "the warning names the winner")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, []string{other + "/second"}, w.ownersOf(c, w.host("own")), "the loser's other hosts are served")
		}, wait, tick)
		assert.Equal(t, []string{w.ns + "/first"}, w.ownersOf(&assert.CollectT{}, w.host("app")), "the oldest claim keeps the host")

		// The winner releases the host: the next claimant takes it without a resync
		// (the resync period is an hour here).
		w.updateIngress("first", func(ing *networkingv1.Ingress) { ing.Spec.Rules = ing.Spec.Rules[1:] })
		w.eventuallyOwners(w.host("app"), other+"/second")

		// A third claim loses to the new winner; deleting that winner hands the host on.
		testenv.NextCreationSecond()
		w.create(ingressFor("third", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "Ingress "+other+"/second")
		require.NoError(t, w.c.Delete(w.ctx, second))
		// No garbage collector runs in envtest: the deleted Ingress's resource stays
		// (e2e WriteFaults sees it collected). PIC itself never deletes it.
		w.eventuallyOwners(w.host("app"), other+"/second", w.ns+"/third")
	})
}

func TestStatusReflected(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080), rule(w.host("admin"), "/", "web", 8080)))
		got := w.eventuallyHosts(w.host("app"), w.host("admin"))

		hostnames := func() []string {
			var ing networkingv1.Ingress
			require.NoError(t, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "shop"}, &ing))
			var out []string
			for _, lb := range ing.Status.LoadBalancer.Ingress {
				out = append(out, lb.Hostname)
			}
			return out
		}
		assert.Empty(t, hostnames(), "nothing is exposed before the operator says so")

		// The operator reports the first resource Ready.
		setStatus(t, w, got[w.host("app")], tunnelv1alpha1.StatusReady, metav1.ConditionTrue, "ReconcileSuccess", "", "https://"+w.host("app"))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, []string{w.host("app")}, hostnames())
		}, wait, tick)
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonExposed), "https://"+w.host("app"))

		// The second fails in Pangolin: a Warning with the operator's message, no hostname.
		setStatus(t, w, got[w.host("admin")], tunnelv1alpha1.StatusError, metav1.ConditionFalse, "ReconcileError", "domain not found in organization", "")
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonPangolinError), "domain not found in organization")
		assert.Equal(t, []string{w.host("app")}, hostnames())

		// A host that is no longer served loses its hostname.
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules = ing.Spec.Rules[1:] })
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Empty(c, hostnames())
		}, wait, tick)
	})
}

func setStatus(t *testing.T, w *world, r tunnelv1alpha1.PangolinResource, status string, ready metav1.ConditionStatus, reason, message, url string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var cur tunnelv1alpha1.PangolinResource
		if !assert.NoError(c, w.c.Get(w.ctx, client.ObjectKeyFromObject(&r), &cur)) {
			return
		}
		cur.Status.Status, cur.Status.URL, cur.Status.ObservedGeneration = status, url, cur.Generation
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: tunnelv1alpha1.ConditionReady, Status: ready, Reason: reason, Message: message})
		assert.NoError(c, w.c.Status().Update(w.ctx, &cur))
	}, wait, tick)
}

func TestAccessControlFailsClosed(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		ing := ingressFor("private", "pangolin", rule(w.host("private"), "/", "web", 8080))
		ing.Annotations = map[string]string{pic.AnnotationSSO: "true", pic.AnnotationBlockAccess: "true"}
		w.create(ing)
		if !w.fork {
			w.eventuallyEvent(pic.ReasonAccessControlUnsupported)
			assert.Empty(t, w.resources(), "never published without the protection asked for")
			return
		}
		r := w.eventuallyHosts(w.host("private"))[w.host("private")]
		assert.Equal(t, ptr.To(true), r.Spec.HTTPConfig.SSO)
		assert.Equal(t, ptr.To(true), r.Spec.HTTPConfig.BlockAccess)
	})
}

func TestTunnelNamespacePolicy(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env, func(cfg *config.Config) {
			cfg.Tunnels.Aliases = map[string]tunnel.Tunnel{"partners": {Name: "partners", AllowedNamespaces: []string{"team-partners"}}}
		})
		w.tunnel("partners")
		w.service("web", 8080)
		w.create(ingressFor("denied", "pangolin-partners", rule(w.host("denied"), "/", "web", 8080)))
		note := w.eventuallyEventIn(w.ns, pic.ReasonTunnelNotAllowed)
		assert.Contains(t, note, w.ns)
		assert.Empty(t, w.resources())
	})
}

// TestHeldClaimWithoutResource: an older Ingress that has nothing published for a host
// (held by an invalid annotation, or through a tunnel that does not exist) does not
// take that host from the younger Ingress serving it, until it publishes; then the
// younger one lets go, held or not.
func TestHeldClaimWithoutResource(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		host := w.host("app")
		older := ingressFor("older", "pangolin", rule(host, "/", "web", 8080))
		older.Annotations = map[string]string{pic.AnnotationEnabled: "false"}
		w.create(older)
		testenv.NextCreationSecond()
		w.service("api", 9090)
		w.create(ingressFor("younger", "pangolin", rule(host, "/", "api", 9090)))
		w.eventuallyOwners(host, w.ns+"/younger")

		olderUpToDate, youngerUpToDate := w.upToDate("ingress", "older"), w.upToDate("ingress", "younger")
		w.updateIngress("older", func(ing *networkingv1.Ingress) { ing.Annotations[pic.AnnotationEnabled] = "no" })
		w.eventuallyEvent(pic.ReasonInvalidAnnotation)
		// The change wakes the younger Ingress too (it claims the same host); neither
		// reconcile finds anything to write, a deletion included.
		w.eventuallyUpToDateSince(olderUpToDate, "ingress", "older")
		w.eventuallyUpToDateSince(youngerUpToDate, "ingress", "younger")
		assert.Equal(t, []string{w.ns + "/younger"}, w.ownersOf(&assert.CollectT{}, host), "owners of %s", host)

		// Valid, but through a tunnel that does not exist (a typo): it can publish
		// nothing, so it takes nothing either.
		olderUpToDate, youngerUpToDate = w.upToDate("ingress", "older"), w.upToDate("ingress", "younger")
		w.updateIngress("older", func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{pic.AnnotationTunnelName: "mian"}
		})
		w.eventuallyEvent(pic.ReasonTunnelNotFound)
		w.eventuallyUpToDateSince(olderUpToDate, "ingress", "older")
		w.eventuallyUpToDateSince(youngerUpToDate, "ingress", "younger")
		assert.Equal(t, []string{w.ns + "/younger"}, w.ownersOf(&assert.CollectT{}, host), "owners of %s", host)

		// Once the tunnel exists, the older Ingress publishes, and the younger steps back
		// at once, woken by the new resource: even while its own missing Service holds
		// what it has, or the host would be published twice.
		require.NoError(t, w.c.Delete(w.ctx, serviceIn(w.ns, "api", 9090)))
		w.eventuallyEvent(pic.ReasonServiceNotFound)
		w.tunnel("mian")
		w.eventuallyOwners(host, w.ns+"/older")
	})
}
