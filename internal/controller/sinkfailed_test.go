package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// noted records the reasons of the events it is given.
type noted struct{ reasons []string }

func (n *noted) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	n.reasons = append(n.reasons, reason)
}

// TestSinkFailedTellsOncePerOutage: a sink out of reach is told to a managed object
// once, however many retries and messages, and again only after a reconcile got
// through; other errors, unmanaged objects and a shutdown say nothing. The error is
// always returned, for the controller to retry.
func TestSinkFailedTellsOncePerOutage(t *testing.T) {
	origin := route.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", UID: "uid-1"}
	managed := plugin.Result{Origin: &origin, Managed: true}
	unmanaged := plugin.Result{Origin: &origin}
	down := func(port int) error {
		return plugin.Unreachable(fmt.Errorf("read tcp 10.0.0.1:%d->10.0.0.2:443: connection reset by peer", port))
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()

	for _, c := range []struct {
		name  string
		steps func(r *Reconciler)
		want  int // SinkUnavailable events
	}{
		{"an outage's retries, with other messages, tell once", func(r *Reconciler) {
			for port := range 5 {
				_ = r.sinkFailed(ctx, managed, down(40000+port))
			}
		}, 1},
		{"a reconcile that gets through ends the outage; the next one is told", func(r *Reconciler) {
			_ = r.sinkFailed(ctx, managed, down(1))
			r.seen.record(types.NamespacedName{Namespace: "shop", Name: "web"}, nil, nil)
			_ = r.sinkFailed(ctx, managed, down(2))
		}, 2},
		{"an error the sink does not call unreachable is not told", func(r *Reconciler) {
			_ = r.sinkFailed(ctx, managed, errors.New("409 conflict"))
		}, 0},
		{"an object PIC does not manage is not told", func(r *Reconciler) {
			_ = r.sinkFailed(ctx, unmanaged, down(1))
		}, 0},
		{"a shutdown is not an outage", func(r *Reconciler) {
			_ = r.sinkFailed(cancelled, managed, down(1))
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &noted{}
			r := &Reconciler{recorder: rec, seen: &observations{source: "ingress", objects: map[types.NamespacedName]observation{}}}
			c.steps(r)
			assert.Len(t, rec.reasons, c.want)
			for _, reason := range rec.reasons {
				assert.Equal(t, "SinkUnavailable", reason)
			}
		})
	}

	r := &Reconciler{recorder: &noted{}, seen: &observations{source: "ingress", objects: map[types.NamespacedName]observation{}}}
	err := down(1)
	assert.Same(t, err, r.sinkFailed(ctx, managed, err), "the error goes back to the controller as it is")
}
