package pangolinresource

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// world is a fake API server holding objects, which counts PIC's writes and, as a real
// one does, refuses a delete whose UID precondition does not match.
type world struct {
	client client.Client
	writes map[string]int
	// failCreate, when set, is what every create returns.
	failCreate error
}

func newWorld(t *testing.T, objects ...client.Object) *world {
	t.Helper()
	w := &world{writes: map[string]int{}}
	w.client = fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects...).
		WithStatusSubresource(&tunnelv1alpha1.PangolinResource{}, &tunnelv1alpha1.PangolinTunnel{}).
		WithIndex(&tunnelv1alpha1.PangolinResource{}, OwnerIndex, IndexOwner).
		WithIndex(&tunnelv1alpha1.PangolinResource{}, HostIndex, IndexHost).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				w.writes["create"]++
				if w.failCreate != nil {
					return w.failCreate
				}
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				w.writes["update"]++
				return c.Update(ctx, obj, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				w.writes["delete"]++
				var do client.DeleteOptions
				do.ApplyOptions(opts)
				if do.Preconditions != nil && do.Preconditions.UID != nil {
					current := obj.DeepCopyObject().(client.Object)
					if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err == nil && current.GetUID() != *do.Preconditions.UID {
						return apierrors.NewConflict(schema.GroupResource{Group: "tunnel.pangolin.io", Resource: "pangolinresources"}, obj.GetName(),
							fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *do.Preconditions.UID, current.GetUID()))
					}
				}
				return c.Delete(ctx, obj, opts...)
			},
		}).Build()
	return w
}

func (w *world) get(t *testing.T, name string) *tunnelv1alpha1.PangolinResource {
	t.Helper()
	var obj tunnelv1alpha1.PangolinResource
	err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "prod", Name: name}, &obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return &obj
}

// stored is r as PIC would have written it earlier, with the UID the API server gave it.
func stored(r engine.Resource, caps tunnelv1alpha1.Capabilities, uid types.UID) *tunnelv1alpha1.PangolinResource {
	obj := render(r, caps)
	obj.UID = uid
	return obj
}

func TestApplyCreates(t *testing.T) {
	ctx := context.Background()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			w := newWorld(t)
			s := New(w.client, w.client, v.caps)
			r := resource(v.caps)
			applied, err := s.Apply(ctx, ingressOrigin, engine.Plan{Create: []engine.Resource{r}})
			require.NoError(t, err)
			assert.Equal(t, plugin.Applied{Created: []engine.Resource{r}}, applied)
			got := w.get(t, r.Name)
			require.NotNil(t, got)
			want := render(r, v.caps)
			assert.Equal(t, want.Spec, got.Spec)
			assert.Equal(t, want.Labels, got.Labels)
			assert.Equal(t, want.Annotations, got.Annotations)
			assert.Equal(t, want.OwnerReferences, got.OwnerReferences)

			current, err := s.Current(ctx, ingressOrigin)
			require.NoError(t, err)
			require.Len(t, current, 1)
			assert.True(t, current[0].Equal(r))
			assert.False(t, current[0].Drifted)
			assert.Empty(t, engine.Calculate(ingressOrigin, []engine.Resource{r}, current, nil, nil).Update, "nothing left to do")
		})
	}
}

// TestApplyUpdateKeepsOthersMetadata: an update writes PIC's spec, labels and
// annotation, and keeps what others added.
func TestApplyUpdateKeepsOthersMetadata(t *testing.T) {
	ctx := context.Background()
	caps := tunnelv1alpha1.ForkCapabilities
	old := resource(caps)
	obj := stored(old, caps, "object-uid")
	obj.Labels["team"] = "shop"
	obj.Labels[pic.LabelOwnerName] = "edited"
	obj.Annotations["argocd.argoproj.io/sync-options"] = "Prune=false"
	obj.Spec.ResourceID = "42"
	w := newWorld(t, obj)
	s := New(w.client, w.client, caps)

	want := resource(caps)
	want.Targets[1].Backend.Port = 9090
	current, err := s.Current(ctx, ingressOrigin)
	require.NoError(t, err)
	plan := engine.Calculate(ingressOrigin, []engine.Resource{want}, current, nil, nil)
	require.Len(t, plan.Update, 1)
	applied, err := s.Apply(ctx, ingressOrigin, plan)
	require.NoError(t, err)
	assert.Equal(t, []engine.Resource{want}, applied.Updated)

	got := w.get(t, want.Name)
	assert.Equal(t, render(want, caps).Spec, got.Spec, "PIC's spec, whole: the operator's resourceId was not PIC's to keep")
	assert.Equal(t, "shop", got.Labels["team"])
	assert.Equal(t, "web", got.Labels[pic.LabelOwnerName], "PIC's label restored")
	assert.Equal(t, "Prune=false", got.Annotations["argocd.argoproj.io/sync-options"])
	assert.Equal(t, "app.example.com", got.Annotations[pic.AnnotationHost])
	assert.Equal(t, types.UID("object-uid"), got.UID, "updated in place")

	w.writes = map[string]int{}
	current, err = s.Current(ctx, ingressOrigin)
	require.NoError(t, err)
	assert.True(t, engine.Calculate(ingressOrigin, []engine.Resource{want}, current, nil, nil).Empty(), "converged")
}

// TestApplyUpdateRefusesAnotherOwner: an object whose owner changed since it was read is
// not written: the reconcile fails and is retried on fresh data.
func TestApplyUpdateRefusesAnotherOwner(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	obj := stored(resource(caps), caps, "object-uid")
	obj.Labels[pic.LabelOwnerUID] = "someone-else"
	w := newWorld(t, obj)
	_, err := New(w.client, w.client, caps).Apply(context.Background(), ingressOrigin, engine.Plan{Update: []engine.Resource{resource(caps)}})
	require.ErrorContains(t, err, "changed owner since it was read")
	assert.Zero(t, w.writes["update"])
}

// TestApplyDeletes: a delete names the UID of the object read as owned, so that a
// same-named successor is never deleted; one already gone is deleted.
func TestApplyDeletes(t *testing.T) {
	ctx := context.Background()
	caps := tunnelv1alpha1.ForkCapabilities
	r := resource(caps)
	existing := engine.Existing{Resource: r, UID: "read-uid"}

	t.Run("the object read", func(t *testing.T) {
		w := newWorld(t, stored(r, caps, "read-uid"))
		applied, err := New(w.client, w.client, caps).Apply(ctx, ingressOrigin, engine.Plan{Delete: []engine.Existing{existing}})
		require.NoError(t, err)
		assert.Equal(t, []engine.Resource{r}, applied.Deleted)
		assert.Nil(t, w.get(t, r.Name))
	})
	t.Run("a successor with the same name survives", func(t *testing.T) {
		w := newWorld(t, stored(r, caps, "successor-uid"))
		applied, err := New(w.client, w.client, caps).Apply(ctx, ingressOrigin, engine.Plan{Delete: []engine.Existing{existing}})
		require.Error(t, err)
		assert.True(t, apierrors.IsConflict(errors.Unwrap(err)), err.Error())
		assert.Empty(t, applied.Deleted)
		require.NotNil(t, w.get(t, r.Name))
		assert.Equal(t, types.UID("successor-uid"), w.get(t, r.Name).UID)
	})
	t.Run("already gone", func(t *testing.T) {
		w := newWorld(t)
		applied, err := New(w.client, w.client, caps).Apply(ctx, ingressOrigin, engine.Plan{Delete: []engine.Existing{existing}})
		require.NoError(t, err)
		assert.Equal(t, []engine.Resource{r}, applied.Deleted)
	})
}

// TestApplyNameConflict: a PangolinResource PIC does not own, with the name PIC wants,
// is left alone and reported; later reconciles look instead of writing, until it goes.
func TestApplyNameConflict(t *testing.T) {
	ctx := context.Background()
	caps := tunnelv1alpha1.ForkCapabilities
	r := resource(caps)
	foreign := &tunnelv1alpha1.PangolinResource{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace, UID: "foreign", Labels: map[string]string{"made-by": "hand"}},
		Spec:       tunnelv1alpha1.PangolinResourceSpec{Name: "hand-made"},
	}
	w := newWorld(t, foreign)
	s := New(w.client, w.client, caps)
	plan := engine.Plan{Create: []engine.Resource{r}}
	wantRejection := route.Rejection{Origin: ingressOrigin, Host: "app.example.com", Reason: pic.ReasonNameConflict,
		Message: "PangolinResource prod/pic-prod-web-0123456789 exists and is not owned by this Ingress: PIC leaves it untouched and does not publish app.example.com"}

	applied, err := s.Apply(ctx, ingressOrigin, plan)
	require.NoError(t, err)
	assert.Equal(t, plugin.Applied{Rejections: []route.Rejection{wantRejection}}, applied)
	assert.Equal(t, 1, w.writes["create"])

	applied, err = s.Apply(ctx, ingressOrigin, plan)
	require.NoError(t, err)
	assert.Equal(t, plugin.Applied{Rejections: []route.Rejection{wantRejection}}, applied)
	assert.Equal(t, 1, w.writes["create"], "a known conflict is read, not written")
	assert.Equal(t, "hand-made", w.get(t, r.Name).Spec.Name, "untouched")
	assert.Zero(t, w.writes["update"]+w.writes["delete"])

	require.NoError(t, w.client.Delete(ctx, foreign))
	applied, err = s.Apply(ctx, ingressOrigin, plan)
	require.NoError(t, err)
	assert.Equal(t, plugin.Applied{Created: []engine.Resource{r}}, applied, "the name is free again")
}

// TestApplyOwnNotCached: a create that finds PIC's own object (written, not in the cache
// yet) is neither a conflict nor a write.
func TestApplyOwnNotCached(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	r := resource(caps)
	w := newWorld(t, stored(r, caps, "object-uid"))
	applied, err := New(w.client, w.client, caps).Apply(context.Background(), ingressOrigin, engine.Plan{Create: []engine.Resource{r}})
	require.NoError(t, err)
	assert.Equal(t, plugin.Applied{}, applied)
}

// TestApplyStopsAtAnError: an API error stops Apply, with what was done before it.
func TestApplyStopsAtAnError(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	r := resource(caps)
	gone := resource(caps)
	gone.Name = "pic-prod-web-gone"
	w := newWorld(t, stored(gone, caps, "gone-uid"))
	w.failCreate = apierrors.NewServiceUnavailable("down")
	applied, err := New(w.client, w.client, caps).Apply(context.Background(), ingressOrigin, engine.Plan{
		Create: []engine.Resource{r}, Delete: []engine.Existing{{Resource: gone, UID: "gone-uid"}},
	})
	require.ErrorContains(t, err, "create PangolinResource prod/pic-prod-web-0123456789")
	assert.True(t, apierrors.IsServiceUnavailable(err))
	assert.Equal(t, plugin.Applied{}, applied)
	assert.NotNil(t, w.get(t, gone.Name), "the delete after it was not sent")
}

// TestApplyTellsUnreachableFromRefused: an API server out of reach is the sink being
// unreachable, which the core reports on the object; a refused write is not.
func TestApplyTellsUnreachableFromRefused(t *testing.T) {
	gr := schema.GroupResource{Group: "tunnel.pangolin.io", Resource: "pangolinresources"}
	for _, c := range []struct {
		name        string
		err         error
		unreachable bool
	}{
		{"503", apierrors.NewServiceUnavailable("down"), true},
		{"a server timeout", apierrors.NewServerTimeout(gr, "create", 1), true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"500", apierrors.NewInternalError(errors.New("etcd")), true},
		{"a refused connection", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"a conflict", apierrors.NewConflict(gr, "x", errors.New("stale")), false},
		{"an invalid object", apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "PangolinResource"}, "x", nil), false},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("RBAC")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			caps := tunnelv1alpha1.ForkCapabilities
			w := newWorld(t)
			w.failCreate = c.err
			_, err := New(w.client, w.client, caps).Apply(context.Background(), ingressOrigin, engine.Plan{Create: []engine.Resource{resource(caps)}})
			require.Error(t, err)
			assert.Equal(t, c.unreachable, plugin.IsUnreachable(err))
		})
	}
}

// TestCurrent: only what the origin owns, in its namespace.
func TestCurrent(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	mine := resource(caps)
	other := resource(caps)
	other.Name, other.Origin.UID, other.Origin.Name = "pic-prod-other-1", "uid-other", "other"
	decoy := stored(resource(caps), caps, "decoy")
	decoy.Name, decoy.OwnerReferences = "pic-prod-web-decoy", nil
	elsewhere := stored(resource(caps), caps, "elsewhere")
	elsewhere.Namespace = "dev"
	w := newWorld(t, stored(mine, caps, "1"), stored(other, caps, "2"), decoy, elsewhere)

	got, err := New(w.client, w.client, caps).Current(context.Background(), ingressOrigin)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, mine.Name, got[0].Name)
	assert.Equal(t, types.UID("1"), got[0].UID)
	assert.Equal(t, engine.PhasePending, got[0].Status.Phase)
}

// TestHolders: the owners of PIC's PangolinResources on a published host, whatever
// host they name; a resource PIC does not own holds nothing.
func TestHolders(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	mine := resource(caps)
	other := resource(caps)
	other.Name, other.Origin.UID, other.Origin.Name = "pic-prod-other-1", "uid-other", "other"
	other.Host, other.Subdomain = "x.example.com", "www" // an override: published on www.example.com
	decoy := stored(resource(caps), caps, "decoy")
	decoy.Name, decoy.OwnerReferences = "pic-prod-web-decoy", nil
	w := newWorld(t, stored(mine, caps, "1"), stored(other, caps, "2"), decoy)
	s := New(w.client, w.client, caps)

	for host, want := range map[string][]route.Origin{
		"app.example.com": {{Kind: "Ingress", Namespace: "prod", Name: "web", UID: "uid-web"}},
		"www.example.com": {{Kind: "Ingress", Namespace: "prod", Name: "other", UID: "uid-other"}},
		"x.example.com":   nil,
	} {
		got, err := s.Holders(context.Background(), host)
		require.NoError(t, err)
		assert.Equal(t, want, got, host)
	}
}

// TestTunnel: a tunnel is a PangolinTunnel, Ready when the operator says so.
func TestTunnel(t *testing.T) {
	ready := &tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: "ready", Namespace: "prod"}, Status: tunnelv1alpha1.PangolinTunnelStatus{Status: "Ready"}}
	byCondition := &tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: "condition", Namespace: "prod"}, Status: tunnelv1alpha1.PangolinTunnelStatus{
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Connected"}}}}
	waiting := &tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: "waiting", Namespace: "prod"}, Status: tunnelv1alpha1.PangolinTunnelStatus{Status: "Waiting"}}
	w := newWorld(t, ready, byCondition, waiting)
	s := New(w.client, w.client, tunnelv1alpha1.ForkCapabilities)
	for _, c := range []struct {
		name  string
		state plugin.TunnelState
		msg   string
	}{
		{"ready", plugin.TunnelReady, ""},
		{"condition", plugin.TunnelReady, ""},
		{"waiting", plugin.TunnelNotReady, "PangolinTunnel prod/waiting is not Ready yet"},
		{"missing", plugin.TunnelNotFound, "PangolinTunnel prod/missing does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.Tunnel(context.Background(), route.TunnelRef{Namespace: "prod", Name: c.name})
			require.NoError(t, err)
			assert.Equal(t, c.state, got.State)
			if c.msg == "" {
				assert.Empty(t, got.Message)
			} else {
				assert.Contains(t, got.Message, c.msg)
			}
		})
	}
}

// TestFeatures: what each CRD variant lets the engine express; owner references let the
// garbage collector remove what a deleted object owned.
func TestFeatures(t *testing.T) {
	assert.Equal(t, engine.Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, RawResources: true, GarbageCollected: true},
		New(nil, nil, tunnelv1alpha1.ForkCapabilities).Features())
	assert.Equal(t, engine.Features{RawResources: true, GarbageCollected: true}, New(nil, nil, tunnelv1alpha1.OriginalCapabilities).Features())

	r := resource(tunnelv1alpha1.ForkCapabilities)
	d := New(nil, nil, tunnelv1alpha1.ForkCapabilities).Describe(r)
	assert.Equal(t, "PangolinResource", d.Kind)
	assert.Equal(t, "pic-prod-web-0123456789", d.Name)
	assert.Equal(t, "tunnel "+r.Tunnel.String(), d.Tunnel)
	assert.Equal(t, &corev1.ObjectReference{APIVersion: "tunnel.pangolin.io/v1alpha1", Kind: "PangolinResource", Namespace: "prod", Name: "pic-prod-web-0123456789"}, d.Object)
}

// TestCurrentWaitsForApplysWrites: Apply returns without waiting for the cache; the
// next Current of the same owner waits until the cache shows the writes, then reads.
func TestCurrentWaitsForApplysWrites(t *testing.T) {
	w := newWorld(t)
	// The cache: what the fake holds, except the objects not "delivered" yet.
	delivered := make(chan struct{})
	var held []string
	cache := interceptor.NewClient(w.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			select {
			case <-delivered:
			default:
				for _, name := range held {
					if key.Name == name {
						return apierrors.NewNotFound(schema.GroupResource{Resource: "pangolinresources"}, name)
					}
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	caps := tunnelv1alpha1.ForkCapabilities
	s := New(cache, w.client, caps)
	d := resource(caps)
	held = []string{d.Name}
	_, err := s.Apply(context.Background(), ingressOrigin, engine.Plan{Create: []engine.Resource{d}})
	require.NoError(t, err)
	assert.Len(t, s.pending.of(ingressOrigin.UID), 1, "the create is pending")

	time.AfterFunc(50*time.Millisecond, func() { close(delivered) })
	start := time.Now()
	_, err = s.Current(context.Background(), ingressOrigin)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 40*time.Millisecond, "Current waited for the cache")
	assert.Empty(t, s.pending.of(ingressOrigin.UID), "seen: no longer pending")

	other := route.Origin{Kind: "Ingress", Namespace: "default", Name: "other", UID: "other-uid"}
	start = time.Now()
	_, err = s.Current(context.Background(), other)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), cacheCatchUp, "another owner's Current does not wait")
}

// TestApplyKeepsWhatARefusedReplacementWouldLeave: a host renamed keeps its old
// PangolinResource until the API server has taken the new one.
func TestApplyKeepsWhatARefusedReplacementWouldLeave(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	renamed := resource(caps)
	old := resource(caps)
	old.Name, old.Host, old.Subdomain = "pic-prod-web-old", "old.example.com", "old"
	foreign := &tunnelv1alpha1.PangolinResource{
		ObjectMeta: metav1.ObjectMeta{Name: renamed.Name, Namespace: renamed.Namespace, UID: "foreign"},
		Spec:       tunnelv1alpha1.PangolinResourceSpec{Name: "hand-made"},
	}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "tunnel.pangolin.io", Kind: "PangolinResource"}, renamed.Name, nil)
	cases := []struct {
		name       string
		objects    []client.Object
		failCreate error
		rejections []route.Rejection
		kept       bool
		reasons    []string
	}{
		{name: "the replacement is created, then the old one deleted"},
		{name: "a replacement whose name another object holds keeps the old one",
			objects: []client.Object{foreign}, kept: true, reasons: []string{pic.ReasonNameConflict, pic.ReasonReplacementRefused}},
		{name: "a replacement the API server refuses keeps the old one",
			failCreate: invalid, kept: true},
		{name: "a replacement PIC refuses keeps the old one, the sink never asked",
			rejections: []route.Rejection{{Origin: ingressOrigin, Host: renamed.Host, Reason: pic.ReasonHostConflict}}, kept: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, append(tc.objects, stored(old, caps, "old-uid"))...)
			w.failCreate = tc.failCreate
			desired := []engine.Resource{renamed}
			if len(tc.rejections) > 0 {
				desired = nil
			}
			plan := engine.Calculate(ingressOrigin, desired, []engine.Existing{{Resource: old, UID: "old-uid"}}, tc.rejections, nil)
			applied, err := New(w.client, w.client, caps).Apply(context.Background(), ingressOrigin, plan)
			if tc.failCreate != nil {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			var reasons []string
			for _, rj := range applied.Rejections {
				reasons = append(reasons, rj.Reason)
				assert.Equal(t, rj.Reason == pic.ReasonReplacementRefused, rj.Kept, "only the refusal to delete the old one keeps it published")
			}
			assert.Equal(t, tc.reasons, reasons)
			if tc.kept {
				assert.NotNil(t, w.get(t, old.Name), "the old PangolinResource stays")
				assert.Zero(t, w.writes["delete"])
				return
			}
			assert.Nil(t, w.get(t, old.Name))
			assert.NotNil(t, w.get(t, renamed.Name))
		})
	}
}

// TestAnEchoBeforeTheAnswerIsAnEcho: the watch can deliver a create before the create's
// answer reaches Apply. The first event of its name, while the create is in flight, is
// the owner's own write (it must not wake the owner again); no later one is, nor
// anything once a refused create is answered. An object already there, whose event was
// taken for the echo of a create it made fail, makes the reconcile fail so that it is
// retried: nothing else would bring its owner back.
func TestAnEchoBeforeTheAnswerIsAnEcho(t *testing.T) {
	caps := tunnelv1alpha1.ForkCapabilities
	d := resource(caps)
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "tunnel.pangolin.io", Kind: "PangolinResource"}, d.Name, nil)
	cases := []struct {
		name string
		// stored is what the API server already holds under d's name.
		stored bool
		// eventsInFlight are the resourceVersions of the events the watch delivers
		// while the create is in flight.
		eventsInFlight []string
		refuse         error
		wantInFlight   []bool
		wantAnswered   bool
		wantErr        string
	}{
		{name: "created: the event before the answer is its echo", eventsInFlight: []string{"7"},
			wantInFlight: []bool{true}, wantAnswered: true},
		{name: "created: a second event in flight is someone else's", eventsInFlight: []string{"7", "8"},
			wantInFlight: []bool{true, false}, wantAnswered: true},
		{name: "refused: nothing is its echo once answered", refuse: invalid, eventsInFlight: []string{"7"},
			wantInFlight: []bool{true}, wantAnswered: false, wantErr: "create PangolinResource"},
		{name: "already there and PIC's, its event taken in flight: retried", stored: true, eventsInFlight: []string{"7"},
			wantInFlight: []bool{true}, wantAnswered: false, wantErr: "reading it again"},
		{name: "already there and PIC's, no event in flight: its event will come", stored: true,
			wantAnswered: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objects []client.Object
			if tc.stored {
				objects = append(objects, render(d, caps))
			}
			w := newWorld(t, objects...)
			var s *Sink
			var inFlight []bool
			var sent *tunnelv1alpha1.PangolinResource
			c := interceptor.NewClient(w.client.(client.WithWatch), interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					sent = obj.DeepCopyObject().(*tunnelv1alpha1.PangolinResource)
					for _, rv := range tc.eventsInFlight { // the watch, faster than the answer
						event := sent.DeepCopy()
						event.ResourceVersion = rv
						_, echo := s.writtenBy(event, false)
						inFlight = append(inFlight, echo)
					}
					if tc.refuse != nil {
						return tc.refuse
					}
					return c.Create(ctx, obj, opts...)
				},
			})
			s = New(c, c, caps)
			_, err := s.Apply(context.Background(), ingressOrigin, engine.Plan{Create: []engine.Resource{d}})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantInFlight, inFlight, "the events while the create is in flight")

			answered := sent.DeepCopy()
			if tc.refuse == nil {
				require.NoError(t, w.client.Get(context.Background(), types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, answered))
			}
			_, echo := s.writtenBy(answered, false)
			assert.Equal(t, tc.wantAnswered, echo, "the event of the stored object, once the create is answered")
			if !tc.wantAnswered {
				assert.Empty(t, s.pending.of(ingressOrigin.UID), "nothing stays pending")
			}
		})
	}
}

// TestCurrentDoesNotWaitForACreateInFlight: another owner's reconcile reads this
// owner's resources while it writes (the holders of a host); a create not answered
// yet, which may be refused and never show, is not waited for.
func TestCurrentDoesNotWaitForACreateInFlight(t *testing.T) {
	w := newWorld(t)
	caps := tunnelv1alpha1.ForkCapabilities
	s := New(w.client, w.client, caps)
	d := resource(caps)
	current := make(chan time.Duration, 1)
	c := interceptor.NewClient(w.client.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.CreateOption) error {
			start := time.Now()
			_, err := s.Current(ctx, ingressOrigin) // while the create is in flight
			require.NoError(t, err)
			current <- time.Since(start)
			return apierrors.NewInvalid(schema.GroupKind{Group: "tunnel.pangolin.io", Kind: "PangolinResource"}, d.Name, nil)
		},
	})
	s.client = c
	_, err := s.Apply(context.Background(), ingressOrigin, engine.Plan{Create: []engine.Resource{d}})
	require.Error(t, err)
	assert.Less(t, <-current, cacheCatchUp/2, "Current did not wait for the create in flight")
}
