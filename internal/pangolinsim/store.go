package pangolinsim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// resource is a stored resource. sso, emailWhitelist and applyRules live in the
// resource's default policy on a real server: GET shows them, the create response shows
// the resource's own (null) columns.
type resource struct {
	id     int
	org    string
	niceID string
	name   string
	// mode is "http", or "tcp" or "udp" for a raw resource, which has a proxyPort and
	// neither domain nor subdomain.
	mode                 string
	proxyPort            *int
	proxyProtocol        bool
	proxyProtocolVersion int
	subdomain            *string
	fullDomain           string
	domainID             string
	ssl                  bool
	blockAccess          bool
	enabled              bool
	stickySession        bool
	sso                  bool
	emailWhitelist       bool
	applyRules           bool
	postAuthPath         *string
	tlsServerName        *string
	setHostHeader        *string
	headers              json.RawMessage
	skipToIdpID          *int // the policy's idpId
	access               access
	search               searchFields // matches' memo, not state
}

// target is a stored target.
type target struct {
	id              int
	resourceID      int
	siteID          int
	name            string
	ip              string
	port            int
	method          *string
	enabled         bool
	path            *string
	pathMatchType   *string
	rewritePath     *string
	rewritePathType *string
	priority        *int
	internalPort    *int
	hcEnabled       bool
	hc              map[string]json.RawMessage // the other hc* fields, as sent
	// health is hcHealth: "unknown", "unhealthy" or "healthy" (health.go).
	health string
}

// Resource is a resource as the fake stores it, for seeding and for assertions that do
// not go through the API.
type Resource struct {
	ID     int
	Org    string // "" means Options.Org when seeding
	NiceID string // "" gets a random one when seeding
	Name   string
	// Mode is "http" ("" when seeding), or "tcp" or "udp" for a raw resource on
	// ProxyPort, which has no domain.
	Mode        string
	ProxyPort   int
	Subdomain   *string // nil for the apex
	FullDomain  string  // "" is computed from DomainID and Subdomain when seeding
	DomainID    string
	Enabled     bool
	SSL         bool
	BlockAccess bool
	SSO         bool
	// Headers are the resource's headers, as stored; not seeded.
	Headers []Header
}

// Header is one of a resource's headers.
type Header struct{ Name, Value string }

// Target is a target as the fake stores it.
type Target struct {
	ID            int
	ResourceID    int
	SiteID        int
	IP            string
	Port          int
	Method        string // "" when none was sent
	Enabled       bool
	Path          string
	PathMatchType string
	Priority      int // 0 when none is stored
	HCEnabled     bool
	// HC is the stored health check, and HCHealth its health; not seeded.
	HC       HealthCheck
	HCHealth string
	// RewritePath and RewritePathType are "" when unset.
	RewritePath     string
	RewritePathType string
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (r *resource) snapshot() Resource {
	out := Resource{
		ID: r.id, Org: r.org, NiceID: r.niceID, Name: r.name, Mode: r.mode, Subdomain: r.subdomain,
		FullDomain: r.fullDomain, DomainID: r.domainID, Enabled: r.enabled, SSL: r.ssl,
		BlockAccess: r.blockAccess, SSO: r.sso,
	}
	if r.proxyPort != nil {
		out.ProxyPort = *r.proxyPort
	}
	if len(r.headers) > 0 {
		_ = json.Unmarshal(r.headers, &out.Headers) // validated on the way in
	}
	return out
}

// raw reports whether r is a raw (TCP or UDP) resource.
func (r *resource) raw() bool { return r.mode != "http" }

func (t *target) snapshot() Target {
	out := Target{
		ID: t.id, ResourceID: t.resourceID, SiteID: t.siteID, IP: t.ip, Port: t.port,
		Method: deref(t.method), Enabled: t.enabled, Path: deref(t.path),
		PathMatchType: deref(t.pathMatchType), HCEnabled: t.hcEnabled, HC: t.healthCheck(), HCHealth: t.health,
		RewritePath: deref(t.rewritePath), RewritePathType: deref(t.rewritePathType),
	}
	if t.priority != nil {
		out.Priority = *t.priority
	}
	return out
}

// SeedResource stores r as is, without validation, and returns it with its id: the way
// to place resources "owned by someone else" (decoys, duplicates, other orgs).
func (s *Server) SeedResource(r Resource) Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Org == "" {
		r.Org = s.opts.Org
	}
	s.orgs[r.Org] = true
	if r.NiceID == "" {
		r.NiceID = s.newNiceID(r.Org)
	}
	if r.Mode == "" {
		r.Mode = "http"
	}
	if r.FullDomain == "" && r.Mode == "http" {
		if d, ok := s.domain(r.DomainID); ok {
			r.FullDomain = fullDomain(d, r.Subdomain)
		}
	}
	res := &resource{
		id: s.nextRes, org: r.Org, niceID: r.NiceID, name: r.Name, mode: r.Mode, subdomain: r.Subdomain,
		fullDomain: strings.ToLower(r.FullDomain), domainID: r.DomainID, ssl: r.SSL,
		blockAccess: r.BlockAccess, enabled: r.Enabled, sso: r.SSO, access: s.newPolicy(),
		proxyProtocolVersion: 1,
	}
	if r.Mode != "http" {
		port := r.ProxyPort
		res.proxyPort = &port
	}
	s.nextRes++
	s.res[res.id] = res
	return res.snapshot()
}

// SeedTarget stores t on its resource, without validation, and returns it with its id.
func (s *Server) SeedTarget(t Target) Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	tg := &target{
		id: s.nextTgt, resourceID: t.ResourceID, siteID: t.SiteID, ip: t.IP, port: t.Port,
		method: strp(t.Method), enabled: t.Enabled, path: strp(t.Path),
		pathMatchType: strp(t.PathMatchType), hcEnabled: t.HCEnabled, health: healthUnknown,
	}
	if t.HCEnabled {
		tg.health = healthUnhealthy // as a create leaves it
	}
	if t.Priority != 0 {
		p := t.Priority
		tg.priority = &p
	}
	if r, ok := s.res[t.ResourceID]; ok {
		tg.name = fmt.Sprintf("Resource %s - %s:%d", r.name, t.IP, t.Port)
	}
	s.nextTgt++
	s.putTarget(tg)
	return tg.snapshot()
}

// Resources returns every stored resource, by id.
func (s *Server) Resources() []Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Resource, 0, len(s.res))
	for _, r := range s.res {
		out = append(out, r.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Sites returns the org's sites, AnySite's included.
func (s *Server) Sites() []Site {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Site(nil), s.opts.Sites...)
}

// Targets returns the targets of a resource, by id.
func (s *Server) Targets(resourceID int) []Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Target
	for _, t := range s.targetsOf(resourceID) {
		out = append(out, t.snapshot())
	}
	return out
}

// matches is the resource list's search: whether name, niceId or full domain contains
// lowerQuery (lower-cased), case-insensitive. A list reads every resource of the org, so
// the lower-cased fields are kept until one changes rather than made again each time.
func (r *resource) matches(lowerQuery string) bool {
	if k := &r.search; k.name != r.name || k.niceID != r.niceID || k.fullDomain != r.fullDomain {
		*k = searchFields{
			name: r.name, niceID: r.niceID, fullDomain: r.fullDomain,
			lower: [3]string{strings.ToLower(r.name), strings.ToLower(r.niceID), strings.ToLower(r.fullDomain)},
		}
	}
	for _, f := range r.search.lower {
		if strings.Contains(f, lowerQuery) {
			return true
		}
	}
	return false
}

// searchFields are a resource's searched fields, as they were and lower-cased.
type searchFields struct {
	name, niceID, fullDomain string
	lower                    [3]string
}

// ResourcesWithTargets is how many resources have at least one target: the hosts
// that route somewhere. It copies nothing, so it can be asked often.
func (s *Server) ResourcesWithTargets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range s.byResource {
		if _, exists := s.res[id]; exists { // SeedTarget does not check its resource
			n++
		}
	}
	return n
}

// targetsOf returns a resource's targets by id (creation order). s.mu must be held.
func (s *Server) targetsOf(resourceID int) []*target {
	out := make([]*target, 0, len(s.byResource[resourceID]))
	for _, t := range s.byResource[resourceID] {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// putTarget stores t, new or changed. s.mu must be held.
func (s *Server) putTarget(t *target) {
	s.targets[t.id] = t
	of := s.byResource[t.resourceID]
	if of == nil {
		of = map[int]*target{}
		s.byResource[t.resourceID] = of
	}
	of[t.id] = t
}

// dropTarget removes the target id, if there is one. s.mu must be held.
func (s *Server) dropTarget(id int) {
	t, found := s.targets[id]
	if !found {
		return
	}
	delete(s.targets, id)
	delete(s.byResource[t.resourceID], id)
	if len(s.byResource[t.resourceID]) == 0 {
		delete(s.byResource, t.resourceID)
	}
}

func (s *Server) domain(id string) (Domain, bool) {
	for _, d := range s.opts.Domains {
		if d.ID == id {
			return d, true
		}
	}
	return Domain{}, false
}

func (s *Server) site(id int) (Site, bool) {
	for _, st := range s.opts.Sites {
		if st.ID == id {
			return st, true
		}
	}
	return Site{}, false
}

// fullDomain is the routed host: lower case, the apex for a nil subdomain, and always
// the apex on a cname domain.
func fullDomain(d Domain, sub *string) string {
	if sub == nil || d.Type == "cname" {
		return strings.ToLower(d.BaseDomain)
	}
	return strings.ToLower(*sub + "." + d.BaseDomain)
}

var (
	niceAdjectives = []string{"murky", "imaginary", "well-informed", "old", "brave", "quiet", "amber", "swift", "gentle", "rusty", "lucky", "frozen", "hollow", "vivid", "polite", "sleepy"}
	niceNouns      = []string{"shrew", "kangaroo-rat", "acrochordus-granulatus", "illacme-plenipes", "heron", "lynx", "otter", "marmot", "gecko", "ibis", "tapir", "vole", "newt", "pika", "quokka", "wombat"}
)

// newNiceID draws an unused niceId in the org. s.mu must be held.
func (s *Server) newNiceID(org string) string {
	for try := 0; ; try++ {
		id := niceAdjectives[s.rng.IntN(len(niceAdjectives))] + "-" +
			niceAdjectives[s.rng.IntN(len(niceAdjectives))] + "-" +
			niceNouns[s.rng.IntN(len(niceNouns))]
		if try > 50 {
			id += fmt.Sprintf("-%d", s.rng.IntN(1_000_000)) // a crowded fixture: widen the space
		}
		if s.resourceByNiceID(org, id) == nil {
			return id
		}
	}
}

func (s *Server) resourceByNiceID(org, niceID string) *resource {
	for _, r := range s.res {
		if r.org == org && r.niceID == niceID {
			return r
		}
	}
	return nil
}

// SetNewtVersion sets the version a site's Newt agent reports, as a real server records
// it when the agent connects.
func (s *Server) SetNewtVersion(niceID, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.opts.Sites {
		if s.opts.Sites[i].NiceID == niceID {
			s.opts.Sites[i].NewtVersion = version
		}
	}
}

// SetSiteOnline changes whether a site's agent is connected, as GET site reports it.
func (s *Server) SetSiteOnline(niceID string, online bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.opts.Sites {
		if s.opts.Sites[i].NiceID == niceID {
			s.opts.Sites[i].Offline = !online
		}
	}
}
