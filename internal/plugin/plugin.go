// Package plugin holds the contracts between PIC's core and its adapters. A Source turns
// one kind of Kubernetes object into routes; a Sink makes the desired state real
// somewhere (PangolinResource objects, Pangolin's API). Adapters keep what only they
// know and declare the rest as data (Declaration, SinkDeclaration, Kinds): what they
// index, watch and run, and what their API kinds need (scheme, status, cache, RBAC).
// The core wires those declarations with controller-runtime's own handlers. The
// adapters live under sources/ and sinks/ and import this package; nothing here knows
// any of them. The composition root fills a Registry, by name.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Source is one kind of object that PIC turns into routes. A source reads; it never
// writes the objects PIC creates, only its own objects' status.
type Source interface {
	// Name is the source's configuration name: "ingress", "httproute".
	Name() string
	// Object is an empty object of the kind the source reconciles.
	Object() client.Object
	// Routes reads obj, an object of the source's kind the core got from the cache, as
	// Object returns it filled: it exists, and its deletion has not begun (the core
	// handles a gone or deleting object itself, and asks nothing of the source then).
	// The error is for infrastructure failures only (the cache, the API server): a
	// user's mistake is a Rejection.
	Routes(ctx context.Context, obj client.Object) (Result, error)
	// WriteStatus records status on obj, the object Routes was given, if it differs
	// from what obj records. The core calls it only when Result.OwnsStatus, once the
	// engine and the sink have spoken. A conflict (obj changed since it was read) is
	// an error: the object comes back, read afresh.
	WriteStatus(ctx context.Context, obj client.Object, status Status) error
	// Declare is what the core wires for the source: who claims which host, what else
	// brings its objects back, and its other controllers. It is data: the core reads it
	// once, when the source is built (DeclareAll).
	Declare() Declaration
}

// Declared is a source with its declaration, read once: the core wires and consults
// Declaration, never Declare again.
type Declared struct {
	Source
	Declaration Declaration
}

// DeclareAll reads the declaration of each of srcs, once.
func DeclareAll(srcs ...Source) []Declared {
	out := make([]Declared, len(srcs))
	for i, src := range srcs {
		out[i] = Declared{Source: src, Declaration: src.Declare()}
	}
	return out
}

// OriginOf is the origin of obj, an object of the kind gvk: how routes, rejections
// and claims name the object they come from.
func OriginOf(gvk schema.GroupVersionKind, obj client.Object) route.Origin {
	return route.Origin{
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), Generation: obj.GetGeneration(),
		Created: obj.GetCreationTimestamp().Time,
	}
}

// Declaration is what a source asks of the core, as data.
type Declaration struct {
	Claims Claims
	// Watches are the related kinds whose changes concern the source's objects.
	Watches []Watch
	// Controllers are the source's other reconcilers, in the order `render` runs them
	// after the source's own objects. One that several sources need (the status of the
	// Gateways routes of every kind attach to) belongs to a part they share (Share).
	Controllers []Controller
	// Runnables run with the manager, in a cluster only (not in `render`).
	Runnables []manager.Runnable
}

// Claims are how the core learns who claims a host, to settle its ownership and to
// wake the claimants when it moves.
type Claims struct {
	// Hosts returns the hosts an object of the source's kind claims: the hosts users
	// would reach, after its domain-name and subdomain overrides, for any domains of
	// the Pangolin org (sources.ClaimedHosts), whether or not they are valid to publish;
	// a TCP or UDP port's key.
	Hosts func(ctx context.Context, obj client.Object) []string
	// Claimants returns the source's objects that claim host (a published host, as
	// Hosts gives them), from an index: each claim's origin, and whether its deletion
	// has begun. It may name an object that publishes another host under the org's
	// actual domains: the core compares what the sink keeps for it.
	Claimants func(ctx context.Context, host string) ([]engine.Claim, error)
	// Holder returns the claim of the source's object that a sink names as holding a
	// resource (Sink.Holders), read from the cache: its origin, and whether its deletion
	// has begun. ok is false when holder is not of the source's kind, or when no object
	// of that kind, namespace and name exists with holder's UID (any UID when the sink
	// does not know it): a gone object claims nothing.
	Holder func(ctx context.Context, holder route.Origin) (claim engine.Claim, ok bool, err error)
	// Movers are related kinds whose objects decide which hosts claimants claim (a
	// Gateway's listener hostnames): a change to one concerns the claimants, of every
	// kind, of the hosts it named before and names now.
	Movers []HostMover
}

// HostMover is a kind whose objects move hosts between claimants.
type HostMover struct {
	Object client.Object
	Hosts  func(obj client.Object) []string
}

// Watch is a related kind, and which objects a change to one of its objects concerns.
type Watch struct {
	Object client.Object
	// Requests maps a changed object to the objects it concerns.
	Requests handler.MapFunc
	// IgnoreStatus drops status-only updates: PIC writes the status of this kind, and
	// its own writes concern no one.
	IgnoreStatus bool
}

// Controller is a reconciler of the objects of one kind, with what brings them back.
type Controller struct {
	// Name names the controller in logs and metrics.
	Name       string
	Object     client.Object
	Reconciler reconcile.Reconciler
	// IgnoreStatus drops status-only updates of Object (PIC writes its status).
	IgnoreStatus bool
	Watches      []Watch
	// Tunnels, when set, maps a tunnel the sink reports changed to the objects it
	// concerns (a Gateway's Programmed condition follows its tunnel).
	Tunnels func(ctx context.Context, tunnel route.TunnelRef) []reconcile.Request
}

// SourceDeps are what a source is built with, in a cluster and in `render` alike.
type SourceDeps struct {
	// Client reads from the manager's cache, or from render's fake cluster.
	Client client.Client
	// APIReader reads from the API server, past the cache: what PIC does not cache
	// (the data of the Secrets an AccessPolicy references). Nil reads through Client.
	APIReader client.Reader
	// Mapper says which APIs the cluster serves; nil in `render`, where every API a
	// source reads counts as installed.
	Mapper meta.RESTMapper
	// Tunnels is the sink's word on tunnels, for what the source reports about them
	// itself (a Gateway's Programmed condition): a source never reads a sink's objects.
	Tunnels TunnelChecker
	Config  *config.Config
	// Shared are the parts the sources of this start share (Share), built by the first
	// source that needs one; the core wires what each declares once.
	Shared *Shared
}

// SourceFactory builds a source.
type SourceFactory struct {
	// Indexes are the cache indexes the source reads through. They are known from the
	// configuration alone, before any client exists: their functions read nothing.
	Indexes func(cfg *config.Config) []Index
	// Kinds is what the source's API kinds need of the core before anything runs.
	Kinds Kinds
	// New builds the source. It returns an error wrapping ErrUnavailable when the
	// source's API is not installed.
	New func(ctx context.Context, deps SourceDeps) (Source, error)
}

// TunnelChecker says whether routes can go through a tunnel: a Sink's Tunnel.
type TunnelChecker interface {
	Tunnel(ctx context.Context, ref route.TunnelRef) (TunnelCheck, error)
}

// Result is what a source makes of one of its objects.
type Result struct {
	// Origin is the object's origin (OriginOf).
	Origin *route.Origin
	// Managed is false when PIC must not publish the object: another class, opted out.
	// Whatever PIC created for it is then removed.
	Managed bool
	// OwnsStatus is true when PIC is the object's controller (its class is PIC's), so
	// that writing its status fights no other controller.
	OwnsStatus bool
	// Routes are the hosts that can be published; Rejections say what cannot, and why.
	Routes []route.Route
	// MergedInto are the hosts the object is served under through another object that
	// owns them and merges its rules (an older HTTPRoute on the same Gateway): not
	// among Routes, and not refused.
	MergedInto []string
	Rejections []route.Rejection
	// Notices are facts users should know that stop nothing (spec.tls is not used):
	// Normal events, once per change.
	Notices []route.Notice
	// Parents are the source's verdicts on each parent the object attaches to (an
	// HTTPRoute's Gateways), before the engine and the sink have spoken. The core folds
	// their refusals in (Status).
	Parents []ParentStatus
	// Confirm, when set, checks hosts of Routes against the API server, past the cache,
	// before their first write: the cache may not have received yet what decides how a
	// host is protected (an AccessPolicy applied together with the object). It returns a
	// rejection (Hold, Retry) for each host that must wait. The core calls it only for
	// the hosts it is about to publish and the sink holds nothing for yet, since it
	// costs a live read.
	Confirm func(ctx context.Context, hosts []string) ([]route.Rejection, error)
}

// Status is what PIC writes on an object whose status it owns.
type Status struct {
	// Generation is the object's generation the status describes.
	Generation int64
	Hostnames  Hostnames
	Parents    []ParentStatus
}

// ParentStatus is the conditions of one parent an object attaches to.
type ParentStatus struct {
	// Parent is the source's own key for the parent (its parentRef).
	Parent     string
	Conditions []Condition
}

// Condition is one condition, in Kubernetes' terms (metav1.Condition without times).
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// Hostnames are the public hostnames of what an object publishes; a TCP or UDP port is
// its port key, "tcp:5432" (route.ParsePortKey reads it).
type Hostnames struct {
	// Served are confirmed: Pangolin serves them.
	Served []string
	// Pending are written and not confirmed yet, most often a new version of a host
	// Pangolin already serves: an address already shown for one stays, so that an edit
	// does not make the object look unpublished (Argo CD's Progressing) while Pangolin
	// keeps serving it. A host the sink reports an error for is in neither list.
	Pending []string
}

// Sink makes the desired state real, and reads back what it made.
type Sink interface {
	// Features is what the sink can express. The core reads it after Current, whose
	// first call waits for the sink's first read of what it keeps: what a sink learns
	// from that read (the org's domains) is known by then.
	Features() engine.Features
	// Tunnel says whether routes can go through a tunnel, in the sink's own terms.
	Tunnel(ctx context.Context, ref route.TunnelRef) (TunnelCheck, error)
	// Current returns what the sink keeps for owner: only what it created for it.
	Current(ctx context.Context, owner route.Origin) ([]engine.Existing, error)
	// Holders returns the objects the sink keeps a resource for whose ClaimKey is host
	// (a published host, or a port key), whatever hosts those objects name now: an
	// object whose move away from host was refused, or whose host is held, still holds
	// it. Each origin carries its kind, namespace and name, and its UID when the sink
	// knows it. It answers from the sink's mirror (what it keeps in memory of what it
	// published: PIC's cache of PangolinResources, the direct sink's copy of Pangolin),
	// never by listing every object, and fails rather than answer from a mirror it could
	// not fill: a holder left out would let a younger object publish the host beside it.
	Holders(ctx context.Context, host string) ([]route.Origin, error)
	// Apply carries out plan for owner. It stops at the first infrastructure error,
	// which the caller retries with backoff; what was done before it is in Applied.
	Apply(ctx context.Context, owner route.Origin, plan engine.Plan) (Applied, error)
	// Describe names a resource in events and logs as users find it in the sink's world.
	Describe(r engine.Resource) Description
	// Declare is what the core wires for the sink: which changes in its world concern
	// which source objects.
	Declare() SinkDeclaration
}

// Description names a resource, and the tunnel it goes through, as users find them in
// the sink's world: events and logs say "Created <Kind> <Name> for host <public host>
// (<Tunnel>)".
type Description struct {
	// Kind is the resource's kind there: "PangolinResource", "Pangolin resource".
	Kind string
	// Name is what users search for: the PangolinResource's name, the Pangolin
	// resource's niceId.
	Name string
	// Tunnel names the tunnel as the sink's world does: "tunnel prod/edge" for a
	// PangolinTunnel, "site murky-merriams-shrew" for a Pangolin site, which has no
	// namespace.
	Tunnel string
	// Object is the Kubernetes object that holds the resource, if one does.
	Object *corev1.ObjectReference
}

// SinkDeclaration is what a sink asks of the core, as data.
type SinkDeclaration struct {
	// Resources are the Kubernetes kinds the sink keeps for source objects.
	Resources []ResourceWatch
	// Tunnels are the Kubernetes kinds that are tunnels.
	Tunnels []TunnelWatch
	// Changes, when set, returns a new channel that hears the changes the sink sees
	// outside Kubernetes (Pangolin's API); the core asks one per controller, before
	// the manager starts.
	Changes func() <-chan event.TypedGenericEvent[Change]
	// Runnables run with the manager (a refresh of what the sink keeps).
	Runnables []manager.Runnable
}

// ResourceWatch is a kind of object the sink keeps for source objects (owners).
type ResourceWatch struct {
	Object client.Object
	// Owners are the source objects an object is kept for.
	Owners func(obj client.Object) []route.Origin
	// Hosts are the published hosts (engine.Resource's ClaimKey) an object serves:
	// its coming or going changes who serves them.
	Hosts func(obj client.Object) []string
	// WrittenBy reports whether an event for obj (deleted: its deletion) shows the
	// sink's own write for an owner, and which: that owner's reconcile knows what it
	// did, and is not brought back for it. Nil when the sink cannot tell.
	WrittenBy func(obj client.Object, deleted bool) (types.UID, bool)
}

// TunnelWatch is a kind of object that is a tunnel.
type TunnelWatch struct {
	Object client.Object
	Tunnel func(obj client.Object) route.TunnelRef
}

// Change is what a sink saw change outside Kubernetes.
type Change struct {
	// Owners: what the sink keeps for these objects changed.
	Owners []route.Origin
	// Hosts: who serves these published hosts may have changed; their claimants look
	// again.
	Hosts []string
	// Tunnels: these tunnels appeared, changed or went.
	Tunnels []route.TunnelRef
}

// SinkDeps are what a sink is built with.
type SinkDeps struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server, past the cache.
	APIReader client.Reader
	Config    *config.Config
}

// SinkFactory builds a sink.
type SinkFactory struct {
	// Indexes are the cache indexes the sink reads through; nil for none.
	Indexes func(cfg *config.Config) []Index
	// Kinds is what the sink's API kinds need of the core before anything runs.
	Kinds Kinds
	// Cache says how the manager's cache holds the objects the sink reads, before the
	// manager exists; nil when the defaults do.
	Cache func(cfg *config.Config) map[client.Object]cache.ByObject
	New   func(ctx context.Context, deps SinkDeps) (Sink, error)
	// Offline builds the sink for `manager render`: over render's fake cluster, or
	// against a simulation of what it publishes into. Nil for a sink that cannot run
	// without a cluster.
	Offline func(ctx context.Context, deps OfflineDeps) (OfflineSink, error)
}

// OfflineSink is a sink as `manager render` runs it.
type OfflineSink interface {
	Sink
	// Writes counts the writes made outside render's fake cluster (which counts its
	// own) since the last call.
	Writes() int
	// Published is what the sink holds once the run is over, as render prints it: one
	// YAML document each, in a stable order, with no secret value in them.
	Published(ctx context.Context) ([]any, error)
}

// OfflineDeps are what an offline sink is built with.
type OfflineDeps struct {
	// Client is render's fake cluster, holding the manifests.
	Client  client.Client
	Config  *config.Config
	Options OfflineOptions
}

// OfflineOptions are what `manager render` knows of the world a sink publishes into.
// Each sink reads those that concern it, and refuses one it was given that it cannot
// use, so that a flag is never silently ignored.
type OfflineOptions struct {
	// CRDVariant is the pangolin-operator CRD variant written for: "fork" or
	// "original" (--crd-variant).
	CRDVariant string
	// Domains are the Pangolin org's domains; DomainsGiven is true when the user gave
	// them (--domain), false when render derived them from the hosts.
	Domains      []string
	DomainsGiven bool
	// AssumeTunnels makes every tunnel the manifests do not hold exist, and be Ready.
	AssumeTunnels bool
}

// TunnelState is whether a tunnel can carry routes.
type TunnelState string

const (
	TunnelReady    TunnelState = "Ready"
	TunnelNotReady TunnelState = "NotReady" // it exists: routes are written, and served once it is Ready
	TunnelNotFound TunnelState = "NotFound" // routes are neither published nor removed
)

// TunnelCheck is a tunnel's state, with the message users see when it is not Ready.
type TunnelCheck struct {
	State   TunnelState
	Message string
}

// Applied is what Apply did, for events and logs.
type Applied struct {
	Created, Updated, Deleted []engine.Resource
	// Rejections are desired resources the sink refused to write (their name or host is
	// taken by something PIC does not own), with why.
	Rejections []route.Rejection
}

// Kinds is what an adapter declares of the API kinds it reads and writes, as data known
// before any client exists: the manager's scheme and cache, and render's fake cluster,
// are built from every registered adapter's, never from a list of the core's own.
type Kinds struct {
	// Scheme adds the Go types of the kinds the adapter reads or writes that client-go's
	// scheme lacks (the Gateway API's, PIC's and the operator's CRDs); nil for none.
	Scheme func(*runtime.Scheme) error
	// Status are the kinds whose status the adapter writes, or reads as another
	// controller writes it. Render's fake cluster makes their status a subresource, as
	// a cluster does: an update leaves the status alone, and a status update the spec.
	Status []client.Object
	// Trimmed are kinds the adapter only reads, or writes only by patch: the cache
	// drops kubectl's last-applied annotation (often as large as the object) from them.
	// A kind any adapter writes whole from the cache must be in no adapter's Trimmed:
	// the write would drop the annotation from the cluster too.
	Trimmed []client.Object
	// Read are the kinds the adapter reads from the cluster, its own included: `manager
	// render` loads the objects of these kinds from its input, and skips the others.
	Read []ReadKind
	// RBAC are the ClusterRoles the adapter needs besides config/rbac/role.yaml, each
	// named by its directory under config/rbac ("gateway-api"). A sink's directory holds,
	// under a source's directory name, what the sink needs on that source's kinds
	// ("pangolinresource/gateway-api"). config/rbac/adapters.yaml lists every registered
	// adapter's, for the installation's tests, which may not import adapters.
	RBAC []string
}

// ReadKind is a kind an adapter reads.
type ReadKind struct {
	Object client.Object
	// ClusterScoped: its objects have no namespace.
	ClusterScoped bool
}

// And is k with the kinds of others too: what a source declares itself, with what a
// part it shares declares (sources.PolicyKinds).
func (k Kinds) And(others ...Kinds) Kinds {
	out := Kinds{Scheme: k.Scheme, Status: slices.Clone(k.Status), Trimmed: slices.Clone(k.Trimmed), Read: slices.Clone(k.Read), RBAC: slices.Clone(k.RBAC)}
	for _, o := range others {
		if o.Scheme != nil {
			if prev := out.Scheme; prev != nil {
				add := o.Scheme
				out.Scheme = func(s *runtime.Scheme) error { return errors.Join(prev(s), add(s)) }
			} else {
				out.Scheme = o.Scheme
			}
		}
		out.Status = appendKinds(out.Status, o.Status...)
		out.Trimmed = appendKinds(out.Trimmed, o.Trimmed...)
		out.Read = appendReadKinds(out.Read, o.Read...)
		for _, dir := range o.RBAC {
			if !slices.Contains(out.RBAC, dir) {
				out.RBAC = append(out.RBAC, dir)
			}
		}
	}
	return out
}

// Registry is every source and sink PIC can run, by configuration name.
type Registry struct {
	Sources map[string]SourceFactory
	Sinks   map[string]SinkFactory
}

// kinds are the Kinds of every registered adapter, sources then sinks, each in the
// order of its name.
func (r Registry) kinds() []Kinds {
	var out []Kinds
	for _, name := range slices.Sorted(maps.Keys(r.Sources)) {
		out = append(out, r.Sources[name].Kinds)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Sinks)) {
		out = append(out, r.Sinks[name].Kinds)
	}
	return out
}

// Scheme is client-go's scheme with the kinds of every registered adapter (Kinds.Scheme),
// whether it runs or not: the kinds one adapter writes may be read by another (the
// AccessPolicies every source reads name HTTPRoutes), and render decodes every kind any
// adapter knows.
func (r Registry) Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("add client-go's kinds to the scheme: %w", err)
	}
	for _, k := range r.kinds() {
		if k.Scheme == nil {
			continue
		}
		if err := k.Scheme(s); err != nil {
			return nil, fmt.Errorf("add an adapter's kinds to the scheme: %w", err)
		}
	}
	return s, nil
}

// StatusKinds are the kinds of every registered adapter's Kinds.Status, each once.
func (r Registry) StatusKinds() []client.Object {
	var out []client.Object
	for _, k := range r.kinds() {
		out = appendKinds(out, k.Status...)
	}
	return out
}

// TrimmedKinds are the kinds of every registered adapter's Kinds.Trimmed, each once.
func (r Registry) TrimmedKinds() []client.Object {
	var out []client.Object
	for _, k := range r.kinds() {
		out = appendKinds(out, k.Trimmed...)
	}
	return out
}

// ReadKinds are the kinds of every registered adapter's Kinds.Read, each once.
func (r Registry) ReadKinds() []ReadKind {
	var out []ReadKind
	for _, k := range r.kinds() {
		out = appendReadKinds(out, k.Read...)
	}
	return out
}

func appendReadKinds(kinds []ReadKind, more ...ReadKind) []ReadKind {
	for _, m := range more {
		if !slices.ContainsFunc(kinds, func(k ReadKind) bool { return reflect.TypeOf(k.Object) == reflect.TypeOf(m.Object) }) {
			kinds = append(kinds, m)
		}
	}
	return kinds
}

// appendKinds appends to kinds those of more whose Go type it does not hold yet.
func appendKinds(kinds []client.Object, more ...client.Object) []client.Object {
	for _, m := range more {
		if !slices.ContainsFunc(kinds, func(k client.Object) bool { return reflect.TypeOf(k) == reflect.TypeOf(m) }) {
			kinds = append(kinds, m)
		}
	}
	return kinds
}

// ErrBadOption marks an offline sink's refusal of an option it was given
// (OfflineOptions): the user's mistake on render's command line.
var ErrBadOption = errors.New("bad option")

// ErrUnavailable marks a source that cannot run in this cluster (its API is not
// installed): PIC goes on with the others and says so.
var ErrUnavailable = errors.New("unavailable")

// Unreachable marks err, from a sink, as the sink being out of reach for now: what it
// publishes into is unreachable, overloaded or too slow (a 5xx, a 429, a timeout, a
// refused connection). The core retries the reconcile with backoff, as for any error,
// and tells the object's owner (a SinkUnavailable Warning). Each sink decides which of
// its errors these are: it alone knows its API.
func Unreachable(err error) error {
	if err == nil {
		return nil
	}
	return &unreachableError{err}
}

// IsUnreachable reports whether err, or an error it wraps, came through Unreachable.
// Not to be confused with ErrUnavailable, a source that cannot run at all.
func IsUnreachable(err error) bool {
	var u *unreachableError
	return errors.As(err, &u)
}

type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// Index is a cache index an adapter reads through: a List of Object with
// client.MatchingFields{Field: value}. A value that names a namespaced object carries
// its namespace ("namespace/name"), so that a List across namespaces finds it. The
// manager keeps every index once per value (IndexStore); offline, render gives them
// to controller-runtime's fake client.
type Index struct {
	Object client.Object
	Field  string
	Func   client.IndexerFunc
}

// DistinctIndexes is indexes with each (kind, field) once: several adapters may declare
// the same index (the AccessPolicy indexes every source that reads policies uses).
func DistinctIndexes(indexes []Index) []Index {
	seen := map[string]bool{}
	var out []Index
	for _, idx := range indexes {
		key := fmt.Sprintf("%T/%s", idx.Object, idx.Field)
		if !seen[key] {
			seen[key] = true
			out = append(out, idx)
		}
	}
	return out
}

// StartWithCache makes the cache start the informers of kinds the core watches, before
// the manager starts, as it does for the kinds it indexes. An informer first asked for by
// a controller's watch starts only once the cache has synced, and controller-runtime
// polls for its sync every 100 ms: one more poll, a tenth of a second, before PIC's first
// reconcile.
func StartWithCache(ctx context.Context, informers cache.Informers, kinds ...client.Object) error {
	for _, kind := range kinds {
		if _, err := informers.GetInformer(ctx, kind, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("watch %T: %w", kind, err)
		}
	}
	return nil
}
