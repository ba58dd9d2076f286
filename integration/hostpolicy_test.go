package integration_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// With a hostPolicy, a namespace publishes the hosts its rules allow, by name or by its
// labels, and nothing else: not a host outside its patterns, nor one an override would
// move outside them.
func TestHostPolicyRefusesHostsOutsideANamespacesPatterns(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		named := testenv.NewNamespace(t, env.Client)
		labelled := testenv.NewNamespace(t, env.Client)
		tenant := "shop-" + labelled // unique to the test: namespaces are shared by the package's tests
		require.NoError(t, testenv.Update(context.Background(), env.Client, client.ObjectKey{Name: labelled}, func(ns *corev1.Namespace) {
			ns.Labels = map[string]string{"tenant": tenant}
		}, wait))
		w := startWith(t, env, nil, named, func(c *config.Config) {
			c.HostPolicy = hostpolicy.Policy{
				{Namespaces: []string{named}, Hosts: []string{"*." + named + ".example.com"}},
				{NamespaceSelector: "tenant=" + tenant, Hosts: []string{"shop." + labelled + ".example.com"}},
			}
		})
		for _, ns := range []string{named, labelled} {
			w.tunnelIn(ns, "default")
			svc := serviceObject("web", 8080)
			svc.Namespace = ns
			w.create(svc)
		}

		escapeUpToDate := w.upToDate("ingress", "escape")
		w.create(ingressFor("allowed", "pangolin", rule(w.host("app"), "/", "web", 8080), rule("app."+labelled+".example.com", "/", "web", 8080)))
		escape := ingressFor("escape", "pangolin", rule(w.host("x"), "/", "web", 8080))
		escape.Annotations = map[string]string{pic.AnnotationDomainName: "example.org"}
		w.create(escape)
		shop := ingressFor("shop", "pangolin", rule("shop."+labelled+".example.com", "/", "web", 8080))
		shop.Namespace = labelled
		w.create(shop)

		w.eventuallyPublishers(w.host("app"), named+"/allowed")
		w.eventuallyPublishers("shop."+labelled+".example.com", labelled+"/shop")
		// A refusal is reported once the plan of the reconcile that found it is applied:
		// what allowed's would publish, with the host it may, is published by now.
		assert.Contains(t, w.eventuallyNote("allowed", pic.ReasonHostNotAllowed), "*."+named+".example.com")
		// escape publishes nothing: what a wrong reconcile of it would publish, it has
		// published once one finds nothing to change.
		w.eventuallyUpToDateSince(escapeUpToDate, "ingress", "escape")
		var list tunnelv1alpha1.PangolinResourceList
		require.NoError(t, w.c.List(w.ctx, &list, client.InNamespace(named)))
		var published []string
		for _, r := range list.Items {
			published = append(published, r.Spec.HTTPConfig.Subdomain+"."+r.Spec.HTTPConfig.DomainName)
		}
		assert.Equal(t, []string{w.host("app")}, published, "another tenant's host and an override out of the patterns publish nothing")
	})
}

// A host the policy takes from a namespace (here by relabelling it) goes at the
// object's next reconcile, even when the object has a typo that holds everything else
// it publishes: a tenant cannot keep a host taken from it by breaking its Ingress.
func TestHostPolicyTakesBackAHostThoughTheObjectIsHeld(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		ns := testenv.NewNamespace(t, env.Client)
		tenant := "shop-" + ns // unique to the test: namespaces are shared by the package's tests
		relabel := func(value string) {
			require.NoError(t, testenv.Update(context.Background(), env.Client, client.ObjectKey{Name: ns}, func(n *corev1.Namespace) {
				n.Labels = map[string]string{"tenant": value}
			}, wait))
		}
		relabel(tenant)
		host := "shop." + ns + ".example.com"
		w := startWith(t, env, nil, ns, func(c *config.Config) {
			c.HostPolicy = hostpolicy.Policy{{NamespaceSelector: "tenant=" + tenant, Hosts: []string{host}}}
		})
		w.tunnelIn(ns, "default")
		w.create(serviceObject("web", 8080))
		w.create(ingressFor("shop", "pangolin", rule(host, "/", "web", 8080)))
		w.eventuallyPublishers(host, ns+"/shop")

		relabel("former-" + tenant)
		// The typo is what makes the next reconcile: on its own it would hold all that
		// the Ingress publishes.
		require.NoError(t, testenv.Update(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "shop"}, func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{pic.AnnotationSSO: "maybe"}
		}, wait))
		w.eventuallyPublishers(host)
		assert.Contains(t, w.eventuallyNote("shop", pic.ReasonHostNotAllowed), "host "+host+" is published no more")
	})
}

// With onlyListedTunnels, an Ingress publishes through the tunnels PIC's configuration
// lists and no other: a tunnel-name annotation naming an unlisted tunnel, even one that
// exists, is TunnelNotAllowed, and what the Ingress published goes.
func TestOnlyListedTunnelsRefuseAnUnlistedOne(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		ns := testenv.NewNamespace(t, env.Client)
		w := startWith(t, env, nil, ns, func(c *config.Config) { c.Tunnels.OnlyListed = true })
		w.tunnelIn(ns, "default")
		w.tunnelIn(ns, "elsewhere")
		w.create(serviceObject("web", 8080))
		w.create(ingressFor("shop", "pangolin", rule(w.host("shop"), "/", "web", 8080)))
		w.eventuallyPublishers(w.host("shop"), ns+"/shop")

		require.NoError(t, testenv.Update(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "shop"}, func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{pic.AnnotationTunnelName: "elsewhere"}
		}, wait))
		w.eventuallyPublishers(w.host("shop"))
		assert.Contains(t, w.eventuallyNote("shop", pic.ReasonTunnelNotAllowed), "is not one of the tunnels PIC's configuration lists")
	})
}
