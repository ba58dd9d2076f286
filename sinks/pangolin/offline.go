package pangolin

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// PublishedResource is a resource as the sink leaves it in Pangolin, with its targets:
// what `manager render` prints in direct mode. The fields are Pangolin's.
type PublishedResource struct {
	NiceID string `json:"niceId"`
	Name   string `json:"name"`
	// Mode and ProxyPort are set for a raw resource: a public TCP or UDP port of the
	// Pangolin server, which has no host.
	Mode        string `json:"mode,omitempty"`
	ProxyPort   int    `json:"proxyPort,omitempty"`
	FullDomain  string `json:"fullDomain"`
	Domain      string `json:"domain"`
	Subdomain   string `json:"subdomain,omitempty"`
	Enabled     bool   `json:"enabled"`
	SSO         bool   `json:"sso"`
	BlockAccess bool   `json:"blockAccess"`
	// Headers are set on every request to the host.
	Headers []pangolinapi.Header `json:"headers,omitempty"`
	Targets []PublishedTarget    `json:"targets"`
	// Routers are the Traefik routers Pangolin would serve for it, named as Pangolin
	// names them: a path whose router another took is served by none.
	Routers []PublishedRouter `json:"routers,omitempty"`
	// Access is who else may reach it, when an AccessPolicy governs it.
	Access *PublishedAccess `json:"access,omitempty"`
}

// PublishedAccess is what an AccessPolicy makes of a host in Pangolin, besides sso and
// blockAccess: roles, users, emails and rules by name, secrets by reference (the Secret
// and key they are read from), never by value.
type PublishedAccess struct {
	Policy         string   `json:"policy"`
	Roles          []string `json:"roles,omitempty"`
	Users          []string `json:"users,omitempty"`
	AutoLoginIdP   string   `json:"autoLoginIdp,omitempty"`
	EmailWhitelist []string `json:"emailWhitelist,omitempty"`
	// Rules in order: "<priority> <ACCEPT|DROP|PASS> <match> <value>"; applyRules is on
	// when there is one.
	Rules      []string `json:"rules,omitempty"`
	Password   string   `json:"password,omitempty"`
	PinCode    string   `json:"pinCode,omitempty"`
	HeaderAuth string   `json:"headerAuth,omitempty"`
}

// publishedAccess describes p for render.
func publishedAccess(p *route.AccessPolicy) *PublishedAccess {
	if p == nil {
		return nil
	}
	out := &PublishedAccess{
		Policy: p.Name.String(), Roles: p.Roles, Users: p.Users, AutoLoginIdP: p.AutoLoginIdP.String(),
		EmailWhitelist: p.EmailWhitelist,
	}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, r.String())
	}
	if p.Password != nil {
		out.Password = p.Password.String()
	}
	if p.PinCode != nil {
		out.PinCode = p.PinCode.String()
	}
	if p.HeaderAuth != nil {
		out.HeaderAuth = p.HeaderAuth.String()
	}
	return out
}

// PublishedRouter is a Traefik router of a PublishedResource, as Pangolin's
// traefik-config would show it.
type PublishedRouter struct {
	Name string `json:"name"`
	// EntryPoint is set for a raw resource's router: "tcp-5432", which Traefik's static
	// configuration must define (Pangolin does not).
	EntryPoint string   `json:"entryPoint,omitempty"`
	Rule       string   `json:"rule"`
	Priority   int      `json:"priority"`
	Servers    []string `json:"servers"`
	// Rewrite is the path rewrite Traefik applies, e.g.
	// "replacePathRegex ^/v1(/.*)?$ -> /v2$1".
	Rewrite string `json:"rewrite,omitempty"`
	// Headers are set on the requests it routes (customRequestHeaders).
	Headers map[string]string `json:"headers,omitempty"`
}

// PublishedTarget is a target of a PublishedResource; Site is the site's niceId.
type PublishedTarget struct {
	Site          string `json:"site"`
	Method        string `json:"method,omitempty"` // none for a raw resource's target
	IP            string `json:"ip"`
	Port          int    `json:"port"`
	Path          string `json:"path,omitempty"`
	PathMatchType string `json:"pathMatchType,omitempty"`
	Priority      int    `json:"priority,omitempty"`
	Enabled       bool   `json:"enabled"`
	// RewritePath and RewritePathType are Pangolin's rewrite of the matched path.
	RewritePath     string `json:"rewritePath,omitempty"`
	RewritePathType string `json:"rewritePathType,omitempty"`
	// HealthCheck is the target's health check, when it has one.
	HealthCheck *PublishedHealthCheck `json:"healthCheck,omitempty"`
}

// PublishedHealthCheck is a target's health check, in Pangolin's hc* fields as the
// sink writes them.
type PublishedHealthCheck struct {
	Mode               string `json:"hcMode"`
	Hostname           string `json:"hcHostname"`
	Port               int    `json:"hcPort,omitempty"`
	Scheme             string `json:"hcScheme,omitempty"`
	Method             string `json:"hcMethod,omitempty"`
	Path               string `json:"hcPath,omitempty"`
	Interval           int    `json:"hcInterval,omitempty"`
	Timeout            int    `json:"hcTimeout,omitempty"`
	HealthyThreshold   int    `json:"hcHealthyThreshold,omitempty"`
	UnhealthyThreshold int    `json:"hcUnhealthyThreshold,omitempty"`
}

func publishedHealthCheck(t pangolinsim.Target) *PublishedHealthCheck {
	if !t.HCEnabled {
		return nil
	}
	hc := t.HC
	return &PublishedHealthCheck{
		Mode: hc.Mode, Hostname: hc.Hostname, Port: hc.Port, Scheme: hc.Scheme, Method: hc.Method, Path: hc.Path,
		Interval: hc.Interval, Timeout: hc.Timeout, HealthyThreshold: hc.HealthyThreshold, UnhealthyThreshold: hc.UnhealthyThreshold,
	}
}

// PublishedManagedSite is a managed site as render shows it, after the resources: the
// site PIC would create and the Newt agent it would run for it. Render runs no agent:
// Online is render's assumption (every site online), and NewtVersion the version of the
// configured image's tag, the one that would connect. It holds no credential: PIC draws
// them only when it creates the site.
type PublishedManagedSite struct {
	ManagedSite string `json:"managedSite"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Online      bool   `json:"online"`
	NewtVersion string `json:"newtVersion,omitempty"`
	Deployment  string `json:"deployment"`
	Image       string `json:"image"`
	Replicas    int    `json:"replicas"`
}

// publishedManagedSites are the configuration's managed sites, by name.
func publishedManagedSites(cfg *config.Config, ownerID string) []PublishedManagedSite {
	var out []PublishedManagedSite
	for _, name := range cfg.ManagedSites() {
		out = append(out, PublishedManagedSite{
			ManagedSite: name, Name: siteName(ownerID, name), Type: pangolinapi.SiteTypeNewt, Online: true,
			NewtVersion: imageVersion(cfg.Pangolin.NewtImage), Deployment: newt.Agent{Site: name}.Name(),
			Image: cfg.Pangolin.NewtImage, Replicas: cfg.Pangolin.NewtReplicas,
		})
	}
	return out
}

// imageVersion is an image reference's tag without a leading v, "" for a reference by
// digest alone: docker.io/fosrl/newt:1.15.0@sha256:... is 1.15.0.
func imageVersion(image string) string {
	name, _, _ := strings.Cut(image, "@")
	last := name[strings.LastIndex(name, "/")+1:]
	_, tag, found := strings.Cut(last, ":")
	if !found {
		return ""
	}
	return strings.TrimPrefix(tag, "v")
}

// renderOrg is the org of the simulated Pangolin when the configuration names none.
const renderOrg = "render"

// offline builds the sink for `manager render`: the real sink, sending the requests PIC
// would send to the in-memory Pangolin server, which holds the org's domains and every
// site (the sites a configuration names cannot be known offline), all online Newt
// sites: the targets' health checks are written, as for most sites. Their Newt agents
// find every checked backend healthy (HealthyBackends): render shows what Pangolin
// serves once Newt has probed them.
func offline(ctx context.Context, deps plugin.OfflineDeps) (plugin.OfflineSink, error) {
	cfg := deps.Config
	org := cmp.Or(cfg.Pangolin.Org, renderOrg)
	opts := pangolinsim.Options{Org: org, Sites: []pangolinsim.Site{}, AnySite: true, AnyIdentityProvider: true, HealthyBackends: true, Domains: []pangolinsim.Domain{}}
	byID := map[string]string{}
	for i, d := range deps.Options.Domains {
		id := fmt.Sprintf("domain%d", i+1)
		opts.Domains = append(opts.Domains, pangolinsim.Domain{ID: id, BaseDomain: d, Verified: true})
		byID[id] = d
	}
	server := pangolinsim.New(opts)
	api, err := pangolinapi.New(pangolinapi.Config{
		BaseURL: "http://pangolin.render.invalid/v1", Org: org, APIKey: pangolinsim.RootKey.Token(),
		HTTPClient: &http.Client{Transport: server.Transport()},
	})
	if err != nil {
		return nil, fmt.Errorf("simulate Pangolin: %w", err)
	}
	sink := New(api, Options{OwnerID: cfg.Pangolin.OwnerID, APIKey: pangolinsim.RootKey.Token()})
	if err := sink.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("simulate Pangolin: %w", err)
	}
	return &simulated{Sink: sink, server: server, domains: byID, managed: publishedManagedSites(cfg, cfg.Pangolin.OwnerID)}, nil
}

// simulated is the sink against the in-memory Pangolin server.
type simulated struct {
	*Sink
	server  *pangolinsim.Server
	domains map[string]string // base domain by domainId
	managed []PublishedManagedSite
}

// Apply implements plugin.Sink: the real sink's, on a simulated org that first gets
// every role and user the plan's policies name and it lacks. Render cannot know the real
// org's; it shows which names each policy uses, as resolved in an org that has them.
func (p *simulated) Apply(ctx context.Context, owner route.Origin, plan engine.Plan) (plugin.Applied, error) {
	if err := p.seedOrg(ctx, plan); err != nil {
		return plugin.Applied{}, fmt.Errorf("simulate Pangolin: %w", err)
	}
	return p.Sink.Apply(ctx, owner, plan)
}

// seedOrg adds to the simulated org the roles and users plan names that it lacks, found
// as the sink finds them (findRole, findUser): a user named by email gets the email's
// local part as username, so that naming it by both is one user.
func (p *simulated) seedOrg(ctx context.Context, plan engine.Plan) error {
	var roleNames, userRefs []string
	for _, list := range [][]engine.Resource{plan.Create, plan.Update, plan.Access} {
		for _, d := range list {
			if d.Policy != nil {
				roleNames = append(roleNames, d.Policy.Roles...)
				userRefs = append(userRefs, d.Policy.Users...)
			}
		}
	}
	if len(roleNames)+len(userRefs) == 0 {
		return nil
	}
	roles, err := p.roles(ctx, false)
	if err != nil {
		return err
	}
	users, err := p.users(ctx, false)
	if err != nil {
		return err
	}
	seeded := false
	for _, name := range roleNames {
		if _, found := findRole(roles, name); !found {
			r := p.server.SeedRole(name)
			roles = append(slices.Clip(roles), pangolinapi.Role{RoleID: r.ID, Name: r.Name})
			seeded = true
		}
	}
	for _, ref := range userRefs {
		if _, match := findUser(users, ref); match == userMissing {
			u := pangolinsim.User{Username: ref}
			if strings.Contains(ref, "@") {
				u.Email, u.Username = ref, strings.Split(ref, "@")[0]
			}
			u = p.server.SeedUser(u)
			users = append(slices.Clip(users), pangolinapi.User{UserID: u.ID, Email: u.Email, Username: u.Username})
			seeded = true
		}
	}
	if seeded {
		p.forgetOrg() // the sink reads the org's lists again
	}
	return nil
}

// Writes implements plugin.OfflineSink: the write requests the server received.
func (p *simulated) Writes() int {
	n := p.server.Writes()
	p.server.ResetCounts()
	return n
}

// Published implements plugin.OfflineSink: what the simulated Pangolin holds, sorted by
// host, then niceId, each resource's targets by priority, then path.
func (p *simulated) Published(context.Context) ([]any, error) {
	sites := map[int]string{}
	for _, s := range p.server.Sites() {
		sites[s.ID] = s.NiceID
	}
	routers := p.server.Routers()
	rawRouters := p.server.RawRouters()
	var resources []PublishedResource
	for _, r := range p.server.Resources() {
		res := PublishedResource{
			NiceID: r.NiceID, Name: r.Name, FullDomain: r.FullDomain, Domain: p.domains[r.DomainID], Enabled: r.Enabled,
			SSO: r.SSO, BlockAccess: r.BlockAccess, Targets: []PublishedTarget{},
		}
		if r.Mode != pangolinapi.ModeHTTP {
			// Pangolin keeps an sso flag on a raw resource that nothing applies.
			res.Mode, res.ProxyPort, res.SSO = r.Mode, r.ProxyPort, false
		}
		for _, h := range r.Headers {
			res.Headers = append(res.Headers, pangolinapi.Header{Name: h.Name, Value: h.Value})
		}
		if r.Subdomain != nil {
			res.Subdomain = *r.Subdomain
		}
		for _, t := range p.server.Targets(r.ID) {
			res.Targets = append(res.Targets, PublishedTarget{
				Site: sites[t.SiteID], Method: t.Method, IP: t.IP, Port: t.Port, Path: t.Path,
				PathMatchType: t.PathMatchType, Priority: t.Priority, Enabled: t.Enabled,
				RewritePath: t.RewritePath, RewritePathType: t.RewritePathType, HealthCheck: publishedHealthCheck(t),
			})
		}
		// Pangolin keeps targets in creation order; a sorted list reads the same
		// whatever order an edit left them in.
		slices.SortFunc(res.Targets, func(a, b PublishedTarget) int {
			return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Path, b.Path),
				cmp.Compare(a.PathMatchType, b.PathMatchType), cmp.Compare(a.IP, b.IP), cmp.Compare(a.Port, b.Port))
		})
		for _, rt := range routers {
			if rt.ResourceID == r.ID {
				pr := PublishedRouter{Name: rt.Name, Rule: rt.Rule, Priority: rt.Priority, Servers: rt.Servers, Headers: rt.RequestHeaders}
				if rt.Rewrite != nil {
					pr.Rewrite = rt.Rewrite.String()
				}
				res.Routers = append(res.Routers, pr)
			}
		}
		for _, rt := range rawRouters {
			if rt.ResourceID == r.ID {
				res.Routers = append(res.Routers, PublishedRouter{Name: rt.Name, EntryPoint: rt.EntryPoint, Rule: rt.Rule, Servers: rt.Servers})
			}
		}
		p.mu.Lock()
		if e, ok := p.entries[r.NiceID]; ok {
			res.Access = publishedAccess(e.applied)
		}
		p.mu.Unlock()
		resources = append(resources, res)
	}
	slices.SortFunc(resources, func(a, b PublishedResource) int {
		return cmp.Or(cmp.Compare(a.FullDomain, b.FullDomain), cmp.Compare(a.Mode, b.Mode), cmp.Compare(a.ProxyPort, b.ProxyPort), cmp.Compare(a.NiceID, b.NiceID))
	})
	out := make([]any, 0, len(resources)+len(p.managed))
	for _, r := range resources {
		out = append(out, r)
	}
	for _, m := range p.managed {
		out = append(out, m)
	}
	return out, nil
}
