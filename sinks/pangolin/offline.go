package pangolin

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/inmemory"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// PublishedResource is a resource as the sink leaves it in Pangolin, with its targets:
// what `manager render` prints in direct mode. The fields are Pangolin's.
type PublishedResource struct {
	NiceID      string            `json:"niceId"`
	Name        string            `json:"name"`
	FullDomain  string            `json:"fullDomain"`
	Domain      string            `json:"domain"`
	Subdomain   string            `json:"subdomain,omitempty"`
	Enabled     bool              `json:"enabled"`
	SSO         bool              `json:"sso"`
	BlockAccess bool              `json:"blockAccess"`
	Targets     []PublishedTarget `json:"targets"`
	// Routers are the Traefik routers Pangolin would serve for it, named as Pangolin
	// names them: a path whose router another took is served by none.
	Routers []PublishedRouter `json:"routers,omitempty"`
}

// PublishedRouter is a Traefik router of a PublishedResource, as Pangolin's
// traefik-config would show it.
type PublishedRouter struct {
	Name     string   `json:"name"`
	Rule     string   `json:"rule"`
	Priority int      `json:"priority"`
	Servers  []string `json:"servers"`
}

// PublishedTarget is a target of a PublishedResource; Site is the site's niceId.
type PublishedTarget struct {
	Site          string `json:"site"`
	Method        string `json:"method"`
	IP            string `json:"ip"`
	Port          int    `json:"port"`
	Path          string `json:"path,omitempty"`
	PathMatchType string `json:"pathMatchType,omitempty"`
	Priority      int    `json:"priority,omitempty"`
	Enabled       bool   `json:"enabled"`
}

// renderOrg is the org of the simulated Pangolin when the configuration names none.
const renderOrg = "render"

// offline builds the sink for `manager render`: the real sink, sending the requests PIC
// would send to the in-memory Pangolin server, which holds the org's domains and every
// site (the sites a configuration names cannot be known offline), all online.
func offline(ctx context.Context, deps plugin.OfflineDeps) (plugin.OfflineSink, error) {
	cfg := deps.Config
	org := cmp.Or(cfg.Pangolin.Org, renderOrg)
	opts := inmemory.Options{Org: org, Sites: []inmemory.Site{}, AnySite: true, Domains: []inmemory.Domain{}}
	byID := map[string]string{}
	for i, d := range deps.Options.Domains {
		id := fmt.Sprintf("domain%d", i+1)
		opts.Domains = append(opts.Domains, inmemory.Domain{ID: id, BaseDomain: d, Verified: true})
		byID[id] = d
	}
	server := inmemory.NewHandler(opts)
	api, err := pangolinapi.New(pangolinapi.Config{
		BaseURL: "http://pangolin.render.invalid/v1", Org: org, APIKey: inmemory.RootKey.Token(),
		HTTPClient: &http.Client{Transport: server.Transport()},
	})
	if err != nil {
		return nil, fmt.Errorf("simulate Pangolin: %w", err)
	}
	sink := New(api, Options{OwnerID: cfg.Pangolin.OwnerID})
	if err := sink.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("simulate Pangolin: %w", err)
	}
	return &simulated{Sink: sink, server: server, domains: byID}, nil
}

// simulated is the sink against the in-memory Pangolin server.
type simulated struct {
	*Sink
	server  *inmemory.Server
	domains map[string]string // base domain by domainId
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
	var resources []PublishedResource
	for _, r := range p.server.Resources() {
		res := PublishedResource{
			NiceID: r.NiceID, Name: r.Name, FullDomain: r.FullDomain, Domain: p.domains[r.DomainID], Enabled: r.Enabled,
			SSO: r.SSO, BlockAccess: r.BlockAccess, Targets: []PublishedTarget{},
		}
		if r.Subdomain != nil {
			res.Subdomain = *r.Subdomain
		}
		for _, t := range p.server.Targets(r.ID) {
			res.Targets = append(res.Targets, PublishedTarget{
				Site: sites[t.SiteID], Method: t.Method, IP: t.IP, Port: t.Port, Path: t.Path,
				PathMatchType: t.PathMatchType, Priority: t.Priority, Enabled: t.Enabled,
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
				res.Routers = append(res.Routers, PublishedRouter{Name: rt.Name, Rule: rt.Rule, Priority: rt.Priority, Servers: rt.Servers})
			}
		}
		resources = append(resources, res)
	}
	slices.SortFunc(resources, func(a, b PublishedResource) int {
		return cmp.Or(cmp.Compare(a.FullDomain, b.FullDomain), cmp.Compare(a.NiceID, b.NiceID))
	})
	out := make([]any, len(resources))
	for i := range resources {
		out[i] = resources[i]
	}
	return out, nil
}
