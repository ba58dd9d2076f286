package pangolinapi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// Domain is a base domain of the org. Resources name it by DomainID.
type Domain struct {
	DomainID   string `json:"domainId"`
	BaseDomain string `json:"baseDomain"`
	Verified   bool   `json:"verified"`
	Type       string `json:"type"` // "ns", "cname" or "wildcard"
}

// Site is a tunnel endpoint. Targets name it by the numeric SiteID.
type Site struct {
	SiteID int    `json:"siteId"`
	NiceID string `json:"niceId"`
	Name   string `json:"name"`
	Type   string `json:"type"` // "newt", "wireguard" or "local"
	// Online is whether the site's agent is connected. The list leaves it out for a
	// local site (no agent), which then reads false.
	Online bool `json:"online"`
	// ResourceCount is how many resources have a target on the site. Only the list
	// reports it: a site read alone reads 0.
	ResourceCount int `json:"resourceCount"`
	// NewtVersion is the version the site's Newt agent reported when it last connected;
	// "" for a site no agent has connected to, or one of another type.
	NewtVersion string `json:"newtVersion"`
}

// Resource is a public resource as GET, create and update report it: one host (mode
// "http"), or one public port of the Pangolin server (a raw resource, mode "tcp" or
// "udp", with ProxyPort and no host).
type Resource struct {
	ResourceID int
	NiceID     string
	Name       string
	Mode       string // ModeHTTP, ModeTCP or ModeUDP
	// ProxyPort is the public port of a raw resource; 0 for an HTTP one.
	ProxyPort int
	// FullDomain is the routed host, always lower case.
	FullDomain string
	// Subdomain is "" for the domain's apex. It is the stored column, which the server's
	// update defect can leave out of step with FullDomain: route by FullDomain.
	Subdomain string
	DomainID  string
	SSO       bool // the effective value (the resource's policy)
	// SSOReported is false when the answer carried no sso (null): the create response
	// carries the raw column, which the policy overrides.
	SSOReported bool
	BlockAccess bool
	Enabled     bool
	SSL         bool
	// EmailWhitelistEnabled and ApplyRules are the effective values too. Both are off
	// on a new resource.
	EmailWhitelistEnabled bool
	ApplyRules            bool
	// SkipToIdpID is the identity provider visitors are sent to without the choice of
	// a login method; 0 for none.
	SkipToIdpID int
	// Headers are set on every request to the resource (Traefik customRequestHeaders),
	// in the order stored; none when the server holds null.
	Headers []Header
}

// Header is one HTTP header of a resource's headers.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ResourceSummary is a resource as the list reports it. The list has no subdomain nor
// blockAccess: a type without them keeps a caller from diffing a zero value it never read.
type ResourceSummary struct {
	ResourceID int
	NiceID     string
	Name       string
	Mode       string // ModeHTTP, ModeTCP or ModeUDP
	ProxyPort  int    // 0 for an HTTP resource
	FullDomain string // "" for a raw resource
	DomainID   string
	SSO        bool
	Enabled    bool
	SSL        bool
	// Fingerprint digests every field the list item carries that a write can change:
	// the fields above, the access flags and ids (whitelist, passwordId, pincodeId,
	// headerAuthId) and each embedded target's id, site, ip, port and enabled; not the
	// health fields, which Newt changes. Two readings of an unchanged resource give the
	// same one. What the list lacks (blockAccess, the stored subdomain, a target's
	// method, path, match type and priority, roles and users) changes it not.
	Fingerprint uint64
}

// Target is one backend of a resource. Targets with the same path and match type form
// one router; Path and PathMatchType are "" when the target matches every path.
type Target struct {
	TargetID      int
	ResourceID    int
	SiteID        int
	IP            string // host name or IP address
	Port          int
	Method        string // "http", "https" or "h2c"; "" routes nowhere
	Enabled       bool
	Path          string
	PathMatchType string // "exact", "prefix" or "regex"
	// Priority is the stored priority; 0 when the server stored none. 100, the default,
	// makes Pangolin derive the router priority from the path (see pangolinsim.Routers).
	Priority int
	// RewritePath and RewritePathType rewrite the path of the requests the target
	// matches (a Traefik middleware); both "" for none.
	RewritePath     string
	RewritePathType string // "exact", "prefix", "regex" or "stripPrefix"
	// Health is the target's health check as stored. Its health (hcHealth) is not
	// read: Newt changes it, and no write of PIC's depends on it.
	Health HealthCheck
}

// Resource modes: an HTTP host, or a raw resource forwarding one public TCP or UDP port.
const (
	ModeHTTP = "http"
	ModeTCP  = "tcp"
	ModeUDP  = "udp"
)

// Target methods and path match types.
const (
	MethodHTTP  = "http"
	MethodHTTPS = "https"
	MethodH2C   = "h2c"

	MatchExact  = "exact"
	MatchPrefix = "prefix"
	MatchRegex  = "regex"

	// RewriteStripPrefix is the rewrite path type that may come without a rewrite
	// path; the others are the match types.
	RewriteStripPrefix = "stripPrefix"
)

// Host is where a resource is served: a domain of the org and a subdomain of it.
// Both always travel together, because the server's update recomputes the routed host
// only when domainId is sent: a subdomain alone changes a column and not the routing.
type Host struct {
	DomainID string
	// Subdomain is "" for the apex. It may contain dots ("a.b"). It is sent lower-cased:
	// the server lower-cases the routed host but stores the subdomain as sent, and a
	// mixed-case subdomain would never compare equal to what the controller wants.
	Subdomain string
}

func (h Host) validate() error {
	if h.DomainID == "" {
		return fmt.Errorf("host: domain id is required")
	}
	return nil
}

// subdomainJSON is the wire value: null for the apex.
func (h Host) subdomainJSON() *string {
	if h.Subdomain == "" {
		return nil
	}
	s := strings.ToLower(h.Subdomain)
	return &s
}

// ResolveHost maps a host name to the domain and subdomain that serve it, the way
// Pangolin's blueprints do: among verified domains, the longest base domain that equals
// the host or is a dot-suffix of it. A "cname" domain serves only its base domain.
// A host under none of the org's domains is an error: sent as a subdomain anyway, the
// server would silently prefix it onto a domain of the org.
func ResolveHost(host string, domains []Domain) (Host, error) {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	var best *Domain
	for i := range domains {
		d := &domains[i]
		base := strings.ToLower(d.BaseDomain)
		if !d.Verified || base == "" {
			continue
		}
		match := h == base || (d.Type != "cname" && strings.HasSuffix(h, "."+base))
		if match && (best == nil || len(base) > len(best.BaseDomain)) {
			best = d
		}
	}
	if best == nil {
		return Host{}, fmt.Errorf("resolve host %q: no verified domain of the org serves it", host)
	}
	sub := strings.TrimSuffix(strings.TrimSuffix(h, strings.ToLower(best.BaseDomain)), ".")
	return Host{DomainID: best.DomainID, Subdomain: sub}, nil
}

// flexBool decodes the three shapes the server uses for one flag: a boolean (GET), 0/1
// (the resource list) and null (the create response's raw sso column).
type flexBool struct {
	value bool
	set   bool
}

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch s := string(data); s {
	case "null":
		*b = flexBool{}
	case "true", "1":
		*b = flexBool{value: true, set: true}
	case "false", "0":
		*b = flexBool{value: false, set: true}
	default:
		return fmt.Errorf("flag: want a boolean, 0, 1 or null, got %.20s", s)
	}
	return nil
}

// resourceJSON is a resource in every shape the server sends (GET, create, update, list).
type resourceJSON struct {
	ResourceID int     `json:"resourceId"`
	NiceID     string  `json:"niceId"`
	Name       string  `json:"name"`
	Mode       *string `json:"mode"`
	ProxyPort  *int    `json:"proxyPort"`
	// HTTP and Protocol are the deprecated pair that mode replaced: a server without
	// mode says http:false, protocol:"tcp" for a raw TCP resource.
	HTTP        *bool    `json:"http"`
	Protocol    *string  `json:"protocol"`
	FullDomain  *string  `json:"fullDomain"`
	Subdomain   *string  `json:"subdomain"`
	DomainID    *string  `json:"domainId"`
	SSO         flexBool `json:"sso"`
	BlockAccess flexBool `json:"blockAccess"`
	Enabled     flexBool `json:"enabled"`
	SSL         flexBool `json:"ssl"`
	// Access flags of the policy: null in the create response.
	EmailWhitelistEnabled flexBool    `json:"emailWhitelistEnabled"`
	ApplyRules            flexBool    `json:"applyRules"`
	SkipToIdpID           *int        `json:"skipToIdpId"`
	Headers               flexHeaders `json:"headers"`
	// Only in the list.
	Whitelist    flexBool         `json:"whitelist"`
	PasswordID   *int             `json:"passwordId"`
	PincodeID    *int             `json:"pincodeId"`
	HeaderAuthID *int             `json:"headerAuthId"`
	Targets      []listTargetJSON `json:"targets"`
}

// flexHeaders decodes a resource's headers in both shapes the server uses: an array
// (GET) and the same array JSON-encoded in a string (the update response), or null.
type flexHeaders []Header

func (h *flexHeaders) UnmarshalJSON(data []byte) error {
	var encoded string
	if err := json.Unmarshal(data, &encoded); err == nil {
		if encoded == "" {
			*h = nil
			return nil
		}
		data = []byte(encoded)
	}
	var list []Header
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("headers: want an array of {name, value}, as such or JSON-encoded, got %.40s", data)
	}
	*h = list
	return nil
}

// listTargetJSON is a target as the resource list embeds it: no method, path, match
// type or priority.
type listTargetJSON struct {
	TargetID int    `json:"targetId"`
	SiteID   int    `json:"siteId"`
	IP       string `json:"ip"`
	Port     int    `json:"port"`
	Enabled  bool   `json:"enabled"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// mode is the resource's mode, read from the deprecated http/protocol pair when the
// server sends no mode.
func (r resourceJSON) mode() string {
	switch {
	case r.Mode != nil && *r.Mode != "":
		return *r.Mode
	case r.HTTP != nil && !*r.HTTP && r.Protocol != nil:
		return *r.Protocol
	}
	return ModeHTTP
}

func (r resourceJSON) resource() Resource {
	return Resource{
		ResourceID:  r.ResourceID,
		NiceID:      r.NiceID,
		Name:        r.Name,
		Mode:        r.mode(),
		ProxyPort:   intOf(r.ProxyPort),
		FullDomain:  str(r.FullDomain),
		Subdomain:   str(r.Subdomain),
		DomainID:    str(r.DomainID),
		SSO:         r.SSO.value,
		SSOReported: r.SSO.set,
		BlockAccess: r.BlockAccess.value,
		Enabled:     r.Enabled.value,
		SSL:         r.SSL.value,

		EmailWhitelistEnabled: r.EmailWhitelistEnabled.value,
		ApplyRules:            r.ApplyRules.value,
		SkipToIdpID:           intOf(r.SkipToIdpID),
		Headers:               []Header(r.Headers),
	}
}

func (r resourceJSON) summary() ResourceSummary {
	return ResourceSummary{
		ResourceID:  r.ResourceID,
		NiceID:      r.NiceID,
		Name:        r.Name,
		Mode:        r.mode(),
		ProxyPort:   intOf(r.ProxyPort),
		FullDomain:  str(r.FullDomain),
		DomainID:    str(r.DomainID),
		SSO:         r.SSO.value,
		Enabled:     r.Enabled.value,
		SSL:         r.SSL.value,
		Fingerprint: r.fingerprint(),
	}
}

// fingerprint digests a list item: see ResourceSummary.Fingerprint.
func (r resourceJSON) fingerprint() uint64 {
	h := fnv.New64a()
	id := func(p *int) string {
		if p == nil {
			return "-"
		}
		return strconv.Itoa(*p)
	}
	flag := func(b flexBool) string { return strconv.FormatBool(b.value) + strconv.FormatBool(b.set) }
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s",
		r.ResourceID, r.NiceID, r.Name, r.mode(), intOf(r.ProxyPort), str(r.FullDomain), str(r.Subdomain), str(r.DomainID),
		flag(r.SSO), flag(r.Enabled), flag(r.SSL), flag(r.BlockAccess), flag(r.Whitelist),
		id(r.PasswordID), id(r.PincodeID), id(r.HeaderAuthID))
	targets := slices.Clone(r.Targets)
	slices.SortFunc(targets, func(a, b listTargetJSON) int { return a.TargetID - b.TargetID })
	for _, t := range targets {
		fmt.Fprintf(h, "\x01%d\x00%d\x00%s\x00%d\x00%t", t.TargetID, t.SiteID, t.IP, t.Port, t.Enabled)
	}
	return h.Sum64()
}

// targetJSON is a target as create, get, update and list report it.
type targetJSON struct {
	TargetID      int     `json:"targetId"`
	ResourceID    int     `json:"resourceId"`
	SiteID        int     `json:"siteId"`
	IP            string  `json:"ip"`
	Port          int     `json:"port"`
	Method        *string `json:"method"`
	Enabled       bool    `json:"enabled"`
	Path          *string `json:"path"`
	PathMatchType *string `json:"pathMatchType"`
	Priority      *int    `json:"priority"`
	// RewritePath and RewritePathType are null when unset.
	RewritePath     *string `json:"rewritePath"`
	RewritePathType *string `json:"rewritePathType"`
	healthCheckJSON
}

func (t targetJSON) target() Target {
	out := Target{
		TargetID:      t.TargetID,
		ResourceID:    t.ResourceID,
		SiteID:        t.SiteID,
		IP:            t.IP,
		Port:          t.Port,
		Method:        str(t.Method),
		Enabled:       t.Enabled,
		Path:          str(t.Path),
		PathMatchType: str(t.PathMatchType),

		RewritePath:     str(t.RewritePath),
		RewritePathType: str(t.RewritePathType),
		Health:          t.healthCheck(),
	}
	if t.Priority != nil {
		out.Priority = *t.Priority
	}
	return out
}
