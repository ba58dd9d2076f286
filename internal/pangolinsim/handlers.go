package pangolinsim

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var routes = append([]route{
	{method: http.MethodGet, pattern: "/v1/org/:orgId/domains", action: "listOrgDomains", handle: (*Server).listDomains},
	{method: http.MethodGet, pattern: "/v1/org/:orgId/domain/:domainId", action: "getDomain", handle: (*Server).getDomain},
	{method: http.MethodGet, pattern: "/v1/org/:orgId/sites", action: "listSites", handle: (*Server).listSites},
	{method: http.MethodGet, pattern: "/v1/org/:orgId/site/:niceId", action: "getSite", handle: (*Server).getSiteByNiceID},
	{method: http.MethodGet, pattern: "/v1/site/:siteId", action: "getSite", object: siteObject, handle: (*Server).getSite},
	{method: http.MethodGet, pattern: "/v1/org/:orgId/resources", action: "listResources", handle: (*Server).listResources},
	{method: http.MethodGet, pattern: "/v1/org/:orgId/public-resources", action: "listResources", handle: (*Server).listResources},
	{method: http.MethodPut, pattern: "/v1/org/:orgId/resource", action: "createResource", handle: (*Server).createResource},
	{method: http.MethodPut, pattern: "/v1/org/:orgId/public-resource", action: "createResource", handle: (*Server).createResource},
	{method: http.MethodGet, pattern: "/v1/resource/:resourceId", action: "getResource", object: resourceObject, handle: (*Server).getResource},
	{method: http.MethodGet, pattern: "/v1/public-resource/:resourceId", action: "getResource", object: resourceObject, handle: (*Server).getResource},
	{method: http.MethodPost, pattern: "/v1/resource/:resourceId", action: "updateResource", object: resourceObject, handle: (*Server).updateResource},
	{method: http.MethodDelete, pattern: "/v1/resource/:resourceId", action: "deleteResource", object: resourceObject, handle: (*Server).deleteResource},
	{method: http.MethodGet, pattern: "/v1/resource/:resourceId/targets", action: "listTargets", object: resourceObject, handle: (*Server).listTargets},
	{method: http.MethodPut, pattern: "/v1/resource/:resourceId/target", action: "createTarget", object: resourceObject, handle: (*Server).createTarget},
	{method: http.MethodGet, pattern: "/v1/target/:targetId", action: "getTarget", object: targetObject, handle: (*Server).getTarget},
	{method: http.MethodPost, pattern: "/v1/target/:targetId", action: "updateTarget", object: targetObject, handle: (*Server).updateTarget},
	{method: http.MethodDelete, pattern: "/v1/target/:targetId", action: "deleteTarget", object: targetObject, handle: (*Server).deleteTarget},
}, accessRoutes...)

func notFound(format string, args ...any) *response {
	r := fail(http.StatusNotFound, format, args...)
	return &r
}

func resourceObject(s *Server, q *request) (string, *response) {
	id, _ := strconv.Atoi(q.params["resourceId"])
	if r, ok := s.res[id]; ok {
		return r.org, nil
	}
	return "", notFound("Resource with ID %s not found", q.params["resourceId"])
}

func targetObject(s *Server, q *request) (string, *response) {
	id, _ := strconv.Atoi(q.params["targetId"])
	if t, ok := s.targets[id]; ok {
		return s.res[t.resourceID].org, nil
	}
	return "", notFound("Target with ID %s not found", q.params["targetId"])
}

func siteObject(s *Server, q *request) (string, *response) {
	id, _ := strconv.Atoi(q.params["siteId"])
	if _, ok := s.site(id); ok {
		return s.opts.Org, nil
	}
	return "", notFound("Site with ID %s not found", q.params["siteId"])
}

// needObject reproduces what happens to a PUT or POST without a JSON body: Express
// leaves the body undefined, the handler throws, and the error handler answers 500.
func needObject(q *request) *response {
	if q.body != nil {
		return nil
	}
	if !strings.HasPrefix(strings.ToLower(q.r.Header.Get("Content-Type")), "application/json") {
		r := fail(http.StatusInternalServerError, "An error occurred")
		return &r
	}
	r := fail(http.StatusBadRequest, "Validation error: Invalid input: expected object, received array")
	return &r
}

// number reads a query number the lenient way list endpoints do: a malformed or
// out-of-range value silently becomes the default.
func number(p *string, def, min int) int {
	if p == nil {
		return def
	}
	n, err := strconv.Atoi(*p)
	if err != nil || n < min {
		return def
	}
	return n
}

func window(total, offset, limit int) (int, int) {
	lo := min(offset, total)
	return lo, min(lo+limit, total)
}

func lengthIssue(v *validator, key, s string, lo, hi int) {
	n := len([]rune(s))
	if n < lo {
		v.issue(fmt.Sprintf("Too small: expected string to have >=%d characters", lo), key)
	}
	if n > hi {
		v.issue(fmt.Sprintf("Too big: expected string to have <=%d characters", hi), key)
	}
}

// --- domains and sites ---

type domainJSON struct {
	DomainID           string  `json:"domainId"`
	BaseDomain         string  `json:"baseDomain"`
	Verified           bool    `json:"verified"`
	Type               string  `json:"type"`
	Failed             bool    `json:"failed"`
	Tries              int     `json:"tries"`
	ConfigManaged      bool    `json:"configManaged"`
	CertResolver       string  `json:"certResolver"`
	PreferWildcardCert *bool   `json:"preferWildcardCert"`
	ErrorMessage       *string `json:"errorMessage"`
}

func toDomainJSON(d Domain) domainJSON {
	return domainJSON{DomainID: d.ID, BaseDomain: d.BaseDomain, Verified: d.Verified, Type: d.Type, ConfigManaged: true, CertResolver: "letsencrypt"}
}

type offsetPagination struct {
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

type pagePagination struct {
	Total    int `json:"total"`
	PageSize int `json:"pageSize"`
	Page     int `json:"page"`
}

func (s *Server) listDomains(q *request) response {
	lim, off, msg := offsetQuery(q)
	if msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	var all []domainJSON
	if q.params["orgId"] == s.opts.Org {
		for _, d := range s.opts.Domains {
			all = append(all, toDomainJSON(d))
		}
	}
	lo, hi := window(len(all), off, lim)
	return ok(http.StatusOK, "Domains retrieved successfully", map[string]any{
		"domains":    nonNil(all[lo:hi]),
		"pagination": offsetPagination{Total: len(all), Limit: lim, Offset: off},
	})
}

func (s *Server) getDomain(q *request) response {
	d, found := s.domain(q.params["domainId"])
	if !found || q.params["orgId"] != s.opts.Org {
		return fail(http.StatusNotFound, "Domain with ID %s not found", q.params["domainId"])
	}
	return ok(http.StatusOK, "Domain retrieved successfully", struct {
		domainJSON
		CustomCertResolver *string `json:"customCertResolver"`
		LastCheckedAt      *int    `json:"lastCheckedAt"`
	}{domainJSON: toDomainJSON(d)})
}

type siteListJSON struct {
	SiteID              int     `json:"siteId"`
	NiceID              string  `json:"niceId"`
	Name                string  `json:"name"`
	PubKey              *string `json:"pubKey"`
	Subnet              string  `json:"subnet"`
	MegabytesIn         int     `json:"megabytesIn"`
	MegabytesOut        int     `json:"megabytesOut"`
	OrgName             string  `json:"orgName"`
	Type                string  `json:"type"`
	Address             *string `json:"address"`
	NewtVersion         *string `json:"newtVersion"`
	ExitNodeID          *int    `json:"exitNodeId"`
	ExitNodeName        *string `json:"exitNodeName"`
	ExitNodeEndpoint    *string `json:"exitNodeEndpoint"`
	RemoteExitNodeID    *string `json:"remoteExitNodeId"`
	ResourceCount       int     `json:"resourceCount"`
	Status              string  `json:"status"`
	NewtUpdateAvailable bool    `json:"newtUpdateAvailable"`
	Labels              []any   `json:"labels"`
	// Online is left out for a local site, which has no agent (as the real list does).
	Online *bool `json:"online,omitempty"`
}

type siteJSON struct {
	SiteID              int     `json:"siteId"`
	OrgID               string  `json:"orgId"`
	NiceID              string  `json:"niceId"`
	ExitNodeID          *int    `json:"exitNodeId"`
	NetworkID           *int    `json:"networkId"`
	Name                string  `json:"name"`
	PubKey              *string `json:"pubKey"`
	ExitNodeSubnet      string  `json:"exitNodeSubnet"`
	MegabytesIn         int     `json:"megabytesIn"`
	MegabytesOut        int     `json:"megabytesOut"`
	LastBandwidthUpdate *string `json:"lastBandwidthUpdate"`
	Type                string  `json:"type"`
	Online              bool    `json:"online"`
	LastPing            *int    `json:"lastPing"`
	Status              string  `json:"status"`
	NewtID              *string `json:"newtId"`
	NewtVersion         *string `json:"newtVersion"`
	CountryCode         *string `json:"countryCode"`
}

func (s *Server) siteJSON(st Site) siteJSON {
	return siteJSON{SiteID: st.ID, OrgID: s.opts.Org, NiceID: st.NiceID, Name: st.Name, ExitNodeSubnet: "0.0.0.0/32", Type: st.Type, Online: !st.Offline, Status: "approved",
		NewtVersion: strp(st.NewtVersion)}
}

func (s *Server) listSites(q *request) response {
	v := newValidator(queryObject(q.r.URL.RawQuery))
	pageSize, _ := v.str("pageSize", false, false)
	page, _ := v.str("page", false, false)
	query, _ := v.str("query", false, false)
	v.strict()
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	size, p := number(pageSize, 20, 1), number(page, 1, 1)
	var all []siteListJSON
	if q.params["orgId"] == s.opts.Org {
		for _, st := range s.opts.Sites {
			if query != nil && !containsFold(*query, st.Name, st.NiceID) {
				continue
			}
			all = append(all, siteListJSON{
				SiteID: st.ID, NiceID: st.NiceID, Name: st.Name, Subnet: "0.0.0.0/32", OrgName: s.opts.Org,
				Type: st.Type, ResourceCount: s.resourceCount(st.ID), Status: "approved", Labels: []any{},
				NewtVersion: strp(st.NewtVersion), Online: listedOnline(st),
			})
		}
	}
	// By name, not by id.
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	lo, hi := window(len(all), (p-1)*size, size)
	return ok(http.StatusOK, "Sites retrieved successfully", map[string]any{
		"sites":      nonNil(all[lo:hi]),
		"pagination": pagePagination{Total: len(all), PageSize: size, Page: p},
	})
}

// listedOnline is a listed site's online flag: absent for a local site.
func listedOnline(st Site) *bool {
	if st.Type == "" || st.Type == "local" {
		return nil
	}
	online := !st.Offline
	return &online
}

func (s *Server) resourceCount(siteID int) int {
	seen := map[int]bool{}
	for _, t := range s.targets {
		if t.siteID == siteID {
			seen[t.resourceID] = true
		}
	}
	return len(seen)
}

func (s *Server) getSiteByNiceID(q *request) response {
	if q.params["orgId"] == s.opts.Org {
		for _, st := range s.opts.Sites {
			if st.NiceID == q.params["niceId"] {
				return ok(http.StatusOK, "Site retrieved successfully", s.siteJSON(st))
			}
		}
		if s.opts.AnySite {
			st := Site{ID: 1, NiceID: q.params["niceId"], Name: q.params["niceId"], Type: "newt"}
			for _, other := range s.opts.Sites {
				st.ID = max(st.ID, other.ID+1)
			}
			s.opts.Sites = append(s.opts.Sites, st)
			return ok(http.StatusOK, "Site retrieved successfully", s.siteJSON(st))
		}
	}
	return fail(http.StatusNotFound, "Site with ID %s not found", q.params["niceId"])
}

func (s *Server) getSite(q *request) response {
	id, _ := strconv.Atoi(q.params["siteId"])
	st, _ := s.site(id)
	return ok(http.StatusOK, "Site retrieved successfully", s.siteJSON(st))
}

// --- resources ---

// resourceJSON is the shape of GET, create and update. sso, emailWhitelistEnabled and
// applyRules are the policy's values on GET and update, the resource's null columns on
// create.
type resourceJSON struct {
	ResourceID               int             `json:"resourceId"`
	ResourcePolicyID         *int            `json:"resourcePolicyId"`
	DefaultResourcePolicyID  int             `json:"defaultResourcePolicyId"`
	ResourceGUID             string          `json:"resourceGuid"`
	OrgID                    string          `json:"orgId"`
	NiceID                   string          `json:"niceId"`
	Name                     string          `json:"name"`
	Subdomain                *string         `json:"subdomain"`
	FullDomain               *string         `json:"fullDomain"`
	DomainID                 *string         `json:"domainId"`
	SSL                      bool            `json:"ssl"`
	BlockAccess              bool            `json:"blockAccess"`
	ProxyPort                *int            `json:"proxyPort"`
	SSO                      *bool           `json:"sso"`
	EmailWhitelistEnabled    *bool           `json:"emailWhitelistEnabled"`
	ApplyRules               *bool           `json:"applyRules"`
	Enabled                  bool            `json:"enabled"`
	StickySession            bool            `json:"stickySession"`
	TLSServerName            *string         `json:"tlsServerName"`
	SetHostHeader            *string         `json:"setHostHeader"`
	EnableProxy              bool            `json:"enableProxy"`
	SkipToIdpID              *int            `json:"skipToIdpId"`
	Headers                  json.RawMessage `json:"headers"`
	ProxyProtocol            bool            `json:"proxyProtocol"`
	ProxyProtocolVersion     int             `json:"proxyProtocolVersion"`
	MaintenanceModeEnabled   bool            `json:"maintenanceModeEnabled"`
	MaintenanceModeType      string          `json:"maintenanceModeType"`
	MaintenanceTitle         *string         `json:"maintenanceTitle"`
	MaintenanceMessage       *string         `json:"maintenanceMessage"`
	MaintenanceEstimatedTime *string         `json:"maintenanceEstimatedTime"`
	PostAuthPath             *string         `json:"postAuthPath"`
	Health                   string          `json:"health"`
	Wildcard                 bool            `json:"wildcard"`
	Mode                     string          `json:"mode"`
	PamMode                  string          `json:"pamMode"`
	AuthDaemonMode           string          `json:"authDaemonMode"`
	AuthDaemonPort           int             `json:"authDaemonPort"`
	Status                   string          `json:"status"`
}

func (r *resource) json(effective bool) resourceJSON {
	out := resourceJSON{
		ResourceID: r.id, DefaultResourcePolicyID: r.access.policyID,
		ResourceGUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", r.id),
		OrgID:        r.org, NiceID: r.niceID, Name: r.name, Subdomain: r.subdomain,
		FullDomain: strp(r.fullDomain), DomainID: strp(r.domainID), SSL: r.ssl, BlockAccess: r.blockAccess,
		ProxyPort: r.proxyPort, Enabled: r.enabled, StickySession: r.stickySession, TLSServerName: r.tlsServerName,
		SetHostHeader: r.setHostHeader, EnableProxy: true, SkipToIdpID: r.skipToIdpID,
		Headers: r.headers, ProxyProtocol: r.proxyProtocol, ProxyProtocolVersion: r.proxyProtocolVersion, MaintenanceModeType: "forced",
		PostAuthPath: r.postAuthPath, Health: "unknown", Mode: r.mode, PamMode: "passthrough",
		AuthDaemonMode: "site", AuthDaemonPort: 22123, Status: "approved",
	}
	if effective {
		sso, wl, rules := r.sso, r.emailWhitelist, r.applyRules
		out.SSO, out.EmailWhitelistEnabled, out.ApplyRules = &sso, &wl, &rules
	}
	return out
}

type targetSummaryJSON struct {
	TargetID     int    `json:"targetId"`
	ResourceID   int    `json:"resourceId"`
	SiteID       int    `json:"siteId"`
	IP           string `json:"ip"`
	Port         int    `json:"port"`
	Enabled      bool   `json:"enabled"`
	HealthStatus string `json:"healthStatus"`
	HCEnabled    bool   `json:"hcEnabled"`
	SiteName     string `json:"siteName"`
	SiteNiceID   string `json:"siteNiceId"`
	SiteOnline   bool   `json:"siteOnline"`
	SiteType     string `json:"siteType"`
}

// resourceListJSON is a list item: sso as 0/1, no subdomain nor blockAccess, and a
// target summary without method, path, match type or priority.
type resourceListJSON struct {
	ResourceID   int                 `json:"resourceId"`
	NiceID       string              `json:"niceId"`
	Name         string              `json:"name"`
	SSL          bool                `json:"ssl"`
	FullDomain   *string             `json:"fullDomain"`
	PasswordID   *int                `json:"passwordId"`
	SSO          int                 `json:"sso"`
	PincodeID    *int                `json:"pincodeId"`
	Whitelist    int                 `json:"whitelist"`
	ProxyPort    *int                `json:"proxyPort"`
	Wildcard     bool                `json:"wildcard"`
	Mode         string              `json:"mode"`
	Enabled      bool                `json:"enabled"`
	DomainID     *string             `json:"domainId"`
	HeaderAuthID *int                `json:"headerAuthId"`
	Health       string              `json:"health"`
	Targets      []targetSummaryJSON `json:"targets"`
	Sites        []any               `json:"sites"`
	Labels       []any               `json:"labels"`
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) listItem(r *resource) resourceListJSON {
	out := resourceListJSON{
		ResourceID: r.id, NiceID: r.niceID, Name: r.name, SSL: r.ssl, FullDomain: strp(r.fullDomain),
		SSO: b2i(r.sso), Whitelist: b2i(r.emailWhitelist), ProxyPort: r.proxyPort, Mode: r.mode, Enabled: r.enabled,
		PasswordID: nullID(r.access.passwordID), PincodeID: nullID(r.access.pincodeID),
		DomainID: strp(r.domainID), Health: "unknown", Targets: []targetSummaryJSON{}, Sites: []any{}, Labels: []any{},
	}
	if r.access.headerAuth != nil {
		out.HeaderAuthID = nullID(r.access.headerAuth.id)
	}
	for _, t := range s.targetsOf(r.id) {
		st, _ := s.site(t.siteID)
		out.Targets = append(out.Targets, targetSummaryJSON{
			TargetID: t.id, ResourceID: t.resourceID, SiteID: t.siteID, IP: t.ip, Port: t.port,
			Enabled: t.enabled, HealthStatus: t.health, HCEnabled: t.hcEnabled,
			SiteName: st.Name, SiteNiceID: st.NiceID, SiteOnline: !st.Offline, SiteType: st.Type,
		})
	}
	return out
}

// containsFold is the site list's search: whether a field contains query,
// case-insensitive.
func containsFold(query string, fields ...string) bool {
	q := strings.ToLower(query)
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

func (s *Server) listResources(q *request) response {
	v := newValidator(queryObject(q.r.URL.RawQuery))
	pageSize, _ := v.str("pageSize", false, false)
	page, _ := v.str("page", false, false)
	query, _ := v.str("query", false, false)
	_, _ = v.enum("sort_by", false, "name")
	order, _ := v.enum("order", false, "asc", "desc")
	enabled, _ := v.enum("enabled", false, "true", "false")
	authState, _ := v.enum("authState", false, "protected", "not_protected", "none")
	v.any("healthStatus")
	protocol, _ := v.str("protocol", false, false)
	v.strict()
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	// pageSize has no maximum, and a malformed value silently becomes the default.
	size, p := number(pageSize, 20, 1), number(page, 1, 1)
	var lowerQuery string
	if query != nil {
		lowerQuery = strings.ToLower(*query)
	}
	var list []*resource
	for _, r := range s.res {
		switch {
		case r.org != q.params["orgId"]:
		case query != nil && !r.matches(lowerQuery):
		case enabled != nil && strconv.FormatBool(r.enabled) != *enabled:
		case authState != nil && (*authState == "protected") != r.sso:
		case protocol != nil && !hasProtocol(r, *protocol):
		default:
			list = append(list, r)
		}
	}
	// By name, byte-wise like SQLite's default collation; never by id.
	sort.Slice(list, func(i, j int) bool {
		if list[i].name != list[j].name {
			return list[i].name < list[j].name
		}
		return list[i].id < list[j].id
	})
	if order != nil && *order == "desc" {
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
	}
	lo, hi := window(len(list), (p-1)*size, size)
	items := make([]resourceListJSON, 0, hi-lo)
	for _, r := range list[lo:hi] {
		items = append(items, s.listItem(r))
	}
	return ok(http.StatusOK, "Resources retrieved successfully", map[string]any{
		"resources":  items,
		"pagination": pagePagination{Total: len(list), PageSize: size, Page: p},
	})
}

// hasProtocol is the list's protocol filter: "http" and "https" are HTTP resources
// without and with SSL, the other values a mode.
func hasProtocol(r *resource, protocol string) bool {
	switch protocol {
	case "http":
		return r.mode == "http" && !r.ssl
	case "https":
		return r.mode == "http" && r.ssl
	}
	return r.mode == protocol
}

func (s *Server) getResource(q *request) response {
	id, _ := strconv.Atoi(q.params["resourceId"])
	return ok(http.StatusOK, "Resource retrieved successfully", s.res[id].json(true))
}

func (s *Server) createResource(q *request) response {
	if r := needObject(q); r != nil {
		return *r
	}
	// A numeric proxyPort selects the raw-resource schema (the reference's section 15).
	if jsType(q.body.values["proxyPort"]) == "number" {
		return s.createRawResource(q)
	}
	v := newValidator(q.body)
	name, _ := v.str("name", true, false)
	if name != nil {
		lengthIssue(v, "name", *name, 1, 255)
	}
	sub, _ := v.str("subdomain", false, true)
	if sub != nil {
		if msg := subdomainIssue(*sub); msg != "" {
			v.issue(msg, "")
		}
	}
	httpFlag, _ := v.boolean("http", false)
	protocol, _ := v.enum("protocol", false, "tcp", "udp")
	mode, _ := v.enum("mode", false, "http", "tcp", "udp", "ssh", "rdp", "vnc", "inference")
	domainID, _ := v.str("domainId", true, false)
	sticky, _ := v.boolean("stickySession", false)
	postAuthPath, _ := v.str("postAuthPath", false, true)
	v.strict()
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	m, msg := resourceMode(mode, httpFlag, protocol, true)
	if msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	if m != "http" {
		return fail(http.StatusBadRequest, "inmemory Pangolin: mode %q is not implemented, only http", m)
	}
	org := q.params["orgId"]
	if !s.orgs[org] {
		return fail(http.StatusNotFound, "Organization with ID %s not found", org)
	}
	d, found := s.domain(*domainID)
	if !found || org != s.opts.Org {
		return fail(http.StatusBadRequest, "Domain with ID %s not found", *domainID)
	}
	if d.Type == "cname" {
		sub = nil
	}
	// No check for another resource on the same host: Pangolin only compares HTTP
	// resources with inference ones, so duplicates are accepted.
	r := &resource{
		id: s.nextRes, org: org, niceID: s.newNiceID(org), name: *name, mode: "http", subdomain: sub,
		fullDomain: fullDomain(d, sub), domainID: d.ID, ssl: true, enabled: true, sso: true,
		postAuthPath: postAuthPath, access: s.newPolicy(), proxyProtocolVersion: 1,
	}
	if sticky != nil {
		r.stickySession = *sticky
	}
	s.nextRes++
	s.res[r.id] = r
	return ok(http.StatusCreated, "Http resource created successfully", r.json(false))
}

func (s *Server) updateResource(q *request) response {
	if r := needObject(q); r != nil {
		return *r
	}
	id, _ := strconv.Atoi(q.params["resourceId"])
	res := s.res[id]
	if res.raw() {
		return s.updateRawResource(q, res)
	}
	v := newValidator(q.body)
	name, _ := v.str("name", false, false)
	if name != nil {
		lengthIssue(v, "name", *name, 1, 255)
	}
	nice, _ := v.str("niceId", false, false)
	if nice != nil {
		lengthIssue(v, "niceId", *nice, 1, 255)
		if !niceIDPattern.MatchString(*nice) {
			v.issue("NiceId can only contain letters, numbers, and dashes", "niceId")
		}
	}
	sub, subSent := v.str("subdomain", false, true)
	if sub != nil {
		if msg := subdomainIssue(*sub); msg != "" {
			v.issue(msg, "")
		}
	}
	domainID, _ := v.str("domainId", false, false)
	ssl, _ := v.boolean("ssl", false)
	enabled, _ := v.boolean("enabled", false)
	blockAccess, _ := v.boolean("blockAccess", false)
	sso, _ := v.boolean("sso", false)
	whitelist, _ := v.boolean("emailWhitelistEnabled", false)
	applyRules, _ := v.boolean("applyRules", false)
	skipToIdp, skipSent := v.integer("skipToIdpId", false, true, 1, math.MaxInt32)
	sticky, _ := v.boolean("stickySession", false)
	tlsServerName, tlsSent := v.str("tlsServerName", false, true)
	setHostHeader, hostHeaderSent := v.str("setHostHeader", false, true)
	headers, headersSent := v.headers("headers")
	postAuthPath, postAuthSent := v.str("postAuthPath", false, true)
	v.strict()
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	if len(q.body.keys) == 0 {
		return fail(http.StatusBadRequest, "Validation error: At least one field must be provided for update")
	}
	if nice != nil {
		if other := s.resourceByNiceID(res.org, *nice); other != nil && other.id != res.id {
			return fail(http.StatusConflict, "A resource with niceId %q already exists", *nice)
		}
	}
	var d Domain
	if domainID != nil {
		var found bool
		if d, found = s.domain(*domainID); !found || res.org != s.opts.Org {
			return fail(http.StatusBadRequest, "Domain with ID %s not found", *domainID)
		}
	}
	if skipSent && skipToIdp != nil && !s.opts.AnyIdentityProvider && !slices.Contains(s.opts.IdentityProviders, *skipToIdp) {
		// The real server validates no identity provider: its database refuses the
		// policy's reference, and the update fails whole with a 500.
		return fail(http.StatusInternalServerError, "An error occurred")
	}

	if name != nil {
		res.name = *name
	}
	if nice != nil {
		res.niceID = *nice
	}
	if subSent {
		// The defect: the subdomain column changes, but the routed host is recomputed
		// only when domainId comes with it.
		res.subdomain = sub
	}
	if domainID != nil {
		if d.Type == "cname" || !subSent {
			// domainId without subdomain moves the resource to the apex of that domain.
			res.subdomain = nil
		}
		res.domainID = d.ID
		res.fullDomain = fullDomain(d, res.subdomain)
	}
	setBool(&res.ssl, ssl)
	setBool(&res.enabled, enabled)
	setBool(&res.blockAccess, blockAccess)
	setBool(&res.sso, sso)
	setBool(&res.emailWhitelist, whitelist)
	setBool(&res.applyRules, applyRules)
	setBool(&res.stickySession, sticky)
	if skipSent {
		res.skipToIdpID = skipToIdp
	}
	if tlsSent {
		res.tlsServerName = tlsServerName
	}
	if hostHeaderSent {
		res.setHostHeader = setHostHeader
	}
	if headersSent {
		res.headers = headers
	}
	if postAuthSent {
		res.postAuthPath = postAuthPath
	}
	// Unlike the create response, the update response carries the policy's effective
	// sso, emailWhitelistEnabled and applyRules, as GET does.
	out := res.json(true)
	if len(res.headers) > 0 && string(res.headers) != "null" {
		// The update response carries headers JSON-encoded, as a string; GET as an array.
		out.Headers, _ = json.Marshal(string(res.headers))
	}
	return ok(http.StatusOK, "HTTP resource updated successfully", out)
}

func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

func (s *Server) deleteResource(q *request) response {
	id, _ := strconv.Atoi(q.params["resourceId"])
	for _, t := range s.targetsOf(id) {
		s.dropTarget(t.id)
	}
	delete(s.res, id)
	return ok(http.StatusOK, "Resource deleted successfully", nil)
}

// --- targets ---

// healthCheckJSON is a target's health check, as both target shapes carry it.
type healthCheckJSON struct {
	HCEnabled            bool            `json:"hcEnabled"`
	HCPath               json.RawMessage `json:"hcPath"`
	HCScheme             json.RawMessage `json:"hcScheme"`
	HCMode               json.RawMessage `json:"hcMode"`
	HCHostname           json.RawMessage `json:"hcHostname"`
	HCPort               json.RawMessage `json:"hcPort"`
	HCInterval           json.RawMessage `json:"hcInterval"`
	HCUnhealthyInterval  json.RawMessage `json:"hcUnhealthyInterval"`
	HCTimeout            json.RawMessage `json:"hcTimeout"`
	HCHeaders            json.RawMessage `json:"hcHeaders"`
	HCFollowRedirects    json.RawMessage `json:"hcFollowRedirects"`
	HCMethod             json.RawMessage `json:"hcMethod"`
	HCStatus             json.RawMessage `json:"hcStatus"`
	HCHealth             string          `json:"hcHealth"`
	HCTLSServerName      json.RawMessage `json:"hcTlsServerName"`
	HCHealthyThreshold   json.RawMessage `json:"hcHealthyThreshold"`
	HCUnhealthyThreshold json.RawMessage `json:"hcUnhealthyThreshold"`
}

func (t *target) healthCheckJSON() healthCheckJSON {
	return healthCheckJSON{
		HCEnabled: t.hcEnabled, HCPath: t.hc["hcPath"], HCScheme: t.hc["hcScheme"], HCMode: t.hc["hcMode"],
		HCHostname: t.hc["hcHostname"], HCPort: t.hc["hcPort"], HCInterval: t.hc["hcInterval"],
		HCUnhealthyInterval: t.hc["hcUnhealthyInterval"], HCTimeout: t.hc["hcTimeout"], HCHeaders: t.hc["hcHeaders"],
		HCFollowRedirects: t.hc["hcFollowRedirects"], HCMethod: t.hc["hcMethod"], HCStatus: t.hc["hcStatus"],
		HCHealth: t.health, HCTLSServerName: t.hc["hcTlsServerName"], HCHealthyThreshold: t.hc["hcHealthyThreshold"],
		HCUnhealthyThreshold: t.hc["hcUnhealthyThreshold"],
	}
}

// targetJSON is the shape of create, GET and update: target and health check merged.
type targetJSON struct {
	TargetHealthCheckID int    `json:"targetHealthCheckId"`
	TargetID            int    `json:"targetId"`
	OrgID               string `json:"orgId"`
	SiteID              int    `json:"siteId"`
	Name                string `json:"name"`
	healthCheckJSON
	ResourceID      int     `json:"resourceId"`
	ProviderID      *string `json:"providerId"`
	IP              string  `json:"ip"`
	Method          *string `json:"method"`
	Port            int     `json:"port"`
	InternalPort    *int    `json:"internalPort"`
	Enabled         bool    `json:"enabled"`
	Path            *string `json:"path"`
	PathMatchType   *string `json:"pathMatchType"`
	RewritePath     *string `json:"rewritePath"`
	RewritePathType *string `json:"rewritePathType"`
	Priority        *int    `json:"priority"`
	Mode            string  `json:"mode"`
	AuthToken       *string `json:"authToken"`
}

func (s *Server) targetJSON(t *target) targetJSON {
	return targetJSON{
		TargetHealthCheckID: t.id, TargetID: t.id, OrgID: s.res[t.resourceID].org, SiteID: t.siteID, Name: t.name,
		healthCheckJSON: t.healthCheckJSON(),
		ResourceID:      t.resourceID, IP: t.ip, Method: t.method,
		Port: t.port, InternalPort: t.internalPort, Enabled: t.enabled, Path: t.path, PathMatchType: t.pathMatchType,
		RewritePath: t.rewritePath, RewritePathType: t.rewritePathType, Priority: t.priority, Mode: s.res[t.resourceID].mode,
	}
}

// targetListJSON is a list item: the target shape without orgId, name and internalPort,
// with the site's type and name.
type targetListJSON struct {
	TargetID   int     `json:"targetId"`
	IP         string  `json:"ip"`
	Mode       string  `json:"mode"`
	Method     *string `json:"method"`
	Port       int     `json:"port"`
	Enabled    bool    `json:"enabled"`
	ResourceID int     `json:"resourceId"`
	ProviderID *string `json:"providerId"`
	SiteID     int     `json:"siteId"`
	SiteType   string  `json:"siteType"`
	SiteName   string  `json:"siteName"`
	healthCheckJSON
	Path            *string `json:"path"`
	PathMatchType   *string `json:"pathMatchType"`
	RewritePath     *string `json:"rewritePath"`
	RewritePathType *string `json:"rewritePathType"`
	Priority        *int    `json:"priority"`
}

func (s *Server) targetListJSON(t *target) targetListJSON {
	st, _ := s.site(t.siteID)
	return targetListJSON{
		TargetID: t.id, IP: t.ip, Mode: s.res[t.resourceID].mode, Method: t.method, Port: t.port, Enabled: t.enabled,
		ResourceID: t.resourceID, SiteID: t.siteID, SiteType: st.Type, SiteName: st.Name,
		healthCheckJSON: t.healthCheckJSON(),
		Path:            t.path, PathMatchType: t.pathMatchType,
		RewritePath: t.rewritePath, RewritePathType: t.rewritePathType, Priority: t.priority,
	}
}

func (s *Server) listTargets(q *request) response {
	lim, off, msg := offsetQuery(q)
	if msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	id, _ := strconv.Atoi(q.params["resourceId"])
	all := s.targetsOf(id)
	lo, hi := window(len(all), off, lim)
	items := make([]targetListJSON, 0, hi-lo)
	for _, t := range all[lo:hi] {
		items = append(items, s.targetListJSON(t))
	}
	return ok(http.StatusOK, "Targets retrieved successfully", map[string]any{
		"targets":    items,
		"pagination": offsetPagination{Total: len(all), Limit: lim, Offset: off},
	})
}

func (s *Server) getTarget(q *request) response {
	id, _ := strconv.Atoi(q.params["targetId"])
	return ok(http.StatusOK, "Target retrieved successfully", s.targetJSON(s.targets[id]))
}

// targetFields validates a target body. The update differs only in port being optional
// (siteId and ip are required by both).
type targetFields struct {
	siteID, port, priority                     *int
	ip, method, path, pathMatchType            *string
	rewritePath, rewritePathType               *string
	enabled, hcEnabled                         *bool
	methodSent, pathSent, matchSent, prioSent  bool
	rewriteSent, rewriteTypeSent, hcEnabledSet bool
	hc                                         map[string]json.RawMessage
}

func parseTarget(body *object, create bool) (targetFields, string) {
	var f targetFields
	v := newValidator(body)
	f.siteID, _ = v.integer("siteId", true, false, 1, math.MaxInt32)
	f.ip, _ = v.str("ip", true, false)
	if f.ip != nil && !validTargetHost(*f.ip) {
		v.issue("Invalid input", "ip")
	}
	// The method is not validated: any string is stored, and an unknown one routes nowhere.
	f.method, f.methodSent = v.str("method", false, true)
	f.port, _ = v.integer("port", create, false, 1, 65535)
	f.enabled, _ = v.boolean("enabled", false)
	f.hcEnabled, f.hcEnabledSet = v.boolean("hcEnabled", true)
	f.hc = healthFields(v)
	f.path, f.pathSent = v.str("path", false, true)
	f.pathMatchType, f.matchSent = v.enum("pathMatchType", true, "exact", "prefix", "regex")
	f.rewritePath, f.rewriteSent = v.str("rewritePath", false, true)
	f.rewritePathType, f.rewriteTypeSent = v.enum("rewritePathType", true, "exact", "prefix", "regex", "stripPrefix")
	f.priority, f.prioSent = v.integer("priority", false, true, 1, 1000)
	v.strict()
	if msg := v.err(); msg != "" {
		return f, msg
	}
	if create && f.hcEnabled != nil && *f.hcEnabled && hostnameMissing(f.hc) {
		return f, `Validation error: HcHostname is required when hcEnabled is true at "hcHostname"`
	}
	return f, ""
}

func (s *Server) createTarget(q *request) response {
	if r := needObject(q); r != nil {
		return *r
	}
	f, msg := parseTarget(q.body, true)
	if msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	if _, found := s.site(*f.siteID); !found {
		return fail(http.StatusNotFound, "Site with ID %d not found", *f.siteID)
	}
	rid, _ := strconv.Atoi(q.params["resourceId"])
	t := &target{
		id: s.nextTgt, resourceID: rid, siteID: *f.siteID, ip: *f.ip, port: *f.port,
		method: f.method, enabled: true, path: f.path, pathMatchType: f.pathMatchType,
		rewritePath: f.rewritePath, rewritePathType: f.rewritePathType, hc: f.hc,
		name: fmt.Sprintf("Resource %s - %s:%d", s.res[rid].name, *f.ip, *f.port),
	}
	setBool(&t.enabled, f.enabled)
	setBool(&t.hcEnabled, f.hcEnabled)
	t.health = healthUnknown
	if t.hcEnabled {
		t.health = healthUnhealthy // until Newt reports, on any site
	}
	prio := 100
	if f.priority != nil {
		prio = *f.priority
	}
	t.priority = &prio
	// Duplicate targets (same ip, port, method and site) are accepted: the server only
	// logs a warning.
	s.nextTgt++
	s.putTarget(t)
	out := s.targetJSON(t)
	out.HCHeaders = headersAsStored(out.HCHeaders)
	s.newtProbes(t) // after the answer: Newt reports once the target exists
	return ok(http.StatusCreated, "Target created successfully", out)
}

func (s *Server) updateTarget(q *request) response {
	if r := needObject(q); r != nil {
		return *r
	}
	f, msg := parseTarget(q.body, false)
	if msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	site, found := s.site(*f.siteID)
	if !found {
		return fail(http.StatusNotFound, "Site with ID %d not found", *f.siteID)
	}
	id, _ := strconv.Atoi(q.params["targetId"])
	t := s.targets[id]
	// Fields left out keep their values; null clears the nullable ones. The health
	// check's name keeps the old ip:port.
	t.siteID, t.ip = *f.siteID, *f.ip
	if f.port != nil {
		t.port = *f.port
	}
	if f.methodSent {
		t.method = f.method
	}
	setBool(&t.enabled, f.enabled)
	t.health = healthAfterUpdate(t.health, t.hcEnabled, f.hcEnabled, f.hcEnabledSet, site.Type)
	// Left out, hcEnabled is stored false and hcHeaders null; the others keep theirs.
	t.hcEnabled = f.hcEnabled != nil && *f.hcEnabled
	if t.hc == nil {
		t.hc = map[string]json.RawMessage{}
	}
	delete(t.hc, "hcHeaders")
	for k, raw := range f.hc {
		t.hc[k] = raw
	}
	if f.pathSent {
		t.path = f.path
	}
	if f.matchSent {
		t.pathMatchType = f.pathMatchType
	}
	if f.rewriteSent {
		t.rewritePath = f.rewritePath
	}
	if f.rewriteTypeSent {
		t.rewritePathType = f.rewritePathType
	}
	if f.prioSent {
		t.priority = f.priority
	}
	// An update assigns an internal port, even on a local site.
	if t.internalPort == nil {
		p := 50000 + t.id%10000
		t.internalPort = &p
	}
	out := s.targetJSON(t)
	out.HCHeaders = headersAsStored(out.HCHeaders)
	s.newtProbes(t)
	return ok(http.StatusOK, "Target updated successfully", out)
}

func (s *Server) deleteTarget(q *request) response {
	id, _ := strconv.Atoi(q.params["targetId"])
	s.dropTarget(id)
	return ok(http.StatusOK, "Target deleted successfully", nil)
}

// nonNil keeps an empty list a JSON [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
