package builtin

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

// reasons records the reasons of the events it is given.
type reasons struct{ got []string }

func (r *reasons) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.got = append(r.got, reason)
}

// firstPublishWorld is an Ingress "web" in namespace prod, its Service and tunnel, in a
// cache (the manager's client), the PangolinResource sink over that cache, and an
// AccessPolicy blocking access to the Ingress that the API server holds and the cache
// has not received yet: an Ingress and its policy applied together.
type firstPublishWorld struct {
	cache, live client.Client
	policy      *accessv1alpha1.AccessPolicy
	reconciler  *controller.Reconciler
	events      *reasons
}

func newFirstPublishWorld(t *testing.T) *firstPublishWorld {
	t.Helper()
	ctx := context.Background()
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	objects := []client.Object{
		&tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "default"}, Status: tunnelv1alpha1.PangolinTunnelStatus{Status: "Ready"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
		&networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web", UID: "uid-web", CreationTimestamp: created},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr.To(pic.DefaultClassName), Rules: []networkingv1.IngressRule{{
				Host: "app.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
				}}}},
			}}},
		},
	}
	cfg := config.Default()
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects...).
		WithStatusSubresource(&networkingv1.Ingress{}, &tunnelv1alpha1.PangolinResource{}, &accessv1alpha1.AccessPolicy{})
	indexes := append(pangolinresource.Factory.Indexes(cfg), ingress.Factory.Indexes(cfg)...)
	for _, idx := range plugin.DistinctIndexes(indexes) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	w := &firstPublishWorld{cache: builder.Build(), events: &reasons{}}
	w.policy = &accessv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "locked", UID: "uid-locked", CreationTimestamp: created},
		Spec: accessv1alpha1.AccessPolicySpec{
			TargetRefs:  []gatewayv1.LocalPolicyTargetReference{{Group: accessv1alpha1.GroupIngress, Kind: accessv1alpha1.KindIngress, Name: "web"}},
			BlockAccess: ptr.To(true),
		},
	}
	w.live = fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(w.policy.DeepCopy()).Build()

	sink, err := pangolinresource.Factory.Offline(ctx, plugin.OfflineDeps{Client: w.cache, Config: cfg, Options: plugin.OfflineOptions{CRDVariant: "fork"}})
	require.NoError(t, err)
	src, err := ingress.Factory.New(ctx, plugin.SourceDeps{Client: w.cache, APIReader: w.live, Tunnels: sink, Config: cfg, Shared: plugin.NewShared()})
	require.NoError(t, err)
	declared := plugin.DeclareAll(src)
	w.reconciler = controller.NewReconciler(declared[0], controller.Deps{Sink: sink, Recorder: w.events, Objects: w.cache, Sources: declared})
	return w
}

func (w *firstPublishWorld) reconcile(t *testing.T) reconcile.Result {
	t.Helper()
	res, err := w.reconciler.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "prod", Name: "web"}})
	require.NoError(t, err)
	return res
}

func (w *firstPublishWorld) published(t *testing.T) []tunnelv1alpha1.PangolinResource {
	t.Helper()
	var list tunnelv1alpha1.PangolinResourceList
	require.NoError(t, w.cache.List(context.Background(), &list))
	return list.Items
}

// TestNoHostIsFirstPublishedBeforeItsPolicyIsKnown: an Ingress whose AccessPolicy the
// API server holds and the cache has not received yet is not published with the
// defaults: the reconcile waits (a retry, nothing written) until the cache has the
// policy, and then publishes the host with it.
func TestNoHostIsFirstPublishedBeforeItsPolicyIsKnown(t *testing.T) {
	w := newFirstPublishWorld(t)

	res := w.reconcile(t)
	assert.Empty(t, w.published(t), "the cache lacks the policy the API server holds: nothing is published")
	assert.Positive(t, res.RequeueAfter, "the reconcile is retried")
	assert.Contains(t, w.events.got, pic.ReasonAccessPolicyPending)

	require.NoError(t, w.cache.Create(context.Background(), w.policy.DeepCopy()))
	w.reconcile(t)
	resources := w.published(t)
	require.Len(t, resources, 1, "the cache has the policy: the host is published")
	require.NotNil(t, resources[0].Spec.HTTPConfig)
	assert.Equal(t, ptr.To(true), resources[0].Spec.HTTPConfig.BlockAccess, "with the policy's blockAccess")
}

// TestAPublishedHostIsNotConfirmedAgain: the live read is for first publishes only; a
// host the sink already holds follows the cache.
func TestAPublishedHostIsNotConfirmedAgain(t *testing.T) {
	w := newFirstPublishWorld(t)
	require.NoError(t, w.live.Delete(context.Background(), w.policy.DeepCopy()))
	w.reconcile(t)
	require.Len(t, w.published(t), 1, "no policy anywhere: published with the defaults")

	reads := 0
	w.live = nil
	counting := &countingReader{Reader: fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(w.policy.DeepCopy()).Build(), lists: &reads}
	src, err := ingress.Factory.New(context.Background(), plugin.SourceDeps{Client: w.cache, APIReader: counting, Config: config.Default(), Shared: plugin.NewShared()})
	require.NoError(t, err)
	sink, err := pangolinresource.Factory.Offline(context.Background(), plugin.OfflineDeps{Client: w.cache, Config: config.Default(), Options: plugin.OfflineOptions{CRDVariant: "fork"}})
	require.NoError(t, err)
	declared := plugin.DeclareAll(src)
	w.reconciler = controller.NewReconciler(declared[0], controller.Deps{Sink: sink, Recorder: w.events, Objects: w.cache, Sources: declared})
	w.reconcile(t)
	assert.Zero(t, reads, "the host is published: no live read")
	assert.Len(t, w.published(t), 1, "and it stays published")
}

// countingReader counts the Lists made through it.
type countingReader struct {
	client.Reader
	lists *int
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	*c.lists++
	return c.Reader.List(ctx, list, opts...)
}
