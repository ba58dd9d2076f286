package pangolinresource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// OwnerIndex indexes PangolinResources by the UID of the source object that owns them,
// so that finding one object's resources costs the same with 10 or 10,000 in the cluster
// (one index read per watched namespace when watchNamespaces is set).
const OwnerIndex = "pic.owner-uid"

// IndexOwner is the index function for OwnerIndex.
func IndexOwner(obj client.Object) []string {
	pr, ok := obj.(*tunnelv1alpha1.PangolinResource)
	if !ok {
		return nil
	}
	if uid, ok := owner(pr); ok {
		return []string{string(uid)}
	}
	return nil
}

// HostIndex indexes PIC's PangolinResources by the published host (or port key) they
// serve, engine.Resource's ClaimKey, so that Holders reads one index key.
const HostIndex = "pic.published-host"

// IndexHost is the index function for HostIndex.
func IndexHost(obj client.Object) []string {
	pr, ok := obj.(*tunnelv1alpha1.PangolinResource)
	if !ok {
		return nil
	}
	if _, ok := owner(pr); !ok {
		return nil
	}
	return resourceHost(pr)
}

// CacheSelector limits the PangolinResource informer to objects that carry PIC's uid
// label: the operator's other resources are none of PIC's business and cost memory.
func CacheSelector() labels.Selector {
	req, err := labels.NewRequirement(pic.LabelOwnerUID, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant selector: cannot fail
	}
	return labels.NewSelector().Add(*req)
}

// Name is the sink's name in the configuration (sink).
const Name = "pangolinresource"

// Sink reads and writes PangolinResources.
type Sink struct {
	client client.Client // cached reads (CacheSelector, OwnerIndex) and writes
	live   client.Reader // uncached reads, for objects outside the cache
	caps   tunnelv1alpha1.Capabilities
	// conflicts holds "namespace/name" of desired resources last found taken by an
	// object PIC does not own.
	conflicts sync.Map
	pending   pendingWrites
}

// New returns a sink that writes for the CRD variant described by caps.
func New(c client.Client, live client.Reader, caps tunnelv1alpha1.Capabilities) *Sink {
	return &Sink{client: c, live: live, caps: caps}
}

var _ plugin.Sink = (*Sink)(nil)

// Features implements plugin.Sink: what the installed CRD lets the engine express.
func (s *Sink) Features() engine.Features {
	return engine.Features{
		PathRouting: s.caps.Targets, AccessControl: s.caps.AccessControl, TunnelNamespace: s.caps.TunnelNamespace,
		RawResources: s.caps.RawResources, GarbageCollected: true,
	}
}

// Current implements plugin.Sink: the resources that origin owns. It first waits
// (briefly, see cacheCatchUp) until the cache shows what Apply last wrote for origin.
func (s *Sink) Current(ctx context.Context, origin route.Origin) ([]engine.Existing, error) {
	if w := s.pending.of(origin.UID); len(w) > 0 {
		if s.awaitCache(ctx, w) {
			s.pending.done(origin.UID, w)
		}
	}
	// parse copies what it reads: the cache's objects are not copied for it.
	var list tunnelv1alpha1.PangolinResourceList
	if err := s.client.List(ctx, &list, client.MatchingFields{OwnerIndex: string(origin.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list PangolinResources of %s: %w", origin.Key(), err)
	}
	out := make([]engine.Existing, 0, len(list.Items))
	for i := range list.Items {
		// An owner's resources are in its namespace (an owner reference is resolved in
		// the dependent's own): a copy elsewhere that names it is not PIC's.
		if list.Items[i].Namespace == origin.Namespace {
			out = append(out, parse(&list.Items[i], origin, s.caps))
		}
	}
	return out, nil
}

// Holders implements plugin.Sink: the owners of PIC's PangolinResources on host, from
// the host index, whatever those owners name now.
func (s *Sink) Holders(ctx context.Context, host string) ([]route.Origin, error) {
	var list tunnelv1alpha1.PangolinResourceList
	if err := s.client.List(ctx, &list, client.MatchingFields{HostIndex: host}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list PangolinResources on %s: %w", host, err)
	}
	var out []route.Origin
	for i := range list.Items {
		for _, o := range ownerOf(&list.Items[i]) {
			if !slices.ContainsFunc(out, func(known route.Origin) bool { return known.UID == o.UID }) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// Apply implements plugin.Sink. It stops at the first API error, which the caller
// retries with backoff; what was done before it is in the result.
//
// Apply returns as soon as its writes are done, and records them: the next Current of
// the same owner waits until the cache shows them. Each write wakes the owner up again
// through its watch event; a reconcile running on a cache that has not seen every write
// yet would create a resource again (AlreadyExists, then a read) or update it from a
// stale version (a 409 and a retry); a multi-host Ingress met that on about one
// resource in twenty while converging. Waiting here instead, after every write, kept
// the worker idle for a watch delivery per reconcile: the wake-up that follows a write
// comes from that write's own watch event, so by then the cache mostly has it.
func (s *Sink) Apply(ctx context.Context, owner route.Origin, plan engine.Plan) (plugin.Applied, error) {
	applied, err := s.apply(ctx, owner, plan)
	if unreachable(err) {
		err = plugin.Unreachable(err)
	}
	return applied, err
}

// unreachable reports whether a write failed because the API server is out of reach for
// now, rather than because it refused the write (a conflict, an invalid object, a
// missing namespace): the first is retried and told to the object's owner as such.
func unreachable(err error) bool {
	return err != nil && (apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) ||
		errors.Is(err, context.DeadlineExceeded) || utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err))
}

func (s *Sink) apply(ctx context.Context, owner route.Origin, plan engine.Plan) (plugin.Applied, error) {
	var res plugin.Applied
	// refused are the creates the API server did not take: a deletion waiting for one
	// (plan.After) is not made.
	refused := map[string]engine.Resource{}
	conflict := func(d engine.Resource) {
		refused[d.Name] = d
		res.Rejections = append(res.Rejections, route.Rejection{Origin: owner, Host: d.Host, Reason: pic.ReasonNameConflict,
			Message: fmt.Sprintf("PangolinResource %s/%s exists and is not owned by this %s: PIC leaves it untouched and does not publish %s", d.Namespace, d.Name, owner.Kind, d.Host)})
	}
	for _, d := range plan.Create {
		key := d.Namespace + "/" + d.Name
		if _, known := s.conflicts.Load(key); known {
			// A name known to be taken is looked at, not written to, so that a
			// conflict costs a read per reconcile and never a failing write.
			exists, mine, err := s.inspect(ctx, d)
			if err != nil {
				return res, err
			}
			if exists && !mine {
				conflict(d)
				continue
			}
			s.conflicts.Delete(key)
			if exists {
				continue // ours, not in the cache yet: its watch event brings us back
			}
		}
		obj := render(d, s.caps)
		tookAnEvent, err := s.create(ctx, owner.UID, obj)
		switch {
		case err == nil:
			res.Created = append(res.Created, d)
		case apierrors.IsAlreadyExists(err):
			exists, mine, getErr := s.inspect(ctx, d)
			if getErr != nil {
				return res, getErr
			}
			if exists && mine && tookAnEvent {
				// The event of an object that was already there came while the create
				// was in flight and was taken for its echo: nothing else will bring
				// the owner back, so its reconcile fails and is retried.
				return res, fmt.Errorf("create PangolinResource %s/%s: it exists and is this %s's, and the cache showed it only while it was being created: reading it again", d.Namespace, d.Name, owner.Kind)
			}
			if exists && !mine {
				s.conflicts.Store(key, struct{}{})
				conflict(d)
			}
		default:
			return res, fmt.Errorf("create PangolinResource %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	for _, d := range plan.Update {
		before, after, err := s.update(ctx, d)
		if err != nil {
			return res, err
		}
		res.Updated = append(res.Updated, d)
		if after != before {
			s.pending.add(owner.UID, write{key: types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, before: before, rv: after})
		}
	}
	for _, e := range plan.Delete {
		if waits := waitingFor(plan.After[e.Name], refused); len(waits) > 0 {
			res.Rejections = append(res.Rejections, route.Rejection{Origin: owner, Host: e.Host, Reason: pic.ReasonReplacementRefused, Kept: true,
				Message: engine.KeptMessage(fmt.Sprintf("PangolinResource %s/%s", e.Namespace, e.Name), strings.Join(waits, ", "))})
			continue
		}
		obj := &tunnelv1alpha1.PangolinResource{}
		obj.Name, obj.Namespace = e.Name, e.Namespace
		// The UID precondition: delete exactly the object read as owned, never a
		// same-named successor.
		err := s.client.Delete(ctx, obj, client.Preconditions{UID: &e.UID})
		countWrite("delete", err)
		if err != nil && !apierrors.IsNotFound(err) {
			return res, fmt.Errorf("delete PangolinResource %s/%s: %w", e.Namespace, e.Name, err)
		}
		res.Deleted = append(res.Deleted, e.Resource)
		s.pending.add(owner.UID, write{key: types.NamespacedName{Namespace: e.Namespace, Name: e.Name}, deleted: true, uid: e.UID})
	}
	return res, nil
}

// create sends obj, pending as owner's before it is sent: the watch may deliver the
// create's event before the create's answer, and that event, taken for another
// writer's change, would reconcile the owner again for nothing. tookAnEvent, for a
// create that was refused, says that an event for its name was taken for its echo
// meanwhile.
func (s *Sink) create(ctx context.Context, owner types.UID, obj *tunnelv1alpha1.PangolinResource) (tookAnEvent bool, err error) {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	s.pending.add(owner, write{key: key, inFlight: true})
	answered := false
	defer func() {
		if !answered { // a panic in the client: nothing may stay in flight
			s.pending.abandon(owner, key)
		}
	}()
	err = s.client.Create(ctx, obj)
	answered = true
	countWrite("create", err)
	if err == nil {
		s.pending.landed(owner, key, obj.ResourceVersion)
		return false, nil
	}
	return s.pending.abandon(owner, key), err
}

// waitingFor names the arrivals in after whose create the API server refused, with
// why. An arrival the operator has not reported Ready does not keep what it replaces:
// deleting a PangolinResource leaves its resource in Pangolin (the operator only
// removes its finalizer), so the deletion takes nothing down there.
func waitingFor(after []engine.Resource, refused map[string]engine.Resource) []string {
	var out []string
	for _, arrival := range after {
		if d, ok := refused[arrival.Name]; ok {
			out = append(out, fmt.Sprintf("PangolinResource %s/%s for %s (%s)", d.Namespace, d.Name, d.PublishedHost(), pic.ReasonNameConflict))
		}
	}
	return out
}

// update writes d over the cached object and returns the resourceVersion it replaced
// and the one it wrote: the same when the API server found nothing to change.
func (s *Sink) update(ctx context.Context, d engine.Resource) (before, after string, err error) {
	var current tunnelv1alpha1.PangolinResource
	if err := s.client.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, &current); err != nil {
		return "", "", fmt.Errorf("get PangolinResource %s/%s: %w", d.Namespace, d.Name, err)
	}
	if uid, ok := owner(&current); !ok || uid != d.Origin.UID {
		return "", "", fmt.Errorf("PangolinResource %s/%s changed owner since it was read", d.Namespace, d.Name)
	}
	want := render(d, s.caps)
	updated := current.DeepCopy()
	updated.Spec = want.Spec
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		updated.Labels[k] = v
	}
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	for k, v := range want.Annotations {
		updated.Annotations[k] = v
	}
	// resourceVersion from the cache makes this an optimistic update: if someone wrote
	// in between, the API server refuses it and the reconcile is retried on fresh data.
	err = s.client.Update(ctx, updated)
	countWrite("update", err)
	if err != nil {
		return "", "", fmt.Errorf("update PangolinResource %s/%s: %w", d.Namespace, d.Name, err)
	}
	return current.ResourceVersion, updated.ResourceVersion, nil
}

// cacheCatchUp bounds how long Current waits for the cache to show Apply's writes. The
// watch delivers them in milliseconds; if it lags longer, the next reconcile copes
// (AlreadyExists is read, a conflict is retried).
const cacheCatchUp = 5 * time.Second

// write is one write of Apply, answered or in flight, as the cache and the watch will
// show it.
type write struct {
	key types.NamespacedName
	// before is the resourceVersion an update replaced: the cache shows the update once
	// it holds another version. Empty for a create: the cache shows it once it has it.
	before string
	// rv is the resourceVersion a create or an update wrote: its watch event has it.
	rv string
	// deleted: the cache shows a delete once the object with uid is gone from it.
	deleted bool
	uid     types.UID
	// inFlight: a create sent and not answered yet, its resourceVersion unknown. The
	// first event of key for the same owner is taken for its echo (echoRV records it):
	// the object did not exist when the create was planned. A create refused with
	// AlreadyExists proves that event was not its own.
	inFlight bool
	echoRV   string
}

// shows reports whether a watch event for obj (deleted: its deletion) is this write's.
func (w write) shows(obj client.Object, deleted bool) bool {
	if w.key.Name != obj.GetName() || w.key.Namespace != obj.GetNamespace() || w.deleted != deleted {
		return false
	}
	if deleted {
		return w.uid == obj.GetUID()
	}
	if w.inFlight {
		return w.echoRV == "" || w.echoRV == obj.GetResourceVersion()
	}
	return w.rv == obj.GetResourceVersion()
}

// awaitCache waits until the cache shows every write, cacheCatchUp at most, and
// reports whether it does. A failing read ends the wait: the next reconcile reads
// again anyway.
func (s *Sink) awaitCache(ctx context.Context, written []write) bool {
	ctx, cancel := context.WithTimeout(ctx, cacheCatchUp)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 2*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for len(written) > 0 {
			seen, err := s.cached(ctx, written[0])
			if err != nil || !seen {
				return false, err
			}
			written = written[1:]
		}
		return true, nil
	})
	return err == nil
}

// pendingWrites are Apply's writes that the cache may not show yet, by owner UID.
// A write leaves when the owner's next Current sees it in the cache, or when its own
// watch event arrives (echo).
type pendingWrites struct {
	mu      sync.Mutex
	byOwner map[types.UID]pending
	swept   time.Time
}

type pending struct {
	writes []write
	at     time.Time
}

// add records one of an owner's writes, after those it already has.
func (p *pendingWrites) add(owner types.UID, w write) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.byOwner == nil {
		p.byOwner = map[types.UID]pending{}
	}
	// An owner that is never reconciled again (deleted) must not keep its entry: what
	// is older than cacheCatchUp would not be waited for anyway.
	if now.Sub(p.swept) > cacheCatchUp {
		for uid, e := range p.byOwner {
			if now.Sub(e.at) > cacheCatchUp {
				delete(p.byOwner, uid)
			}
		}
		p.swept = now
	}
	e := p.byOwner[owner]
	p.byOwner[owner] = pending{writes: append(e.writes, w), at: now}
}

// of returns an owner's pending writes, none once they are older than cacheCatchUp.
func (p *pendingWrites) of(owner types.UID) []write {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byOwner[owner]
	if !ok {
		return nil
	}
	if time.Since(e.at) > cacheCatchUp {
		delete(p.byOwner, owner)
		return nil
	}
	// A create in flight is not waited for: another owner's reconcile can read this
	// owner's resources while it writes, and a refused create would never show.
	return slices.DeleteFunc(slices.Clone(e.writes), func(w write) bool { return w.inFlight })
}

// landed records the resourceVersion of the owner's create of key, sent in flight.
func (p *pendingWrites) landed(owner types.UID, key types.NamespacedName, rv string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byOwner[owner]
	for i, w := range e.writes {
		if w.inFlight && w.key == key {
			e.writes[i] = write{key: key, rv: rv}
			return
		}
	}
}

// abandon forgets the owner's create of key, sent in flight and refused, and reports
// whether an event was taken for its echo meanwhile.
func (p *pendingWrites) abandon(owner types.UID, key types.NamespacedName) (tookAnEvent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removeLocked(owner, func(w write) bool {
		if w.inFlight && w.key == key {
			tookAnEvent = tookAnEvent || w.echoRV != ""
			return true
		}
		return false
	})
	return tookAnEvent
}

// done forgets the owner's writes that the cache has been seen to show.
func (p *pendingWrites) done(owner types.UID, seen []write) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removeLocked(owner, func(w write) bool { return slices.Contains(seen, w) })
}

// shows reports whether a watch event for obj (deleted: its deletion) shows a pending
// write of owner's. It forgets nothing: each source's controller asks about the same
// event, and Current forgets the writes the cache shows (done). An in-flight create
// takes the first event of its name (the same event again, for another controller) and
// no other.
func (p *pendingWrites) shows(owner types.UID, obj client.Object, deleted bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byOwner[owner]
	if !ok {
		return false
	}
	for i, w := range e.writes {
		if !w.shows(obj, deleted) {
			continue
		}
		if w.inFlight {
			e.writes[i].echoRV = obj.GetResourceVersion()
		}
		return true
	}
	return false
}

func (p *pendingWrites) removeLocked(owner types.UID, match func(write) bool) bool {
	e, ok := p.byOwner[owner]
	if !ok {
		return false
	}
	n := len(e.writes)
	kept := slices.DeleteFunc(e.writes, match)
	if len(kept) == n {
		return false
	}
	if len(kept) == 0 {
		delete(p.byOwner, owner)
	} else {
		p.byOwner[owner] = pending{writes: kept, at: e.at}
	}
	return true
}

// cached reports whether the cache shows w.
func (s *Sink) cached(ctx context.Context, w write) (bool, error) {
	var obj tunnelv1alpha1.PangolinResource
	err := s.client.Get(ctx, w.key, &obj)
	switch {
	case apierrors.IsNotFound(err):
		return w.deleted, nil
	case err != nil:
		return false, err
	case w.deleted:
		return obj.UID != w.uid, nil
	default:
		return w.before == "" || obj.ResourceVersion != w.before, nil
	}
}

// inspect reads, past the cache (which holds only labelled objects), whether an object
// named like d exists and belongs to d's origin.
func (s *Sink) inspect(ctx context.Context, d engine.Resource) (exists, mine bool, err error) {
	var obj tunnelv1alpha1.PangolinResource
	if err := s.live.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, &obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("get PangolinResource %s/%s: %w", d.Namespace, d.Name, err)
	}
	uid, ok := owner(&obj)
	return true, ok && uid == d.Origin.UID, nil
}
