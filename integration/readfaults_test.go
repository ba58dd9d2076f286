package integration_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

// readFault makes one kind of read fail: Get or List of objects of one type.
type readFault struct {
	verb string         // "get" or "list"
	obj  runtime.Object // for list: the list type, e.g. &PangolinResourceList{}
	err  error
	// empty: a List answers an empty list instead of an error (a cache that lost its objects).
	empty bool
}

// faultyClient is a fake client whose reads fail as told, and which counts writes.
type faultyClient struct {
	client.WithWatch
	mu      sync.Mutex
	fault   *readFault
	writes  map[string]int // "create", "update", "delete"
	faulted int            // reads that failed as told
}

func (f *faultyClient) set(fault *readFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.writes, f.faulted = fault, map[string]int{}, 0
}

func (f *faultyClient) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes[op]
}

// bypass marks the test's own reads, which see the objects as they are.
type bypass struct{}

// failing returns the fault for a read of obj, if any.
func (f *faultyClient) failing(ctx context.Context, verb string, obj runtime.Object) *readFault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Value(bypass{}) != nil || f.fault == nil || f.fault.verb != verb || fmt.Sprintf("%T", f.fault.obj) != fmt.Sprintf("%T", obj) {
		return nil
	}
	f.faulted++
	return f.fault
}

func newFaultyClient(clusterDomain string, objects ...client.Object) *faultyClient {
	f := &faultyClient{writes: map[string]int{}}
	write := func(op string) {
		f.mu.Lock()
		f.writes[op]++
		f.mu.Unlock()
	}
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects...).
		WithStatusSubresource(&networkingv1.Ingress{}, &tunnelv1alpha1.PangolinResource{}, &tunnelv1alpha1.PangolinTunnel{}).
		WithIndex(&tunnelv1alpha1.PangolinResource{}, pangolinresource.OwnerIndex, pangolinresource.IndexOwner).
		WithIndex(&tunnelv1alpha1.PangolinResource{}, pangolinresource.HostIndex, pangolinresource.IndexHost).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if fault := f.failing(ctx, "get", obj); fault != nil {
					return fault.err
				}
				return c.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if fault := f.failing(ctx, "list", list); fault != nil {
					if fault.empty {
						return nil // list is left empty
					}
					return fault.err
				}
				return c.List(ctx, list, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				write("create")
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				write("update")
				return c.Update(ctx, obj, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				write("delete")
				return c.Delete(ctx, obj, opts...)
			},
		})
	for _, idx := range ingress.Factory.Indexes(&config.Config{ClusterDomain: clusterDomain}) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	f.WithWatch = builder.Build()
	return f
}

// TestTransientReadErrorsNeverDelete injects the read failures a controller meets when
// the API server or its cache has trouble (503, timeouts, refused connections, a cache
// that briefly misses objects) into each read a reconcile makes, for several reconciles
// in a row, as the controller's retries would. None may lead to a delete, nor change
// what exists. Once the reads recover, the next reconcile converges: it writes nothing
// if nothing changed, and exactly the pending update if the Ingress changed before the
// fault. Runs with a fake client and the real reconciler, source and sink, per variant.
func TestTransientReadErrorsNeverDelete(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcdserver: leader changed")
	timeout := apierrors.NewTimeoutError("request did not complete within 60s", 1)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	notFound := func(resource string) error {
		return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, "")
	}
	cases := []struct {
		name  string
		fault readFault
		// fails: the reconcile must return an error (and be retried); otherwise it
		// must succeed, holding what exists.
		fails bool
		// pendingOnly: the read only happens when there is something to update.
		pendingOnly bool
	}{
		{"Get Ingress: 503", readFault{verb: "get", obj: &networkingv1.Ingress{}, err: unavailable}, true, false},
		{"Get Ingress: not in the cache (NotFound)", readFault{verb: "get", obj: &networkingv1.Ingress{}, err: notFound("ingresses")}, false, false},
		{"List PangolinResources: timeout", readFault{verb: "list", obj: &tunnelv1alpha1.PangolinResourceList{}, err: timeout}, true, false},
		{"List PangolinResources: a cache that lost them (empty list)", readFault{verb: "list", obj: &tunnelv1alpha1.PangolinResourceList{}, empty: true}, false, false},
		{"List Ingresses (host claimants): connection refused", readFault{verb: "list", obj: &networkingv1.IngressList{}, err: refused}, true, false},
		{"Get Service: 503", readFault{verb: "get", obj: &corev1.Service{}, err: unavailable}, true, false},
		{"Get Service: briefly missing (NotFound)", readFault{verb: "get", obj: &corev1.Service{}, err: notFound("services")}, false, false},
		{"Get PangolinTunnel: timeout", readFault{verb: "get", obj: &tunnelv1alpha1.PangolinTunnel{}, err: timeout}, true, false},
		{"Get PangolinTunnel: briefly missing (NotFound)", readFault{verb: "get", obj: &tunnelv1alpha1.PangolinTunnel{}, err: notFound("pangolintunnels")}, false, false},
		{"Get PangolinResource before an update: 503", readFault{verb: "get", obj: &tunnelv1alpha1.PangolinResource{}, err: unavailable}, true, true},
		{"Get PangolinResource before an update: context deadline exceeded", readFault{verb: "get", obj: &tunnelv1alpha1.PangolinResource{}, err: context.DeadlineExceeded}, true, true},
	}
	variants := map[string]tunnelv1alpha1.Capabilities{"fork": tunnelv1alpha1.ForkCapabilities, "original": tunnelv1alpha1.OriginalCapabilities}
	for variant, caps := range variants {
		for _, tc := range cases {
			for _, pending := range []bool{false, true} {
				if tc.pendingOnly && !pending {
					continue
				}
				mode := "steady state"
				if pending {
					mode = "pending update"
				}
				t.Run(variant+"/"+mode+"/"+tc.name, func(t *testing.T) {
					testReadFault(t, caps, tc.fault, tc.fails, pending)
				})
			}
		}
	}
}

func testReadFault(t *testing.T, caps tunnelv1alpha1.Capabilities, fault readFault, fails, pending bool) {
	ctx := context.Background()
	cfg := ingress.Config{Tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}, BackendScheme: "http", ClusterDomain: "cluster.local"}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team", UID: "uid-shop", CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("pangolin"), Rules: []networkingv1.IngressRule{
			rule("app.example.com", "/", "web", 8080), rule("admin.example.com", "/", "web", 8080),
		}},
	}
	svc := func(name string, port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port}}}}
	}
	c := newFaultyClient(cfg.ClusterDomain, ing, svc("web", 8080), svc("api", 9090),
		&tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "team"}})
	src := ingress.New(c, cfg)
	declared := plugin.DeclareAll(src)
	r := controller.NewReconciler(declared[0], controller.Deps{
		Sink: pangolinresource.New(c, c, caps), Recorder: &reasonLog{}, Defaults: engine.Defaults{SSO: true},
		Objects: c, Sources: declared,
	})
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "shop"}}
	_, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	before := snapshot(t, c)
	require.Len(t, before, 2, "the two hosts are published before the fault")
	appResource := engine.ResourceName(ingressOrigin(ing), "app.example.com")
	require.Contains(t, before, appResource)
	if pending {
		// The Ingress moves app.example.com to another backend just before the fault.
		var cur networkingv1.Ingress
		require.NoError(t, c.Get(ctx, req.NamespacedName, &cur))
		cur.Spec.Rules[0] = rule("app.example.com", "/", "api", 9090)
		require.NoError(t, c.Update(ctx, &cur))
	}

	c.set(&fault)
	for i := range 3 {
		_, err := r.Reconcile(ctx, req)
		if fails {
			require.Error(t, err, "reconcile %d during the fault", i)
		} else {
			require.NoError(t, err, "reconcile %d during the fault", i)
		}
	}
	require.Positive(t, c.faulted, "the fault was never hit: the case tests nothing")
	assert.Zero(t, c.count("delete"), "deletes during the fault")
	assert.Zero(t, c.count("update"), "updates during the fault")
	assert.Equal(t, before, snapshot(t, c), "PangolinResources (name → resourceVersion) during the fault")

	// The fault clears: the next reconcile converges.
	c.set(nil)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	after := snapshot(t, c)
	assert.Zero(t, c.count("delete"), "deletes after the fault")
	assert.Zero(t, c.count("create"), "creates after the fault")
	if pending {
		assert.Equal(t, 1, c.count("update"), "the pending update, once")
		assert.NotEqual(t, before[appResource], after[appResource], "the pending update was made")
		delete(before, appResource)
		delete(after, appResource)
	} else {
		assert.Zero(t, c.count("update"), "updates after the fault, with nothing changed")
	}
	assert.Equal(t, before, after, "PangolinResources the fault must not have touched")
	c.set(nil)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, c.count("create")+c.count("update")+c.count("delete"), "writes once converged")

	// Control: a host that is really removed is deleted, exactly once, so the zero
	// counts above are not for want of a working delete.
	var cur networkingv1.Ingress
	require.NoError(t, c.Get(ctx, req.NamespacedName, &cur))
	cur.Spec.Rules = cur.Spec.Rules[:1]
	require.NoError(t, c.Update(ctx, &cur))
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 1, c.count("delete"), "deletes after a host was removed")
	assert.Len(t, snapshot(t, c), 1)
}

func ingressOrigin(ing *networkingv1.Ingress) route.Origin {
	return route.Origin{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, UID: ing.UID}
}

// snapshot is every PangolinResource's name and resourceVersion.
func snapshot(t *testing.T, c *faultyClient) map[string]string {
	t.Helper()
	var list tunnelv1alpha1.PangolinResourceList
	require.NoError(t, c.List(context.WithValue(context.Background(), bypass{}, true), &list))
	out := map[string]string{}
	for _, r := range list.Items {
		out[r.Name] = r.ResourceVersion
	}
	return out
}

// reasonLog records the reasons of events.
type reasonLog struct {
	mu      sync.Mutex
	reasons []string
}

func (l *reasonLog) Eventf(_, _ runtime.Object, eventtype, reason, _, _ string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reasons = append(l.reasons, eventtype+" "+reason)
}
