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
	// Objects reads the sources' objects: the manager's cache, or render's fake cluster.
	Objects client.Reader
	// SinkDeclaration is the sink's declaration, read once (Sink.Declare): what Setup
	// wires for it.
	SinkDeclaration plugin.SinkDeclaration
	// Sources are all running sources, each declared once: a host is owned
	// cluster-wide, across kinds.
	Sources []plugin.Declared
	// HostPolicy is which hosts each namespace may publish (the configuration's
	// hostPolicy); NamespaceLabels reads a namespace's labels, for its selectors (nil
	// when no rule has one).
	HostPolicy      hostpolicy.Policy
	NamespaceLabels func(ctx context.Context, namespace string) (map[string]string, error)
	// SharedParts are the declarations of the parts several sources share
	// (plugin.Shared.Declarations), one for each part however many sources use it:
	// their controllers are set up once, after the sources'.
	SharedParts []plugin.SharedDeclaration
	// OnReconciled, when set, is told how each reconcile of a source's object ended,
	// once its last write (its status's included) was sent: what a test waits for to
	// know that a change was looked at.
	OnReconciled func(source string, key types.NamespacedName, ended Ending)
}

// Reconciler reconciles the objects of one source.
type Reconciler struct {
	source   plugin.Source
	declared plugin.Declaration
	objects  client.Reader
	kind     string // the source's kind, set up with the manager
	sink     plugin.Sink
	recorder events.EventRecorder
	defaults engine.Defaults
	claims   hostClaims
	policy   hostpolicy.Policy
	nsLabels func(ctx context.Context, namespace string) (map[string]string, error)

	// backoff paces retries of causes that may fix themselves (a missing Service or
	// tunnel) without logging them as errors: exponential per object, up to 5 minutes.
	backoff      workqueue.TypedRateLimiter[reconcile.Request]
	waiting      *tunnelWaiters
	seen         *observations
	onReconciled func(source string, key types.NamespacedName, ended Ending)
}

// NewReconciler returns the reconciler of one source.
func NewReconciler(source plugin.Declared, deps Deps) *Reconciler {
	all := deps.Sources
	if len(all) == 0 {
		all = []plugin.Declared{source}
	}
	return &Reconciler{
		source:       source.Source,
		declared:     source.Declaration,
		objects:      deps.Objects,
		sink:         deps.Sink,
		recorder:     limitNotes(deps.Recorder),
		defaults:     deps.Defaults,
		claims:       newHostClaims(all, deps.Sink),
		policy:       deps.HostPolicy,
		nsLabels:     deps.NamespaceLabels,
		backoff:      workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 5*time.Minute),
		waiting:      &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}},
		seen:         &observations{source: source.Name(), objects: map[types.NamespacedName]observation{}},
		onReconciled: deps.OnReconciled,
	}
}

// Reconcile implements reconcile.Reconciler. It is level-based: it looks at the object
// as it is now and makes what the sink keeps match, whatever happened before.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := time.Now()
	result, wrote, err := r.reconcile(ctx, req)
	ended := ending(wrote, err)
	observeReconcile(r.source.Name(), time.Since(start), result, err, ended)
	if r.onReconciled != nil {
		r.onReconciled(r.source.Name(), req.NamespacedName, ended)
	}
	return result, err
}

// reconcile reconciles one object, and reports whether it wrote to the sink.
func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, bool, error) {
	logger := log.FromContext(ctx)
	obj, err := r.object(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, false, err
	}
	if obj == nil || obj.GetDeletionTimestamp() != nil {
		// Deleted, or being deleted (a finalizer, or foreground deletion, keeps it a
		// while): it claims no host any more. With owner references, the garbage
		// collector removes what it owned (or orphans it, if the deletion says so), and
		// writing now would recreate what a foreground deletion just removed. A sink
		// without them has what the object kept removed here, once the object is gone
		// from the cache: a deletion, not a miss, since the cache has synced.
		r.seen.forget(req.NamespacedName)
		r.waiting.forget(req.NamespacedName)
		r.backoff.Forget(req)
		if obj == nil && !r.sink.Features().GarbageCollected {
			wrote, err := r.release(ctx, route.Origin{Kind: r.kind, Namespace: req.Namespace, Name: req.Name})
			return reconcile.Result{}, wrote, err
		}
		return reconcile.Result{}, false, nil
	}
	res, err := r.source.Routes(ctx, obj)
	if err != nil {
		return reconcile.Result{}, false, err
	}
	origin := *res.Origin
	o := newOutcome(res)
	routes := res.Routes
	if !res.Managed {
		routes = nil
	}
	existing, err := r.sink.Current(ctx, origin)
	if err != nil {
		return reconcile.Result{}, false, r.sinkFailed(ctx, res, err)
	}
	// One view of the sink's features, the org's domains included, for the whole
	// reconcile: the host an override publishes depends on the domains, and the host
	// policy, ownership and what is published must be decided on the same host, even
	// when a refresh of the domains lands in between. It is taken after Current, which
	// waits for the sink's first read: before it, a sink that learns the domains from
	// that read knows none, and every host would be refused and its resource deleted.
	features := r.sink.Features()
	// What exists is judged only for an object PIC manages: one it does not loses all
	// it published anyway, and gets no event about it.
	keptToJudge := existing
	if !res.Managed {
		keptToJudge = nil
	}
	routes, err = r.allowedClaims(ctx, origin, routes, keptToJudge, features.Domains, o)
	if err != nil {
		return reconcile.Result{}, false, err
	}
	// Owners of every host it would publish or keeps, its tunnel missing or not: a held
	// host an older object publishes is let go either way.
	owners, err := r.claims.owners(ctx, origin, hostsOf(routes, existing, features.Domains))
	if err != nil {
		return reconcile.Result{}, false, err
	}
	routes, err = r.checkTunnels(ctx, req.NamespacedName, routes, o)
	if err != nil {
		return reconcile.Result{}, false, r.sinkFailed(ctx, res, err)
	}

	desired, refused := engine.Desired(engine.Input{
		Routes: routes, Features: features, Defaults: r.defaults, Owners: owners,
	})
	o.refuse(stageEngine, refused...)
	desired, unconfirmed, err := confirmFirstPublish(ctx, res.Confirm, desired, existing)
	if err != nil {
		return reconcile.Result{}, false, err
	}
	o.refuse(stageConfirm, unconfirmed...)
	o.decided(desired)
	plan := engine.Calculate(origin, desired, existing, o.held(), owners)
	o.refuse(stagePlan, plan.Kept...)
	applied, applyErr := r.sink.Apply(ctx, origin, plan)
	r.reportApplied(ctx, origin, applied)
	if applyErr != nil {
		return reconcile.Result{}, false, r.sinkFailed(ctx, res, applyErr)
	}
	o.refuse(stageSink, applied.Rejections...)

	live := served(existing, applied)
	r.report(ctx, origin, o.warnings(), o.notices(), live)
	if res.OwnsStatus {
		if err := r.source.WriteStatus(ctx, obj, o.status(publishedHostnames(live))); err != nil {
			return reconcile.Result{}, false, err
		}
	}
	if plan.Empty() {
		// Once every write of the reconcile, its status's included, has been sent.
		logger.V(1).Info("up to date", "resources", len(desired))
	}
	return reconcile.Result{RequeueAfter: o.requeue(r.backoff, req)}, !plan.Empty(), nil
}

// allowedClaims drops the routes whose published host, or public port, the host policy
// does not let the object's namespace publish, with a HostNotAllowed (PortNotAllowed)
// refusal each in o. It judges what the sink keeps for the object too (existing): a
// host or port published before the policy changed, or the namespace's labels, is
// refused the same way when no route the policy allows still asks for it. Each refusal
// is Revoked: never held, nor kept by a refused move, so what was published there goes,
// whatever else the object's other refusals hold. An error reading the namespace fails
// the reconcile, which removes nothing. domains are the sink's, as the rest of the
// reconcile sees them.
func (r *Reconciler) allowedClaims(ctx context.Context, origin route.Origin, routes []route.Route, existing []engine.Existing, domains []string, o *outcome) ([]route.Route, error) {
	if !r.policy.Enabled() {
		return routes, nil
	}
	var nsLabels map[string]string
	if r.policy.NeedsLabels() && r.nsLabels != nil {
		var err error
		if nsLabels, err = r.nsLabels(ctx, origin.Namespace); err != nil {
			return nil, fmt.Errorf("read the labels of namespace %s for the host policy: %w", origin.Namespace, err)
		}
	}
	// judge refuses key (a host as written, or a port key) when the policy does not let
	// the namespace publish it, and reports whether it did. published is the host users
	// reach, for an HTTP resource.
	judge := func(key, published string, alreadyPublished bool) (refused bool) {
		reason, what := pic.ReasonHostNotAllowed, "host "+published
		allowed, patterns := false, []string(nil)
		if protocol, port, raw := route.ParsePortKey(key); raw {
			reason, what = pic.ReasonPortNotAllowed, fmt.Sprintf("public port %d/%s", port, protocol)
			allowed, patterns = r.policy.AllowsPort(origin.Namespace, nsLabels, string(protocol), port)
		} else {
			allowed, patterns = r.policy.Allows(origin.Namespace, nsLabels, published)
		}
		if allowed {
			return false
		}
		may := "none"
		if len(patterns) > 0 {
			may = "only " + strings.Join(patterns, ", ")
		}
		state := "is not published"
		if alreadyPublished {
			state = "is published no more"
		}
		o.refuse(stageHostPolicy, route.Rejection{Origin: origin, Host: key, Reason: reason, Revoked: true,
			Message: fmt.Sprintf("%s %s: the hostPolicy of PIC's configuration lets namespace %s publish %s", what, state, origin.Namespace, may)})
		return true
	}
	publishedOn := map[string]string{} // by host as written or port key: where it is published
	for _, e := range existing {
		publishedOn[e.Host] = e.ClaimKey()
	}
	judged := map[string]bool{} // hosts as written, and port keys, that a route names
	kept := routes[:0:0]
	for _, rt := range routes {
		claim, resolved := engine.ResolvedClaimKey(rt, domains)
		if !resolved {
			// The host users would reach cannot be told now (a domain the org does not
			// list at the moment): the engine refuses the route and holds what it
			// published, which is judged below on where it is published.
			kept = append(kept, rt)
			continue
		}
		judged[rt.Host] = true
		if !judge(rt.Host, claim, publishedOn[rt.Host] == claim) {
			kept = append(kept, rt)
		}
	}
	for _, e := range existing {
		if judged[e.Host] {
			continue // a route allowed moves it in place; a route refused revoked it
		}
		judged[e.Host] = true
		judge(e.Host, e.ClaimKey(), true)
	}
	return kept, nil
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

// release removes what the sink keeps for an object that is gone, and reports whether
// there was anything to remove.
func (r *Reconciler) release(ctx context.Context, gone route.Origin) (bool, error) {
	existing, err := r.sink.Current(ctx, gone)
	if err != nil || len(existing) == 0 {
		return false, err
	}
	applied, err := r.sink.Apply(ctx, gone, engine.Calculate(gone, nil, existing, nil, nil))
	r.reportApplied(ctx, gone, applied)
	return true, err
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

// checkTunnels drops the routes whose tunnel does not exist, with one refusal per
// tunnel in o, which holds what exists for them, and records in o the tunnels that
// exist but are not Ready yet. Routes through a tunnel that is not Ready are still
// written: the sink's world waits for the tunnel itself, and the route is live the
// moment the tunnel is.
func (r *Reconciler) checkTunnels(ctx context.Context, key types.NamespacedName, routes []route.Route, o *outcome) ([]route.Route, error) {
	type missing struct {
		rejection route.Rejection
		drops     []string
	}
	found := map[route.TunnelRef]bool{}
	var absent []route.TunnelRef
	byTunnel := map[route.TunnelRef]*missing{}
	var kept []route.Route
	for _, rt := range routes {
		exists, seen := found[rt.Tunnel]
		if !seen {
			check, err := r.sink.Tunnel(ctx, rt.Tunnel)
			if err != nil {
				return nil, err
			}
			switch check.State {
			case plugin.TunnelNotFound:
				absent = append(absent, rt.Tunnel)
				byTunnel[rt.Tunnel] = &missing{rejection: route.Rejection{Origin: rt.Origin, Reason: pic.ReasonTunnelNotFound, Hold: true, Retry: true, Message: check.Message}}
			case plugin.TunnelNotReady:
				o.tunnelNotReady(route.Notice{Origin: rt.Origin, Reason: pic.ReasonTunnelNotReady, Message: check.Message})
			}
			exists = check.State != plugin.TunnelNotFound
			found[rt.Tunnel] = exists
			r.waiting.set(rt.Tunnel, key, check.State != plugin.TunnelReady)
		}
		if exists {
			kept = append(kept, rt)
			continue
		}
		byTunnel[rt.Tunnel].drops = append(byTunnel[rt.Tunnel].drops, rt.Host)
	}
	for _, t := range absent {
		o.tunnelMissing(byTunnel[t].rejection, byTunnel[t].drops)
	}
	return kept, nil
}

// hostsOf are the published hosts whose owner matters to an object: those it would
// publish (after its overrides, split against the sink's domains), and those it keeps
// a resource for.
func hostsOf(routes []route.Route, existing []engine.Existing, domains []string) []string {
	var hosts []string
	for _, rt := range routes {
		if h := engine.ClaimKey(rt, domains); !slices.Contains(hosts, h) {
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
		switch host := e.ReportedHost(); e.Status.Phase {
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
