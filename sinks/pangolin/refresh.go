package pangolin

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// refresher reads Pangolin at start and every resync period, on the leader.
type refresher struct{ sink *Sink }

// NeedLeaderElection: the refresh wakes controllers, which run on the leader only.
func (r *refresher) NeedLeaderElection() bool { return true }

// Start refreshes until ctx ends. A failed refresh is tried again sooner, with backoff:
// until one succeeds, Current fails and nothing is written.
func (r *refresher) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("pangolin")
	const firstRetry = time.Second
	retry := firstRetry
	for {
		next := r.sink.resync
		if err := r.sink.Refresh(ctx); err != nil {
			logger.Error(err, "cannot read Pangolin; retrying", "in", retry)
			next, retry = retry, min(2*retry, 30*time.Second, r.sink.resync)
		} else {
			retry = firstRetry
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// Refresh reads what this owner id has in Pangolin, with the org's domains and sites,
// and replaces the sink's mirror with it. Every refresh lists:
//
//	1 domain list + 1 site list (one page each up to 500)
//	+ 1 resource list, searched for "pic-<owner id>-" (one page per 500 owned resources)
//	+ 1 GET per site that Tunnel was asked about
//
// A full refresh (the first, then the first one at least the drift period after the
// last full one) also reads each owned resource whole, up to maxConcurrentReads at once:
//
//   - 2 per owned resource: GET (blockAccess and the effective sso are only there) and
//     its target list (the list's targets lack method, path, match type and priority)
//   - for the G resources an AccessPolicy governs (the access records say which):
//     1 policies read each, and, when G > 0, 1 role list and 1 user list
//
// The others, light refreshes, read whole only the resources whose list item changed
// (pangolinapi.ResourceSummary.Fingerprint), or that are new: a resource deleted by
// hand, or edited in a field the list shows (name, host, sso, enabled, access ids,
// a target's ip, port, site or enabled, a target added or removed), is found by the
// next refresh; an edit only a GET shows (blockAccess, a target's path, method or
// priority, roles and users), by the next full one. So N = 1000 costs about 5
// requests a light refresh and 2005 a full one. A refresh writes nothing.
//
// The first refresh loads the access records (AccessRecordStore) before it reads
// Pangolin: without it, Current cannot say which resources a policy governs.
// It does not keep reconciles waiting for every resource's reads: once the list is
// read, Current answers for an object as soon as that object's own resources are read
// (it reads them itself when the refresh has not yet), and every owner found is woken,
// so that what objects deleted while PIC was down published is removed now. Afterwards
// a refresh wakes the owners of what changed behind PIC's back.
func (s *Sink) Refresh(ctx context.Context) error {
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	s.mu.Lock()
	s.touched = map[string]bool{}
	complete := s.complete
	full := !complete || s.now().Sub(s.lastFull) >= s.drift
	prev := make(map[string]*entry, len(s.entries))
	for id, e := range s.entries {
		prev[id] = e.clone()
	}
	s.mu.Unlock()
	if !complete {
		return s.firstLoad(ctx)
	}

	started := s.now()
	snap, err := s.read(ctx, full, prev, started)
	if err != nil {
		return s.failed(err)
	}
	s.mu.Lock()
	for id := range s.touched {
		if mine, ok := s.entries[id]; ok {
			snap.entries[id] = mine
		} else {
			delete(snap.entries, id)
		}
	}
	var changed []route.Origin
	for _, id := range slices.Sorted(maps.Keys(union(s.entries, snap.entries))) {
		before, after := s.entries[id], snap.entries[id]
		if after != nil && before != nil {
			after.tunnelNS, after.applied, after.unsent = before.tunnelNS, before.applied, before.unsent
		}
		if s.touched[id] || sameEntry(before, after) {
			continue
		}
		if e := cmpOr(after, before); !slices.Contains(changed, e.mark.origin()) {
			changed = append(changed, e.mark.origin())
		}
	}
	s.setEntries(snap.entries)
	s.domains, s.err, s.touched = snap.domains, nil, nil
	if snap.org != nil {
		s.org.keep(*snap.org)
	}
	if full {
		s.lastFull = started
	}
	s.noteSites(snap.sites)
	wakeTunnels := s.recheckedTunnels(snap.tunnels)
	s.mu.Unlock()
	up.Set(1)

	s.changes.publish(ctx, plugin.Change{Owners: changed, Tunnels: wakeTunnels})
	if len(changed) > 0 {
		log.FromContext(ctx).WithName("pangolin").Info("Pangolin resources changed outside PIC", "owners", len(changed), "full", full)
	}
	return nil
}

// firstLoad is the first refresh, and every one until one has read everything: the
// lists, then every owned resource whole, while Current already answers for the
// objects whose resources are read.
func (s *Sink) firstLoad(ctx context.Context) error {
	started := s.now()
	err := s.accessRecords.load(ctx)
	var snap snapshot
	var list []ownedSummary
	if err == nil {
		snap, list, err = s.readLists(ctx)
	}
	if err != nil {
		return s.failed(err)
	}
	s.mu.Lock()
	entries := make(map[string]*entry, len(list))
	for _, o := range list {
		entries[o.NiceID] = &entry{mark: o.mark, listFP: o.Fingerprint, pending: true, res: pangolinapi.Resource{
			ResourceID: o.ResourceID, NiceID: o.NiceID, Name: o.Name, FullDomain: o.FullDomain, DomainID: o.DomainID,
			Mode: o.Mode, ProxyPort: o.ProxyPort,
		}}
	}
	for id := range s.touched { // written since the list was read: the write wins
		if mine, ok := s.entries[id]; ok && !mine.pending {
			entries[id] = mine
		} else if !ok {
			delete(entries, id)
		}
	}
	var owners []route.Origin
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		if o := entries[id].mark.origin(); !slices.Contains(owners, o) {
			owners = append(owners, o)
		}
	}
	// Counted now: once the mirror holds them, the reads of Current and of this
	// refresh change them.
	resources := len(entries)
	s.setEntries(entries)
	s.domains, s.err = snap.domains, nil
	s.noteSites(snap.sites)
	s.mu.Unlock()
	s.listedOnce.Do(func() { close(s.listed) })
	up.Set(1)
	s.changes.publish(ctx, plugin.Change{Owners: owners})
	if len(owners) > 0 {
		log.FromContext(ctx).WithName("pangolin").Info("Pangolin resources found at start", "owners", len(owners), "resources", resources)
	}

	// Then every resource whole, a few at once; Current reads those it needs first.
	s.mu.Lock()
	pending := slices.Sorted(maps.Keys(s.entries))
	s.mu.Unlock()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.readLimit) // at most this many ahead of Current's reads (Sink.readLimit)
	for _, id := range pending {
		g.Go(func() error { return s.loadPending(gctx, id) })
	}
	err = g.Wait()
	if err == nil {
		s.mu.Lock()
		governed := slices.ContainsFunc(slices.Collect(maps.Values(s.entries)), func(e *entry) bool { return e.access != nil })
		s.mu.Unlock()
		if governed {
			err = s.readOrg(ctx, &snap, started)
		}
	}
	if err == nil {
		err = s.readTunnels(ctx, &snap)
	}
	if err != nil {
		return s.failed(err)
	}
	s.mu.Lock()
	s.complete, s.lastFull, s.touched = true, started, nil
	if snap.org != nil {
		s.org.keep(*snap.org)
	}
	wakeTunnels := s.recheckedTunnels(snap.tunnels)
	s.mu.Unlock()
	s.changes.publish(ctx, plugin.Change{Tunnels: wakeTunnels})
	return nil
}

// failed notes a refresh that failed: Current fails until one succeeds. Before the
// first refresh has read the lists, it lets Current stop waiting for them.
func (s *Sink) failed(err error) error {
	s.mu.Lock()
	s.err, s.touched = err, nil
	s.mu.Unlock()
	s.listedOnce.Do(func() { close(s.listed) })
	up.Set(0)
	return err
}

// loadPending reads a resource the first refresh has listed but not yet read, unless
// it was read, written or listed again meanwhile. Its workers share one read.
func (s *Sink) loadPending(ctx context.Context, id string) error {
	_, err, _ := s.loading.Do(id, func() (any, error) {
		s.mu.Lock()
		e := s.entries[id]
		s.mu.Unlock()
		if e == nil || !e.pending {
			return nil, nil
		}
		got, err := s.readEntry(ctx, e.mark, e.res.ResourceID, id, e.listFP)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case s.entries[id] != e: // written, or listed again, meanwhile
		case got == nil:
			s.deleteEntry(id) // deleted since the list
		default:
			s.setEntry(id, got)
		}
		return nil, nil
	})
	return err
}

// readEntry reads one owned resource whole: the resource, its targets and, when a
// policy governs it, its access. nil: deleted since it was listed.
func (s *Sink) readEntry(ctx context.Context, m mark, resourceID int, niceID string, fp uint64) (*entry, error) {
	select {
	case s.reads <- struct{}{}:
		defer func() { <-s.reads }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res, err := s.api.GetResource(ctx, resourceID)
	if pangolinapi.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get resource %d (%s): %w", resourceID, niceID, err)
	}
	targets, err := s.api.ListTargets(ctx, resourceID)
	if pangolinapi.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the targets of resource %d (%s): %w", resourceID, niceID, err)
	}
	e := &entry{mark: m, res: res, targets: targets, listFP: fp}
	if s.accessRecords.governed(niceID, resourceID) {
		p, err := s.api.GetResourcePolicy(ctx, resourceID)
		if pangolinapi.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the access of resource %d (%s): %w", resourceID, niceID, err)
		}
		e.access = &p
	}
	return e, nil
}

// snapshot is one refresh's reading of Pangolin.
type snapshot struct {
	entries map[string]*entry
	domains []pangolinapi.Domain
	sites   []pangolinapi.Site
	tunnels map[string]plugin.TunnelCheck
	// org holds the org's roles and users when a resource is governed and the refresh
	// was full; nil when they were not read.
	org *orgRead
}

// ownedSummary is a list item of this owner id's, with its mark.
type ownedSummary struct {
	pangolinapi.ResourceSummary
	mark mark
}

// readLists reads the org's domains and sites, and the resources this owner id owns
// as the list shows them.
func (s *Sink) readLists(ctx context.Context) (snapshot, []ownedSummary, error) {
	snap := snapshot{entries: map[string]*entry{}, tunnels: map[string]plugin.TunnelCheck{}}
	var err error
	if snap.domains, err = s.api.ListDomains(ctx); err != nil {
		return snap, nil, fmt.Errorf("list the org's domains: %w", err)
	}
	if snap.domains == nil {
		snap.domains = []pangolinapi.Domain{} // read, and none: not "never read"
	}
	if snap.sites, err = s.api.ListSites(ctx); err != nil {
		return snap, nil, fmt.Errorf("list the org's sites: %w", err)
	}
	// The search matches names, niceIds and hosts: the marks decide what is ours.
	list, err := s.api.ListResources(ctx, niceIDPrefix(s.ownerID))
	if err != nil {
		return snap, nil, fmt.Errorf("list the resources of owner id %s: %w", s.ownerID, err)
	}
	var out []ownedSummary
	for _, summary := range list {
		if m, ok := owned(s.ownerID, summary.NiceID, summary.Name); ok {
			out = append(out, ownedSummary{ResourceSummary: summary, mark: m})
		}
	}
	return snap, out, nil
}

// read reads Pangolin, without holding s.mu: the lists, then, whole, every owned
// resource when full, else those whose list item differs from prev's. started is when
// the refresh began.
func (s *Sink) read(ctx context.Context, full bool, prev map[string]*entry, started time.Time) (snapshot, error) {
	snap, list, err := s.readLists(ctx)
	if err != nil {
		return snap, err
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.readLimit)
	for _, o := range list {
		if p := prev[o.NiceID]; !full && p != nil && !p.pending && p.listFP == o.Fingerprint && p.res.ResourceID == o.ResourceID {
			mu.Lock()
			snap.entries[o.NiceID] = p // unchanged since it was read
			mu.Unlock()
			continue
		}
		g.Go(func() error {
			e, err := s.readEntry(gctx, o.mark, o.ResourceID, o.NiceID, o.Fingerprint)
			if err != nil || e == nil {
				return err
			}
			mu.Lock()
			snap.entries[o.NiceID] = e
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return snap, err
	}
	if full && slices.ContainsFunc(slices.Collect(maps.Values(snap.entries)), func(e *entry) bool { return e.access != nil }) {
		if err := s.readOrg(ctx, &snap, started); err != nil {
			return snap, err
		}
	}
	return snap, s.readTunnels(ctx, &snap)
}

// readOrg reads the org's roles and users into snap: once per full read, which started
// at since. A reconcile that needed them meanwhile read them already (roles, users), or
// is reading them: that list is the read's, not a second one.
func (s *Sink) readOrg(ctx context.Context, snap *snapshot, since time.Time) error {
	var org orgRead
	var err error
	if org.roles, org.rolesAt, err = s.org.roles.readSince(ctx, since, s.now); err != nil {
		return fmt.Errorf("list the org's roles: %w", err)
	}
	if org.users, org.usersAt, err = s.org.users.readSince(ctx, since, s.now); err != nil {
		return fmt.Errorf("list the org's users: %w", err)
	}
	snap.org = &org
	return nil
}

// readTunnels asks again about every site Tunnel was asked about.
func (s *Sink) readTunnels(ctx context.Context, snap *snapshot) error {
	s.mu.Lock()
	asked := slices.Collect(maps.Keys(s.tunnels))
	s.mu.Unlock()
	for _, niceID := range asked {
		check, err := s.checkSite(ctx, niceID)
		if err != nil {
			return err
		}
		snap.tunnels[niceID] = check
	}
	return nil
}

// recheckedTunnels notes the sites a refresh asked about again, and returns the
// references to wake for those whose state changed. s.mu is held.
func (s *Sink) recheckedTunnels(checks map[string]plugin.TunnelCheck) []route.TunnelRef {
	var out []route.TunnelRef
	for niceID, check := range checks {
		seen := s.tunnels[niceID]
		if seen == nil {
			continue
		}
		if seen.check.State != check.State {
			out = append(out, slices.Collect(maps.Keys(seen.refs))...)
		}
		seen.check, seen.at = check, s.now()
	}
	return out
}

// sameEntry compares what PIC owns of two readings of one resource.
func sameEntry(a, b *entry) bool {
	if a == nil || b == nil {
		return a == b
	}
	ra, rb := a.res, b.res
	return ra.ResourceID == rb.ResourceID && ra.Name == rb.Name && ra.Mode == rb.Mode && ra.ProxyPort == rb.ProxyPort && ra.FullDomain == rb.FullDomain &&
		ra.Subdomain == rb.Subdomain && ra.DomainID == rb.DomainID && ra.SSO == rb.SSO &&
		ra.BlockAccess == rb.BlockAccess && ra.Enabled == rb.Enabled && slices.Equal(ra.Headers, rb.Headers) && slices.Equal(a.targets, b.targets) &&
		(a.access == nil || b.access == nil || reflect.DeepEqual(a.access, b.access))
}

func union(a, b map[string]*entry) map[string]*entry {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func cmpOr(a, b *entry) *entry {
	if a != nil {
		return a
	}
	return b
}
