package engine

import (
	"cmp"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	accesspolicy "github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Features says what the sink can express: for the pangolinresource sink, what the
// installed PangolinResource CRD has fields for (the comments name them); for the
// direct sink, what PIC writes through Pangolin's API.
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
	// Rewrites: a target can rewrite the path of the requests it matches (Pangolin's
	// rewritePath and rewritePathType).
	Rewrites bool
	// RequestHeaders: a host can set request headers (Pangolin's resource headers).
	RequestHeaders bool
	// RawResources: the sink can publish TCP and UDP ports (Pangolin's raw resources).
	RawResources bool
	// HealthChecks: the sink can give targets health checks (Pangolin's hc* fields).
	HealthChecks bool
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
	// Owners name the source object that owns each published host (ClaimKey), or
	// public port, cluster-wide (see Decide). A host owned by another object is not
	// served here.
	Owners map[string]route.Origin
}

// Desired returns the resources that should exist for the routes, and a rejection for
// every route, or part of one, that cannot be served as written.
//
//	route                                        | result
//	---------------------------------------------+--------------------------------------------
//	tunnel in another namespace, CRD without     | rejected: TunnelNamespaceUnsupported
//	  tunnelRef.namespace                        |
//	published host (after the domain-name and    | rejected: HostConflict
//	  subdomain overrides) owned by an older one |
//	raw port owned by an older object            | rejected: PortConflict
//	raw port, sink without raw resources         | rejected: RawResourceUnsupported
//	raw port asking for access control, or under | rejected: AccessControlUnsupported (fails closed)
//	  an AccessPolicy, valid or not              |
//	apex host without a subdomain override       | rejected: ApexHost
//	host under none of the sink's domains (a     | rejected: DomainNotFound, held: what is
//	  domain unverified or removed)              |   published stays
//	domain-name or subdomain override giving a   | rejected: DomainNotFound, InvalidAnnotation or
//	  name that cannot be published              |   ApexHost, held: what is published stays
//	two hosts whose overrides give one name      | both rejected: OverrideConflict
//	sso/block-access asked, CRD cannot carry it  | rejected: AccessControlUnsupported (fails closed)
//	an AccessPolicy asks for more than sso and   | rejected: AccessPolicyUnsupported (fails closed:
//	  blockAccess, sink cannot apply it          |   not published, what exists is removed)
//	a path rewrite or request headers, sink      | rejected: FilterUnsupported (fails closed)
//	  cannot carry them                          |
//	a path rewrite Pangolin cannot express       | rejected: FilterUnsupported
//	several backends, CRD without targets[]      | catch-all backend only, or rejected: PathRoutingUnsupported
//	a health check, sink without health checks   | published without it, with HealthCheckUnsupported
//	anything else                                | one Resource
func Desired(in Input) ([]Resource, []route.Rejection) {
	var (
		resources  []Resource
		rejections []route.Rejection
	)
	reject := func(r route.Route, reason, format string, args ...any) {
		rejections = append(rejections, route.Rejection{Origin: r.Origin, Host: r.Host, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	// refuseOpen refuses r for access control the sink cannot apply: fail closed.
	refuseOpen := func(r route.Route, format string, args ...any) {
		reject(r, pic.ReasonAccessControlUnsupported, format, args...)
		rejections[len(rejections)-1].AccessUnsupported = true
	}
	for _, r := range in.Routes {
		if r.Tunnel.Namespace != r.Origin.Namespace && !in.Features.TunnelNamespace {
			reject(r, pic.ReasonTunnelNamespaceUnsupported,
				"tunnel %s is in namespace %q, but the installed PangolinResource CRD has no tunnelRef.namespace (original pangolin-operator): its tunnel must be in %q; install the fork's CRD or use a tunnel in this namespace",
				r.Tunnel, r.Tunnel.Namespace, r.Origin.Namespace)
			continue
		}
		if r.Raw() {
			if owner, ok := in.Owners[r.PortKey()]; ok && owner.UID != r.Origin.UID {
				reject(r, pic.ReasonPortConflict, "public port %d/%s is already published by %s, the oldest claim; this %s is not served on it", r.Port, r.Protocol, owner.Key(), r.Origin.Kind)
				continue
			}
			if res, ok := rawResource(r, in.Features, reject, refuseOpen); ok {
				res.Targets = withoutHealthChecks(r, res.Targets, in.Features, reject)
				resources = append(resources, res)
			}
			continue
		}
		sub, domain, refused := publishedName(r, in)
		if refused != nil {
			rejections = append(rejections, *refused)
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
		if res.SSO, res.BlockAccess, ok = access(r, in, reject, refuseOpen); !ok {
			continue
		}
		if !filters(r, in.Features, reject) {
			continue
		}
		res.Headers = r.RequestHeaders
		if res.Targets, ok = targets(r, in.Features.PathRouting, reject); !ok {
			continue
		}
		res.Targets = withoutHealthChecks(r, res.Targets, in.Features, reject)
		resources = append(resources, res)
	}
	return rejectOverrideCollisions(resources, rejections)
}

// publishedName is the subdomain and domain r is published under, or the refusal of
// the name: one that cannot be published under the sink's domains, or one another
// object owns. Ownership is the published host's, whatever host the object writes: an
// override onto a host another object owns is a conflict like a literal one.
//
// A refusal keeps what is published for the host as it is (Hold: make before break)
// when the name cannot be published, whatever made it so: an override moved to a name
// it cannot have, or the org's domains no longer include the host's (a domain
// unverified for a while, or removed: what Pangolin keeps for it is not PIC's to
// delete on that word). An override onto a host another object owns holds too; a
// literal host another object owns does not (nothing of it is this object's to keep).
// What is held is never a host an older object owns (Calculate).
func publishedName(r route.Route, in Input) (sub, domain string, refused *route.Rejection) {
	sub, domain, problem := hostname.PublicIn(in.Features.Domains, r.Host, r.DomainOverride, r.SubdomainOverride)
	if problem != nil {
		return "", "", &route.Rejection{Origin: r.Origin, Host: r.Host, Reason: problem.Reason, Message: problem.Message, Hold: true}
	}
	published := hostname.Join(sub, domain)
	if owner, ok := in.Owners[published]; ok && owner.UID != r.Origin.UID {
		return "", "", &route.Rejection{Origin: r.Origin, Host: r.Host, Reason: pic.ReasonHostConflict,
			Message: fmt.Sprintf("host %s is already published by %s, the oldest claim; this %s is not served for it", conflictName(r, published), owner.Key(), r.Origin.Kind),
			Hold:    r.DomainOverride != "" || r.SubdomainOverride != ""}
	}
	return sub, domain, nil
}

// rawResource is the resource of a TCP or UDP port. Pangolin applies no access
// control to raw resources (no SSO, password, role or rule reaches them), so a port
// whose object asks for protection is refused, never published open. The configured
// defaults (defaultSSO, defaultBlockAccess) are for HTTP hosts: a Service of PIC's
// load-balancer class, or a TCPRoute or UDPRoute, is itself the request for an open port.
func rawResource(r route.Route, f Features, reject func(route.Route, string, string, ...any), refuseOpen func(route.Route, string, ...any)) (Resource, bool) {
	if !f.RawResources {
		reject(r, pic.ReasonRawResourceUnsupported,
			"public port %d/%s cannot be published: the sink cannot carry TCP or UDP resources (the installed PangolinResource CRD has no proxyConfig)", r.Port, r.Protocol)
		return Resource{}, false
	}
	asked := func(b *bool) bool { return b != nil && *b }
	if r.Access.Policy != nil {
		refuseOpen(r,
			"public port %d/%s is under AccessPolicy %s (on its Gateway), but Pangolin applies no access control to TCP and UDP resources: the port is not published rather than published open, whether the policy is valid or not",
			r.Port, r.Protocol, r.Access.Policy.Name)
		return Resource{}, false
	}
	if asked(r.Access.SSO) || asked(r.Access.BlockAccess) {
		refuseOpen(r,
			"public port %d/%s asks for access control (the %s or %s annotation), but Pangolin applies none to TCP and UDP resources: the port is not published rather than published open",
			r.Port, r.Protocol, pic.AnnotationSSO, pic.AnnotationBlockAccess)
		return Resource{}, false
	}
	if r.Port < 1 || r.Port > 65535 || len(r.Paths) != 1 {
		reject(r, pic.ReasonNoBackend, "public port %d/%s needs exactly one backend and a port from 1 to 65535", r.Port, r.Protocol)
		return Resource{}, false
	}
	return Resource{
		Name:      ResourceName(r.Origin, r.Host),
		Namespace: r.Origin.Namespace,
		Origin:    r.Origin,
		Host:      r.Host,
		Protocol:  r.Protocol,
		ProxyPort: r.Port,
		Tunnel:    r.Tunnel,
		Targets:   []Target{{Backend: r.Paths[0].Backend}},
	}, true
}

// withoutHealthChecks drops the health checks a sink cannot carry, and says so. The
// host is published all the same: a health check keeps traffic from a backend that is
// not ready, it protects nothing, and without one Pangolin sends traffic as it always did.
func withoutHealthChecks(r route.Route, targets []Target, f Features, reject func(route.Route, string, string, ...any)) []Target {
	if f.HealthChecks || !slices.ContainsFunc(targets, func(t Target) bool { return t.Backend.Health.Enabled() }) {
		return targets
	}
	for i := range targets {
		targets[i].Backend.Health = route.HealthCheck{}
	}
	reject(r, pic.ReasonHealthCheckUnsupported,
		"%s is published without the health checks asked: only the direct mode (sink: pangolin) gives Pangolin targets health checks; the PangolinResource CRD has none", publicName(r))
	return slices.Compact(targets)
}

// ClaimKey is what r claims, and what ownership is decided on: its published host
// (hostname.Published against domains, the org's in direct mode, nil for the
// public-suffix split), or its port key. A host that cannot be published under domains
// claims the host as written, which finds the objects it competes with. It is the
// ClaimKey of the Resource made from r.
func ClaimKey(r route.Route, domains []string) string {
	if key, resolved := ResolvedClaimKey(r, domains); resolved {
		return key
	}
	return r.Host
}

// ResolvedClaimKey is ClaimKey, and whether it is the published host (or the port key)
// rather than the host as written standing in for a host that cannot be published
// under domains now.
func ResolvedClaimKey(r route.Route, domains []string) (key string, resolved bool) {
	if r.Raw() {
		return r.PortKey(), true
	}
	published, p := hostname.Published(domains, r.Host, r.DomainOverride, r.SubdomainOverride)
	return published, p == nil
}

// conflictName names a contested host in a HostConflict: the published host, and the
// host the object wrote when an override made the difference.
func conflictName(r route.Route, published string) string {
	if published == r.Host {
		return published
	}
	var through []string
	if r.DomainOverride != "" {
		through = append(through, pic.AnnotationDomainName)
	}
	if r.SubdomainOverride != "" {
		through = append(through, pic.AnnotationSubdomain)
	}
	return fmt.Sprintf("%s (%s, through %s)", published, r.Host, strings.Join(through, " and "))
}

// publicName is how messages name what a route publishes: its host, or its port.
func publicName(r route.Route) string {
	if r.Raw() {
		return fmt.Sprintf("public port %d/%s", r.Port, r.Protocol)
	}
	return "host " + r.Host
}

// access fails closed: protection the user asked for and the CRD cannot carry means no
// resource at all, never a public one.
func access(r route.Route, in Input, reject func(route.Route, string, string, ...any), refuseOpen func(route.Route, string, ...any)) (sso, block *bool, ok bool) {
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
		refuseOpen(r,
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

// filters fails closed: a rewrite or request headers the sink cannot carry mean no
// resource at all, never one that sends requests to the backend unchanged.
func filters(r route.Route, f Features, reject func(route.Route, string, string, ...any)) bool {
	var missing []string
	if !f.Rewrites {
		var rewritten []string
		for _, p := range r.Paths {
			if p.Rewrite != nil {
				rewritten = append(rewritten, p.Path)
			}
		}
		if len(rewritten) > 0 {
			missing = append(missing, "path rewrites (URLRewrite) on "+strings.Join(rewritten, ", "))
		}
	}
	if !f.RequestHeaders && len(r.RequestHeaders) > 0 {
		missing = append(missing, "request headers (RequestHeaderModifier)")
	}
	if len(missing) > 0 {
		reject(r, pic.ReasonFilterUnsupported,
			"host %s asks for %s, which the PangolinResource CRD cannot carry (only the direct mode, sink: pangolin, writes them): the host is not published rather than published without them",
			r.Host, strings.Join(missing, " and "))
		return false
	}
	return true
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
		t, err := pangolinTarget(p)
		if err != nil {
			reject(r, pic.ReasonFilterUnsupported, "host %s, path %s: %v; the host is not published rather than published without it", r.Host, p.Path, err)
			return nil, false
		}
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
func pangolinTarget(p route.PathRule) (Target, error) {
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
	if p.Rewrite == nil {
		return t, nil
	}
	return rewritten(t, p)
}

// CheckRewrite says why Pangolin cannot express the rewrite of p, if it cannot: for a
// source to refuse the rule itself.
func CheckRewrite(p route.PathRule) error {
	_, err := pangolinTarget(p)
	return err
}

// rewritten gives t the rewrite of p, in Pangolin's terms. Pangolin's prefix and
// stripPrefix rewrites assume its own prefix match (a plain string prefix: /api would
// also match /apix), so a Prefix path is always written as a regular expression, and
// its rewrite as a regular expression replacement that Traefik applies to the path
// (replacePathRegex, with the path as the expression):
//
//	match (value)  | rewrite                     | Pangolin path            | rewritePath | rewritePathType
//	---------------+-----------------------------+--------------------------+-------------+----------------
//	Prefix /v1     | ReplacePrefixMatch /v2      | ^/v1(/.*)?$              | /v2$1       | regex
//	Prefix /api    | ReplacePrefixMatch / or ""  | ^/api(?:/(.*))?$         | /$1         | regex
//	Prefix /old    | ReplaceFullPath /new        | ^/old(/.*)?$             | /new        | regex
//	Prefix /       | ReplacePrefixMatch /app     | ^(/.*)?$                 | /app$1      | regex
//	Exact /old     | ReplaceFullPath /new        | /old (exact)             | /new        | exact
//	Regex ^...$    | ReplaceFullPath /new        | the expression           | /new        | regex
//
// A '$' of a value is written "$$", a literal in a replacement. ReplacePrefixMatch needs
// a Prefix match, and ReplaceFullPath on a regular expression one anchored at both ends
// (^...$), or only the matched part of the path would be replaced.
func rewritten(t Target, p route.PathRule) (Target, error) {
	rw := *p.Rewrite
	literal := strings.ReplaceAll(rw.Value, "$", "$$")
	if !strings.HasPrefix(rw.Value, "/") && !(rw.Type == route.RewritePrefixMatch && rw.Value == "") {
		return t, fmt.Errorf("the rewrite %s is not an absolute path", rw)
	}
	if rw.Type != route.RewriteFullPath && rw.Type != route.RewritePrefixMatch {
		return t, fmt.Errorf("the rewrite %s is of an unknown type", rw)
	}
	switch {
	case p.Fallback:
		return t, fmt.Errorf("a default backend cannot rewrite paths")
	case p.Match == route.MatchExact || p.Match == route.MatchRegex:
		if rw.Type != route.RewriteFullPath {
			return t, fmt.Errorf("%s needs a PathPrefix match", rw.Type)
		}
		if p.Match == route.MatchRegex && !anchored(p.Path) {
			return t, fmt.Errorf("%s on a regular expression needs one anchored at both ends (^...$), or only the part of the path it matches would be replaced", rw.Type)
		}
		t.Rewrite, t.RewriteType = literal, "exact"
		if p.Match == route.MatchRegex {
			t.RewriteType = "regex"
		}
		return t, nil
	}
	elements := regexp.QuoteMeta(strings.TrimRight(p.Path, "/"))
	replacement := strings.TrimRight(literal, "/")
	switch {
	case rw.Type == route.RewriteFullPath:
		t.Path, t.Rewrite = "^"+elements+"(/.*)?$", literal
	case replacement == "":
		// The prefix goes and the rest stays, "/" when nothing is left: /api/x -> /x,
		// /api and /api/ -> /.
		t.Path, t.Rewrite = "^"+elements+"(?:/(.*))?$", "/$1"
	default:
		// /v1 -> /v2, /v1/ -> /v2/, /v1/x -> /v2/x.
		t.Path, t.Rewrite = "^"+elements+"(/.*)?$", replacement+"$1"
	}
	t.Match, t.RewriteType = "regex", "regex"
	return t, nil
}

// anchored reports whether a regular expression matches whole paths only: ^ first and
// $ last, at its top level (so not "^/a|/b$").
func anchored(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return false
	}
	return re.Sub[0].Op == syntax.OpBeginText && re.Sub[len(re.Sub)-1].Op == syntax.OpEndText
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
		hosts[r.PublishedHost()] = append(hosts[r.PublishedHost()], r.Host)
	}
	kept := resources[:0]
	for _, r := range resources {
		if same := hosts[r.PublishedHost()]; len(same) > 1 {
			rejections = append(rejections, route.Rejection{
				Origin: r.Origin, Host: r.Host, Reason: pic.ReasonOverrideConflict,
				Message: fmt.Sprintf("host %s would be published as %s, like %s, through the %s and %s annotations; none of them is published",
					r.Host, r.PublishedHost(), strings.Join(slices.DeleteFunc(slices.Clone(same), func(h string) bool { return h == r.Host }), ", "),
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
