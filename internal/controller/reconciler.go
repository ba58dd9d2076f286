package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// TunnelNotReadyRecheck is how often a route waiting for its tunnel to become Ready is
// looked at again. The operator itself only rechecks tunnels every 60 s.
const TunnelNotReadyRecheck = 30 * time.Second

// Reconciler reconciles the objects of one source.
type Reconciler struct {
	source   sources.Source
	sink     *pangolinresource.Sink
	cache    client.Reader // tunnels
	recorder events.EventRecorder
	defaults engine.Defaults

	// backoff paces retries of causes that may fix themselves (a missing Service or
	// tunnel) without logging them as errors: exponential per object, up to 5 minutes.
	backoff workqueue.TypedRateLimiter[reconcile.Request]
	waiting *tunnelWaiters
	seen    *observations
}

// NewReconciler returns the reconciler of one source.
func NewReconciler(source sources.Source, sink *pangolinresource.Sink, cache client.Reader, recorder events.EventRecorder, defaults engine.Defaults) *Reconciler {
	return &Reconciler{
		source:   source,
		sink:     sink,
		cache:    cache,
		recorder: recorder,
		defaults: defaults,
		backoff:  workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 5*time.Minute),
		waiting:  &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}},
		seen:     &observations{source: source.Name(), objects: map[types.NamespacedName]observation{}},
	}
}

// Reconcile implements reconcile.Reconciler. It is level-based: it looks at the object
// as it is now and makes the PangolinResources match, whatever happened before.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := time.Now()
	result, err := r.reconcile(ctx, req)
	reconcileDuration.WithLabelValues(r.source.Name()).Observe(time.Since(start).Seconds())
	outcome := "success"
	switch {
	case err != nil:
		outcome = "error"
	case result.RequeueAfter > 0:
		outcome = "requeue"
	}
	reconcileTotal.WithLabelValues(r.source.Name(), outcome).Inc()
	return result, err
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := log.FromContext(ctx)
	res, err := r.source.Routes(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
	}
	if res.Origin == nil {
		// Deleted: the garbage collector removes what it owned, through the owner
		// references. Nothing here may delete on a cache miss.
		r.seen.forget(req.NamespacedName)
		r.waiting.forget(req.NamespacedName)
		r.backoff.Forget(req)
		return reconcile.Result{}, nil
	}
	origin := *res.Origin
	rejections := res.Rejections
	routes := res.Routes
	if !res.Managed {
		routes = nil
	}

	routes, tunnelRejections, notReady, err := r.checkTunnels(ctx, req.NamespacedName, routes)
	if err != nil {
		return reconcile.Result{}, err
	}
	rejections = append(rejections, tunnelRejections...)

	desired, engineRejections := engine.Desired(engine.Input{Routes: routes, Features: r.sink.Features(), Defaults: r.defaults})
	rejections = append(rejections, engineRejections...)

	existing, err := r.sink.Current(ctx, origin)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := engine.Calculate(desired, existing, holdOf(rejections))
	applied, applyErr := r.sink.Apply(ctx, plan)
	r.reportApplied(ctx, origin, applied)
	if applyErr != nil {
		return reconcile.Result{}, applyErr
	}
	for _, d := range applied.Conflicts {
		rejections = append(rejections, route.Rejection{Origin: origin, Host: d.Host, Reason: pic.ReasonNameConflict,
			Message: fmt.Sprintf("PangolinResource %s/%s exists and is not owned by this %s: PIC leaves it untouched and does not publish %s", d.Namespace, d.Name, origin.Kind, d.Host)})
	}

	r.report(ctx, origin, rejections, notReady, served(existing, plan, applied))
	if len(plan.Create)+len(plan.Update)+len(plan.Delete) == 0 {
		logger.V(1).Info("up to date", "resources", len(desired))
	}

	var requeue time.Duration
	if slices.ContainsFunc(rejections, func(rj route.Rejection) bool { return rj.Retry }) {
		requeue = r.backoff.When(req)
	} else {
		r.backoff.Forget(req)
	}
	if len(notReady) > 0 && (requeue == 0 || requeue > TunnelNotReadyRecheck) {
		requeue = TunnelNotReadyRecheck
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// checkTunnels drops the routes whose tunnel does not exist, holding what exists for
// them, and names the tunnels that exist but are not Ready yet. Routes through a tunnel
// that is not Ready are still written: the operator waits for the tunnel itself, and the
// route is live the moment the tunnel is.
func (r *Reconciler) checkTunnels(ctx context.Context, key types.NamespacedName, routes []route.Route) ([]route.Route, []route.Rejection, []route.TunnelRef, error) {
	var (
		kept       []route.Route
		rejections []route.Rejection
		notReady   []route.TunnelRef
		found      = map[route.TunnelRef]bool{}
	)
	for _, rt := range routes {
		exists, seen := found[rt.Tunnel]
		if !seen {
			var t tunnelv1alpha1.PangolinTunnel
			err := r.cache.Get(ctx, types.NamespacedName{Namespace: rt.Tunnel.Namespace, Name: rt.Tunnel.Name}, &t)
			switch {
			case apierrors.IsNotFound(err):
				rejections = append(rejections, route.Rejection{Origin: rt.Origin, Reason: pic.ReasonTunnelNotFound, Hold: true, Retry: true,
					Message: fmt.Sprintf("PangolinTunnel %s does not exist: nothing is published or removed until it does; check the class, the %s annotation and the tunnel configuration", rt.Tunnel, pic.AnnotationTunnelName)})
			case err != nil:
				return nil, nil, nil, fmt.Errorf("get PangolinTunnel %s: %w", rt.Tunnel, err)
			case !t.Ready():
				notReady = append(notReady, rt.Tunnel)
			}
			exists = err == nil
			found[rt.Tunnel] = exists
			r.waiting.set(rt.Tunnel, key, !exists || !t.Ready())
		}
		if exists {
			kept = append(kept, rt)
		}
	}
	return kept, rejections, notReady, nil
}

func holdOf(rejections []route.Rejection) engine.Hold {
	hold := engine.Hold{Hosts: map[string]bool{}}
	for _, rj := range rejections {
		if !rj.Hold {
			continue
		}
		if rj.Host == "" {
			hold.All = true
		} else {
			hold.Hosts[rj.Host] = true
		}
	}
	return hold
}

// served is what exists for the object after the plan was applied.
func served(existing []engine.Existing, plan engine.Plan, applied pangolinresource.Result) []engine.Resource {
	gone := map[string]bool{}
	for _, d := range applied.Deleted {
		gone[d.Name] = true
	}
	var out []engine.Resource
	for _, e := range existing {
		if !gone[e.Name] {
			out = append(out, e.Resource)
		}
	}
	return append(out, applied.Created...)
}

// regarding is the object events are about.
func regarding(o route.Origin) *corev1.ObjectReference {
	apiVersion := o.Version
	if o.Group != "" {
		apiVersion = o.Group + "/" + o.Version
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

func resourceRef(r engine.Resource) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: tunnelv1alpha1.GroupVersion.String(), Kind: "PangolinResource", Namespace: r.Namespace, Name: r.Name}
}

// reportApplied emits a Normal event and a log line for every write.
func (r *Reconciler) reportApplied(ctx context.Context, origin route.Origin, applied pangolinresource.Result) {
	logger := log.FromContext(ctx)
	for _, c := range []struct {
		reason, action string
		resources      []engine.Resource
	}{
		{pic.ReasonCreated, "Create", applied.Created},
		{pic.ReasonUpdated, "Update", applied.Updated},
		{pic.ReasonDeleted, "Delete", applied.Deleted},
	} {
		for _, d := range c.resources {
			logger.Info(strings.ToLower(c.reason)+" PangolinResource", "resource", d.Name, "host", d.Host, "tunnel", d.Tunnel.String())
			r.recorder.Eventf(regarding(origin), resourceRef(d), corev1.EventTypeNormal, c.reason, c.action,
				"%s PangolinResource %s for host %s (tunnel %s)", c.reason, d.Name, d.Host, d.Tunnel)
		}
	}
}

// report emits the Warning events of the rejections, and the TunnelNotReady notices,
// once per change: a resync that finds the same problems stays quiet, so events keep
// their meaning and the API server is not written to by a steady state.
func (r *Reconciler) report(ctx context.Context, origin route.Origin, rejections []route.Rejection, notReady []route.TunnelRef, served []engine.Resource) {
	logger := log.FromContext(ctx)
	slices.SortStableFunc(rejections, func(a, b route.Rejection) int { return strings.Compare(a.String(), b.String()) })
	rejections = slices.CompactFunc(rejections, func(a, b route.Rejection) bool { return a.String() == b.String() })
	notReady = slices.Compact(notReady)

	var fingerprint strings.Builder
	for _, rj := range rejections {
		fingerprint.WriteString(rj.String() + "\n")
	}
	for _, t := range notReady {
		fingerprint.WriteString("notready " + t.String() + "\n")
	}
	changed := r.seen.record(origin.NamespacedName(), fingerprint.String(), rejections, served)
	for _, rj := range rejections {
		if !changed {
			logger.V(1).Info("not publishing", "host", rj.Host, "reason", rj.Reason, "message", rj.Message)
			continue
		}
		logger.Info("not publishing", "host", rj.Host, "reason", rj.Reason, "message", rj.Message)
		r.recorder.Eventf(regarding(origin), nil, corev1.EventTypeWarning, rj.Reason, "Validate", "%s", rj.Message)
	}
	if changed {
		for _, t := range notReady {
			logger.Info("tunnel not ready", "tunnel", t.String())
			r.recorder.Eventf(regarding(origin), nil, corev1.EventTypeNormal, pic.ReasonTunnelNotReady, "Validate",
				"PangolinTunnel %s is not Ready yet: the PangolinResources are written and the operator serves them once it is", t)
		}
	}
}

// tunnelWaiters remembers which objects wait for which tunnel to appear or become
// Ready, so that a tunnel event brings them back at once instead of at the next backoff.
type tunnelWaiters struct {
	mu       sync.Mutex
	byTunnel map[route.TunnelRef]map[types.NamespacedName]bool
}

func (w *tunnelWaiters) set(t route.TunnelRef, key types.NamespacedName, waiting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !waiting {
		delete(w.byTunnel[t], key)
		return
	}
	if w.byTunnel[t] == nil {
		w.byTunnel[t] = map[types.NamespacedName]bool{}
	}
	w.byTunnel[t][key] = true
}

func (w *tunnelWaiters) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, keys := range w.byTunnel {
		delete(keys, key)
	}
}

func (w *tunnelWaiters) of(t route.TunnelRef) []reconcile.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []reconcile.Request
	for key := range w.byTunnel[t] {
		out = append(out, reconcile.Request{NamespacedName: key})
	}
	return out
}

// observations keeps, per object, what was last reported and served, for the
// once-per-change events and the gauges.
type observations struct {
	source  string
	mu      sync.Mutex
	objects map[types.NamespacedName]observation
}

type observation struct {
	fingerprint string
	reasons     []string
	tunnels     map[string]int
}

func (o *observations) record(key types.NamespacedName, fingerprint string, rejections []route.Rejection, served []engine.Resource) bool {
	next := observation{fingerprint: fingerprint, tunnels: map[string]int{}}
	for _, rj := range rejections {
		if !slices.Contains(next.reasons, rj.Reason) {
			next.reasons = append(next.reasons, rj.Reason)
		}
	}
	for _, s := range served {
		next.tunnels[s.Tunnel.String()]++
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, known := o.objects[key]
	o.apply(prev, -1)
	o.apply(next, +1)
	o.objects[key] = next
	return !known || prev.fingerprint != fingerprint
}

func (o *observations) forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.objects[key]; ok {
		o.apply(prev, -1)
		delete(o.objects, key)
	}
}

func (o *observations) apply(obs observation, sign float64) {
	for _, reason := range obs.reasons {
		rejectedObjects.WithLabelValues(o.source, reason).Add(sign)
	}
	for t, n := range obs.tunnels {
		managedResources.WithLabelValues(t).Add(sign * float64(n))
	}
}
