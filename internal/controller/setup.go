package controller

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// RateLimiter retries failed reconciles with exponential backoff per object, from 5 ms
// up to 5 minutes, and at most 10 per second overall with bursts of 100.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 5*time.Minute),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// SetupWithManager registers the reconciler: its source's objects, the wake-ups that
// every part of PIC sends, and the source's own watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, maxConcurrent int, wakeups *Wakeups) error {
	kind, err := kindOf(r.source, mgr.GetScheme())
	if err != nil {
		return err
	}
	r.kind = kind
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.source.Name()).
		For(r.source.Object(), builder.WithPredicates(plugin.SpecOrMetadataChanged())).
		// A host an object takes or releases (created, renamed, deleted, no longer
		// managed) concerns its claimants of every kind: the next one takes it at once,
		// and the owner of a host several HTTPRoutes share merges a sibling's change.
		Watches(r.source.Object(), claimsChanged(r.source, wakeups)).
		WatchesRawSource(source.TypedChannel(wakeups.subscribe(), handler.TypedFuncs[wakeup, reconcile.Request]{
			GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[wakeup], q queue) { r.woken(ctx, kind, e.Object, q) },
		})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: maxConcurrent,
			RateLimiter:             RateLimiter(),
			// Names are unique by construction (one controller per source); tests start
			// several managers in one process, which the global check would refuse.
			SkipNameValidation: ptr.To(true),
		})
	if err := r.source.Register(ctx, mgr, b, wakeups, sinkTunnels{TunnelChecker: r.sink, wakeups: wakeups}); err != nil {
		return fmt.Errorf("register the %s source: %w", r.source.Name(), err)
	}
	return b.Complete(r)
}

func kindOf(src plugin.Source, scheme *runtime.Scheme) (string, error) {
	gvk, err := apiutil.GVKForObject(src.Object(), scheme)
	if err != nil {
		return "", fmt.Errorf("the %s source's kind: %w", src.Name(), err)
	}
	return gvk.Kind, nil
}

// woken enqueues this source's objects that a wake-up concerns.
func (r *Reconciler) woken(ctx context.Context, kind string, wu wakeup, q queue) {
	for _, o := range wu.owners {
		if o.Kind == kind {
			q.Add(reconcile.Request{NamespacedName: o.NamespacedName()})
		}
	}
	for _, t := range wu.tunnels {
		for _, req := range r.waiting.of(t) {
			q.Add(req)
		}
	}
	for _, host := range wu.hosts {
		claimants, err := r.source.Claimants(ctx, host)
		if err != nil {
			log.FromContext(ctx).Error(err, "cannot find the claimants of a host", "host", host)
			continue
		}
		for _, c := range claimants {
			if wu.except != "" && c.Origin.UID == wu.except {
				continue
			}
			q.Add(reconcile.Request{NamespacedName: c.Origin.NamespacedName()})
		}
	}
}

// claimsChanged wakes the claimants of the hosts an object of src claimed before or
// claims now, when it is created, deleted, or changed beyond its status. The initial
// list wakes no one: every claimant is reconciled at start, from its own.
func claimsChanged(src plugin.Source, wake plugin.Wake) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, _ queue) {
			if !e.IsInInitialList {
				wake.Hosts(ctx, src.Hosts(ctx, e.Object)...)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ queue) {
			if plugin.ChangedBeyondStatus(e.ObjectOld, e.ObjectNew) {
				wake.Hosts(ctx, append(src.Hosts(ctx, e.ObjectOld), src.Hosts(ctx, e.ObjectNew)...)...)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ queue) {
			wake.Hosts(ctx, src.Hosts(ctx, e.Object)...)
		},
	}
}
