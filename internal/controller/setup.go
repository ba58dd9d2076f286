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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// Setup registers with mgr a reconciler for each of deps.Sources and the controllers
// each declares, then those of the parts they share (deps.SharedParts), every one with
// the watches wake.go derives from the declarations.
func Setup(ctx context.Context, mgr ctrl.Manager, deps Deps, maxConcurrent int) error {
	var watched []client.Object
	var others []plugin.Controller
	for _, src := range deps.Sources {
		r := NewReconciler(src, deps)
		kinds, err := r.setupWithManager(mgr, maxConcurrent)
		if err != nil {
			return fmt.Errorf("set up the %s controller: %w", src.Name(), err)
		}
		watched = append(watched, kinds...)
		others = append(others, src.Declare().Controllers...)
	}
	for _, part := range deps.SharedParts {
		others = append(others, part.Controllers...)
	}
	named := map[string]bool{}
	for _, src := range deps.Sources {
		named[src.Name()] = true
	}
	for _, c := range others {
		// Names are not checked by controller-runtime here (SkipNameValidation): two
		// controllers of one name would both run, each writing the same status. What
		// several sources need is a part they share (plugin.Share), declared once.
		if named[c.Name] {
			return fmt.Errorf("set up the %s controller: declared twice", c.Name)
		}
		named[c.Name] = true
		kinds, err := setupController(mgr, c, deps.Sink.Declare())
		if err != nil {
			return fmt.Errorf("set up the %s controller: %w", c.Name, err)
		}
		watched = append(watched, kinds...)
	}
	return plugin.StartWithCache(ctx, mgr.GetCache(), distinctKinds(mgr.GetScheme(), watched)...)
}

// setupWithManager registers the reconciler of a source, and returns the kinds it
// watches besides its own.
func (r *Reconciler) setupWithManager(mgr ctrl.Manager, maxConcurrent int) ([]client.Object, error) {
	kind, err := kindOf(r.source, mgr.GetScheme())
	if err != nil {
		return nil, err
	}
	r.kind = kind
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.source.Name()).
		For(r.source.Object(), builder.WithPredicates(plugin.SpecOrMetadataChanged())).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: maxConcurrent,
			RateLimiter:             RateLimiter(),
			// Names are unique by construction (one controller per source); tests start
			// several managers in one process, which the global check would refuse.
			SkipNameValidation: ptr.To(true),
		})
	kinds := r.watch(b)
	return kinds, b.Complete(retryConflicts(r))
}

// setupController registers a source's other controller.
func setupController(mgr ctrl.Manager, c plugin.Controller, sink plugin.SinkDeclaration) ([]client.Object, error) {
	var forOpts []builder.ForOption
	if c.IgnoreStatus {
		forOpts = append(forOpts, builder.WithPredicates(plugin.SpecOrMetadataChanged()))
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(c.Name).
		For(c.Object, forOpts...).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)})
	kinds := watchController(b, c, sink)
	return kinds, b.Complete(retryConflicts(c.Reconciler))
}

func kindOf(src plugin.Source, scheme *runtime.Scheme) (string, error) {
	gvk, err := apiutil.GVKForObject(src.Object(), scheme)
	if err != nil {
		return "", fmt.Errorf("the %s source's kind: %w", src.Name(), err)
	}
	return gvk.Kind, nil
}

// distinctKinds is kinds with each kind once.
func distinctKinds(scheme *runtime.Scheme, kinds []client.Object) []client.Object {
	seen := map[string]bool{}
	var out []client.Object
	for _, k := range kinds {
		gvk, err := apiutil.GVKForObject(k, scheme)
		if err != nil || seen[gvk.String()] {
			continue
		}
		seen[gvk.String()] = true
		out = append(out, k)
	}
	return out
}
