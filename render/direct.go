package render

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/inmemory"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// PangolinAPIResource is a resource as the direct sink leaves it in Pangolin, with its
// targets: what render prints with sink pangolin. The fields are Pangolin's.
type PangolinAPIResource struct {
	NiceID      string              `json:"niceId"`
	Name        string              `json:"name"`
	FullDomain  string              `json:"fullDomain"`
	Domain      string              `json:"domain"`
	Subdomain   string              `json:"subdomain,omitempty"`
	Enabled     bool                `json:"enabled"`
	SSO         bool                `json:"sso"`
	BlockAccess bool                `json:"blockAccess"`
	Targets     []PangolinAPITarget `json:"targets"`
	// Routers are the Traefik routers Pangolin would serve for it, named as Pangolin
	// names them: a path whose router another took is served by none.
	Routers []PangolinAPIRouter `json:"routers,omitempty"`
}

// PangolinAPIRouter is a Traefik router of a PangolinAPIResource, as Pangolin's
// traefik-config would show it.
type PangolinAPIRouter struct {
	Name     string   `json:"name"`
	Rule     string   `json:"rule"`
	Priority int      `json:"priority"`
	Servers  []string `json:"servers"`
}

// PangolinAPITarget is a target of a PangolinAPIResource; Site is the site's niceId.
type PangolinAPITarget struct {
	Site          string `json:"site"`
	Method        string `json:"method"`
	IP            string `json:"ip"`
	Port          int    `json:"port"`
	Path          string `json:"path,omitempty"`
	PathMatchType string `json:"pathMatchType,omitempty"`
	Priority      int    `json:"priority,omitempty"`
	Enabled       bool   `json:"enabled"`
}

// renderOrg is the org of a simulated Pangolin when the configuration names none.
const renderOrg = "render"

// simulatedPangolin is the direct sink working against the in-repo Pangolin server, in
// memory: the requests PIC would send are sent, and what they leave is what Pangolin
// would hold. Every site exists and is online: the sites a configuration names cannot be
// known offline.
type simulatedPangolin struct {
	server  *inmemory.Server
	sink    *pangolin.Sink
	domains map[string]string // base domain by domainId
}

// simulatePangolin starts the simulation with the org's domains.
func simulatePangolin(ctx context.Context, cfg *config.Config, domains []string) (*simulatedPangolin, error) {
	org := cmp.Or(cfg.Pangolin.Org, renderOrg)
	opts := inmemory.Options{Org: org, Sites: []inmemory.Site{}, AnySite: true, Domains: []inmemory.Domain{}}
	byID := map[string]string{}
	for i, d := range domains {
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
	sink := pangolin.New(api, pangolin.Options{OwnerID: cfg.Pangolin.OwnerID})
	if err := sink.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("simulate Pangolin: %w", err)
	}
	return &simulatedPangolin{server: server, sink: sink, domains: byID}, nil
}

// resources is what the simulated Pangolin holds, sorted by host, then niceId.
func (p *simulatedPangolin) resources() []PangolinAPIResource {
	sites := map[int]string{}
	for _, s := range p.server.Sites() {
		sites[s.ID] = s.NiceID
	}
	routers := p.server.Routers()
	var out []PangolinAPIResource
	for _, r := range p.server.Resources() {
		res := PangolinAPIResource{
			NiceID: r.NiceID, Name: r.Name, FullDomain: r.FullDomain, Domain: p.domains[r.DomainID], Enabled: r.Enabled,
			SSO: r.SSO, BlockAccess: r.BlockAccess, Targets: []PangolinAPITarget{},
		}
		if r.Subdomain != nil {
			res.Subdomain = *r.Subdomain
		}
		for _, t := range p.server.Targets(r.ID) {
			res.Targets = append(res.Targets, PangolinAPITarget{
				Site: sites[t.SiteID], Method: t.Method, IP: t.IP, Port: t.Port, Path: t.Path,
				PathMatchType: t.PathMatchType, Priority: t.Priority, Enabled: t.Enabled,
			})
		}
		// Pangolin keeps targets in creation order; a sorted list reads the same
		// whatever order an edit left them in.
		slices.SortFunc(res.Targets, func(a, b PangolinAPITarget) int {
			return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Path, b.Path),
				cmp.Compare(a.PathMatchType, b.PathMatchType), cmp.Compare(a.IP, b.IP), cmp.Compare(a.Port, b.Port))
		})
		for _, rt := range routers {
			if rt.ResourceID == r.ID {
				res.Routers = append(res.Routers, PangolinAPIRouter{Name: rt.Name, Rule: rt.Rule, Priority: rt.Priority, Servers: rt.Servers})
			}
		}
		out = append(out, res)
	}
	slices.SortFunc(out, func(a, b PangolinAPIResource) int {
		return cmp.Or(cmp.Compare(a.FullDomain, b.FullDomain), cmp.Compare(a.NiceID, b.NiceID))
	})
	return out
}

// derivedDomains are the domains render assumes the org has when it is not told: the
// registrable domain (public suffix plus one label) of every host the objects claim,
// and every domain the domain-name annotation names.
func derivedDomains(ctx context.Context, objects []client.Object, srcs []plugin.Source) []string {
	var out []string
	add := func(d string) {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, o := range objects {
		for _, src := range srcs {
			if !sameKind(o, src.Object()) {
				continue
			}
			for _, h := range src.Declare().Claims.Hosts(ctx, o) {
				_, domain, _ := hostname.Split(strings.TrimPrefix(h, "*."))
				add(domain)
			}
			// As the sources read it; an invalid one is their Warning, not a domain.
			if v, ok := o.GetAnnotations()[pic.AnnotationDomainName]; ok {
				if d, problem := hostname.Normalize(v, ""); problem == nil {
					add(d)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// writePangolin prints Pangolin resources as a YAML stream.
func writePangolin(w io.Writer, resources []PangolinAPIResource) error {
	for i, r := range resources {
		out, err := yaml.Marshal(r)
		if err != nil {
			return fmt.Errorf("marshal Pangolin resource %s: %w", r.NiceID, err)
		}
		if err := writeDocument(w, i, out); err != nil {
			return err
		}
	}
	return nil
}
