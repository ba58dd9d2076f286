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
	backoff workqueue.TypedRateLimiter[reconcile.Request]
	waiting *tunnelWaiters
	seen    *observations
}

// NewReconciler returns the reconciler of one source.
func NewReconciler(source plugin.Declared, deps Deps) *Reconciler {
	all := deps.Sources
	if len(all) == 0 {
		all = []plugin.Declared{source}
	}
	return &Reconciler{
		source:   source.Source,
		declared: source.Declaration,
		objects:  deps.Objects,
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
	obj, err := r.object(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
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
			return reconcile.Result{}, r.release(ctx, route.Origin{Kind: r.kind, Namespace: req.Namespace, Name: req.Name})
		}
		return reconcile.Result{}, nil
	}
	res, err := r.source.Routes(ctx, obj)
	if err != nil {
		return reconcile.Result{}, err
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
		if err := r.source.WriteStatus(ctx, obj, decideStatus(res, refused, publishedHostnames(live))); err != nil {
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

// regarding is the object events are about.
func regarding(o route.Origin) *corev1.ObjectReference {
	apiVersion := o.Version
	if o.Group != "" {
		apiVersion = o.Group + "/" + o.Version
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

// reportApplied emits a Normal event and a log line for every write.
func (r *Reconciler) reportApplied(ctx context.Context, origin route.Origin, applied plugin.Applied) {
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
			desc := r.sink.Describe(d)
			logger.Info(strings.ToLower(c.reason)+" "+desc.Kind, "resource", desc.Name, "host", publicHost(d), "via", desc.Tunnel)
			r.recorder.Eventf(regarding(origin), desc.Object, corev1.EventTypeNormal, c.reason, c.action,
				"%s %s %s for %s %s (%s)", c.reason, desc.Kind, desc.Name, hostOrPort(d), publicHost(d), desc.Tunnel)
		}
	}
}

// hostOrPort is what events call what r publishes: a host, or a TCP or UDP port.
func hostOrPort(r engine.Resource) string {
	if r.Raw() {
		return "port"
	}
	return "host"
}

// publicHost is the host users reach for r: the source host when the sink no longer
// knows the domain it was published under (a resource deleted after its domain went).
func publicHost(r engine.Resource) string {
	if r.Domain == "" {
		return r.Host
	}
	return r.PublicHost()
}

// report emits a Warning event for each rejection and a Normal one for each notice (a
// tunnel not Ready yet among them), once per message: what the previous reconcile reported
// already is not repeated by a resync, so events keep their meaning and a steady state
// writes nothing; a message that changed is reported again, with its new text.
func (r *Reconciler) report(ctx context.Context, origin route.Origin, rejections []route.Rejection, notices []route.Notice, live []engine.Existing) {
	logger := log.FromContext(ctx)
	var reports []report
	for _, rj := range rejections {
		reports = append(reports, report{eventType: corev1.EventTypeWarning, reason: rj.Reason, host: rj.Host, message: rj.Message})
	}
	for _, n := range notices {
		reports = append(reports, report{eventType: corev1.EventTypeNormal, reason: n.Reason, message: n.Message})
	}
	slices.SortFunc(reports, func(a, b report) int { return strings.Compare(a.key(), b.key()) })
	reports = slices.Compact(reports)

	fresh, transitions := r.seen.record(origin.NamespacedName(), reports, live)
	for _, e := range transitions {
		desc := r.sink.Describe(e.Resource)
		switch e.Status.Phase {
		case engine.PhaseReady:
			logger.Info("exposed", "resource", desc.Name, "host", publicHost(e.Resource), "url", e.Status.URL)
			r.recorder.Eventf(regarding(origin), desc.Object, corev1.EventTypeNormal, pic.ReasonExposed, "Publish", "%s", exposedMessage(e, desc))
		case engine.PhaseError:
			// Only pangolin-operator reports an error of its own; direct mode's refusals
			// are rejections.
			logger.Info("pangolin error", "resource", desc.Name, "host", publicHost(e.Resource), "message", e.Status.Message)
			r.recorder.Eventf(regarding(origin), desc.Object, corev1.EventTypeWarning, pic.ReasonPangolinError, "Publish",
				"pangolin-operator could not publish %s (%s %s): %s", publicHost(e.Resource), desc.Kind, desc.Name, e.Status.Message)
		}
	}
	for _, rp := range reports {
		if !fresh[rp.key()] {
			if rp.eventType == corev1.EventTypeWarning {
				logger.V(1).Info("not publishing", "host", rp.host, "reason", rp.reason, "message", rp.message)
			}
			continue
		}
		if rp.eventType == corev1.EventTypeWarning {
			logger.Info("not publishing", "host", rp.host, "reason", rp.reason, "message", rp.message)
		} else {
			logger.Info(rp.message, "reason", rp.reason)
		}
		r.recorder.Eventf(regarding(origin), nil, rp.eventType, rp.reason, "Validate", "%s", rp.message)
	}
}

// exposedMessage is the Exposed event's note. A TCP or UDP port has no URL (the sink
// knows none: it is reached at the Pangolin server's address), so it names the port key
// alone: "tcp:5432 is served by Pangolin".
func exposedMessage(e engine.Existing, desc plugin.Description) string {
	if e.Status.URL == "" {
		return fmt.Sprintf("%s is served by Pangolin (%s %s)", e.Host, desc.Kind, desc.Name)
	}
	return fmt.Sprintf("%s is served by Pangolin at %s (%s %s)", e.Host, e.Status.URL, desc.Kind, desc.Name)
}

// sinkFailed returns err, which fails the reconcile: the controller retries it with
// backoff. When the sink says it is out of reach (plugin.IsUnreachable) and PIC manages
// the object, the object is told once while it lasts, whatever the messages of the
// retries; nothing was removed: the engine only deletes what Current read.
func (r *Reconciler) sinkFailed(ctx context.Context, res plugin.Result, err error) error {
	if ctx.Err() != nil || !res.Managed || !plugin.IsUnreachable(err) {
		return err
	}
	if r.seen.failed(res.Origin.NamespacedName()) {
		r.recorder.Eventf(regarding(*res.Origin), nil, corev1.EventTypeWarning, pic.ReasonSinkUnavailable, "Publish",
			"cannot publish now; retrying with backoff, and nothing is removed meanwhile: %v", err)
	}
	return err
}

// report is one event report makes about an object's state.
type report struct {
	eventType, reason, host, message string
}

func (rp report) key() string {
	return rp.eventType + "\x00" + rp.reason + "\x00" + rp.host + "\x00" + rp.message
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

func (w *tunnelWaiters) of(_ context.Context, t route.TunnelRef) []reconcile.Request {
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

// observation is kept for every managed object, so it holds slices rather than maps:
// at thousands of objects, three small maps each weighed more than the objects' cache.
type observation struct {
	// reported are the keys of what the last reconcile reported.
	reported []string
	// unreachable is set from a failure of the sink until a reconcile gets through.
	unreachable bool
	reasons     []string
	tunnels     []tunnelCount
	// phases are the operator's last verdicts: "Ready", or "Error: message".
	phases []resourcePhase
}

// tunnelCount is how many resources an object has served through a tunnel.
type tunnelCount struct {
	tunnel string
	n      int
}

type resourcePhase struct{ name, phase string }

func (o observation) phase(name string) string {
	for _, p := range o.phases {
		if p.name == name {
			return p.phase
		}
	}
	return ""
}

// record stores what this reconcile found, and returns the reports the previous one
// did not make (by key) and the resources whose operator verdict changed to Ready or
// Error.
func (o *observations) record(key types.NamespacedName, reports []report, live []engine.Existing) (map[string]bool, []engine.Existing) {
	var next observation
	for _, rp := range reports {
		next.reported = append(next.reported, rp.key())
		if rp.eventType == corev1.EventTypeWarning && !slices.Contains(next.reasons, rp.reason) {
			next.reasons = append(next.reasons, rp.reason)
		}
	}
	for _, e := range live {
		tunnel := e.Tunnel.String()
		if i := slices.IndexFunc(next.tunnels, func(t tunnelCount) bool { return t.tunnel == tunnel }); i >= 0 {
			next.tunnels[i].n++
		} else {
			next.tunnels = append(next.tunnels, tunnelCount{tunnel: tunnel, n: 1})
		}
		switch e.Status.Phase {
		case engine.PhaseReady:
			next.phases = append(next.phases, resourcePhase{e.Name, string(engine.PhaseReady)})
		case engine.PhaseError:
			next.phases = append(next.phases, resourcePhase{e.Name, string(engine.PhaseError) + ": " + e.Status.Message})
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.objects[key]
	o.apply(prev, -1)
	o.apply(next, +1)
	o.objects[key] = next
	fresh := map[string]bool{}
	for _, k := range next.reported {
		if !slices.Contains(prev.reported, k) {
			fresh[k] = true
		}
	}
	var transitions []engine.Existing
	for _, e := range live {
		if p := next.phase(e.Name); p != "" && p != prev.phase(e.Name) {
			transitions = append(transitions, e)
		}
	}
	return fresh, transitions
}

// failed records that the sink is out of reach for key, and reports whether that is
// news: the first failure since a reconcile got through. What was reported before stays
// recorded, so that a recovery does not report it again.
func (o *observations) failed(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	obs := o.objects[key]
	if obs.unreachable {
		return false
	}
	obs.unreachable = true
	o.objects[key] = obs
	return true
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
	for _, t := range obs.tunnels {
		managedResources.WithLabelValues(t.tunnel).Add(sign * float64(t.n))
	}
}
