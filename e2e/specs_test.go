package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// specLifecycle is the acceptance criteria: an Ingress gets its PangolinResource, which
// follows host and backend changes and is garbage-collected by Kubernetes (not deleted
// by PIC) with the Ingress; resources PIC does not own are never touched; a missing
// tunnel is a Warning on the Ingress.
func specLifecycle(t *testing.T, p Provider) {
	e := newEnv(t, p, "lifecycle")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	e.service("api", 9090)
	pic := e.startPIC(PICOptions{})[0]

	host1 := e.host("app")
	e.create(ingress(e.ns, "app", "pangolin", host1, "web", 8080))
	ing := e.getIngress("app")
	created := e.eventuallyOne(ing, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
		assert.Equal(c, host1, publishedHost(r))
		if assert.NotNil(c, r.Spec.TunnelRef) {
			assert.Equal(c, tunnelv1alpha1.TunnelRef{Name: "default"}, *r.Spec.TunnelRef)
		}
		assert.Equal(c, e.svcAddr("web", 8080), testenv.Backend(r))
		assert.Equal(c, "app", r.Labels["pic.ingress.k8s.io/name"])
		assert.Equal(c, e.ns, r.Labels["pic.ingress.k8s.io/namespace"])
		assert.Equal(c, host1, r.Annotations["pic.ingress.k8s.io/host"])
	})
	t.Logf("created %s for %s", created.Name, host1)

	// Resources PIC does not own: one with PIC's labels (even the Ingress's uid) but no
	// owner reference, one with the Ingress as controller owner but without the uid
	// label. PIC must leave both alone.
	unowned := e.foreignResource("foreign-unowned", e.host("foreign-a"), func(r *tunnelv1alpha1.PangolinResource) {
		r.Labels = map[string]string{labelUID: string(ing.UID), "pic.ingress.k8s.io/name": "app",
			"pic.ingress.k8s.io/namespace": e.ns, "app.kubernetes.io/managed-by": "pangolin-ingress-controller"}
	})
	unlabeled := e.foreignResource("foreign-unlabeled", e.host("foreign-b"), func(r *tunnelv1alpha1.PangolinResource) {
		r.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: ing.Name, UID: ing.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
	})

	// A new host replaces the resource of the old one.
	host2 := e.host("app2")
	e.updateIngress("app", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = host2 })
	moved := e.eventuallyOne(ing, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
		assert.Equal(c, host2, publishedHost(r))
		assert.Equal(c, e.svcAddr("web", 8080), testenv.Backend(r))
	})
	// A new backend updates the resource in place.
	e.updateIngress("app", func(i *networkingv1.Ingress) {
		i.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{
			Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090},
		}
	})
	updated := e.eventuallyOne(ing, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
		assert.Equal(c, host2, publishedHost(r))
		assert.Equal(c, e.svcAddr("api", 9090), testenv.Backend(r))
	})
	require.Equal(t, moved.UID, updated.UID, "a backend change must update the resource, not replace it")

	// PIC has reconciled the Ingress several times by now: the foreign objects must be
	// exactly as they were created.
	e.requireUntouched(unowned)
	e.requireUntouched(unlabeled)

	// Deleting the Ingress: the garbage collector (kube-controller-manager) deletes
	// what it owns through the owner references. PIC sends no delete: its delete
	// counter does not move. The unlabeled foreign resource, which PIC never sees, also
	// goes: only the garbage collector can have deleted it.
	deletesBefore := e.writes(pic, "delete")
	require.NoError(t, e.c.Delete(e.ctx, ing, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Empty(c, names(e.owned(c, e.ns, ing.UID)), "PangolinResources of the deleted Ingress")
		err := e.c.Get(e.ctx, client.ObjectKeyFromObject(&unlabeled), &tunnelv1alpha1.PangolinResource{})
		assert.True(c, apierrors.IsNotFound(err), "foreign-unlabeled, owned by the deleted Ingress, is not garbage-collected: %v", err)
		var list tunnelv1alpha1.PangolinResourceList
		assert.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(e.ns)))
		for _, r := range list.Items {
			assert.Equal(c, unowned.Name, r.Name, "only foreign-unowned may remain")
		}
	}, eventually, tick)
	require.Equal(t, deletesBefore, e.writes(pic, "delete"),
		"PIC sent deletes for the resources of a deleted Ingress; the garbage collector must do it")
	e.requireUntouched(unowned)

	// A class whose alias names no tunnel, and a tunnel annotation naming a missing one.
	nope := ingress(e.ns, "nope", "pangolin-nope", e.host("nope"), "web", 8080)
	e.create(nope)
	bad := ingress(e.ns, "badtunnel", "pangolin", e.host("badtunnel"), "web", 8080)
	bad.Annotations = map[string]string{"pangolin.ingress.k8s.io/tunnel-name": "no-such-tunnel"}
	e.create(bad)
	for _, i := range []*networkingv1.Ingress{nope, bad} {
		e.eventuallyWarning(i, "TunnelNotFound")
		assert.Empty(t, names(e.owned(t, i.Namespace, i.UID)), "a PangolinResource for Ingress %s with a missing tunnel", i.Name)
	}
	e.requireUntouched(unowned)
}

// foreignResource creates a PangolinResource the way a user or another tool would,
// valid for the installed CRD variant.
func (e *env) foreignResource(name, host string, mutate func(*tunnelv1alpha1.PangolinResource)) tunnelv1alpha1.PangolinResource {
	e.t.Helper()
	r := *testenv.ForeignResource(e.ns, name, host, e.fork)
	mutate(&r)
	e.create(&r)
	return r
}

// requireUntouched fails unless r still exists with the resourceVersion it had.
func (e *env) requireUntouched(r tunnelv1alpha1.PangolinResource) {
	e.t.Helper()
	var now tunnelv1alpha1.PangolinResource
	require.NoError(e.t, e.c.Get(e.ctx, client.ObjectKeyFromObject(&r), &now), "%s, which PIC does not own", r.Name)
	require.Equal(e.t, r.ResourceVersion, now.ResourceVersion, "%s, which PIC does not own, was modified", r.Name)
}

// writes is pic_pangolinresource_writes_total of one operation ("" for all).
func (e *env) writes(pic PIC, operation string) float64 {
	e.t.Helper()
	m, err := metrics(e.ctx, pic)
	require.NoError(e.t, err)
	match := map[string]string{}
	if operation != "" {
		match["operation"] = operation
	}
	n := m.Sum("pic_pangolinresource_writes_total", match)
	return n
}

// specMultiTunnel runs PIC with a config file mapping two aliases to tunnels, one in
// the Ingresses' namespace and one in another. The fork's CRD can point at the other
// namespace; the original's cannot, which PIC reports instead of publishing.
func specMultiTunnel(t *testing.T, p Provider) {
	e := newEnv(t, p, "tunnels")
	shared := e.namespace("tunnels-shared")
	e.tunnel(e.ns, "edge-local")
	e.tunnel(shared, "edge-shared")
	e.service("web", 8080)
	e.startPIC(PICOptions{ConfigFile: fmt.Sprintf(`# e2e: two aliases, classes pangolin-local and pangolin-shared
tunnels:
  local: edge-local
  shared:
    name: edge-shared
    namespace: %s
`, shared)})

	local := ingress(e.ns, "local", "pangolin-local", e.host("local"), "web", 8080)
	remote := ingress(e.ns, "shared", "pangolin-shared", e.host("shared"), "web", 8080)
	e.create(local)
	e.create(remote)
	e.eventuallyOne(local, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
		if assert.NotNil(c, r.Spec.TunnelRef) {
			assert.Equal(c, tunnelv1alpha1.TunnelRef{Name: "edge-local"}, *r.Spec.TunnelRef)
		}
		assert.Equal(c, e.host("local"), publishedHost(r))
	})
	if e.fork {
		e.eventuallyOne(remote, func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource) {
			if assert.NotNil(c, r.Spec.TunnelRef) {
				assert.Equal(c, tunnelv1alpha1.TunnelRef{Name: "edge-shared", Namespace: shared}, *r.Spec.TunnelRef)
			}
			assert.Equal(c, e.host("shared"), publishedHost(r))
		})
		return
	}
	e.eventuallyWarning(remote, "TunnelNamespaceUnsupported")
	assert.Empty(t, names(e.owned(t, e.ns, remote.UID)), "the original CRD cannot reach a tunnel in another namespace")
}

// specRestart restarts PIC with 50 converged Ingresses: the new process must find
// everything in place and send no write at all.
func specRestart(t *testing.T, p Provider) {
	const n = 50
	e := newEnv(t, p, "restart")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	pic := e.startPIC(PICOptions{})[0]
	for i := range n {
		e.create(ingress(e.ns, fmt.Sprintf("app-%02d", i), "pangolin", e.host(fmt.Sprintf("app-%02d", i)), "web", 8080))
	}
	converged := e.eventuallyAll(n, eventually)
	t.Logf("%d PangolinResources created; the first process sent %v writes", n, e.writes(pic, ""))

	pic.Stop(t)
	pic.Start(t)

	// The new process has looked at every Ingress once it has finished at least as many
	// reconciles as there are Ingresses in the cluster (earlier specs' included), with
	// none queued or running: a write they sent is counted.
	var all networkingv1.IngressList
	require.NoError(t, e.c.List(e.ctx, &all))
	e.eventuallyReconciled(pic, "ingress", 0, len(all.Items))

	m, err := metrics(e.ctx, pic)
	require.NoError(t, err)
	writes := m.Sum("pic_pangolinresource_writes_total", nil)
	if writes != 0 {
		var detail []string
		for _, op := range []string{"create", "update", "delete"} {
			v := m.Sum("pic_pangolinresource_writes_total", map[string]string{"operation": op})
			detail = append(detail, fmt.Sprintf("%s=%v", op, v))
		}
		t.Fatalf("the restarted PIC sent %v PangolinResource writes (%v); a converged controller sends none", writes, detail)
	}
	after := e.eventuallyAll(n, 5*time.Second)
	require.Equal(t, converged, after, "PangolinResources (name → UID) changed across the restart")
}

// eventuallyAll waits until every Ingress of the namespace owns exactly one
// PangolinResource, n in all, and returns their UIDs by name.
func (e *env) eventuallyAll(n int, timeout time.Duration) map[string]types.UID {
	e.t.Helper()
	var out map[string]types.UID
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var ings networkingv1.IngressList
		if !assert.NoError(c, e.c.List(e.ctx, &ings, client.InNamespace(e.ns))) {
			return
		}
		byUID := map[string]int{}
		out = map[string]types.UID{}
		for _, r := range e.resources(c, e.ns) {
			byUID[r.Labels[labelUID]]++
			out[r.Name] = r.UID
		}
		for _, ing := range ings.Items {
			assert.Equal(c, 1, byUID[string(ing.UID)], "PangolinResources of Ingress %s", ing.Name)
		}
		assert.Len(c, out, n)
	}, timeout, tick)
	return out
}

// specLeaderElection runs two replicas with leader election, kills the leader with
// SIGKILL (no lease release) and checks that the other takes over within the lease
// duration plus a margin.
func specLeaderElection(t *testing.T, p Provider) {
	// controller-runtime's defaults, which PIC keeps: a dead leader's lease expires
	// after leaseDuration, and candidates retry every retryPeriod.
	const leaseDuration, retryPeriod, margin = 15 * time.Second, 2 * time.Second, 25 * time.Second
	e := newEnv(t, p, "leader")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	pics := e.startPIC(PICOptions{Replicas: 2, LeaderElect: true})

	var leader, follower PIC
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var leaders []PIC
		leader, follower = nil, nil
		for _, pic := range pics {
			if isLeader(c, e.ctx, pic) {
				leaders = append(leaders, pic)
			} else {
				follower = pic
			}
		}
		if assert.Len(c, leaders, 1, "replicas reporting leader_election_master_status 1") {
			leader = leaders[0]
		}
	}, eventually, tick)
	holder := e.leaseHolder()
	t.Logf("leader: %s (lease holder %s), follower: %s", leader.Name(), holder, follower.Name())

	before := ingress(e.ns, "before", "pangolin", e.host("before"), "web", 8080)
	e.create(before)
	published := e.eventuallyOne(before, func(*assert.CollectT, tunnelv1alpha1.PangolinResource) {})
	// The standby writes nothing while it is not the leader.
	require.Zero(t, e.writes(follower, ""), "PangolinResource writes of the standby %s", follower.Name())
	// Events are sent asynchronously, and SIGKILL drops any still queued: wait until
	// the leader's Created event is stored, so a second one later means a duplicate.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, e.normalEvents(c, before, "Created"), "Created events regarding Ingress %s", before.Name)
	}, eventually, tick)

	killed := time.Now()
	leader.Kill(t)
	after := ingress(e.ns, "after", "pangolin", e.host("after"), "web", 8080)
	e.create(after)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Len(c, names(e.owned(c, after.Namespace, after.UID)), 1, "PangolinResources of the Ingress created after the leader died")
	}, leaseDuration+retryPeriod+margin, tick)
	t.Logf("the new leader published the new Ingress %s after the kill", time.Since(killed).Round(time.Millisecond))
	require.NotEqual(t, holder, e.leaseHolder(), "the Lease is still held by the killed leader")
	if p.Name() == "local" {
		// On kind the Deployment replaces the killed pod, and the replacement may win.
		assert.True(t, isLeader(t, e.ctx, follower), "the surviving replica does not report itself leader")
	}
	assert.True(t, follower.Running(t), "the surviving replica exited")

	// No duplicates: once the new leader has reconciled every Ingress of the cluster
	// (a duplicate write would be in by then), the namespace holds exactly one
	// PangolinResource per Ingress, the one published before the kill is the very
	// object it was (not recreated, not rewritten), and each Ingress was told of one
	// creation only.
	if isLeader(t, e.ctx, follower) {
		var ings networkingv1.IngressList
		require.NoError(t, e.c.List(e.ctx, &ings))
		e.eventuallyReconciled(follower, "ingress", 0, len(ings.Items))
	} else {
		// On kind the Deployment's replacement of the killed pod leads, and the suite
		// cannot read its metrics: a bounded wait is all there is.
		time.Sleep(3 * time.Second)
	}
	all := e.resources(t, e.ns)
	require.Len(t, all, 2, "PangolinResources in %s: %v", e.ns, names(all))
	// after first: once the new leader's event for it is in, a duplicate about before
	// (sent by the same leader, before) is in too.
	for _, ing := range []*networkingv1.Ingress{after, before} {
		require.Len(t, e.owned(t, e.ns, ing.UID), 1, "PangolinResources of Ingress %s", ing.Name)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, 1, e.normalEvents(c, ing, "Created"), "Created events regarding Ingress %s", ing.Name)
		}, eventually, tick)
	}
	e.requireUntouched(published)
}

// normalEvents counts the Normal events with reason regarding the Ingress, a series
// counting as many as it has occurrences.
func (e *env) normalEvents(c require.TestingT, ing *networkingv1.Ingress, reason string) int {
	var list eventsv1.EventList
	require.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(ing.Namespace)))
	n := 0
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "Ingress" && ev.Regarding.UID == ing.UID && ev.Type == corev1.EventTypeNormal && ev.Reason == reason {
			n++
			if ev.Series != nil && ev.Series.Count > 1 {
				n += int(ev.Series.Count) - 1
			}
		}
	}
	return n
}

func isLeader(c assert.TestingT, ctx context.Context, pic PIC) bool {
	m, err := metrics(ctx, pic)
	if !assert.NoError(c, err) {
		return false
	}
	v := m.Sum("leader_election_master_status", map[string]string{"name": leaseName})
	return v == 1
}

func (e *env) leaseHolder() string {
	e.t.Helper()
	var lease coordinationv1.Lease
	require.NoError(e.t, e.c.Get(e.ctx, types.NamespacedName{Namespace: picNamespace, Name: leaseName}, &lease))
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// specAPIServerOutage stops the API server for 20 s around an Ingress change: PIC must
// ride it out without exiting, then converge without deleting anything that should
// exist.
func specAPIServerOutage(t *testing.T, p Provider) {
	const outage = 20 * time.Second
	// After the outage, client-go's reflectors re-list with a backoff that has grown
	// during it (up to ~30 s), so convergence gets a longer bound.
	const recovery = 120 * time.Second
	e := newEnv(t, p, "outage")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	e.service("api", 9090)
	pic := e.startPIC(PICOptions{})[0]

	keep := ingress(e.ns, "keep", "pangolin", e.host("keep"), "web", 8080)
	change := ingress(e.ns, "change", "pangolin", e.host("change-1"), "web", 8080)
	e.create(keep)
	e.create(change)
	kept := e.eventuallyOne(keep, func(*assert.CollectT, tunnelv1alpha1.PangolinResource) {})
	obsolete := e.eventuallyOne(change, func(*assert.CollectT, tunnelv1alpha1.PangolinResource) {})

	// A change written just before the outage: PIC may or may not act on it before the
	// API server goes away. The resource of change-1 is the one PIC may delete.
	e.updateIngress("change", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = e.host("change-2") })
	p.StopAPIServer(t)
	stopped := time.Now()
	restarted := false
	defer func() {
		if !restarted { // a failed assertion must not leave later specs without an API server
			p.StartAPIServer(t)
		}
	}()
	// The outage is real from its start to its end: the suite's own client is refused.
	unreachable := func(when string) {
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		defer cancel()
		require.Error(t, e.c.List(ctx, &tunnelv1alpha1.PangolinResourceList{}, client.InNamespace(e.ns)), "the API server answered %s the outage", when)
	}
	unreachable("at the start of")
	// The outage itself lasts a fixed time: there is nothing to wait for.
	time.Sleep(outage - time.Since(stopped))
	unreachable("at the end of")
	require.True(t, pic.Running(t), "PIC exited during the API server outage")
	p.StartAPIServer(t)
	restarted = true
	// Until a few seconds after /readyz, the new API server may still refuse requests
	// while its RBAC caches fill.
	e.restarts = append(e.restarts, window{from: stopped, to: time.Now().Add(5 * time.Second)})
	t.Logf("API server back after %s", time.Since(stopped).Round(time.Millisecond))

	// A change written after the outage: PIC's watches must have come back.
	e.updateIngress("change", func(i *networkingv1.Ingress) {
		i.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{
			Name: "api", Port: networkingv1.ServiceBackendPort{Number: 9090},
		}
	})
	converged := time.Now()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rs := e.owned(c, e.ns, change.UID)
		if assert.Len(c, names(rs), 1, "PangolinResources of Ingress change") {
			assert.Equal(c, e.host("change-2"), publishedHost(rs[0]))
			assert.Equal(c, e.svcAddr("api", 9090), testenv.Backend(rs[0]))
		}
		ks := e.owned(c, e.ns, keep.UID)
		if assert.Len(c, names(ks), 1, "PangolinResources of Ingress keep") {
			assert.Equal(c, kept.UID, ks[0].UID, "the resource of an unchanged Ingress was replaced")
		}
	}, recovery, tick)
	t.Logf("converged %s after the API server came back", time.Since(converged).Round(time.Millisecond))
	// Nothing was deleted or rewritten for the outage: the unchanged Ingress's resource is
	// the very object it was, and the only resource PIC ever deleted (by its log, which
	// also covers the outage) is the one of the host that was changed away.
	e.requireUntouched(kept)
	deleted := deletedResources(pic.Log(t))
	for _, name := range deleted {
		require.Equal(t, obsolete.Name, name, "PIC deleted a PangolinResource other than %s (host change-1)", obsolete.Name)
	}
	require.NotEmpty(t, deleted, "PIC never logged the deletion of %s, the resource of the host changed away: the log check sees nothing", obsolete.Name)
	t.Logf("PIC deleted only %s (the host changed away), %d log line(s)", obsolete.Name, len(deleted))
	require.True(t, pic.Running(t), "PIC exited after the API server outage")
	code, _, err := pic.Get(e.ctx, Probes, "/readyz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, "/readyz after the outage")
}

// deletedResources are the PangolinResources a PIC log says were deleted, in order:
// the resource field of its "deleted PangolinResource" lines (JSON or console format).
func deletedResources(log string) []string {
	var out []string
	for line := range strings.SplitSeq(log, "\n") {
		if !strings.Contains(line, "deleted PangolinResource") {
			continue
		}
		if m := resourceField.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		} else {
			out = append(out, "(unparsed) "+line)
		}
	}
	return out
}

var resourceField = regexp.MustCompile(`"resource": ?"([^"]+)"`)

// specMetricsAndProbes checks PIC's listeners: probes answer 200 and /metrics carries
// PIC's series, with the detected CRD variant, and controller-runtime's.
func specMetricsAndProbes(t *testing.T, p Provider) {
	e := newEnv(t, p, "metrics")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	pic := e.startPIC(PICOptions{})[0]
	ing := ingress(e.ns, "app", "pangolin", e.host("app"), "web", 8080)
	e.create(ing)
	e.eventuallyOne(ing, func(*assert.CollectT, tunnelv1alpha1.PangolinResource) {})

	for _, path := range []string{"/healthz", "/readyz"} {
		code, body, err := pic.Get(e.ctx, Probes, path)
		require.NoError(t, err, path)
		require.Equal(t, http.StatusOK, code, "%s: %s", path, body)
	}
	variant, other := "target", "targets"
	if e.fork {
		variant, other = other, variant
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m, err := metrics(e.ctx, pic)
		if !assert.NoError(c, err) {
			return
		}
		for _, name := range []string{"pic_reconcile_total", "pic_pangolinresource_managed", "pic_reconcile_duration_seconds",
			"pic_operator_crd_info", "controller_runtime_reconcile_total"} {
			assert.True(c, m.Has(name, nil), "/metrics has no %s", name)
		}
		v := m.Sum("pic_operator_crd_info", map[string]string{"variant": variant})
		assert.Equal(c, 1.0, v, "pic_operator_crd_info{variant=%q}", variant)
		wrong := m.Has("pic_operator_crd_info", map[string]string{"variant": other})
		assert.False(c, wrong, "pic_operator_crd_info{variant=%q} is exported", other)
		ok := m.Sum("pic_reconcile_total", map[string]string{"source": "ingress", "result": "success"})
		assert.GreaterOrEqual(c, ok, 1.0, "pic_reconcile_total{source=ingress,result=success}")
		managed := m.Sum("pic_pangolinresource_managed", nil)
		assert.GreaterOrEqual(c, managed, 1.0, "pic_pangolinresource_managed")
		wrote := m.Sum("pic_reconcile_outcome_total", map[string]string{"source": "ingress", "outcome": "wrote"})
		assert.GreaterOrEqual(c, wrote, 1.0, "pic_reconcile_outcome_total{source=ingress,outcome=wrote}: the Ingress's resource was created")
		count := m.Sum("pic_reconcile_duration_seconds_count", map[string]string{"source": "ingress"})
		assert.GreaterOrEqual(c, count, 1.0, "pic_reconcile_duration_seconds_count{source=ingress}")
		cr := m.Sum("controller_runtime_reconcile_total", nil)
		assert.GreaterOrEqual(c, cr, 1.0, "controller_runtime_reconcile_total")
	}, eventually, tick)
}
