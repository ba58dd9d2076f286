package pangolinresource

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// recordedWakes is what the watch handlers asked to wake.
type recordedWakes struct {
	owners    []string // owner names
	hosts     []string
	changedBy []string // owner names given to HostsChangedBy
}

func (r *recordedWakes) Owners(_ context.Context, owners ...route.Origin) {
	for _, o := range owners {
		r.owners = append(r.owners, o.Name)
	}
}

func (r *recordedWakes) Hosts(_ context.Context, hosts ...string) {
	r.hosts = append(r.hosts, hosts...)
}

func (r *recordedWakes) HostsChangedBy(_ context.Context, by route.Origin, hosts ...string) {
	r.changedBy = append(r.changedBy, by.Name)
	r.hosts = append(r.hosts, hosts...)
}

func (r *recordedWakes) Tunnels(context.Context, ...route.TunnelRef) {}

// TestWatchEventsWakeButNotForEchoes: a PangolinResource's change wakes its owner, and
// its coming or going wakes its host's claimants, unless the event is the echo of the
// owner's own write; then only the other claimants look again.
func TestWatchEventsWakeButNotForEchoes(t *testing.T) {
	ctx := context.Background()
	caps := tunnelv1alpha1.ForkCapabilities
	r := resource(caps)
	updated := resource(caps)
	updated.Targets[1].Backend.Port = 9090
	const host = "app.example.com"

	for _, tc := range []struct {
		name string
		// stored is in the API server first; plan is what PIC applies then.
		stored *tunnelv1alpha1.PangolinResource
		plan   engine.Plan
		// deliver sends the watch event, given the object as the API server has it
		// after the plan (nil: deleted) and before it.
		deliver func(h eventHandler, after, before *tunnelv1alpha1.PangolinResource)
		want    recordedWakes
	}{
		{
			name: "PIC's own create", plan: engine.Plan{Create: []engine.Resource{r}},
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.create(after) },
			want:    recordedWakes{hosts: []string{host}, changedBy: []string{"web"}},
		},
		{
			name: "a create PIC did not make", stored: stored(r, caps, "uid-1"),
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.create(after) },
			want:    recordedWakes{owners: []string{"web"}, hosts: []string{host}},
		},
		{
			name: "the initial list, at start: each owner and claimant is reconciled anyway", stored: stored(r, caps, "uid-1"),
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.listed(after) },
			want:    recordedWakes{},
		},
		{
			name: "the same create delivered twice: the second is not an echo", plan: engine.Plan{Create: []engine.Resource{r}},
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.create(after); h.create(after) },
			want:    recordedWakes{owners: []string{"web"}, hosts: []string{host, host}, changedBy: []string{"web"}},
		},
		{
			name: "PIC's own update", stored: stored(r, caps, "uid-1"),
			plan:    engine.Plan{Update: []engine.Resource{updated}},
			deliver: func(h eventHandler, after, before *tunnelv1alpha1.PangolinResource) { h.update(before, after) },
			want:    recordedWakes{},
		},
		{
			name: "a later write by someone else (the operator's status)", stored: stored(r, caps, "uid-1"),
			plan: engine.Plan{Update: []engine.Resource{updated}},
			deliver: func(h eventHandler, after, before *tunnelv1alpha1.PangolinResource) {
				status := after.DeepCopy()
				status.ResourceVersion += "1"
				h.update(before, status)
			},
			want: recordedWakes{owners: []string{"web"}},
		},
		{
			name: "a resync", stored: stored(r, caps, "uid-1"),
			deliver: func(h eventHandler, _, before *tunnelv1alpha1.PangolinResource) { h.update(before, before) },
			want:    recordedWakes{},
		},
		{
			name: "PIC's own delete", stored: stored(r, caps, "uid-1"),
			plan:    engine.Plan{Delete: []engine.Existing{{Resource: r, UID: "uid-1"}}},
			deliver: func(h eventHandler, _, before *tunnelv1alpha1.PangolinResource) { h.delete(before) },
			want:    recordedWakes{hosts: []string{host}, changedBy: []string{"web"}},
		},
		{
			name: "the delete of a same-named successor", stored: stored(r, caps, "uid-1"),
			plan: engine.Plan{Delete: []engine.Existing{{Resource: r, UID: "uid-1"}}},
			deliver: func(h eventHandler, _, before *tunnelv1alpha1.PangolinResource) {
				successor := before.DeepCopy()
				successor.UID = "uid-2"
				h.delete(successor)
			},
			want: recordedWakes{owners: []string{"web"}, hosts: []string{host}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objects []client.Object
			if tc.stored != nil {
				objects = append(objects, tc.stored)
			}
			w := newWorld(t, objects...)
			s := New(w.client, w.client, caps)
			before := w.get(t, r.Name)
			_, err := s.Apply(ctx, ingressOrigin, tc.plan)
			require.NoError(t, err)

			var got recordedWakes
			tc.deliver(eventHandler{ctx: ctx, sink: s, wake: &got}, w.get(t, r.Name), before)
			assert.Equal(t, tc.want, got)
		})
	}
}

// eventHandler delivers watch events to the sink's handler, as an informer would.
type eventHandler struct {
	ctx  context.Context
	sink *Sink
	wake *recordedWakes
}

func (h eventHandler) create(obj *tunnelv1alpha1.PangolinResource) {
	h.sink.resourceChanges(h.wake).Create(h.ctx, event.CreateEvent{Object: obj}, nil)
}

func (h eventHandler) listed(obj *tunnelv1alpha1.PangolinResource) {
	h.sink.resourceChanges(h.wake).Create(h.ctx, event.CreateEvent{Object: obj, IsInInitialList: true}, nil)
}

func (h eventHandler) update(old, obj *tunnelv1alpha1.PangolinResource) {
	h.sink.resourceChanges(h.wake).Update(h.ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: obj}, nil)
}

func (h eventHandler) delete(obj *tunnelv1alpha1.PangolinResource) {
	h.sink.resourceChanges(h.wake).Delete(h.ctx, event.DeleteEvent{Object: obj}, nil)
}
