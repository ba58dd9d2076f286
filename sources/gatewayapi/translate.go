package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// refProblem is why a backendRef cannot be resolved, in the Gateway API's terms.
type refProblem struct {
	reason  gatewayv1.RouteConditionReason // RefNotPermitted, InvalidKind, BackendNotFound
	message string
	// transient problems (a Service not created yet) keep what exists and retry.
	transient bool
}

// backendResolver resolves one backendRef of a route to the address the Newt agent dials.
type backendResolver func(ref gatewayv1.BackendObjectReference) (route.Backend, *refProblem)

// translation is what a route's rules become.
type translation struct {
	paths []route.PathRule
	// headers are the request headers every rule sets (RequestHeaderModifier set):
	// Pangolin sets them per host, so rules that set different ones are unsupported.
	headers []route.Header
	// unsupported lists what Pangolin cannot express; the route is then not served at
	// all rather than served without it.
	unsupported []string
	// refs is the first backendRef that cannot be resolved.
	refs *refProblem
}

// translate turns the rules of an HTTPRoute into path rules. Pangolin routes on the path
// alone, to one backend: header, query and method matches, timeouts, retries, session
// persistence and weighted splits between backends cannot be expressed, nor filters
// other than a path rewrite and request headers set alike by every rule (filters).
func translate(r *gatewayv1.HTTPRoute, resolve backendResolver) translation {
	var t translation
	unsupported := func(i int, format string, args ...any) {
		t.unsupported = append(t.unsupported, fmt.Sprintf("rule %d: ", i)+fmt.Sprintf(format, args...))
	}
	for i, rule := range r.Spec.Rules {
		f := filters(rule.Filters)
		for _, problem := range f.unsupported {
			unsupported(i, "%s", problem)
		}
		switch {
		case i == 0:
			t.headers = f.headers
		case !slices.Equal(f.headers, t.headers):
			unsupported(i, "RequestHeaderModifier sets other request headers than rule 0's (%s, against %s): Pangolin sets request headers per host, on every path of it",
				headerList(f.headers), headerList(t.headers))
		}
		switch {
		case rule.Timeouts != nil:
			unsupported(i, "timeouts")
		case rule.Retry != nil:
			unsupported(i, "retry")
		case rule.SessionPersistence != nil:
			unsupported(i, "session persistence")
		case len(rule.BackendRefs) == 0:
			unsupported(i, "no backendRefs")
		}
		var backend route.Backend
		for j, ref := range rule.BackendRefs {
			if len(ref.Filters) > 0 {
				unsupported(i, "backendRef filters (%s)", filterTypes(ref.Filters))
			}
			if ref.Weight != nil && *ref.Weight == 0 {
				unsupported(i, "a backendRef of weight 0")
			}
			// A split is what the rule says, whatever resolves now: a backend missing
			// for the moment neither makes one nor hides one.
			if j > 0 && !sameBackendRef(rule.BackendRefs[0].BackendObjectReference, ref.BackendObjectReference, r.Namespace) {
				unsupported(i, "more than one backend (weighted traffic splitting)")
			}
			b, problem := resolve(ref.BackendObjectReference)
			if problem != nil {
				if t.refs == nil {
					t.refs = problem
				}
				continue
			}
			backend = b
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}} // the default: every path
		}
		for _, m := range matches {
			switch {
			case len(m.Headers) > 0:
				unsupported(i, "header matches")
				continue
			case len(m.QueryParams) > 0:
				unsupported(i, "query parameter matches")
				continue
			case m.Method != nil:
				unsupported(i, "method matches")
				continue
			}
			p := route.PathRule{Path: "/", Match: route.MatchPrefix, Backend: backend, Rewrite: f.rewrite}
			if m.Path != nil {
				if m.Path.Value != nil {
					p.Path = *m.Path.Value
				}
				if m.Path.Type != nil {
					switch *m.Path.Type {
					case gatewayv1.PathMatchExact:
						p.Match = route.MatchExact
					case gatewayv1.PathMatchRegularExpression:
						p.Match = route.MatchRegex
					}
				}
			}
			if err := engine.CheckRewrite(p); err != nil {
				unsupported(i, "URLRewrite on path %s: %v", p.Path, err)
				continue
			}
			t.paths = append(t.paths, p)
		}
	}
	// Within a route too, the first rule with a given path and match wins.
	t.paths = merge(nil, t.paths)
	return t
}

// ruleFilters is what the filters of one rule ask of Pangolin.
type ruleFilters struct {
	rewrite     *route.PathRewrite
	headers     []route.Header // sorted by name
	unsupported []string
}

// filters reads a rule's filters. Pangolin can carry a path rewrite per target and
// request headers per host (the reference's section 14); it cannot carry a host name
// rewrite per rule (setHostHeader is per host), nor remove a header, nor append to one
// (its headers replace what the request carries: add would drop the client's value),
// nor any other filter.
func filters(list []gatewayv1.HTTPRouteFilter) ruleFilters {
	var out ruleFilters
	problem := func(format string, args ...any) {
		out.unsupported = append(out.unsupported, fmt.Sprintf(format, args...))
	}
	for _, f := range list {
		switch {
		case f.Type == gatewayv1.HTTPRouteFilterURLRewrite && f.URLRewrite != nil:
			rw := f.URLRewrite
			if rw.Hostname != nil {
				problem("filter URLRewrite with hostname %q (Pangolin sets the Host header per host, for every path, not per rule)", *rw.Hostname)
			}
			if rw.Path == nil {
				continue
			}
			switch rw.Path.Type {
			case gatewayv1.FullPathHTTPPathModifier:
				out.rewrite = &route.PathRewrite{Type: route.RewriteFullPath, Value: ptr.Deref(rw.Path.ReplaceFullPath, "")}
			case gatewayv1.PrefixMatchHTTPPathModifier:
				out.rewrite = &route.PathRewrite{Type: route.RewritePrefixMatch, Value: ptr.Deref(rw.Path.ReplacePrefixMatch, "")}
			default:
				problem("filter URLRewrite with path type %q", rw.Path.Type)
			}
		case f.Type == gatewayv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil:
			m := f.RequestHeaderModifier
			if len(m.Remove) > 0 {
				problem("filter RequestHeaderModifier remove (%s): Pangolin can only set request headers", strings.Join(m.Remove, ", "))
			}
			if len(m.Add) > 0 {
				problem("filter RequestHeaderModifier add (%s): add appends to a header the request already carries, and Pangolin's headers replace it; use set", headerList(headersOf(m.Add)))
			}
			for _, h := range headersOf(m.Set) {
				switch {
				case h.Value == "":
					problem("filter RequestHeaderModifier set %s with an empty value (Pangolin's proxy would remove the header)", h.Name)
				case slices.ContainsFunc(out.headers, func(o route.Header) bool { return strings.EqualFold(o.Name, h.Name) }):
					problem("filter RequestHeaderModifier sets %s twice", h.Name)
				default:
					out.headers = append(out.headers, h)
				}
			}
		default:
			problem("filter %s", f.Type)
		}
	}
	slices.SortFunc(out.headers, func(a, b route.Header) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out
}

func headersOf(list []gatewayv1.HTTPHeader) []route.Header {
	out := make([]route.Header, 0, len(list))
	for _, h := range list {
		out = append(out, route.Header{Name: string(h.Name), Value: h.Value})
	}
	return out
}

// headerList names headers for messages: "X-Env=prod, X-Team=k8s", or "none".
func headerList(headers []route.Header) string {
	if len(headers) == 0 {
		return "none"
	}
	out := make([]string, 0, len(headers))
	for _, h := range headers {
		out = append(out, h.Name+"="+h.Value)
	}
	return strings.Join(out, ", ")
}

func filterTypes(filters []gatewayv1.HTTPRouteFilter) string {
	var out []string
	for _, f := range filters {
		out = append(out, string(f.Type))
	}
	return strings.Join(out, ", ")
}

// merge adds the paths of a younger route to an older one's: on the same path and
// match, the older route's rule stands, as the Gateway API's precedence says.
func merge(older, younger []route.PathRule) []route.PathRule {
	out := append([]route.PathRule(nil), older...)
	for _, p := range younger {
		taken := false
		for _, o := range out {
			taken = taken || o.Path == p.Path && o.Match == p.Match
		}
		if !taken {
			out = append(out, p)
		}
	}
	return out
}

// sameBackendRef reports whether two backendRefs of a route in namespace name the same
// port of the same object, their defaults (core group, kind Service, the route's
// namespace) filled in.
func sameBackendRef(a, b gatewayv1.BackendObjectReference, namespace string) bool {
	group := func(r gatewayv1.BackendObjectReference) string { return string(ptr.Deref(r.Group, "")) }
	kind := func(r gatewayv1.BackendObjectReference) string { return string(ptr.Deref(r.Kind, "Service")) }
	ns := func(r gatewayv1.BackendObjectReference) string {
		return string(ptr.Deref(r.Namespace, gatewayv1.Namespace(namespace)))
	}
	port := func(r gatewayv1.BackendObjectReference) gatewayv1.PortNumber { return ptr.Deref(r.Port, 0) }
	return group(a) == group(b) && kind(a) == kind(b) && ns(a) == ns(b) && a.Name == b.Name && port(a) == port(b)
}
