package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/utils/ptr"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/loadbalancer"
)

// eventuallyNote waits for an event about the object name with reason, and returns its
// note.
func (w *world) eventuallyNote(name, reason string) string {
	w.t.Helper()
	var note string
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		notes := w.notes(c, name, reason)
		if assert.NotEmpty(c, notes, "event %s about %s", reason, name) {
			note = notes[len(notes)-1]
		}
	}, wait, tick)
	return note
}

// TestDirectModeKeptHostStaysClaimed: an Ingress whose move away from a host was
// refused keeps serving it, so it still owns it: a younger Ingress asking for that host
// gets HostConflict and publishes nothing for it, until the older one's replacement
// lands and its old resource goes.
func TestDirectModeKeptHostStaysClaimed(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		decoy := fake.SeedResource(pangolinsim.Resource{Name: "hand-made", DomainID: "domain1", Subdomain: ptr.To("taken"), Enabled: true})
		fake.SeedTarget(pangolinsim.Target{ResourceID: decoy.ID, SiteID: 1, IP: "10.0.0.9", Port: 80, Method: "http", Enabled: true})
		ns := testenv.NewNamespace(t, env.Client)
		w, _ := startDirectWorld(t, env, fake, ns)
		w.service("web", 8080)
		w.service("api", 9090)
		webURL := "http://web." + ns + ".svc.cluster.local:8080"
		apiURL := "http://api." + ns + ".svc.cluster.local:9090"
		decoyServed := []string{"http://10.0.0.9:80"}

		w.create(ingressFor("shop", "pangolin", rule("app.example.com", "/", "web", 8080)))
		eventuallyServed(t, fake, map[string][]string{"app.example.com": {webURL}, "taken.example.com": decoyServed})
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "taken.example.com" })
		w.eventuallyNote("shop", pic.ReasonReplacementRefused)

		testenv.NextCreationSecond() // late must be younger
		lateUpToDate := w.upToDate("ingress", "late")
		w.create(ingressFor("late", "pangolin", rule("app.example.com", "/", "api", 9090)))
		assert.Contains(t, w.eventuallyNote("late", pic.ReasonHostConflict), "Ingress "+ns+"/shop")
		w.eventuallyUpToDateSince(lateUpToDate, "ingress", "late") // and has nothing left to write
		assert.Equal(t, map[string][]string{"app.example.com": {webURL}, "taken.example.com": decoyServed}, fake.Served(),
			"the kept host is served by its owner alone")

		// The replacement lands, the kept resource goes, and that wakes the younger claim.
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "www.example.com" })
		eventuallyServed(t, fake, map[string][]string{"www.example.com": {webURL}, "app.example.com": {apiURL}, "taken.example.com": decoyServed})
	})
}

// TestKeptPangolinResourceStaysClaimed: in PangolinResource mode too, an Ingress that
// keeps its PangolinResource for a host after a refused move owns the host against a
// younger Ingress, which takes it once the kept PangolinResource is deleted.
func TestKeptPangolinResourceStaysClaimed(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		w.service("api", 9090)
		w.create(ingressFor("older", "pangolin", rule(w.host("blog"), "/", "web", 8080)))
		w.eventuallyOwners(w.host("blog"), w.ns+"/older")
		testenv.NextCreationSecond() // shop must be younger
		w.create(ingressFor("shop", "pangolin", rule(w.host("app"), "/", "web", 8080)))
		w.eventuallyOwners(w.host("app"), w.ns+"/shop")
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = w.host("blog") })
		w.eventuallyNote("shop", pic.ReasonReplacementRefused)

		testenv.NextCreationSecond() // late must be younger
		lateUpToDate := w.upToDate("ingress", "late")
		w.create(ingressFor("late", "pangolin", rule(w.host("app"), "/", "api", 9090)))
		assert.Contains(t, w.eventuallyNote("late", pic.ReasonHostConflict), "Ingress "+w.ns+"/shop")
		w.eventuallyUpToDateSince(lateUpToDate, "ingress", "late") // and has nothing left to write
		assert.Equal(t, []string{w.ns + "/shop"}, w.ownersOf(&assert.CollectT{}, w.host("app")), "the kept host has one owner")

		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = w.host("www") })
		w.eventuallyOwners(w.host("www"), w.ns+"/shop")
		w.eventuallyOwners(w.host("app"), w.ns+"/late")
	})
}

// TestDirectModeHeldPortStaysClaimed: a Service whose public-ports annotation moves a
// port with an error holds what it published, so it still owns that port: the younger
// Service on the same port keeps its PortConflict until the annotation is fixed and the
// old port goes, which hands it over.
func TestDirectModeHeldPortStaysClaimed(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		w, _ := startDirectWorld(t, env, fake, ns, withPorts)
		db, db2 := "db."+ns+".svc.cluster.local:5432", "db2."+ns+".svc.cluster.local:5432"

		w.create(loadBalancer("db", corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}))
		eventuallyRawServed(t, fake, map[string][]string{"tcp-5432": {db}})
		testenv.NextCreationSecond() // db2 must be younger
		w.create(loadBalancer("db2", corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}))
		assert.Contains(t, w.eventuallyNote("db2", pic.ReasonPortConflict), "Service "+ns+"/db")

		db2UpToDate := w.upToDate(loadbalancer.Name, "db2")
		update(t, w, "db", func(s *corev1.Service) {
			s.Annotations = map[string]string{pic.AnnotationPublicPorts: "pg=45441,bogus"}
		})
		w.eventuallyNote("db", pic.ReasonInvalidAnnotation)
		// db2, woken by db's change, has looked again and found nothing to write.
		w.eventuallyUpToDateSince(db2UpToDate, loadbalancer.Name, "db2")
		assert.Equal(t, map[string][]string{"tcp-5432": {db}}, rawServed(fake), "the held port has one owner")

		update(t, w, "db", func(s *corev1.Service) { s.Annotations = map[string]string{pic.AnnotationPublicPorts: "pg=45441"} })
		eventuallyRawServed(t, fake, map[string][]string{"tcp-45441": {db}, "tcp-5432": {db2}})
	})
}
