package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

const (
	// eventually bounds every Eventually: generous, because the machine may be busy with
	// other test packages.
	eventually = 60 * time.Second
	tick       = 250 * time.Millisecond
	// labelUID is the label PIC puts on what it owns (pic.ingress.k8s.io/uid). The suite
	// spells PIC's vocabulary out instead of importing it: it tests the contract.
	labelUID = "pic.ingress.k8s.io/uid"
)

// env is one spec's world: a fresh namespace, the PICs it started, and a cleanup that
// stops them, fails the spec if PIC logged "forbidden", and dumps the state on failure.
type env struct {
	t     *testing.T
	p     Provider
	c     client.Client
	ctx   context.Context
	ns    string
	fork  bool
	extra []string // other namespaces the spec uses, dumped on failure too
	pics  []PIC
	// restarts are the times the API server was coming back from an outage: a starting
	// kube-apiserver answers "forbidden" until its RBAC caches are filled, so refusals
	// logged then say nothing about PIC's RBAC.
	restarts []window
}

type window struct{ from, to time.Time }

func (w window) contains(t time.Time) bool {
	// Log times have a resolution of one second.
	return !t.Before(w.from.Add(-time.Second)) && !t.After(w.to.Add(time.Second))
}

func newEnv(t *testing.T, p Provider, prefix string) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, p: p, c: p.Client(), ctx: ctx, fork: p.Variant().Name == testenv.VariantFork}
	e.ns = e.namespace(prefix)
	t.Cleanup(func() {
		defer cancel()
		for _, pic := range e.pics {
			pic.Stop(t)
		}
		for _, pic := range e.pics {
			checkNotForbidden(t, pic, e.restarts)
		}
		if t.Failed() {
			e.dump()
		}
	})
	return e
}

// namespace creates a namespace with a unique name. Namespaces are not deleted: each
// local cluster is thrown away after its variant, and deleting a namespace while a
// later PIC still sees its objects would only add noise. The kind provider deletes
// them at the end of the run.
func (e *env) namespace(prefix string) string {
	e.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-", Labels: map[string]string{"pic-e2e": "true"}}}
	require.NoError(e.t, e.c.Create(e.ctx, ns))
	if e.ns != "" {
		e.extra = append(e.extra, ns.Name)
	}
	return ns.Name
}

// startPIC starts PIC; newEnv's cleanup stops it.
func (e *env) startPIC(opts PICOptions) []PIC {
	e.t.Helper()
	start := time.Now()
	pics := e.p.StartPIC(e.t, opts)
	e.pics = append(e.pics, pics...)
	e.t.Logf("PIC ready (%d replica(s)) in %s", len(pics), time.Since(start).Round(time.Millisecond))
	return pics
}

var forbidden = regexp.MustCompile(`(?i)forbidden`)

// checkNotForbidden fails the spec if PIC was ever refused by the API server, except
// while it was restarting: the rendered RBAC must be enough for everything PIC does.
func checkNotForbidden(t *testing.T, pic PIC, restarts []window) {
	t.Helper()
	var hits []string
	for line := range strings.SplitSeq(pic.Log(t), "\n") {
		if !forbidden.MatchString(line) {
			continue
		}
		if at, ok := logTime(line); ok && slices.ContainsFunc(restarts, func(w window) bool { return w.contains(at) }) {
			continue
		}
		hits = append(hits, line)
	}
	if len(hits) > 0 {
		t.Errorf("PIC %s logged %d line(s) with \"forbidden\": its RBAC is missing a permission:\n%s", pic.Name(), len(hits), strings.Join(first(hits, 20), "\n"))
	}
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// dump writes what a failed spec needs to be understood: PIC's logs, the events and
// the PangolinResources of the spec's namespaces.
func (e *env) dump() {
	t := e.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, pic := range e.pics {
		lines := strings.Split(strings.TrimRight(pic.Log(t), "\n"), "\n")
		const keep = 400
		if len(lines) > keep {
			lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-keep)}, lines[len(lines)-keep:]...)
		}
		t.Logf("=== log of PIC %s:\n%s", pic.Name(), strings.Join(lines, "\n"))
	}
	for _, ns := range append([]string{e.ns}, e.extra...) {
		var events eventsv1.EventList
		if err := e.c.List(ctx, &events, client.InNamespace(ns)); err != nil {
			t.Logf("=== events in %s: %v", ns, err)
		} else {
			var b strings.Builder
			for _, ev := range events.Items {
				fmt.Fprintf(&b, "%s %s %s/%s %s: %s (x%d)\n", ev.CreationTimestamp.Format(time.RFC3339), ev.Type,
					ev.Regarding.Kind, ev.Regarding.Name, ev.Reason, ev.Note, max(ev.DeprecatedCount, 1))
			}
			t.Logf("=== events in %s (%d):\n%s", ns, len(events.Items), b.String())
		}
		var prs unstructured.UnstructuredList
		prs.SetGroupVersionKind(tunnelv1alpha1.GroupVersion.WithKind("PangolinResourceList"))
		if err := e.c.List(ctx, &prs, client.InNamespace(ns)); err != nil {
			t.Logf("=== PangolinResources in %s: %v", ns, err)
			continue
		}
		for i := range prs.Items {
			prs.Items[i].SetManagedFields(nil)
		}
		items := make([]map[string]any, 0, len(prs.Items))
		for _, item := range prs.Items {
			items = append(items, item.Object)
		}
		out, _ := yaml.Marshal(items)
		t.Logf("=== PangolinResources in %s (%d):\n%s", ns, len(prs.Items), out)
	}
}

// tunnel creates a PangolinTunnel and marks it Ready through the status subresource,
// as the operator does.
func (e *env) tunnel(ns, name string) {
	e.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": tunnelv1alpha1.GroupVersion.String(), "kind": "PangolinTunnel",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"organizationRef": map[string]any{"name": "e2e-org"}},
	}}
	require.NoError(e.t, e.c.Create(e.ctx, obj))
	require.NoError(e.t, unstructured.SetNestedField(obj.Object, "Ready", "status", "status"))
	require.NoError(e.t, unstructured.SetNestedField(obj.Object, true, "status", "online"))
	require.NoError(e.t, unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Connected", "message": "e2e",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions"))
	require.NoError(e.t, e.c.Status().Update(e.ctx, obj))
}

func (e *env) service(name string, port int32) {
	e.t.Helper()
	require.NoError(e.t, e.c.Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port}}},
	}))
}

// host is a public host unique to the spec: PIC settles hosts claimed twice across
// namespaces, so specs must not share any.
func (e *env) host(label string) string { return label + "." + e.ns + ".example.com" }

func ingress(ns, name, class, host, service string, port int32) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: service, Port: networkingv1.ServiceBackendPort{Number: port},
				}},
			}}}},
		}}},
	}
	if class != "" {
		ing.Spec.IngressClassName = ptr.To(class)
	}
	return ing
}

func (e *env) create(obj client.Object) {
	e.t.Helper()
	require.NoError(e.t, e.c.Create(e.ctx, obj))
}

// updateIngress re-reads the Ingress and applies mutate, retrying on conflicts.
func (e *env) updateIngress(name string, mutate func(*networkingv1.Ingress)) {
	e.t.Helper()
	require.NoError(e.t, testenv.Update(e.ctx, e.c, types.NamespacedName{Namespace: e.ns, Name: name}, mutate, eventually))
}

func (e *env) getIngress(name string) *networkingv1.Ingress {
	e.t.Helper()
	var ing networkingv1.Ingress
	require.NoError(e.t, e.c.Get(e.ctx, types.NamespacedName{Namespace: e.ns, Name: name}, &ing))
	return &ing
}

// resources lists the PangolinResources of a namespace.
func (e *env) resources(c assert.TestingT, ns string) []tunnelv1alpha1.PangolinResource {
	var list tunnelv1alpha1.PangolinResourceList
	assert.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(ns)))
	return list.Items
}

// owned are the resources of the namespace that PIC owns for the object with uid:
// PIC's label for uid and a controller reference to it.
func (e *env) owned(c assert.TestingT, ns string, uid types.UID) []tunnelv1alpha1.PangolinResource {
	var out []tunnelv1alpha1.PangolinResource
	for _, r := range e.resources(c, ns) {
		if ref := metav1.GetControllerOf(&r); r.Labels[labelUID] == string(uid) && ref != nil && ref.UID == uid {
			out = append(out, r)
		}
	}
	return out
}

// names lists the names of resources, for short assertion messages.
func names(rs []tunnelv1alpha1.PangolinResource) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// eventuallyOne waits until the Ingress owns exactly one PangolinResource that passes
// check, and returns it.
func (e *env) eventuallyOne(ing *networkingv1.Ingress, check func(c *assert.CollectT, r tunnelv1alpha1.PangolinResource)) tunnelv1alpha1.PangolinResource {
	e.t.Helper()
	var got tunnelv1alpha1.PangolinResource
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		rs := e.owned(c, ing.Namespace, ing.UID)
		if !assert.Len(c, names(rs), 1, "PangolinResources of Ingress %s/%s", ing.Namespace, ing.Name) {
			return
		}
		got = rs[0]
		assertOwnedBy(c, got, ing)
		check(c, got)
	}, eventually, tick)
	return got
}

// assertOwnedBy checks that r carries the controller reference to ing.
func assertOwnedBy(c assert.TestingT, r tunnelv1alpha1.PangolinResource, ing *networkingv1.Ingress) {
	ref := metav1.GetControllerOf(&r)
	if assert.NotNil(c, ref, "controller reference of %s", r.Name) {
		assert.Equal(c, "Ingress", ref.Kind)
		assert.Equal(c, ing.Name, ref.Name)
		assert.Equal(c, ing.UID, ref.UID)
		assert.True(c, ptr.Deref(ref.BlockOwnerDeletion, false), "blockOwnerDeletion")
	}
}

// publishedHost is the host a resource publishes.
func publishedHost(r tunnelv1alpha1.PangolinResource) string {
	if r.Spec.HTTPConfig == nil {
		return ""
	}
	if r.Spec.HTTPConfig.Subdomain == "" {
		return r.Spec.HTTPConfig.DomainName
	}
	return r.Spec.HTTPConfig.Subdomain + "." + r.Spec.HTTPConfig.DomainName
}

// svcAddr is the address PIC must target for a Service of the spec's namespace.
func (e *env) svcAddr(name string, port int32) string {
	return fmt.Sprintf("%s.%s.svc.cluster.local:%d", name, e.ns, port)
}

// eventuallyWarning waits for a Warning event with reason regarding the Ingress.
func (e *env) eventuallyWarning(ing *networkingv1.Ingress, reason string) eventsv1.Event {
	e.t.Helper()
	var got eventsv1.Event
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var list eventsv1.EventList
		if !assert.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(ing.Namespace))) {
			return
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "Ingress" && ev.Regarding.Name == ing.Name {
				seen = append(seen, ev.Type+"/"+ev.Reason)
				if ev.Type == corev1.EventTypeWarning && ev.Reason == reason && ev.Regarding.UID == ing.UID {
					got = ev
					return
				}
			}
		}
		assert.Fail(c, "no event", "no Warning %s regarding Ingress %s/%s; its events: %v", reason, ing.Namespace, ing.Name, seen)
	}, eventually, tick)
	return got
}

// metrics scrapes one PIC's /metrics.
func metrics(ctx context.Context, pic PIC) (testenv.Metrics, error) {
	code, body, err := pic.Get(ctx, Metrics, "/metrics")
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET /metrics of %s: status %d", pic.Name(), code)
	}
	return testenv.ParseMetrics(body)
}

// logTime is the time at the start of a console-format log line, if it has one.
func logTime(line string) (time.Time, bool) {
	field, _, _ := strings.Cut(line, "\t")
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(field))
	return at, err == nil
}
