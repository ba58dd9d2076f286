package integration_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/utils/ptr"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// TestDirectModeRefusedHostChangeKeepsTheOld: a host renamed to one that cannot be
// published leaves the old one served, as it was, and says so; a host renamed to one
// that can replaces it.
func TestDirectModeRefusedHostChangeKeepsTheOld(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		decoy := fake.SeedResource(pangolinsim.Resource{Name: "hand-made", DomainID: "domain1", Subdomain: ptr.To("taken"), Enabled: true})
		fake.SeedTarget(pangolinsim.Target{ResourceID: decoy.ID, SiteID: 1, IP: "10.0.0.9", Port: 80, Method: "http", Enabled: true})
		ns := testenv.NewNamespace(t, env.Client)
		startDirect(t, env, fake, ns)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		w.service("web", 8080)
		webURL := "http://web." + ns + ".svc.cluster.local:8080"
		served := func(host string) map[string][]string {
			return map[string][]string{host: {webURL}, "taken.example.com": {"http://10.0.0.9:80"}}
		}

		w.create(ingressFor("shop", "pangolin", rule("app.example.com", "/", "web", 8080)))
		eventuallyServed(t, fake, served("app.example.com"))
		live := fake.Resources()

		rename := func(host string) {
			w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = host })
		}
		t.Run("a host another resource serves: the old host stays", func(t *testing.T) {
			rename("taken.example.com")
			assert.Contains(t, w.eventuallyEventIn(ns, pic.ReasonHostTakenInPangolin), "which PIC did not create")
			assert.Contains(t, w.eventuallyEventIn(ns, pic.ReasonReplacementRefused), "host app.example.com stays published as it is")
			assert.Equal(t, served("app.example.com"), fake.Served())
			assert.Equal(t, live, fake.Resources(), "the old resource as it was")
		})
		t.Run("a host whose resource name Pangolin cannot take: the old host stays", func(t *testing.T) {
			// A valid DNS name, but "<host> (Ingress <ns>/shop)" is over Pangolin's 255.
			long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 40) + ".example.com"
			rename(long)
			// Pangolin's refusal is reported once the sink's Apply has returned: what the
			// reconcile that reported it wrote, it has written by now. Its retries send
			// the same refused create, and no reconcile of it finds nothing to change.
			assert.Contains(t, w.eventuallyEventIn(ns, pic.ReasonPangolinError), "characters: Pangolin allows 255")
			assert.Equal(t, served("app.example.com"), fake.Served())
			assert.Equal(t, live, fake.Resources())
		})
		t.Run("a host that can be published replaces the old one", func(t *testing.T) {
			rename("www.example.com")
			eventuallyServed(t, fake, served("www.example.com"))
			assert.NotContains(t, fake.Served(), "app.example.com")
		})
	})
}

// TestRefusedHostChangeKeepsThePangolinResource: in PangolinResource mode too, a host
// renamed to one an older Ingress owns keeps the old PangolinResource.
func TestRefusedHostChangeKeepsThePangolinResource(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		w.create(ingressFor("older", "pangolin", rule(w.host("blog"), "/", "web", 8080)))
		w.eventuallyOwners(w.host("blog"), w.ns+"/older")
		testenv.NextCreationSecond() // shop must be younger
		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		w.eventuallyOwners(w.host("app"), w.ns+"/shop")

		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = w.host("blog") })
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonHostConflict), "Ingress "+w.ns+"/older")
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonReplacementRefused), "host "+w.host("app")+" stays published as it is")
		assert.Equal(t, []string{w.ns + "/shop"}, w.ownersOf(&assert.CollectT{}, w.host("app")), "the old PangolinResource stays")
		assert.Equal(t, []string{w.ns + "/older"}, w.ownersOf(&assert.CollectT{}, w.host("blog")))

		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = w.host("www") })
		w.eventuallyOwners(w.host("www"), w.ns+"/shop")
		w.eventuallyOwners(w.host("app"))
	})
}
