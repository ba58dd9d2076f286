package pangolin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Name is the sink's name in the configuration.
const Name = "pangolin"

// Factory is the sink's registration. It needs nothing in the manager's cache.
var Factory = plugin.SinkFactory{New: build, Offline: offline}

// build takes the options from the configuration, which has validated them (a URL, an
// org, a key, a readable CA bundle) before anything starts.
func build(ctx context.Context, deps plugin.SinkDeps) (plugin.Sink, error) {
	opts, err := optionsFrom(deps.Config)
	if err != nil {
		return nil, err
	}
	client, err := pangolinapi.New(pangolinapi.Config{BaseURL: opts.URL, Org: opts.Org, APIKey: opts.APIKey, CAPEM: opts.CAPEM, Observe: observe})
	if err != nil {
		return nil, fmt.Errorf("configure the pangolin sink: %w", err)
	}
	opts.AccessRecords = accessRecordStore(ctx, deps, opts.OwnerID, opts.APIKey)
	if opts.Managed, err = managedSitesFrom(deps.Config, deps, opts.OwnerID); err != nil {
		return nil, err
	}
	return New(client, opts), nil
}

// accessRecordStore is where the access records are kept: a ConfigMap in PIC's own
// namespace, or, outside a cluster, memory.
func accessRecordStore(ctx context.Context, deps plugin.SinkDeps, ownerID, apiKey string) AccessRecordStore {
	ns := ownNamespace()
	if ns == "" || deps.Client == nil || deps.APIReader == nil {
		log.FromContext(ctx).WithName("pangolin").Info("PIC's namespace is not known (no $POD_NAMESPACE, no ServiceAccount namespace file): the record of the secrets written to Pangolin is kept in memory only, and each is written again once after a restart")
		return &MemoryAccessRecords{}
	}
	return &ConfigMapAccessRecords{Reader: deps.APIReader, Writer: deps.Client, Namespace: ns, OwnerID: ownerID, Key: recordKey(apiKey)}
}

// Sink drives Pangolin's Integration API. It keeps in memory what this owner id has in
// Pangolin (its mirror, kept by refresh), answers Current from there, and updates it
// with its own writes (apply.go). Its parts keep their own state under their own locks:
// the mirror, the access records (accessrecords.go) and the org's lists (orgcache.go);
// the access planner (accessplan.go) holds none.
type Sink struct {
	api     *pangolinapi.Client
	ownerID string
	now     func() time.Time
	changes changes

	// mirror is embedded: s.mu is the mirror's lock, and guards the mirror's fields only.
	mirror
	// managed are the sites PIC creates and runs agents for (sites.go); nil for none.
	managed *ManagedSites

	// Access control (access.go): the durable record of what policies wrote
	// (accessrecords.go), and the key of the secrets' digests.
	accessRecords *accessRecords
	digestKey     []byte
	// org are the org's roles and users (orgcache.go).
	org *orgLists
}

// New returns a sink that works through client with opts (the client's own settings
// win over opts' URL, org, key and CA).
func New(client *pangolinapi.Client, opts Options) *Sink {
	if opts.OwnerID == "" {
		opts.OwnerID = DefaultOwnerID
	}
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = DefaultResyncPeriod
	}
	if opts.DriftPeriod <= 0 {
		opts.DriftPeriod = DefaultDriftPeriod
	}
	if opts.MaxConcurrentReads <= 0 {
		opts.MaxConcurrentReads = DefaultMaxConcurrentReads
	}
	if opts.AccessRecords == nil {
		opts.AccessRecords = &MemoryAccessRecords{}
	}
	return &Sink{
		accessRecords: newAccessRecords(opts.AccessRecords),
		digestKey:     route.DigestKey(opts.APIKey),
		org:           newOrgLists(client),
		api:           client,
		ownerID:       opts.OwnerID,
		now:           time.Now,
		mirror:        newMirror(opts),
		managed:       opts.Managed,
	}
}

var _ plugin.Sink = (*Sink)(nil)

// Features implements plugin.Sink: everything the engine can express, within the org's
// verified domains, AccessPolicies whole included (access.go), and TCP and UDP ports
// (Pangolin's raw resources; whether the server allows them is known only when it
// refuses one). Pangolin keeps no owner references, so the core deletes what a gone
// object published.
func (s *Sink) Features() engine.Features {
	s.mu.Lock()
	defer s.mu.Unlock()
	domains := make([]string, 0, len(s.domains)) // never nil: nil means "any domain"
	for _, d := range s.domains {
		if d.Verified && d.BaseDomain != "" {
			domains = append(domains, strings.ToLower(d.BaseDomain))
		}
	}
	return engine.Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, GarbageCollected: false, AccessPolicies: true, Rewrites: true, RequestHeaders: true, RawResources: true, HealthChecks: true, Domains: domains}
}

// Tunnel implements plugin.Sink: a tunnel is a Pangolin site, named by its niceId; the
// reference's namespace means nothing here.
func (s *Sink) Tunnel(ctx context.Context, ref route.TunnelRef) (plugin.TunnelCheck, error) {
	if check, ok := s.seenTunnel(ref, s.now()); ok {
		return check, nil
	}
	answer, err, _ := s.siteChecks.Do(ref.Name, func() (any, error) { return s.checkSite(ctx, ref.Name) })
	if err != nil {
		return plugin.TunnelCheck{}, unreachable(err)
	}
	check := answer.(plugin.TunnelCheck)
	s.noteTunnel(ref, check, s.now())
	return check, nil
}

// checkSite asks Pangolin about one site.
func (s *Sink) checkSite(ctx context.Context, niceID string) (plugin.TunnelCheck, error) {
	check, _, err := s.readSite(ctx, niceID)
	return check, err
}

// readSite asks Pangolin about one site: the verdict, and the site as read (the zero
// Site when it does not exist).
func (s *Sink) readSite(ctx context.Context, niceID string) (plugin.TunnelCheck, pangolinapi.Site, error) {
	site, err := s.api.GetSiteByNiceID(ctx, niceID)
	switch {
	case pangolinapi.IsNotFound(err) && s.isManaged(niceID):
		check, _ := managedSiteCheck(s.ownerID, s.api.Org(), niceID, nil)
		return check, site, nil
	case pangolinapi.IsNotFound(err):
		return plugin.TunnelCheck{State: plugin.TunnelNotFound, Message: fmt.Sprintf(
			"Pangolin site %q does not exist in org %q: nothing is published or removed until it does; in direct mode a tunnel is a site, named by its niceId: check the class, the %s annotation and the tunnel configuration",
			niceID, s.api.Org(), pic.AnnotationTunnelName)}, site, nil
	case err != nil:
		return plugin.TunnelCheck{}, site, fmt.Errorf("get Pangolin site %s: %w", niceID, err)
	}
	if check, refused := managedSiteCheck(s.ownerID, s.api.Org(), niceID, &site); refused && s.isManaged(niceID) {
		return check, site, nil
	}
	s.mu.Lock()
	s.noteSites([]pangolinapi.Site{site})
	s.mu.Unlock()
	if !site.Online {
		if s.isManaged(niceID) {
			return plugin.TunnelCheck{State: plugin.TunnelNotReady, Message: managedSiteOffline(site)}, site, nil
		}
		return plugin.TunnelCheck{State: plugin.TunnelNotReady, Message: fmt.Sprintf(
			"Pangolin site %q is not online: its routes are written, and Pangolin serves them once the site connects", niceID)}, site, nil
	}
	return plugin.TunnelCheck{State: plugin.TunnelReady}, site, nil
}

// Current implements plugin.Sink: the resources this owner id keeps for the object of
// owner's kind, namespace and name, from the sink's mirror. It waits for the first
// refresh's lists, reads the owner's own resources if that refresh has not read them
// yet, and fails while the last refresh failed: an empty answer would delete.
func (s *Sink) Current(ctx context.Context, owner route.Origin) ([]engine.Existing, error) {
	if err := s.waitListed(ctx); err != nil {
		return nil, err
	}
	for {
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return nil, unreachable(fmt.Errorf("what PIC published for %s is not known: the last read of Pangolin failed: %w", owner.Key(), err))
		}
		var pending []string
		for _, id := range s.owned(owner) {
			if s.entries[id].pending {
				pending = append(pending, id)
			}
		}
		if len(pending) == 0 {
			defer s.mu.Unlock()
			break
		}
		s.mu.Unlock()
		for _, id := range pending {
			if err := s.loadPending(ctx, id); err != nil {
				return nil, unreachable(fmt.Errorf("what PIC published for %s is not known: read it in Pangolin: %w", owner.Key(), err))
			}
		}
	}
	var out []engine.Existing
	for _, id := range s.owned(owner) {
		e := s.entries[id]
		ex := s.existing(e, owner)
		ex.Governed = s.accessRecords.governed(id, e.res.ResourceID)
		out = append(out, ex)
	}
	slices.SortFunc(out, func(a, b engine.Existing) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Holders implements plugin.Sink: the objects this owner id keeps a resource for on
// host (a published host or a port key, as Current's ClaimKey), from the sink's mirror,
// whatever those objects name now. Pangolin keeps no UID: the origins carry none. It
// waits for the first refresh's lists and fails while the last refresh failed, as
// Current does: a holder left out would let a younger object publish the host too.
func (s *Sink) Holders(ctx context.Context, host string) ([]route.Origin, error) {
	if err := s.waitListed(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, unreachable(fmt.Errorf("who holds %s in Pangolin is not known: the last read of Pangolin failed: %w", host, s.err))
	}
	var out []route.Origin
	// A resource's claim key is its mark's host or the host Pangolin serves it on: only
	// those entries are worth reading back whole, and the mirror finds them by host.
	for _, e := range s.claimants(host) {
		if e.mark.Host != host && !strings.EqualFold(e.res.FullDomain, host) {
			continue
		}
		o := e.mark.origin()
		if s.existing(e, o).ClaimKey() == host && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// existing reads an entry back into the engine's model. Drifted is set for what the
// model does not hold and PIC owns: the resource and its targets enabled, every target
// on one site, the stored subdomain in step with the routed host, the name. s.mu is held.
func (s *Sink) existing(e *entry, owner route.Origin) engine.Existing {
	if proto, _, raw := route.ParsePortKey(e.mark.Host); raw {
		return s.existingRaw(e, owner, proto)
	}
	r := engine.Resource{
		Name:      engine.ResourceName(owner, e.mark.Host),
		Namespace: owner.Namespace,
		Origin:    owner,
		Host:      e.mark.Host,
		SSO:       ptrTo(e.res.SSO),
		// BlockAccess is only in GET: the mirror holds what GET or an update answered.
		BlockAccess: ptrTo(e.res.BlockAccess),
	}
	for _, h := range e.res.Headers {
		r.Headers = append(r.Headers, route.Header{Name: h.Name, Value: h.Value})
	}
	drifted := !e.res.Enabled || e.res.Name != resourceName(markOf(owner, e.mark.Host, e.res.FullDomain))
	if base := s.baseDomain(e.res.DomainID); base == "" {
		drifted = true // a domain the org lost, or one not verified any more
	} else if e.res.FullDomain == base {
		r.Domain = base
	} else if sub, ok := strings.CutSuffix(e.res.FullDomain, "."+base); ok {
		r.Subdomain, r.Domain = sub, base
	} else {
		drifted = true
	}
	if !strings.EqualFold(e.res.Subdomain, r.Subdomain) {
		drifted = true // Pangolin's update defect: the column moved, the routing did not
	}
	site := -1
	for _, t := range e.targets {
		if !t.Enabled || site != -1 && t.SiteID != site {
			drifted = true
		}
		site = t.SiteID
		// A path written in an equivalent form, for a router name of its own, reads
		// back as the path it stands for.
		f := original(formOf(t))
		target := engine.Target{
			Backend: route.Backend{Host: t.IP, Port: int32(t.Port), Scheme: t.Method},
			Path:    f.path, Match: f.match, Priority: int32(t.Priority),
			Rewrite: f.rewrite, RewriteType: f.rewriteType,
		}
		var read bool
		if target.Backend.Health, read = s.healthRead(e, target, t); !read {
			drifted = true
		}
		r.Targets = append(r.Targets, target)
	}
	// The engine orders targets highest priority first, then by path; creation order
	// breaks the remaining ties, as it does when PIC creates them.
	slices.SortStableFunc(r.Targets, func(a, b engine.Target) int {
		if a.Priority != b.Priority {
			return int(b.Priority - a.Priority)
		}
		return strings.Compare(a.Path, b.Path)
	})
	r.Tunnel = route.TunnelRef{Namespace: e.tunnelNS, Name: s.sites[site]}
	return engine.Existing{Resource: r, Drifted: drifted, Status: status(e)}
}

// existingRaw reads a raw resource back: the port key its mark claims, protocol from
// that claim and the port Pangolin holds (a hand edit moves it, and the engine then
// asks to move it back), one target per backend, no domain and no access settings,
// as the engine models a raw resource. Drifted, besides what it means for HTTP: a mode
// other than the claim's, or a target with a path or a method, none of which PIC
// writes. s.mu is held.
func (s *Sink) existingRaw(e *entry, owner route.Origin, proto route.Protocol) engine.Existing {
	r := engine.Resource{
		Name:      engine.ResourceName(owner, e.mark.Host),
		Namespace: owner.Namespace,
		Origin:    owner,
		Host:      e.mark.Host,
		Protocol:  proto,
		ProxyPort: int32(e.res.ProxyPort),
	}
	drifted := !e.res.Enabled || e.res.Mode != string(proto) ||
		e.res.Name != resourceName(markOf(owner, e.mark.Host, e.mark.Host))
	site := -1
	for _, t := range e.targets {
		if !t.Enabled || site != -1 && t.SiteID != site || formOf(t) != (form{}) || t.Method != "" {
			drifted = true
		}
		site = t.SiteID
		target := engine.Target{Backend: route.Backend{Host: t.IP, Port: int32(t.Port), Scheme: string(proto)}}
		var read bool
		if target.Backend.Health, read = s.healthRead(e, target, t); !read {
			drifted = true
		}
		r.Targets = append(r.Targets, target)
	}
	r.Tunnel = route.TunnelRef{Namespace: e.tunnelNS, Name: s.sites[site]}
	return engine.Existing{Resource: r, Drifted: drifted, Status: status(e)}
}

// status is neutral: Pangolin has no verdict of its own. A resource serves once it is
// enabled and has an enabled target with a method (the reference's section 7); a raw
// one needs no method, and has no URL: Pangolin does not report the public address of
// its server.
func status(e *entry) engine.Status {
	raw := e.res.Mode == pangolinapi.ModeTCP || e.res.Mode == pangolinapi.ModeUDP
	st := engine.Status{Phase: engine.PhasePending}
	if !raw {
		st.URL = "https://" + e.res.FullDomain
	}
	if !e.res.Enabled {
		return st
	}
	for _, t := range e.targets {
		if t.Enabled && (raw || t.Method != "") {
			st.Phase = engine.PhaseReady
		}
	}
	return st
}

// Describe implements plugin.Sink: a Pangolin resource is named by its niceId, which
// users search for in Pangolin's dashboard, and its site by the site's niceId, without
// the namespace the reference carries. Pangolin resources are not Kubernetes objects.
func (s *Sink) Describe(r engine.Resource) plugin.Description {
	return plugin.Description{
		Kind:   "Pangolin resource",
		Name:   niceID(s.ownerID, markOf(r.Origin, r.Host, r.PublishedHost())),
		Tunnel: "site " + r.Tunnel.Name,
	}
}

// Declare implements plugin.Sink: the sink watches nothing in Kubernetes. What it sees
// change in Pangolin (a refresh, its own writes) reaches the controllers as Changes,
// and the refresh runs on the leader only, where the controllers it tells run.
func (s *Sink) Declare() plugin.SinkDeclaration {
	runnables := []manager.Runnable{&refresher{sink: s}}
	if s.managed != nil {
		runnables = append(runnables, &siteKeeper{sink: s, managed: s.managed})
	}
	return plugin.SinkDeclaration{
		Changes:   s.changes.subscribe,
		Runnables: runnables,
	}
}

func ptrTo[T any](v T) *T { return &v }

// unreachable marks the errors that mean Pangolin is out of reach for now: Pangolin
// itself says what a refusal is (pangolinapi.IsTransient).
func unreachable(err error) error {
	if pangolinapi.IsTransient(err) {
		return plugin.Unreachable(err)
	}
	return err
}
