package pangolin

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

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
// and replaces the sink's record with it. It costs, in requests:
//
//	1 domain list + 1 site list (one page each up to 500)
//	+ 1 resource list, searched for "pic-<owner id>-" (one page per 500 owned resources)
//	+ 2 per owned resource: GET (blockAccess and the effective sso are only there) and its target list
//	+ 1 GET per site that Tunnel was asked about
//	+ for the G resources an AccessPolicy governs (the record says which): 1 policies
//	  read each, and, when G > 0, 1 role list and 1 user list
//
// so about 2N+3 requests for N resources: 200 requests, 5 to 10 s at Pangolin's 25-50 ms
// a request, for 100 hosts, plus G+2 with access policies. It writes nothing. The
// first refresh loads the record of what policies wrote (RecordStore) before it reads
// Pangolin: without it, Current cannot say which resources a policy governs. Afterwards it wakes the owners of what
// changed behind PIC's back (a resource deleted or edited by hand); after the first
// refresh, every owner found, so that what objects deleted while PIC was down published
// is removed now.
func (s *Sink) Refresh(ctx context.Context) error {
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	s.mu.Lock()
	s.touched = map[string]bool{}
	s.mu.Unlock()

	err := s.loadRecords(ctx)
	var snap snapshot
	if err == nil {
		snap, err = s.read(ctx)
	}
	s.mu.Lock()
	defer s.loadedOnce.Do(func() { close(s.loaded) })
	if err != nil {
		s.err, s.touched = err, nil
		s.mu.Unlock()
		up.Set(0)
		return err
	}
	first := !s.hasLoaded()
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
			after.tunnelNS, after.applied = before.tunnelNS, before.applied
		}
		if s.touched[id] || !first && sameEntry(before, after) {
			continue
		}
		if e := cmpOr(after, before); !slices.Contains(changed, e.mark.origin()) {
			changed = append(changed, e.mark.origin())
		}
	}
	s.entries, s.domains, s.err, s.touched = snap.entries, snap.domains, nil, nil
	s.org = snap.org
	for niceID, siteID := range snap.siteIDs {
		s.siteIDs[niceID], s.sites[siteID] = siteID, niceID
	}
	wakeTunnels := s.recheckedTunnels(snap.tunnels)
	s.mu.Unlock()
	up.Set(1)

	s.changes.publish(ctx, plugin.Change{Owners: changed, Tunnels: wakeTunnels})
	if len(changed) > 0 {
		log.FromContext(ctx).WithName("pangolin").Info("Pangolin resources changed outside PIC, or were found at start", "owners", len(changed), "first", first)
	}
	return nil
}

// hasLoaded reports whether a refresh has succeeded before. s.mu is held.
func (s *Sink) hasLoaded() bool { return s.domains != nil }

// snapshot is one refresh's reading of Pangolin.
type snapshot struct {
	entries map[string]*entry
	domains []pangolinapi.Domain
	siteIDs map[string]int
	tunnels map[string]plugin.TunnelCheck
	// org holds the org's roles and users when a resource is governed.
	org orgLists
}

// read reads Pangolin, without holding s.mu.
func (s *Sink) read(ctx context.Context) (snapshot, error) {
	snap := snapshot{entries: map[string]*entry{}, siteIDs: map[string]int{}, tunnels: map[string]plugin.TunnelCheck{}}
	var err error
	if snap.domains, err = s.api.ListDomains(ctx); err != nil {
		return snap, fmt.Errorf("list the org's domains: %w", err)
	}
	if snap.domains == nil {
		snap.domains = []pangolinapi.Domain{} // read, and none: not "never read"
	}
	sites, err := s.api.ListSites(ctx)
	if err != nil {
		return snap, fmt.Errorf("list the org's sites: %w", err)
	}
	for _, site := range sites {
		snap.siteIDs[site.NiceID] = site.SiteID
	}
	// The search matches names, niceIds and hosts: the marks decide what is ours.
	list, err := s.api.ListResources(ctx, niceIDPrefix(s.ownerID))
	if err != nil {
		return snap, fmt.Errorf("list the resources of owner id %s: %w", s.ownerID, err)
	}
	for _, summary := range list {
		m, ok := owned(s.ownerID, summary.NiceID, summary.Name)
		if !ok {
			continue
		}
		res, err := s.api.GetResource(ctx, summary.ResourceID)
		if pangolinapi.IsNotFound(err) {
			continue // deleted since the list
		}
		if err != nil {
			return snap, fmt.Errorf("get resource %d (%s): %w", summary.ResourceID, summary.NiceID, err)
		}
		targets, err := s.api.ListTargets(ctx, summary.ResourceID)
		if pangolinapi.IsNotFound(err) {
			continue
		}
		if err != nil {
			return snap, fmt.Errorf("list the targets of resource %d (%s): %w", summary.ResourceID, summary.NiceID, err)
		}
		e := &entry{mark: m, res: res, targets: targets}
		if s.governed(summary.NiceID, summary.ResourceID) {
			p, err := s.api.GetResourcePolicy(ctx, summary.ResourceID)
			if pangolinapi.IsNotFound(err) {
				continue
			}
			if err != nil {
				return snap, fmt.Errorf("read the access of resource %d (%s): %w", summary.ResourceID, summary.NiceID, err)
			}
			e.access = &p
		}
		snap.entries[summary.NiceID] = e
	}
	if slices.ContainsFunc(slices.Collect(maps.Values(snap.entries)), func(e *entry) bool { return e.access != nil }) {
		if snap.org.roles, err = s.api.ListRoles(ctx); err != nil {
			return snap, fmt.Errorf("list the org's roles: %w", err)
		}
		if snap.org.users, err = s.api.ListUsers(ctx); err != nil {
			return snap, fmt.Errorf("list the org's users: %w", err)
		}
		if snap.org.users == nil {
			snap.org.users = []pangolinapi.User{}
		}
		snap.org.rolesAt, snap.org.usersAt = s.now(), s.now()
	}
	s.mu.Lock()
	asked := slices.Collect(maps.Keys(s.tunnels))
	s.mu.Unlock()
	for _, niceID := range asked {
		check, err := s.checkSite(ctx, niceID)
		if err != nil {
			return snap, err
		}
		snap.tunnels[niceID] = check
	}
	return snap, nil
}

// recheckedTunnels records the sites a refresh asked about again, and returns the
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
	return ra.ResourceID == rb.ResourceID && ra.Name == rb.Name && ra.FullDomain == rb.FullDomain &&
		ra.Subdomain == rb.Subdomain && ra.DomainID == rb.DomainID && ra.SSO == rb.SSO &&
		ra.BlockAccess == rb.BlockAccess && ra.Enabled == rb.Enabled && slices.Equal(a.targets, b.targets) &&
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
