package gatewayapi

import (
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

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
	// unsupported lists what Pangolin cannot express; the route is then not served at
	// all rather than served without it.
	unsupported []string
	// refs is the first backendRef that cannot be resolved.
	refs *refProblem
}

// translate turns the rules of an HTTPRoute into path rules. Pangolin routes on the path
// alone, to one backend: header, query and method matches, filters, timeouts, retries,
// session persistence and weighted splits between backends cannot be expressed.
func translate(r *gatewayv1.HTTPRoute, resolve backendResolver) translation {
	var t translation
	unsupported := func(i int, format string, args ...any) {
		t.unsupported = append(t.unsupported, fmt.Sprintf("rule %d: ", i)+fmt.Sprintf(format, args...))
	}
	for i, rule := range r.Spec.Rules {
		switch {
		case len(rule.Filters) > 0:
			unsupported(i, "filters (%s)", filterTypes(rule.Filters))
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
				unsupported(i, "backendRef filters")
			}
			if ref.Weight != nil && *ref.Weight == 0 {
				unsupported(i, "a backendRef of weight 0")
			}
			b, problem := resolve(ref.BackendObjectReference)
			if problem != nil {
				if t.refs == nil {
					t.refs = problem
				}
				continue
			}
			if j > 0 && b != backend {
				unsupported(i, "more than one backend (weighted traffic splitting)")
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
			p := route.PathRule{Path: "/", Match: route.MatchPrefix, Backend: backend}
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
			t.paths = append(t.paths, p)
		}
	}
	// Within a route too, the first rule with a given path and match wins.
	t.paths = merge(nil, t.paths)
	return t
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
