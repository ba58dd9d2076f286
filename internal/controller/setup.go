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

// Setup registers with mgr a reconciler for each of deps.Sources, then the other
// controllers (deps.Controllers), every one with the watches wake.go derives from the
// declarations.
func Setup(ctx context.Context, mgr ctrl.Manager, deps Deps, maxConcurrent int) error {
	controllers, err := deps.Controllers()
	if err != nil {
		return fmt.Errorf("set up controllers: %w", err)
	}
	var watched []client.Object
	for _, src := range deps.Sources {
		r := NewReconciler(src, deps)
		kinds, err := r.setupWithManager(mgr, maxConcurrent, deps.SinkDeclaration)
		if err != nil {
			return fmt.Errorf("set up the %s controller: %w", src.Name(), err)
		}
		watched = append(watched, kinds...)
	}
	for _, c := range controllers {
		kinds, err := setupController(mgr, c, deps.SinkDeclaration)
		if err != nil {
			return fmt.Errorf("set up the %s controller: %w", c.Name, err)
		}
		watched = append(watched, kinds...)
	}
	return plugin.StartWithCache(ctx, mgr.GetCache(), distinctKinds(mgr.GetScheme(), watched)...)
}

// Controllers are the controllers that run besides the sources' own reconcilers, in
// the order `render` runs them: each source's other controllers, then those of the
// parts the sources share. It is an error for a name, a source's included, to be
// declared twice: controller-runtime does not check names here (SkipNameValidation),
// and two controllers of one name would both run, each writing the same status. What
// several sources need is a part they share (plugin.Share), declared once.
func (d Deps) Controllers() ([]plugin.Controller, error) {
	named := map[string]bool{}
	declare := func(name string) error {
		if named[name] {
			return fmt.Errorf("the %s controller is declared twice", name)
		}
		named[name] = true
		return nil
	}
	for _, src := range d.Sources {
		if err := declare(src.Name()); err != nil {
			return nil, err
		}
	}
	var out []plugin.Controller
	for _, src := range d.Sources {
		out = append(out, src.Declaration.Controllers...)
	}
	for _, part := range d.SharedParts {
		out = append(out, part.Controllers...)
	}
	for _, c := range out {
		if err := declare(c.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// setupWithManager registers the reconciler of a source, and returns the kinds it
// watches besides its own.
func (r *Reconciler) setupWithManager(mgr ctrl.Manager, maxConcurrent int, sink plugin.SinkDeclaration) ([]client.Object, error) {
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
	kinds := r.watch(b, sink)
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
