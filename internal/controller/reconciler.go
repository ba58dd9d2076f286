package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// TunnelNotReadyRecheck is how often a route waiting for its tunnel to become Ready is
// looked at again. The operator itself only rechecks tunnels every 60 s.
const TunnelNotReadyRecheck = 30 * time.Second

// Deps are what every source's reconciler shares.
type Deps struct {
	Sink     plugin.Sink
	Recorder events.EventRecorder
	Defaults engine.Defaults
	// Sources are all running sources: a host is owned cluster-wide, across kinds.
	Sources []plugin.Source
	// HostPolicy is which hosts each namespace may publish (the configuration's
	// hostPolicy); NamespaceLabels reads a namespace's labels, for its selectors (nil
	// when no rule has one).
	HostPolicy      hostpolicy.Policy
	NamespaceLabels func(ctx context.Context, namespace string) (map[string]string, error)
	// SharedParts are the declarations of the parts several sources share
	// (plugin.Shared.Declarations), one for each part however many sources use it:
	// their controllers are set up once, after the sources'.
	SharedParts []plugin.SharedDeclaration
}

// Reconciler reconciles the objects of one source.
type Reconciler struct {
	source   plugin.Source
	declared plugin.Declaration
	kind     string // the source's kind, set up with the manager
	sink     plugin.Sink
	recorder events.EventRecorder
	defaults engine.Defaults
	claims   hostClaims
	policy   hostpolicy.Policy
	nsLabels func(ctx context.Context, namespace string) (map[string]string, error)

	// backoff paces retries of causes that may fix themselves (a missing Service or
	// tunnel) without logging them as errors: exponential per object, up to 5 minutes.
	backoff workqueue.TypedRateLimiter[reconcile.Request]
	waiting *tunnelWaiters
	seen    *observations
}

// NewReconciler returns the reconciler of one source.
func NewReconciler(source plugin.Source, deps Deps) *Reconciler {
	all := deps.Sources
	if len(all) == 0 {
		all = []plugin.Source{source}
	}
	return &Reconciler{
		source:   source,
		declared: source.Declare(),
		sink:     deps.Sink,
		recorder: limitNotes(deps.Recorder),
		defaults: deps.Defaults,
		claims:   newHostClaims(all, deps.Sink),
		policy:   deps.HostPolicy,
		nsLabels: deps.NamespaceLabels,
		backoff:  workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 5*time.Minute),
		waiting:  &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}},
		seen:     &observations{source: source.Name(), objects: map[types.NamespacedName]observation{}},
	}
}

// UpToDateMessage is the debug line of a reconcile whose plan was empty, logged after
// its last write: what a test waits for to know that a change was looked at.
const UpToDateMessage = "up to date"

// Reconcile implements reconcile.Reconciler. It is level-based: it looks at the object
// as it is now and makes what the sink keeps match, whatever happened before.
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
	if res.Origin == nil || res.Deleting {
		// Deleted, or being deleted: with owner references, the garbage collector
		// removes what it owned (or orphans it, if the deletion says so), and writing
		// now would recreate what a foreground deletion just removed. A sink without
		// them has what the object kept removed here, once the object is gone from the
		// cache: a deletion, not a miss, since the cache has synced.
		r.seen.forget(req.NamespacedName)
		r.waiting.forget(req.NamespacedName)
		r.backoff.Forget(req)
		if res.Origin == nil && !r.sink.Features().GarbageCollected {
			return reconcile.Result{}, r.release(ctx, route.Origin{Kind: r.kind, Namespace: req.Namespace, Name: req.Name})
		}
		return reconcile.Result{}, nil
	}
	origin := *res.Origin
	rejections := res.Rejections
	routes := res.Routes
	if !res.Managed {
		routes = nil
	}
	// One view of the sink's features, the org's domains included, for the whole
	// reconcile: the host an override publishes depends on the domains, and the host
	// policy, ownership and what is published must be decided on the same host, even
	// when a refresh of the domains lands in between.
	features := r.sink.Features()
	routes, notAllowed, err := r.allowedHosts(ctx, origin, routes, features.Domains)
	if err != nil {
		return reconcile.Result{}, err
	}
	rejections = append(rejections, notAllowed...)

	existing, err := r.sink.Current(ctx, origin)
	if err != nil {
		return reconcile.Result{}, r.sinkFailed(ctx, res, err)
	}
	// Owners of every host it would publish or keeps, its tunnel missing or not: a held
	// host an older object publishes is let go either way.
	owners, err := r.claims.owners(ctx, origin, hostsOf(routes, existing, features.Domains))
	if err != nil {
		return reconcile.Result{}, err
	}
	routes, tunnelRejections, dropped, notReady, err := r.checkTunnels(ctx, req.NamespacedName, routes)
	if err != nil {
		return reconcile.Result{}, r.sinkFailed(ctx, res, err)
	}
	rejections = append(rejections, tunnelRejections...)
	// refused are the hosts, or the whole object, that are not published for it,
	// whoever refused them: its status says so too (decideStatus). The source's
	// refusals of the object as a whole are already in its parents' conditions.
	refused := slices.Concat(dropped, notAllowed)

	desired, engineRejections := engine.Desired(engine.Input{
		Routes: routes, Features: features, Defaults: r.defaults, Owners: owners,
	})
	desired, unconfirmed, err := confirmFirstPublish(ctx, res.Confirm, desired, existing)
	if err != nil {
		return reconcile.Result{}, err
	}
	rejections = append(rejections, engineRejections...)
	rejections = append(rejections, unconfirmed...)
	refused = append(refused, unconfirmed...)
	refused = append(refused, notPublished(hostRejections(res.Rejections), desired)...)
	refused = append(refused, notPublished(engineRejections, desired)...)
	plan := engine.Calculate(origin, desired, existing, rejections, owners)
	rejections = append(rejections, plan.Kept...)
	applied, applyErr := r.sink.Apply(ctx, origin, plan)
	r.reportApplied(ctx, origin, applied)
	if applyErr != nil {
		return reconcile.Result{}, r.sinkFailed(ctx, res, applyErr)
	}
	rejections = append(rejections, applied.Rejections...)
	// A resource kept for a refused replacement is still published: the refusal
	// itself is what the status reports.
	refused = append(refused, slices.DeleteFunc(slices.Clone(applied.Rejections), func(rj route.Rejection) bool {
		return rj.Reason == pic.ReasonReplacementRefused
	})...)

	live := served(existing, applied)
	r.report(ctx, origin, rejections, append(slices.Clone(res.Notices), notReady...), live)
	if res.OwnsStatus {
		if err := r.source.WriteStatus(ctx, req.NamespacedName, decideStatus(res, refused, publishedHostnames(live))); err != nil {
			return reconcile.Result{}, err
		}
	}
	if plan.Empty() {
		// Once every write of the reconcile, its status's included, has been sent.
		logger.V(1).Info(UpToDateMessage, "resources", len(desired))
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

// allowedHosts drops the routes whose published host the host policy does not let the
// object's namespace publish, with a HostNotAllowed rejection each: not held, so what
// was published for such a host goes. A TCP or UDP port is not a host: the policy does
// not concern it. An error reading the namespace fails the reconcile, which removes
// nothing. domains are the sink's, as the rest of the reconcile sees them.
func (r *Reconciler) allowedHosts(ctx context.Context, origin route.Origin, routes []route.Route, domains []string) ([]route.Route, []route.Rejection, error) {
	if !r.policy.Enabled() {
		return routes, nil, nil
	}
	var nsLabels map[string]string
	if r.policy.NeedsLabels() && r.nsLabels != nil {
		var err error
		if nsLabels, err = r.nsLabels(ctx, origin.Namespace); err != nil {
			return nil, nil, fmt.Errorf("read the labels of namespace %s for the host policy: %w", origin.Namespace, err)
		}
	}
	kept := routes[:0:0]
	var refused []route.Rejection
	for _, rt := range routes {
		if rt.Raw() {
			kept = append(kept, rt)
			continue
		}
		published := engine.PublishedHost(rt, domains)
		allowed, patterns := r.policy.Allows(origin.Namespace, nsLabels, published)
		if allowed {
			kept = append(kept, rt)
			continue
		}
		may := "no host"
		if len(patterns) > 0 {
			may = "only " + strings.Join(patterns, ", ")
		}
		refused = append(refused, route.Rejection{Origin: rt.Origin, Host: rt.Host, Reason: pic.ReasonHostNotAllowed,
			Message: fmt.Sprintf("host %s is not published: the hostPolicy of PIC's configuration lets namespace %s publish %s", published, origin.Namespace, may)})
	}
	return kept, refused, nil
}

// NamespaceLabels reads a namespace's labels through c, for Deps.NamespaceLabels. A
// namespace that does not exist has none: its objects are being deleted with it.
func NamespaceLabels(c client.Reader) func(ctx context.Context, namespace string) (map[string]string, error) {
	return func(ctx context.Context, namespace string) (map[string]string, error) {
		var ns corev1.Namespace
		if err := c.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		return ns.Labels, nil
	}
}

// release removes what the sink keeps for an object that is gone.
func (r *Reconciler) release(ctx context.Context, gone route.Origin) error {
	existing, err := r.sink.Current(ctx, gone)
	if err != nil || len(existing) == 0 {
		return err
	}
	applied, err := r.sink.Apply(ctx, gone, engine.Calculate(gone, nil, existing, nil, nil))
	r.reportApplied(ctx, gone, applied)
	return err
}

// confirmFirstPublish has the source confirm the desired resources whose host the sink
// holds nothing for yet (plugin.Result.Confirm), and drops those it refuses: their first
// write waits. Asked once the engine has decided, it reads the API server only for what
// would be created now, not for a host refused anyway. A host already published is not
// asked about: what the sink holds for it follows the cache, which the watches keep
// current.
func confirmFirstPublish(ctx context.Context, confirm func(context.Context, []string) ([]route.Rejection, error), desired []engine.Resource, existing []engine.Existing) ([]engine.Resource, []route.Rejection, error) {
	if confirm == nil {
		return desired, nil, nil
	}
	var first []string
	for _, d := range desired {
		published := slices.ContainsFunc(existing, func(e engine.Existing) bool { return e.Host == d.Host })
		if !published && !slices.Contains(first, d.Host) {
			first = append(first, d.Host)
		}
	}
	if len(first) == 0 {
		return desired, nil, nil
	}
	waiting, err := confirm(ctx, first)
	if err != nil || len(waiting) == 0 {
		return desired, nil, err
	}
	kept := slices.DeleteFunc(slices.Clone(desired), func(d engine.Resource) bool {
		return slices.ContainsFunc(waiting, func(rj route.Rejection) bool { return rj.Host == d.Host })
	})
	return kept, waiting, nil
}

// checkTunnels drops the routes whose tunnel does not exist, holding what exists for
// them (one rejection per tunnel, for events; one per dropped host, for the status),
// and says which tunnels exist but are not Ready yet. Routes through a tunnel
// that is not Ready are still written: the sink's world waits for the tunnel itself,
// and the route is live the moment the tunnel is.
func (r *Reconciler) checkTunnels(ctx context.Context, key types.NamespacedName, routes []route.Route) (kept []route.Route, rejections, dropped []route.Rejection, notReady []route.Notice, err error) {
	found := map[route.TunnelRef]bool{}
	missing := map[route.TunnelRef]route.Rejection{}
	for _, rt := range routes {
		exists, seen := found[rt.Tunnel]
		if !seen {
			check, err := r.sink.Tunnel(ctx, rt.Tunnel)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			switch check.State {
			case plugin.TunnelNotFound:
				rj := route.Rejection{Origin: rt.Origin, Reason: pic.ReasonTunnelNotFound, Hold: true, Retry: true, Message: check.Message}
				rejections = append(rejections, rj)
				missing[rt.Tunnel] = rj
			case plugin.TunnelNotReady:
				notReady = append(notReady, route.Notice{Origin: rt.Origin, Reason: pic.ReasonTunnelNotReady, Message: check.Message})
			}
			exists = check.State != plugin.TunnelNotFound
			found[rt.Tunnel] = exists
			r.waiting.set(rt.Tunnel, key, check.State != plugin.TunnelReady)
		}
		if exists {
			kept = append(kept, rt)
			continue
		}
		rj := missing[rt.Tunnel]
		rj.Host = rt.Host
		dropped = append(dropped, rj)
	}
	return kept, rejections, dropped, notReady, nil
}

// notPublished are the rejections of hosts that have no desired resource: a rejection
// of a host that is published all the same (degraded: PathRoutingUnsupported) refuses
// nothing.
func notPublished(rejections []route.Rejection, desired []engine.Resource) []route.Rejection {
	var out []route.Rejection
	for _, rj := range rejections {
		if rj.Host == "" || !slices.ContainsFunc(desired, func(d engine.Resource) bool { return d.Host == rj.Host }) {
			out = append(out, rj)
		}
	}
	return out
}

// hostRejections are the rejections that name a host.
func hostRejections(rejections []route.Rejection) []route.Rejection {
	var out []route.Rejection
	for _, rj := range rejections {
		if rj.Host != "" {
			out = append(out, rj)
		}
	}
	return out
}

// hostsOf are the published hosts whose owner matters to an object: those it would
// publish (after its overrides, split against the sink's domains), and those it keeps
// a resource for.
func hostsOf(routes []route.Route, existing []engine.Existing, domains []string) []string {
	var hosts []string
	for _, rt := range routes {
		if h := engine.PublishedHost(rt, domains); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	for _, e := range existing {
		if h := e.ClaimKey(); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// served is what exists for the object after the plan was applied, with the status the
// operator last reported (none yet for what was just created).
func served(existing []engine.Existing, applied plugin.Applied) []engine.Existing {
	gone := map[string]bool{}
	for _, d := range applied.Deleted {
		gone[d.Name] = true
	}
	var out []engine.Existing
	for _, e := range existing {
		if !gone[e.Name] {
			out = append(out, e)
		}
	}
	for _, c := range applied.Created {
		out = append(out, engine.Existing{Resource: c, Status: engine.Status{Phase: engine.PhasePending}})
	}
	return out
}

// publishedHostnames are the hosts Pangolin serves now, and those written but not
// confirmed yet (a new version of a served host, most often). A host in error is in
// neither.
func publishedHostnames(live []engine.Existing) plugin.Hostnames {
	var out plugin.Hostnames
	for _, e := range live {
		switch host := e.PublicHostname(); e.Status.Phase {
		case engine.PhaseReady:
			if !slices.Contains(out.Served, host) {
				out.Served = append(out.Served, host)
			}
		case engine.PhasePending:
			if !slices.Contains(out.Pending, host) {
				out.Pending = append(out.Pending, host)
			}
		}
	}
	return out
}
