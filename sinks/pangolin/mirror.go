package pangolin

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/sync/singleflight"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// tunnelTTL is how long a site's state is trusted: every reconcile asks, and a site
// rarely changes; a resync asks again at once.
const tunnelTTL = 30 * time.Second

// mirror is what this owner id has in Pangolin, with the org's domains and sites, as the
// sink last read (refresh.go) or wrote it (apply.go): this sink's informer. Current,
// Holders and the writes read it; only a refresh, the sink's own writes and Tunnel's
// answers about sites change it.
// Its lock, mu, guards its fields and nothing else.
type mirror struct {
	// resync is how often it is read again; drift, how often a refresh reads every
	// resource whole (Options.DriftPeriod).
	resync time.Duration
	drift  time.Duration
	// reads holds a token per read of one resource in flight, the first refresh's and
	// Current's together. readLimit, the same number, bounds a refresh's own readers:
	// the tokens are handed out first come, first served, so without it every resource
	// of the first refresh would queue for one before the read a reconcile waits for.
	readLimit int
	reads     chan struct{}

	// refreshing serializes refreshes.
	refreshing sync.Mutex
	// listed is closed once the first refresh has read the lists, or failed.
	listed     chan struct{}
	listedOnce sync.Once
	// loading keeps one read per resource in flight while the first refresh runs.
	loading singleflight.Group
	// siteChecks keeps one question per site in flight: the workers that need a site
	// at once (all of them, at start) share its answer.
	siteChecks singleflight.Group

	mu  sync.Mutex
	err error // the last refresh's, nil once one succeeded after it
	// complete: a refresh has read every resource whole; lastFull is when the last full
	// refresh started.
	complete bool
	lastFull time.Time
	// entries are what this owner id has in Pangolin, by niceId. They change through
	// setEntry, deleteEntry and setEntries only, which keep the indexes in step.
	entries map[string]*entry
	// byHost indexes the entries that may hold a claim key (Holders) by foldKey of
	// their mark's host and of the host Pangolin serves them on; byOwner, by the object
	// their mark names (Current).
	byHost  index[string]
	byOwner index[route.Origin]
	// touched are the niceIds Apply wrote while a refresh runs: the refresh read them
	// before or during the write, so what the write answered wins.
	touched map[string]bool
	domains []pangolinapi.Domain
	siteIDs map[string]int // niceId -> siteId
	sites   map[int]string // siteId -> niceId
	// siteTypes are the sites' types, by siteId: "newt", "local" or "wireguard". Only
	// a Newt site's targets get health checks (health.go).
	siteTypes map[int]string
	tunnels   map[string]*siteSeen // by niceId: the last Tunnel answers
}

// newMirror is an empty mirror, read at the pace opts ask (New has set their defaults).
func newMirror(opts Options) mirror {
	return mirror{
		resync:    opts.ResyncPeriod,
		drift:     opts.DriftPeriod,
		readLimit: opts.MaxConcurrentReads,
		reads:     make(chan struct{}, opts.MaxConcurrentReads),
		listed:    make(chan struct{}),
		entries:   map[string]*entry{},
		byHost:    index[string]{},
		byOwner:   index[route.Origin]{},
		siteIDs:   map[string]int{},
		sites:     map[int]string{},
		siteTypes: map[int]string{},
		tunnels:   map[string]*siteSeen{},
	}
}

// entry is one resource of this owner id's, with its targets, as Pangolin last answered.
type entry struct {
	mark    mark
	res     pangolinapi.Resource
	targets []pangolinapi.Target
	// tunnelNS is the namespace of the tunnel reference last written for it. Pangolin
	// knows sites, not namespaces: until this process writes, the engine's reference
	// and the one read back differ only by it, and Apply then writes nothing.
	tunnelNS string
	// access is the resource's access state (GET /resource/:id/policies), read for the
	// resources a policy governs and kept up to date by the sink's writes; nil when not
	// read.
	access *pangolinapi.ResourcePolicy
	// applied is the policy last applied whole, for render; nil for none.
	applied *route.AccessPolicy
	// listFP is the fingerprint of the list item this reading goes with: a light
	// refresh reads the resource again only when its list item's differs.
	listFP uint64
	// pending: listed by the first refresh, not yet read whole; only mark, ids and
	// the list's fields are known.
	pending bool
	// unsent are the health checks the engine asked for targets on a site that is not
	// a Newt site, which the sink does not write (health.go): read back, such a target
	// has the check asked, and a converged resource is not written again. A map
	// replaced whole, never changed in place, so that clones may share it.
	unsent map[targetKey]route.HealthCheck
}

func (e *entry) clone() *entry {
	c := *e
	c.targets = slices.Clone(e.targets)
	c.access = clonePolicy(e.access)
	return &c
}

// siteSeen is what Tunnel last learnt of a site, and who asked.
type siteSeen struct {
	check plugin.TunnelCheck
	at    time.Time
	refs  map[route.TunnelRef]bool
}

// put keeps in the mirror what a write answered, as a copy: the writer goes on
// changing its own.
func (m *mirror) put(id string, e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setEntry(id, e.clone())
	if m.touched != nil {
		m.touched[id] = true
	}
}

// forget drops a resource from the mirror: deleted, or gone from Pangolin.
func (m *mirror) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteEntry(id)
	if m.touched != nil {
		m.touched[id] = true
	}
}

// lookup is a copy of the entry under id, if there is one: a writer changes its copy,
// and puts it back.
func (m *mirror) lookup(id string) (*entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[id]
	if !ok {
		return nil, false
	}
	return e.clone(), true
}

// setEntry puts e under id. m.mu is held.
func (m *mirror) setEntry(id string, e *entry) {
	m.unindex(id)
	m.entries[id] = e
	m.index(id, e)
}

// deleteEntry removes id. m.mu is held.
func (m *mirror) deleteEntry(id string) {
	m.unindex(id)
	delete(m.entries, id)
}

// setEntries replaces every entry. m.mu is held.
func (m *mirror) setEntries(entries map[string]*entry) {
	m.entries, m.byHost, m.byOwner = entries, index[string]{}, index[route.Origin]{}
	for id, e := range entries {
		m.index(id, e)
	}
}

// claimants are the entries whose mark's host, or the host Pangolin serves them on, is
// host in any case, by niceId: those that may hold host as their claim key. m.mu is held.
func (m *mirror) claimants(host string) []*entry {
	ids := m.byHost.ids(foldKey(host))
	out := make([]*entry, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.entries[id])
	}
	return out
}

// owned are the niceIds of the entries whose mark names owner's object, sorted. m.mu
// is held.
func (m *mirror) owned(owner route.Origin) []string {
	return m.byOwner.ids(route.Origin{Kind: owner.Kind, Namespace: owner.Namespace, Name: owner.Name})
}

func (m *mirror) index(id string, e *entry) {
	for _, host := range claimHosts(e) {
		m.byHost.add(host, id)
	}
	m.byOwner.add(e.mark.origin(), id)
}

func (m *mirror) unindex(id string) {
	e, ok := m.entries[id]
	if !ok {
		return
	}
	for _, host := range claimHosts(e) {
		m.byHost.remove(host, id)
	}
	m.byOwner.remove(e.mark.origin(), id)
}

// index finds the niceIds of the entries by a key of theirs.
type index[K comparable] map[K]map[string]bool

func (x index[K]) add(k K, id string) {
	if x[k] == nil {
		x[k] = map[string]bool{}
	}
	x[k][id] = true
}

func (x index[K]) remove(k K, id string) {
	delete(x[k], id)
	if len(x[k]) == 0 {
		delete(x, k)
	}
}

// ids are k's niceIds, sorted.
func (x index[K]) ids(k K) []string { return slices.Sorted(maps.Keys(x[k])) }

// claimHosts are the keys of byHost e is found under.
func claimHosts(e *entry) []string {
	mark, served := foldKey(e.mark.Host), foldKey(e.res.FullDomain)
	if mark == served {
		return []string{mark}
	}
	return []string{mark, served}
}

// foldKey is s with each rune replaced by the least of its case-folding orbit: two
// strings have the same foldKey exactly when strings.EqualFold says they are equal.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// baseDomain is the base domain of a verified domain of the org, or "". m.mu is held.
func (m *mirror) baseDomain(domainID string) string {
	for _, d := range m.domains {
		if d.DomainID == domainID && d.Verified {
			return strings.ToLower(d.BaseDomain)
		}
	}
	return ""
}

// verifiedDomain is the org's verified domain whose base domain is name, in any case
// (the last listed, should several be), or nil.
func (m *mirror) verifiedDomain(name string) *pangolinapi.Domain {
	m.mu.Lock()
	defer m.mu.Unlock()
	var domain *pangolinapi.Domain
	for i := range m.domains {
		if m.domains[i].Verified && strings.EqualFold(m.domains[i].BaseDomain, name) {
			d := m.domains[i]
			domain = &d
		}
	}
	return domain
}

// knownSite is the id of the site niceID names, once a list or a read has shown it.
func (m *mirror) knownSite(niceID string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.siteIDs[niceID]
	return id, ok
}

// newtSite reports whether the site's agent is Newt, which alone probes targets.
func (m *mirror) newtSite(siteID int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.siteTypes[siteID] == "newt"
}

// waitListed waits until the first refresh has read the lists, or failed.
func (m *mirror) waitListed(ctx context.Context) error {
	select {
	case <-m.listed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the first read of Pangolin: %w", ctx.Err())
	}
}

// seenTunnel is what Tunnel last learnt of ref's site, unless it is older than
// tunnelTTL at now; ref is noted as one that asks (recheckedTunnels wakes it).
func (m *mirror) seenTunnel(ref route.TunnelRef, now time.Time) (plugin.TunnelCheck, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen, ok := m.tunnels[ref.Name]
	if !ok || now.Sub(seen.at) >= tunnelTTL {
		return plugin.TunnelCheck{}, false
	}
	seen.refs[ref] = true
	return seen.check, true
}

// noteTunnel keeps what Tunnel learnt of ref's site at now.
func (m *mirror) noteTunnel(ref route.TunnelRef, check plugin.TunnelCheck, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := m.tunnels[ref.Name]
	if seen == nil {
		seen = &siteSeen{refs: map[route.TunnelRef]bool{}}
		m.tunnels[ref.Name] = seen
	}
	seen.check, seen.at = check, now
	seen.refs[ref] = true
}

// noteSites keeps the org's sites. m.mu is held.
func (m *mirror) noteSites(sites []pangolinapi.Site) {
	for _, site := range sites {
		m.siteIDs[site.NiceID], m.sites[site.SiteID], m.siteTypes[site.SiteID] = site.SiteID, site.NiceID, site.Type
	}
}
