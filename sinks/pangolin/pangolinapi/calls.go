package pangolinapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// pagination is the part of every list's pagination object the paging loop needs.
type pagination struct {
	Total int `json:"total"`
}

// listAll pages through a list. The endpoints disagree on their parameters and the server
// rejects the other style with 400: resources and sites take page/pageSize (from 1),
// domains and targets take limit/offset. Items seen twice (the list shifted between two
// pages) are kept once; a page that brings nothing new ends the loop, so a server that
// ignores the paging parameters cannot make it spin.
func listAll[T any, K comparable](c *Client, offsetStyle bool, fetch func(q url.Values) ([]T, int, error), id func(T) K) ([]T, error) {
	var out []T
	seen := make(map[K]bool)
	for page := 0; ; page++ {
		q := url.Values{}
		if offsetStyle {
			q.Set("limit", strconv.Itoa(c.pageSize))
			q.Set("offset", strconv.Itoa(page*c.pageSize))
		} else {
			q.Set("page", strconv.Itoa(page+1))
			q.Set("pageSize", strconv.Itoa(c.pageSize))
		}
		items, total, err := fetch(q)
		if err != nil {
			return nil, err
		}
		fresh := 0
		for _, it := range items {
			if k := id(it); !seen[k] {
				seen[k] = true
				out = append(out, it)
				fresh++
			}
		}
		if fresh == 0 || (page+1)*c.pageSize >= total {
			return out, nil
		}
	}
}

// ListDomains returns every domain of the org, verified or not.
func (c *Client) ListDomains(ctx context.Context) ([]Domain, error) {
	return listAll(c, true, func(q url.Values) ([]Domain, int, error) {
		var page struct {
			Domains    []Domain   `json:"domains"`
			Pagination pagination `json:"pagination"`
		}
		err := c.do(ctx, OpListDomains, http.MethodGet, c.orgPath("/domains"), q, nil, &page)
		return page.Domains, page.Pagination.Total, err
	}, func(d Domain) string { return d.DomainID })
}

// ListSites returns every site of the org.
func (c *Client) ListSites(ctx context.Context) ([]Site, error) {
	return listAll(c, false, func(q url.Values) ([]Site, int, error) {
		var page struct {
			Sites      []Site     `json:"sites"`
			Pagination pagination `json:"pagination"`
		}
		err := c.do(ctx, OpListSites, http.MethodGet, c.orgPath("/sites"), q, nil, &page)
		return page.Sites, page.Pagination.Total, err
	}, func(s Site) int { return s.SiteID })
}

// GetSiteByNiceID returns the org's site with that niceId.
func (c *Client) GetSiteByNiceID(ctx context.Context, niceID string) (Site, error) {
	var s Site
	err := c.do(ctx, OpGetSite, http.MethodGet, c.orgPath("/site/"+url.PathEscape(niceID)), nil, nil, &s)
	return s, err
}

// ListResources returns every resource of the org, or with query only those whose name,
// niceId, host or label contains it (case-insensitive). The list is ordered by name.
func (c *Client) ListResources(ctx context.Context, query string) ([]ResourceSummary, error) {
	return c.listResources(ctx, "query", query)
}

// ListRawResources returns the org's raw resources of mode (ModeTCP or ModeUDP). The
// search of ListResources does not look at ports, so finding who holds a port means
// reading every resource of the mode; the server's protocol filter narrows the list,
// and the answer is filtered here as well, for a server that ignores it.
func (c *Client) ListRawResources(ctx context.Context, mode string) ([]ResourceSummary, error) {
	if err := checkRawMode(mode); err != nil {
		return nil, fmt.Errorf("list raw resources: %w", err)
	}
	all, err := c.listResources(ctx, "protocol", mode)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, r := range all {
		if r.Mode == mode {
			out = append(out, r)
		}
	}
	return out, nil
}

// listResources pages through the resource list, with one filter when value is set.
func (c *Client) listResources(ctx context.Context, filter, value string) ([]ResourceSummary, error) {
	return listAll(c, false, func(q url.Values) ([]ResourceSummary, int, error) {
		if value != "" {
			q.Set(filter, value)
		}
		var page struct {
			Resources  []resourceJSON `json:"resources"`
			Pagination pagination     `json:"pagination"`
		}
		err := c.do(ctx, OpListResources, http.MethodGet, c.orgPath("/resources"), q, nil, &page)
		out := make([]ResourceSummary, len(page.Resources))
		for i, r := range page.Resources {
			out[i] = r.summary()
		}
		return out, page.Pagination.Total, err
	}, func(r ResourceSummary) int { return r.ResourceID })
}

// FindResourceByNiceID returns the org's resource with exactly that niceId. The API has no
// lookup by niceId: the list's query is a substring search over several fields, so its
// answer is filtered here.
func (c *Client) FindResourceByNiceID(ctx context.Context, niceID string) (ResourceSummary, bool, error) {
	if niceID == "" {
		return ResourceSummary{}, false, errors.New("find resource: niceId is required")
	}
	list, err := c.ListResources(ctx, niceID)
	if err != nil {
		return ResourceSummary{}, false, err
	}
	for _, r := range list {
		if r.NiceID == niceID {
			return r, true, nil
		}
	}
	return ResourceSummary{}, false, nil
}

// GetResource returns one resource, with its effective SSO setting.
func (c *Client) GetResource(ctx context.Context, id int) (Resource, error) {
	var r resourceJSON
	err := c.do(ctx, OpGetResource, http.MethodGet, "/resource/"+strconv.Itoa(id), nil, nil, &r)
	return r.resource(), err
}

// CreateResource creates an HTTP resource on host. The server picks a random niceId and
// refuses niceId, sso, enabled and blockAccess on create: set them with UpdateResource.
// It is created enabled, with SSO on; it routes nothing until it has a target.
// Pangolin accepts several resources on one host: checking first is the caller's job.
func (c *Client) CreateResource(ctx context.Context, name string, host Host) (Resource, error) {
	if err := host.validate(); err != nil {
		return Resource{}, fmt.Errorf("create resource %q: %w", name, err)
	}
	body := struct {
		Name      string  `json:"name"`
		Mode      string  `json:"mode"`
		Subdomain *string `json:"subdomain,omitempty"`
		DomainID  string  `json:"domainId"`
	}{Name: name, Mode: "http", Subdomain: host.subdomainJSON(), DomainID: host.DomainID}
	var r resourceJSON
	if err := c.do(ctx, OpCreateResource, http.MethodPut, c.orgPath("/resource"), nil, body, &r); err != nil {
		return Resource{}, err
	}
	// The create response carries the raw columns (null); the effective values come
	// from the policy the server creates for the resource: SSO on, the Admin role only,
	// no whitelist, no rules.
	if !r.SSO.set {
		r.SSO = flexBool{value: true, set: true}
	}
	if !r.EmailWhitelistEnabled.set {
		r.EmailWhitelistEnabled = flexBool{set: true}
	}
	if !r.ApplyRules.set {
		r.ApplyRules = flexBool{set: true}
	}
	return r.resource(), nil
}

func checkRawMode(mode string) error {
	if mode != ModeTCP && mode != ModeUDP {
		return fmt.Errorf("mode %q is not tcp or udp", mode)
	}
	return nil
}

func checkProxyPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("public port %d is not from 1 to 65535", port)
	}
	return nil
}

// CreateRawResource creates a raw resource: Pangolin forwards proxyPort, a public port
// of its server, over mode (ModeTCP or ModeUDP) to the resource's targets. The server
// picks a random niceId; a raw resource has no host, and Pangolin applies no access
// control to it (no SSO, password, role or rule). Servers with
// flags.allow_raw_resources off refuse it (400 "Raw resources are not allowed").
// Pangolin accepts several resources on one port and mode: checking first is the
// caller's job (ListRawResources). The port must also be an entry point of Traefik
// ("tcp-<port>", "udp-<port>"), which Pangolin neither creates nor reports.
func (c *Client) CreateRawResource(ctx context.Context, name, mode string, proxyPort int) (Resource, error) {
	if err := errors.Join(checkRawMode(mode), checkProxyPort(proxyPort)); err != nil {
		return Resource{}, fmt.Errorf("create raw resource %q: %w", name, err)
	}
	// The presence of proxyPort selects the server's raw-resource schema, which refuses
	// subdomain, domainId and enableProxy.
	body := struct {
		Name      string `json:"name"`
		Mode      string `json:"mode"`
		ProxyPort int    `json:"proxyPort"`
	}{Name: name, Mode: mode, ProxyPort: proxyPort}
	var r resourceJSON
	err := c.do(ctx, OpCreateResource, http.MethodPut, c.orgPath("/resource"), nil, body, &r)
	return r.resource(), err
}

// ResourceUpdate lists the fields to change; zero values are left unchanged. A raw
// resource takes only Name, NiceID, ProxyPort and Enabled of them: Pangolin refuses
// every other field on it (400 Unrecognized key).
type ResourceUpdate struct {
	Name   string // "" keeps the name (the server requires 1-255 characters)
	NiceID string // "" keeps it; letters, digits and dashes, unique in the org (409)
	Host   *Host  // nil keeps the host; HTTP resources only
	// ProxyPort moves a raw resource to another public port; 0 keeps it. Servers with
	// flags.allow_raw_resources off refuse it (400 "Cannot update proxyPort").
	ProxyPort int
	// SSO, BlockAccess and Enabled are left unchanged when nil.
	SSO         *bool
	BlockAccess *bool
	Enabled     *bool
	// EmailWhitelistEnabled and ApplyRules are left unchanged when nil. The whitelist
	// must be enabled before SetResourceWhitelist; rules apply only with ApplyRules.
	EmailWhitelistEnabled *bool
	ApplyRules            *bool
	// SkipToIdpID is left unchanged when nil; a pointer to 0 clears it.
	SkipToIdpID *int
	// Headers are left unchanged when nil; a pointer to an empty list clears them.
	// Each needs a name and a value.
	Headers *[]Header
}

func (u ResourceUpdate) body() (map[string]any, error) {
	b := map[string]any{}
	if u.Name != "" {
		b["name"] = u.Name
	}
	if u.NiceID != "" {
		b["niceId"] = u.NiceID
	}
	if u.Host != nil {
		if err := u.Host.validate(); err != nil {
			return nil, err
		}
		b["subdomain"] = u.Host.subdomainJSON()
		b["domainId"] = u.Host.DomainID
	}
	if u.ProxyPort != 0 {
		if err := checkProxyPort(u.ProxyPort); err != nil {
			return nil, err
		}
		b["proxyPort"] = u.ProxyPort
	}
	if u.SSO != nil {
		b["sso"] = *u.SSO
	}
	if u.BlockAccess != nil {
		b["blockAccess"] = *u.BlockAccess
	}
	if u.Enabled != nil {
		b["enabled"] = *u.Enabled
	}
	if u.EmailWhitelistEnabled != nil {
		b["emailWhitelistEnabled"] = *u.EmailWhitelistEnabled
	}
	if u.ApplyRules != nil {
		b["applyRules"] = *u.ApplyRules
	}
	if u.SkipToIdpID != nil {
		switch id := *u.SkipToIdpID; {
		case id < 0:
			return nil, fmt.Errorf("identity provider id %d is negative", id)
		case id == 0:
			b["skipToIdpId"] = nil
		default:
			b["skipToIdpId"] = id
		}
	}
	if u.Headers != nil {
		for _, h := range *u.Headers {
			if h.Name == "" || h.Value == "" {
				return nil, fmt.Errorf("header %q: a name and a value are required", h.Name)
			}
		}
		if len(*u.Headers) == 0 {
			b["headers"] = nil
		} else {
			b["headers"] = *u.Headers
		}
	}
	if len(b) == 0 {
		return nil, errors.New("nothing to update")
	}
	return b, nil
}

// UpdateResource changes the fields set in u and returns the resource as it now is, in
// one request: the answer carries the effective sso, emailWhitelistEnabled and
// applyRules, as GET does.
func (c *Client) UpdateResource(ctx context.Context, id int, u ResourceUpdate) (Resource, error) {
	body, err := u.body()
	if err != nil {
		return Resource{}, fmt.Errorf("update resource %d: %w", id, err)
	}
	var r resourceJSON
	if err := c.do(ctx, OpUpdateResource, http.MethodPost, "/resource/"+strconv.Itoa(id), nil, body, &r); err != nil {
		return Resource{}, err
	}
	// The response carries the effective flags (Pangolin 1.22). Should it carry the raw
	// columns (null), a flag just sent stands for itself; an sso neither sent nor
	// reported is flagged by Resource.SSOReported, and the caller knows what it had.
	for _, f := range []struct {
		got  *flexBool
		sent *bool
	}{{&r.SSO, u.SSO}, {&r.EmailWhitelistEnabled, u.EmailWhitelistEnabled}, {&r.ApplyRules, u.ApplyRules}} {
		if !f.got.set && f.sent != nil {
			*f.got = flexBool{value: *f.sent, set: true}
		}
	}
	return r.resource(), nil
}

// DeleteResource deletes a resource and, with it, its targets.
func (c *Client) DeleteResource(ctx context.Context, id int) error {
	return c.do(ctx, OpDeleteResource, http.MethodDelete, "/resource/"+strconv.Itoa(id), nil, nil, nil)
}

// ListTargets returns every target of a resource, in creation order.
func (c *Client) ListTargets(ctx context.Context, resourceID int) ([]Target, error) {
	path := "/resource/" + strconv.Itoa(resourceID) + "/targets"
	return listAll(c, true, func(q url.Values) ([]Target, int, error) {
		var page struct {
			Targets    []targetJSON `json:"targets"`
			Pagination pagination   `json:"pagination"`
		}
		err := c.do(ctx, OpListTargets, http.MethodGet, path, q, nil, &page)
		out := make([]Target, len(page.Targets))
		for i, t := range page.Targets {
			out[i] = t.target()
			// The list items carry resourceId, but a target always belongs to the
			// resource it was listed under.
			out[i].ResourceID = resourceID
		}
		return out, page.Pagination.Total, err
	}, func(t Target) int { return t.TargetID })
}

// GetTarget returns one target.
func (c *Client) GetTarget(ctx context.Context, id int) (Target, error) {
	var t targetJSON
	err := c.do(ctx, OpGetTarget, http.MethodGet, "/target/"+strconv.Itoa(id), nil, nil, &t)
	return t.target(), err
}

// TargetSpec is a new target.
type TargetSpec struct {
	SiteID int
	IP     string // host name or IP address
	Port   int
	// Method is required here although the server accepts a target without one: such a
	// target is created but serves nothing.
	Method  string
	Enabled bool
	// Path and PathMatchType go together; both "" match every path.
	Path          string
	PathMatchType string
	// Priority 1-1000; 0 leaves the server's default (100: derived from the path).
	Priority int
	// Rewrite, when set, needs Path: see checkRewrite.
	Rewrite Rewrite
	// Health is the target's health check; the zero HealthCheck is none.
	Health HealthCheck
}

// Rewrite is a target's path rewrite: Pangolin's rewritePath and rewritePathType. The
// zero Rewrite is none.
type Rewrite struct {
	Path string
	Type string // "exact", "prefix", "regex" or "stripPrefix"
}

func checkMethod(m string) error {
	switch m {
	case MethodHTTP, MethodHTTPS, MethodH2C:
		return nil
	}
	return fmt.Errorf("method %q is not http, https or h2c", m)
}

func checkPath(path, match string) error {
	if (path == "") != (match == "") {
		return fmt.Errorf("path %q and match type %q must be set together", path, match)
	}
	return nil
}

// checkRewrite refuses what Pangolin accepts and then leaves out of its routing, the
// target with it (the reference's section 14): a rewrite without a path match, and a
// rewrite path without a type or, except for stripPrefix, a type without a path.
func checkRewrite(path string, r Rewrite) error {
	switch {
	case r == Rewrite{}:
		return nil
	case path == "":
		return fmt.Errorf("rewrite %q (%s) needs a path match: Pangolin routes nothing for it otherwise", r.Path, r.Type)
	case r.Type == "", r.Path == "" && r.Type != RewriteStripPrefix:
		return fmt.Errorf("rewrite path %q and type %q must be set together", r.Path, r.Type)
	}
	switch r.Type {
	case MatchExact, MatchPrefix, MatchRegex, RewriteStripPrefix:
		return nil
	}
	return fmt.Errorf("rewrite type %q is not exact, prefix, regex or stripPrefix", r.Type)
}

// CreateTarget adds a target to a resource.
func (c *Client) CreateTarget(ctx context.Context, resourceID int, s TargetSpec) (Target, error) {
	if err := errors.Join(checkMethod(s.Method), checkPath(s.Path, s.PathMatchType), checkRewrite(s.Path, s.Rewrite), s.Health.Validate()); err != nil {
		return Target{}, fmt.Errorf("create target on resource %d: %w", resourceID, err)
	}
	body := struct {
		SiteID          int     `json:"siteId"`
		IP              string  `json:"ip"`
		Port            int     `json:"port"`
		Method          string  `json:"method"`
		Enabled         bool    `json:"enabled"`
		Path            *string `json:"path,omitempty"`
		PathMatchType   *string `json:"pathMatchType,omitempty"`
		Priority        *int    `json:"priority,omitempty"`
		RewritePath     *string `json:"rewritePath,omitempty"`
		RewritePathType *string `json:"rewritePathType,omitempty"`
	}{SiteID: s.SiteID, IP: s.IP, Port: s.Port, Method: s.Method, Enabled: s.Enabled}
	if s.Path != "" {
		body.Path, body.PathMatchType = &s.Path, &s.PathMatchType
	}
	if s.Rewrite != (Rewrite{}) {
		body.RewritePath, body.RewritePathType = nullIfEmpty(s.Rewrite.Path), &s.Rewrite.Type
	}
	if s.Priority != 0 {
		body.Priority = &s.Priority
	}
	var t targetJSON
	err := c.do(ctx, OpCreateTarget, http.MethodPut, "/resource/"+strconv.Itoa(resourceID)+"/target", nil, withFields(body, s.Health.createFields()), &t)
	return t.target(), err
}

// withFields is body with extra fields, or body itself when there are none.
func withFields(body any, extra map[string]any) any {
	if len(extra) == 0 {
		return body
	}
	data, _ := json.Marshal(body) // a struct of strings, numbers and booleans
	merged := map[string]any{}
	_ = json.Unmarshal(data, &merged)
	maps.Copy(merged, extra)
	return merged
}

// RawTargetSpec is a new target of a raw resource: where its site forwards the port.
type RawTargetSpec struct {
	SiteID  int
	IP      string // host name or IP address
	Port    int
	Enabled bool
	// Health is the target's health check; the zero HealthCheck is none.
	Health HealthCheck
}

// CreateRawTarget adds a target to a raw resource. It sends no method, path, match type
// or priority: a raw resource forwards bytes, and Pangolin needs none of them (it
// stores them if sent, and a path even enters the router's name).
func (c *Client) CreateRawTarget(ctx context.Context, resourceID int, s RawTargetSpec) (Target, error) {
	if err := s.Health.Validate(); err != nil {
		return Target{}, fmt.Errorf("create target on resource %d: %w", resourceID, err)
	}
	body := struct {
		SiteID  int    `json:"siteId"`
		IP      string `json:"ip"`
		Port    int    `json:"port"`
		Enabled bool   `json:"enabled"`
	}{SiteID: s.SiteID, IP: s.IP, Port: s.Port, Enabled: s.Enabled}
	var t targetJSON
	err := c.do(ctx, OpCreateTarget, http.MethodPut, "/resource/"+strconv.Itoa(resourceID)+"/target", nil, withFields(body, s.Health.createFields()), &t)
	return t.target(), err
}

// PathMatch is a target's path and how it matches. The zero PathMatch matches every path.
type PathMatch struct {
	Path string
	Type string // "exact", "prefix" or "regex"
}

// TargetUpdate changes a target in place (one row; the router is never missing in
// between). The server requires SiteID and IP on every update; the other fields are
// left unchanged at their zero value, since zero is not a valid value for any of them.
type TargetUpdate struct {
	SiteID   int
	IP       string
	Port     int
	Method   string
	Enabled  *bool
	Path     *PathMatch // nil keeps it; &PathMatch{} clears it
	Priority int
	// Rewrite: nil keeps it; &Rewrite{} clears it. A rewrite needs a path match: with
	// one, Path must be sent too, so that the check sees what the target will hold.
	Rewrite *Rewrite
	// Health is the health check the target has after the update, always sent: the
	// server turns the check off on an update that leaves hcEnabled out.
	Health HealthCheck
}

// UpdateTarget changes a target and returns it as it now is.
func (c *Client) UpdateTarget(ctx context.Context, id int, u TargetUpdate) (Target, error) {
	var errs []error
	if u.SiteID <= 0 || u.IP == "" {
		errs = append(errs, errors.New("site id and ip are required on every update"))
	}
	if u.Method != "" {
		errs = append(errs, checkMethod(u.Method))
	}
	if u.Path != nil {
		errs = append(errs, checkPath(u.Path.Path, u.Path.Type))
	}
	if u.Rewrite != nil {
		path := ""
		if u.Path != nil {
			path = u.Path.Path
		}
		if *u.Rewrite != (Rewrite{}) && u.Path == nil {
			errs = append(errs, errors.New("a rewrite is sent with the path match it needs"))
		} else {
			errs = append(errs, checkRewrite(path, *u.Rewrite))
		}
	}
	errs = append(errs, u.Health.Validate())
	if err := errors.Join(errs...); err != nil {
		return Target{}, fmt.Errorf("update target %d: %w", id, err)
	}
	body := map[string]any{"siteId": u.SiteID, "ip": u.IP}
	maps.Copy(body, u.Health.updateFields())
	if u.Port != 0 {
		body["port"] = u.Port
	}
	if u.Method != "" {
		body["method"] = u.Method
	}
	if u.Enabled != nil {
		body["enabled"] = *u.Enabled
	}
	if u.Path != nil {
		// null clears the path match; "" is not the same thing to the server.
		body["path"], body["pathMatchType"] = nullIfEmpty(u.Path.Path), nullIfEmpty(u.Path.Type)
	}
	if u.Priority != 0 {
		body["priority"] = u.Priority
	}
	if u.Rewrite != nil {
		body["rewritePath"], body["rewritePathType"] = nullIfEmpty(u.Rewrite.Path), nullIfEmpty(u.Rewrite.Type)
	}
	var t targetJSON
	err := c.do(ctx, OpUpdateTarget, http.MethodPost, "/target/"+strconv.Itoa(id), nil, body, &t)
	return t.target(), err
}

func nullIfEmpty(s string) *string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return &s
}

// DeleteTarget deletes one target. The route is /target/:id: the server has no
// /resource/:rid/target/:tid.
func (c *Client) DeleteTarget(ctx context.Context, id int) error {
	return c.do(ctx, OpDeleteTarget, http.MethodDelete, "/target/"+strconv.Itoa(id), nil, nil, nil)
}
