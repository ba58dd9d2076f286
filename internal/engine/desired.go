package engine

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	accesspolicy "github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Features says what the installed PangolinResource CRD can express.
type Features struct {
	PathRouting     bool // targets[] with path, pathMatchType and priority
	AccessControl   bool // httpConfig.sso and httpConfig.blockAccess
	TunnelNamespace bool // tunnelRef.namespace
	// GarbageCollected: what the sink keeps for an object is removed by Kubernetes'
	// garbage collector once the object is gone (owner references). Otherwise the
	// reconciler removes it when it finds the object gone.
	GarbageCollected bool
	// AccessPolicies: the sink applies an AccessPolicy whole (roles, users, secrets,
	// whitelist, rules), not only its sso and blockAccess.
	AccessPolicies bool
	// Domains, when set, are the only domains hosts can be published under (a Pangolin
	// org's): a host splits against the longest it is or ends with, and may be one of
	// them. Unset, hosts split by the public-suffix list and an apex is refused.
	Domains []string
}

// Defaults apply where a route does not say.
type Defaults struct {
	SSO         bool
	BlockAccess bool
}

// Input is everything Desired needs to know about one source object and the cluster.
type Input struct {
	Routes   []route.Route // the hosts of one source object, each host once
	Features Features
	Defaults Defaults
	// Owners name the source object that owns each host cluster-wide (see Decide). A
	// host owned by another object is not served here.
	Owners map[string]route.Origin
}

// Desired returns the resources that should exist for the routes, and a rejection for
// every route, or part of one, that cannot be served as written.
//
//	route                                        | result
//	---------------------------------------------+--------------------------------------------
//	tunnel in another namespace, CRD without     | rejected: TunnelNamespaceUnsupported
//	  tunnelRef.namespace                        |
//	host owned by an older object                | rejected: HostConflict
//	apex host without a subdomain override       | rejected: ApexHost
//	two hosts whose overrides give one name      | both rejected: OverrideConflict
//	sso/block-access asked, CRD cannot carry it  | rejected: AccessControlUnsupported (fails closed)
//	an AccessPolicy asks for more than sso and   | rejected, held: AccessPolicyUnsupported (fails
//	  blockAccess, sink cannot apply it          |   closed: nothing published, nothing removed)
//	several backends, CRD without targets[]      | catch-all backend only, or rejected: PathRoutingUnsupported
//	anything else                                | one Resource
func Desired(in Input) ([]Resource, []route.Rejection) {
	var (
		resources  []Resource
		rejections []route.Rejection
	)
	reject := func(r route.Route, reason, format string, args ...any) {
		rejections = append(rejections, route.Rejection{Origin: r.Origin, Host: r.Host, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	for _, r := range in.Routes {
		if r.Tunnel.Namespace != r.Origin.Namespace && !in.Features.TunnelNamespace {
			reject(r, pic.ReasonTunnelNamespaceUnsupported,
				"tunnel %s is in namespace %q, but the installed PangolinResource CRD has no tunnelRef.namespace (original pangolin-operator): its tunnel must be in %q; install the fork's CRD or use a tunnel in this namespace",
				r.Tunnel, r.Tunnel.Namespace, r.Origin.Namespace)
			continue
		}
		if owner, ok := in.Owners[r.Host]; ok && owner.UID != r.Origin.UID {
			reject(r, pic.ReasonHostConflict, "host %s is already published by %s, the oldest claim; this %s is not served for it", r.Host, owner.Key(), r.Origin.Kind)
			continue
		}
		sub, domain, problem := hostname.PublicIn(in.Features.Domains, r.Host, r.DomainOverride, r.SubdomainOverride)
		if problem != nil {
			reject(r, problem.Reason, "%s", problem.Message)
			continue
		}
		res := Resource{
			Name:      ResourceName(r.Origin, r.Host),
			Namespace: r.Origin.Namespace,
			Origin:    r.Origin,
			Host:      r.Host,
			Subdomain: sub,
			Domain:    domain,
			Tunnel:    r.Tunnel,
		}
		if r.Access.Policy != nil && !in.Features.AccessPolicies {
			if rj := accesspolicy.Unsupported(r); rj != nil {
				rejections = append(rejections, *rj)
				continue
			}
		}
		if in.Features.AccessPolicies {
			res.Policy = r.Access.Policy
		}
		var ok bool
		if res.SSO, res.BlockAccess, ok = access(r, in, reject); !ok {
			continue
		}
		if res.Targets, ok = targets(r, in.Features.PathRouting, reject); !ok {
			continue
		}
		resources = append(resources, res)
	}
	return rejectOverrideCollisions(resources, rejections)
}

// access fails closed: protection the user asked for and the CRD cannot carry means no
// resource at all, never a public one.
func access(r route.Route, in Input, reject func(route.Route, string, string, ...any)) (sso, block *bool, ok bool) {
	if in.Features.AccessControl {
		// The fork sends sso and blockAccess on every update, so an omitted value would
		// turn SSO off: always write both.
		sso, block := in.Defaults.SSO, in.Defaults.BlockAccess
		if r.Access.SSO != nil {
			sso = *r.Access.SSO
		}
		if r.Access.BlockAccess != nil {
			block = *r.Access.BlockAccess
		}
		return &sso, &block, true
	}
	asked := func(b *bool) bool { return b != nil && *b }
	if asked(r.Access.SSO) || asked(r.Access.BlockAccess) {
		reject(r, pic.ReasonAccessControlUnsupported,
			"the %s and %s annotations ask for access control, but the installed PangolinResource CRD (original pangolin-operator) cannot carry it; the host is not published rather than published without protection",
			pic.AnnotationSSO, pic.AnnotationBlockAccess)
		return nil, nil, false
	}
	if r.Access.SSO != nil || r.Access.BlockAccess != nil {
		reject(r, pic.ReasonAccessControlUnsupported,
			"the installed PangolinResource CRD (original pangolin-operator) cannot carry sso/block-access: Pangolin keeps its own default (SSO on) for this host")
	}
	return nil, nil, true
}

// Priorities: Pangolin matches the highest first (1 to 1000). Exact paths come before
// prefixes and regular expressions, longer before shorter, and the default backend last.
const (
	exactBase    = 600
	prefixBase   = 100
	maxBand      = 399
	fallbackPrio = 1
)

func targets(r route.Route, pathRouting bool, reject func(route.Route, string, string, ...any)) ([]Target, bool) {
	if len(r.Paths) == 0 {
		reject(r, pic.ReasonNoBackend, "host %s has no paths and the object has no default backend", r.Host)
		return nil, false
	}
	if !pathRouting {
		return singleTarget(r, reject)
	}
	out := make([]Target, 0, len(r.Paths))
	for _, p := range r.Paths {
		t := pangolinTarget(p)
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Target) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Path, b.Path))
	})
	return out, true
}

// pangolinTarget maps a Kubernetes path match onto Pangolin's. Pangolin's prefix is a
// plain string prefix, so a Kubernetes Prefix other than "/" becomes a regular
// expression that matches whole path elements: /foo matches /foo and /foo/bar, not /foobar.
func pangolinTarget(p route.PathRule) Target {
	band := func(base int) int32 { return int32(base + min(len(p.Path), maxBand)) }
	t := Target{Backend: p.Backend}
	switch {
	case p.Fallback:
		t.Path, t.Match, t.Priority = "/", "prefix", fallbackPrio
	case p.Match == route.MatchExact:
		t.Path, t.Match, t.Priority = p.Path, "exact", band(exactBase)
	case p.Match == route.MatchRegex:
		t.Path, t.Match, t.Priority = p.Path, "regex", band(prefixBase)
	default:
		elements := strings.TrimRight(p.Path, "/")
		if elements == "" {
			t.Path, t.Match, t.Priority = "/", "prefix", band(prefixBase)
		} else {
			t.Path, t.Match, t.Priority = "^"+regexp.QuoteMeta(elements)+"(/.*)?$", "regex", band(prefixBase)
		}
	}
	return t
}

// singleTarget serves the original operator's CRD, which has one target per host.
func singleTarget(r route.Route, reject func(route.Route, string, string, ...any)) ([]Target, bool) {
	first := r.Paths[0].Backend
	same := true
	for _, p := range r.Paths[1:] {
		same = same && p.Backend == first
	}
	catchAll := slices.ContainsFunc(r.Paths, func(p route.PathRule) bool {
		return p.Fallback || p.Match == route.MatchPrefix && strings.TrimRight(p.Path, "/") == ""
	})
	if same && catchAll {
		return []Target{{Backend: first}}, true
	}
	if same {
		// Fail closed: publishing the host would expose every path of the Service, not
		// only those the user listed (the specification skips non-root paths).
		reject(r, pic.ReasonPathRoutingUnsupported,
			"host %s routes only some paths (%s) to %s, but the installed PangolinResource CRD (original pangolin-operator) has no path routing: publishing it would expose every path, so it is not published; add a / path, or install the fork's CRD",
			r.Host, pathList(r.Paths), first)
		return nil, false
	}
	// Send everything to what the object itself sends unmatched requests to: other
	// paths lose their routing, but no request reaches a backend the user did not
	// publish for the whole host.
	for _, catchAll := range []func(route.PathRule) bool{
		func(p route.PathRule) bool {
			return !p.Fallback && p.Match == route.MatchPrefix && strings.TrimRight(p.Path, "/") == ""
		},
		func(p route.PathRule) bool { return p.Fallback },
	} {
		if i := slices.IndexFunc(r.Paths, catchAll); i >= 0 {
			reject(r, pic.ReasonPathRoutingUnsupported,
				"host %s routes paths to several backends, but the installed PangolinResource CRD (original pangolin-operator) has a single target: the whole host goes to %s; install the fork's CRD for path routing",
				r.Host, r.Paths[i].Backend)
			return []Target{{Backend: r.Paths[i].Backend}}, true
		}
	}
	reject(r, pic.ReasonPathRoutingUnsupported,
		"host %s routes paths to several backends and has no catch-all path (/) or default backend, but the installed PangolinResource CRD (original pangolin-operator) has a single target: the host is not published; install the fork's CRD for path routing",
		r.Host)
	return nil, false
}

// rejectOverrideCollisions refuses overrides that would publish two hosts under one
// public name: neither is served, rather than one silently shadowing the other.
func rejectOverrideCollisions(resources []Resource, rejections []route.Rejection) ([]Resource, []route.Rejection) {
	hosts := map[string][]string{}
	for _, r := range resources {
		hosts[r.PublicHost()] = append(hosts[r.PublicHost()], r.Host)
	}
	kept := resources[:0]
	for _, r := range resources {
		if same := hosts[r.PublicHost()]; len(same) > 1 {
			rejections = append(rejections, route.Rejection{
				Origin: r.Origin, Host: r.Host, Reason: pic.ReasonOverrideConflict,
				Message: fmt.Sprintf("host %s would be published as %s, like %s, through the %s and %s annotations; none of them is published",
					r.Host, r.PublicHost(), strings.Join(slices.DeleteFunc(slices.Clone(same), func(h string) bool { return h == r.Host }), ", "),
					pic.AnnotationDomainName, pic.AnnotationSubdomain),
			})
			continue
		}
		kept = append(kept, r)
	}
	return kept, rejections
}

func pathList(paths []route.PathRule) string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p.Path)
	}
	return strings.Join(out, ", ")
}
