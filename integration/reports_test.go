package integration_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// notes are the notes of the events about the object name with reason, as the events
// API shows them.
func (w *world) notes(c assert.TestingT, name, reason string) []string {
	var list eventsv1.EventList
	assert.NoError(c, w.c.List(w.ctx, &list, client.InNamespace(w.ns)))
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// eventuallyEventsWritten returns once the events PIC recorded before the call are in
// the API server. Events are written asynchronously, but by one writer, Warnings first
// and Normal events in the order they were recorded: a Normal event recorded after them
// (the TLSIgnored notice of marker, an Ingress of Service web created for it) arrives
// after them.
func (w *world) eventuallyEventsWritten(marker string) {
	w.t.Helper()
	ing := ingressFor(marker, "pangolin", rule(w.host(marker), "/", "web", 8080))
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{w.host(marker)}, SecretName: marker + "-tls"}}
	w.create(ing)
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		assert.NotEmpty(c, w.notes(c, marker, pic.ReasonTLSIgnored), "the marker's event")
	}, wait, tick)
}

func (w *world) addresses(name string) []string {
	var ing networkingv1.Ingress
	require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &ing))
	var out []string
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		out = append(out, lb.Hostname)
	}
	return out
}

func TestWarningMessageFollowsItsCause(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 80)
		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Len(c, w.notes(c, "shop", pic.ReasonServicePortNotFound), 1)
		}, wait, tick)

		// Same reason, same object, new cause: the events API shows the new message,
		// not only the first one under a growing count.
		w.updateIngress("shop", func(ing *networkingv1.Ingress) {
			ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Number = 8081
		})
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			notes := w.notes(c, "shop", pic.ReasonServicePortNotFound)
			assert.Len(c, notes, 2)
			assert.True(c, containsText(notes, "port 8081"), "the new message reached the API: %q", notes)
			assert.True(c, containsText(notes, "port 8080"), "the first message is kept too: %q", notes)
		}, wait, tick)
	})
}

func containsText(notes []string, text string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, text) })
}

func TestAddressStaysDuringAnEdit(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		w.service("api", 9090)
		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		r := w.eventuallyHosts(w.host("app"))[w.host("app")]
		setStatus(t, w, r, tunnelv1alpha1.StatusReady, metav1.ConditionTrue, "ReconcileSuccess", "", "https://"+w.host("app"))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, []string{w.host("app")}, w.addresses("shop"))
		}, wait, tick)

		// Watch every version of the Ingress while its backend changes and the operator
		// has not caught up with the new generation of the resource.
		var ing networkingv1.Ingress
		require.NoError(t, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "shop"}, &ing))
		watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: testenv.Scheme()})
		require.NoError(t, err)
		watcher, err := watching.Watch(w.ctx, &networkingv1.IngressList{}, client.InNamespace(w.ns),
			&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "shop"), Raw: &metav1.ListOptions{ResourceVersion: ing.ResourceVersion}})
		require.NoError(t, err)
		defer watcher.Stop()
		w.updateIngress("shop", func(ing *networkingv1.Ingress) {
			ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090}}
		})
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, "api."+w.ns+".svc.cluster.local:9090", testenv.Backend(w.resources()[w.host("app")]))
		}, wait, tick)
		pendingUntil := time.After(2 * time.Second)
		versions := 0
	observe:
		for {
			select {
			case ev := <-watcher.ResultChan():
				if ev.Type != watch.Modified {
					continue
				}
				versions++
				got := ev.Object.(*networkingv1.Ingress)
				require.Len(t, got.Status.LoadBalancer.Ingress, 1, "version %s of the Ingress has no address while Pangolin serves the host", got.ResourceVersion)
			case <-pendingUntil:
				break observe
			}
		}
		assert.Positive(t, versions, "the edit was seen")
		assert.Equal(t, []string{w.host("app")}, w.addresses("shop"), "pending: the address stays")

		// The operator fails on the new generation: the address goes.
		r = w.resources()[w.host("app")]
		setStatus(t, w, r, tunnelv1alpha1.StatusError, metav1.ConditionFalse, "ReconcileError", "target refused", "")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Empty(c, w.addresses("shop"))
		}, wait, tick)
	})
}

func TestTLSIgnoredOnce(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		ing := ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080))
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{w.host("app")}, SecretName: "shop-tls"}}
		w.create(ing)
		w.eventuallyHosts(w.host("app"))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			notes := w.notes(c, "shop", pic.ReasonTLSIgnored)
			assert.Len(c, notes, 1)
			assert.True(c, containsText(notes, "shop-tls"), "names the Secret: %q", notes)
		}, wait, tick)

		// Another reconcile of the same Ingress says nothing new.
		before := w.upToDate("ingress", "shop")
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Annotations = map[string]string{"example.com/touched": "yes"} })
		w.eventuallyUpToDateSince(before, "ingress", "shop")
		w.eventuallyEventsWritten("marker")
		assert.Len(t, w.notes(t, "shop", pic.ReasonTLSIgnored), 1, "once, not on every reconcile")
		var list eventsv1.EventList
		require.NoError(t, w.c.List(w.ctx, &list, client.InNamespace(w.ns)))
		for _, e := range list.Items {
			if e.Reason == pic.ReasonTLSIgnored {
				assert.Equal(t, "Normal", e.Type)
			}
		}
	})
}
