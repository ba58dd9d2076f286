// Package plugin holds the contracts between PIC's core and its adapters: a Source
// turns one kind of Kubernetes object into routes, a Sink makes the desired state
// real somewhere (PangolinResource objects, Pangolin's API). The adapters live under
// sources/ and sinks/ and import this package; nothing here knows any of them. The
// composition root fills a Registry with them, by name.
package plugin

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
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
	// Routes reads the object with key. The error is for infrastructure failures only
	// (the cache, the API server): a user's mistake is a Rejection.
	Routes(ctx context.Context, key types.NamespacedName) (Result, error)
	// Hosts returns the hosts an object of the source's kind claims, normalized, whether
	// or not they are valid to publish.
	Hosts(ctx context.Context, obj client.Object) []string
	// Claimants returns the objects of the source's kind that claim host, from an index:
	// each claim's origin, and whether its deletion has begun.
	Claimants(ctx context.Context, host string) ([]engine.Claim, error)
	// WriteStatus records on the object what Pangolin serves for it and res.Status, if
	// they differ from what it records. Only called when res.OwnsStatus.
	WriteStatus(ctx context.Context, res Result, hostnames Hostnames) error
	// Register adds what the source reads besides its own objects, before the manager
	// starts: cache indexes, watches on related objects (to b, the builder of its own
	// controller), controllers of its own (status of the objects it is attached to).
	// tunnels is the sink's word on tunnels, for what the source reports about them
	// itself (a Gateway's Programmed condition): a source never reads a sink's objects.
	Register(ctx context.Context, mgr ctrl.Manager, b *builder.Builder, wake Wake, tunnels Tunnels) error
}

// TunnelChecker says whether routes can go through a tunnel: a Sink's Tunnel.
type TunnelChecker interface {
	Tunnel(ctx context.Context, ref route.TunnelRef) (TunnelCheck, error)
}

// Tunnels is the sink's word on tunnels, as the core hands it to sources.
type Tunnels interface {
	TunnelChecker
	// Changes returns a new channel that hears every tunnel the sink reports changed
	// (Wake.Tunnels), for one watcher; called before the manager starts.
	Changes() <-chan event.TypedGenericEvent[route.TunnelRef]
}

// Result is what a source makes of one of its objects.
type Result struct {
	// Origin is nil when the object does not exist (any more).
	Origin *route.Origin
	// Deleting is true once the object's deletion has begun (a finalizer, or foreground
	// deletion, keeps it a while): what it owns is the garbage collector's to remove or
	// orphan, as the deletion asks, and it claims no host any more.
	Deleting bool
	// Managed is false when PIC must not publish the object: another class, opted out.
	// Whatever PIC created for it is then removed.
	Managed bool
	// OwnsStatus is true when PIC is the object's controller (its class is PIC's), so
	// that writing its status fights no other controller.
	OwnsStatus bool
	// Routes are the hosts that can be published; Rejections say what cannot, and why.
	Routes     []route.Route
	Rejections []route.Rejection
	// Notices are facts users should know that stop nothing (spec.tls is not used):
	// Normal events, once per change.
	Notices []route.Notice
	// Status is what the source wants to write on the object besides the hostnames
	// (an HTTPRoute's parent conditions), in its own terms.
	Status any
}

// Hostnames are the public hostnames of what an object publishes.
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
	// Features is what the sink can express.
	Features() engine.Features
	// Tunnel says whether routes can go through a tunnel, in the sink's own terms.
	Tunnel(ctx context.Context, ref route.TunnelRef) (TunnelCheck, error)
	// Current returns what the sink keeps for owner: only what it created for it.
	Current(ctx context.Context, owner route.Origin) ([]engine.Existing, error)
	// Apply carries out plan for owner. It stops at the first infrastructure error,
	// which the caller retries with backoff; what was done before it is in Applied.
	Apply(ctx context.Context, owner route.Origin, plan engine.Plan) (Applied, error)
	// Describe names a resource in events and logs: its kind in the sink's world, and
	// the Kubernetes object that holds it, if one does.
	Describe(r engine.Resource) (kind string, object *corev1.ObjectReference)
	// Register adds what the sink reads or watches, before the manager starts; changes
	// in its world wake the source objects they concern through wake.
	Register(ctx context.Context, mgr ctrl.Manager, wake Wake) error
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

// Wake brings source objects back to reconciliation when something they depend on
// changes. Every source's controller hears it; a call never blocks for long.
type Wake interface {
	// Owners: what the sink keeps for these objects changed.
	Owners(ctx context.Context, owners ...route.Origin)
	// Hosts: who serves these hosts may change; their claimants look again.
	Hosts(ctx context.Context, hosts ...string)
	// HostsChangedBy: by's own reconcile changed who serves these hosts, and knows what
	// it did; their other claimants look again. A sink calls it for the echo of its own
	// write, so that the writer is not reconciled once more for nothing.
	HostsChangedBy(ctx context.Context, by route.Origin, hosts ...string)
	// Tunnels: these tunnels appeared, changed or went; the objects waiting for them
	// look again.
	Tunnels(ctx context.Context, tunnels ...route.TunnelRef)
}

// SourceFactory builds a source.
type SourceFactory struct {
	// New builds the source for a manager that has not started.
	New func(ctx context.Context, mgr ctrl.Manager, cfg *config.Config) (Source, error)
	// Offline builds it reading through c, without a manager: `manager render` and the
	// golden tests run the same code over a fake client that holds manifests. tunnels
	// is the sink's word on tunnels, as Register gets it. Nil for a source that cannot
	// run that way.
	Offline func(c client.Client, cfg *config.Config, tunnels TunnelChecker) OfflineSource
}

// OfflineSource is a source run without a manager, its controllers called in turn by
// whoever drives it rather than by watches.
type OfflineSource interface {
	Source
	// Indexes are the indexes its reads use, which the client must serve. Their
	// functions must not read through the source's client: the client is built after
	// them.
	Indexes() []Index
	// Controllers are the source's other reconcilers (the status of the objects it is
	// attached to, such as Gateways), in the order they are to run after the source's
	// own objects.
	Controllers() []Controller
}

// Controller is a reconciler of the objects of one kind.
type Controller struct {
	Object     client.Object
	Reconciler reconcile.Reconciler
}

// SinkFactory builds a sink.
type SinkFactory struct {
	// Cache says how the manager's cache holds the objects the sink reads, before the
	// manager exists; nil when the defaults do.
	Cache func(cfg *config.Config) map[client.Object]cache.ByObject
	New   func(ctx context.Context, mgr ctrl.Manager, cfg *config.Config) (Sink, error)
}

// Registry is every source and sink PIC can run, by configuration name.
type Registry struct {
	Sources map[string]SourceFactory
	Sinks   map[string]SinkFactory
}

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
// client.MatchingFields{Field: value} and no namespace, which finds the objects of every
// watched namespace. A value that names a namespaced object carries its namespace
// ("namespace/name"). The same List in one namespace finds nothing, with no error: the
// index has no per-namespace keys (AddIndexes).
type Index struct {
	Object client.Object
	Field  string
	Func   client.IndexerFunc
}

// StartWithCache makes the cache start the informers of kinds an adapter watches, before
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

// AddIndexes registers indexes with the cache, before it starts, each with one key per
// value, the key a List across namespaces looks up. controller-runtime's IndexField keeps
// a second key per value, for Lists in one namespace, which PIC does not make: client-go
// keeps a set per key, and on 5000 Ingresses and their PangolinResources that second
// copy of the four indexes over them is 5-6 MB of live heap.
func AddIndexes(ctx context.Context, informers cache.Informers, indexes []Index) error {
	for _, idx := range indexes {
		informer, err := informers.GetInformer(ctx, idx.Object, cache.BlockUntilSynced(false))
		if err == nil {
			err = informer.AddIndexers(toolscache.Indexers{fieldIndexName(idx.Field): crossNamespaceIndexFunc(idx.Func)})
		}
		if err != nil {
			return fmt.Errorf("index %T by %s: %w", idx.Object, idx.Field, err)
		}
	}
	return nil
}

// fieldIndexName and crossNamespaceKey are the index name and the key controller-runtime's
// cache reader looks up for client.MatchingFields in a List with no namespace (its
// pkg/cache/internal, which cannot be imported). TestIndexesReadAcrossNamespaces holds
// them to that reader.
func fieldIndexName(field string) string { return "field:" + field }

func crossNamespaceKey(value string) string { return "__all_namespaces/" + value }

// crossNamespaceIndexFunc is values as a client-go index function that stores each value
// under its cross-namespace key only.
func crossNamespaceIndexFunc(values client.IndexerFunc) toolscache.IndexFunc {
	return func(obj any) ([]string, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("cannot index a %T: not an object", obj)
		}
		vals := values(o)
		keys := make([]string, len(vals))
		for i, v := range vals {
			keys[i] = crossNamespaceKey(v)
		}
		return keys, nil
	}
}
