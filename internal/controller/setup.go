package controller

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// IndexPangolinResources registers the owner index the sink reads through. It is
// shared by every source's reconciler, so it is registered once.
func IndexPangolinResources(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &tunnelv1alpha1.PangolinResource{}, pangolinresource.OwnerIndex, pangolinresource.IndexOwner); err != nil {
		return fmt.Errorf("index PangolinResources by owner: %w", err)
	}
	return nil
}

// RateLimiter retries failed reconciles with exponential backoff per object, from 5 ms
// up to 5 minutes, and at most 10 per second overall with bursts of 100.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 5*time.Minute),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// SetupWithManager registers the reconciler: its source's objects, the
// PangolinResources they own, the tunnels they wait for, and the source's own watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, maxConcurrent int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.source.Name()).
		For(r.source.Object(), builder.WithPredicates(sources.SpecOrMetadataChanged())).
		// A resync of a PangolinResource is not news: its owner's own resync covers it.
		Owns(&tunnelv1alpha1.PangolinResource{}, builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		Watches(&tunnelv1alpha1.PangolinTunnel{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, obj client.Object) []reconcile.Request {
				return r.waiting.of(route.TunnelRef{Namespace: obj.GetNamespace(), Name: obj.GetName()})
			})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: maxConcurrent,
			RateLimiter:             RateLimiter(),
			// Names are unique by construction (one controller per source); tests start
			// several managers in one process, which the global check would refuse.
			SkipNameValidation: ptr.To(true),
		})
	for _, idx := range r.source.Indexes() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, idx.Object, idx.Field, idx.Func); err != nil {
			return fmt.Errorf("index %T by %s: %w", idx.Object, idx.Field, err)
		}
	}
	// A host released by one object (deleted, renamed, no longer managed) goes to the
	// next claimant at once, whatever kind either is; the owner of a host several
	// HTTPRoutes share merges a sibling's creation or change at once.
	for _, src := range r.claims.sources {
		b.Watches(src.Object(), otherClaimants(src, r.source))
		// A related object that moves hosts (a Gateway's listener hostname) wakes their
		// claimants, of any kind, on any Gateway.
		if related, ok := src.(sources.HostsFromRelated); ok {
			for _, rel := range related.RelatedHosts() {
				hostsOf := func(_ context.Context, o client.Object) []string { return rel.Hosts(o) }
				b.Watches(rel.Object, claimantsOfHosts(hostsOf, sources.ChangedBeyondStatus, r.source))
			}
		}
	}
	// A PangolinResource created or deleted (by this object's reconcile or another's)
	// changes who serves its host: its claimants look again, whatever made the owner
	// start or stop publishing (a Service, a class, a Gateway's verdict).
	b.Watches(&tunnelv1alpha1.PangolinResource{}, claimantsOfHosts(resourceHost, func(_, _ client.Object) bool { return false }, r.source))
	r.source.Watch(b)
	return b.Complete(r)
}

// otherClaimants maps the creation, change or deletion of any object of kind changed
// to the other objects of kind owner that claim one of the hosts it claimed before or
// claims now.
func otherClaimants(changed, owner sources.Source) handler.EventHandler {
	// A claim that changes through a related object rather than the claimant's spec
	// shows as a PangolinResource created or deleted (the watch above), or for routes
	// merged into one host, through the source's own related-object watches.
	return claimantsOfHosts(changed.Hosts, sources.ChangedBeyondStatus, owner)
}

// resourceHost is the source host a PangolinResource of PIC's serves.
func resourceHost(_ context.Context, o client.Object) []string {
	if h := o.GetAnnotations()[pic.AnnotationHost]; h != "" {
		return []string{h}
	}
	return nil
}

// claimantsOfHosts maps the creation or deletion of an object, or an update changed
// reports, to the objects of kind owner that claim one of the hosts hostsOf gives for
// it, before or after (except itself).
func claimantsOfHosts(hostsOf func(context.Context, client.Object) []string, changed func(old, new client.Object) bool, owner sources.Source) handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		seen := map[string]bool{}
		for _, obj := range objs {
			for _, host := range hostsOf(ctx, obj) {
				if seen[host] {
					continue
				}
				seen[host] = true
				claimants, err := owner.Claimants(ctx, host)
				if err != nil {
					log.FromContext(ctx).Error(err, "cannot find the claimants of a host", "host", host)
					continue
				}
				for _, c := range claimants {
					if c.UID != obj.GetUID() {
						q.Add(reconcile.Request{NamespacedName: c.NamespacedName()})
					}
				}
			}
		}
	}
	return handler.Funcs{
		// A new claimant is merged by the owner of a host several HTTPRoutes share.
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if changed(e.ObjectOld, e.ObjectNew) {
				enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}
