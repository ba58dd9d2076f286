package gatewayapi

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func TestFilters(t *testing.T) {
	rewrite := func(typ gatewayv1.HTTPPathModifierType, full, prefix *string) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
			Path: &gatewayv1.HTTPPathModifier{Type: typ, ReplaceFullPath: full, ReplacePrefixMatch: prefix},
		}}
	}
	headers := func(m gatewayv1.HTTPHeaderFilter) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &m}
	}
	cases := []struct {
		name        string
		filters     []gatewayv1.HTTPRouteFilter
		rewrite     *route.PathRewrite
		headers     []route.Header
		unsupported []string
	}{
		{
			name:    "a prefix replacement becomes the rule's rewrite",
			filters: []gatewayv1.HTTPRouteFilter{rewrite(gatewayv1.PrefixMatchHTTPPathModifier, nil, ptr.To("/v2"))},
			rewrite: &route.PathRewrite{Type: route.RewritePrefixMatch, Value: "/v2"},
		},
		{
			name:    "a full path replacement becomes the rule's rewrite",
			filters: []gatewayv1.HTTPRouteFilter{rewrite(gatewayv1.FullPathHTTPPathModifier, ptr.To("/new"), nil)},
			rewrite: &route.PathRewrite{Type: route.RewriteFullPath, Value: "/new"},
		},
		{
			name: "headers set are sorted by name whatever the case",
			filters: []gatewayv1.HTTPRouteFilter{headers(gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{
				{Name: "x-team", Value: "k8s"}, {Name: "X-Env", Value: "prod"},
			}})},
			headers: []route.Header{{Name: "X-Env", Value: "prod"}, {Name: "x-team", Value: "k8s"}},
		},
		{
			name:        "a header set twice is refused",
			filters:     []gatewayv1.HTTPRouteFilter{headers(gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Env", Value: "a"}, {Name: "x-env", Value: "b"}}})},
			headers:     []route.Header{{Name: "X-Env", Value: "a"}},
			unsupported: []string{"filter RequestHeaderModifier sets x-env twice"},
		},
		{
			name:        "a header set empty is refused, as the proxy would remove it",
			filters:     []gatewayv1.HTTPRouteFilter{headers(gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Env"}}})},
			unsupported: []string{"filter RequestHeaderModifier set X-Env with an empty value (Pangolin's proxy would remove the header)"},
		},
		{
			name:        "removing a header is refused",
			filters:     []gatewayv1.HTTPRouteFilter{headers(gatewayv1.HTTPHeaderFilter{Remove: []string{"X-Debug"}})},
			unsupported: []string{"filter RequestHeaderModifier remove (X-Debug): Pangolin can only set request headers"},
		},
		{
			name:        "adding a header is refused, as Pangolin would replace the request's value",
			filters:     []gatewayv1.HTTPRouteFilter{headers(gatewayv1.HTTPHeaderFilter{Add: []gatewayv1.HTTPHeader{{Name: "X-Env", Value: "prod"}}})},
			unsupported: []string{"filter RequestHeaderModifier add (X-Env=prod): add appends to a header the request already carries, and Pangolin's headers replace it; use set"},
		},
		{
			name: "a hostname rewrite is refused",
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
				Hostname: ptr.To(gatewayv1.PreciseHostname("internal.example.com")),
			}}},
			unsupported: []string{`filter URLRewrite with hostname "internal.example.com" (Pangolin sets the Host header per host, for every path, not per rule)`},
		},
		{
			name: "every other filter is refused by name",
			filters: []gatewayv1.HTTPRouteFilter{
				{Type: gatewayv1.HTTPRouteFilterRequestRedirect}, {Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier},
				{Type: gatewayv1.HTTPRouteFilterRequestMirror}, {Type: gatewayv1.HTTPRouteFilterCORS},
				{Type: gatewayv1.HTTPRouteFilterExternalAuth}, {Type: gatewayv1.HTTPRouteFilterExtensionRef},
			},
			unsupported: []string{
				"filter RequestRedirect", "filter ResponseHeaderModifier", "filter RequestMirror",
				"filter CORS", "filter ExternalAuth", "filter ExtensionRef",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := filters(tc.filters)
			assert.Equal(t, tc.rewrite, got.rewrite)
			assert.Equal(t, tc.headers, got.headers)
			assert.Equal(t, tc.unsupported, got.unsupported)
		})
	}
}

// TestBackendSplit: a rule naming two backends is a weighted split, which Pangolin
// cannot express, whatever resolves at the moment; two refs to the same Service port are
// one backend.
func TestBackendSplit(t *testing.T) {
	ref := func(ns, name string, port int32) gatewayv1.HTTPBackendRef {
		r := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(port)),
		}}}
		if ns != "" {
			r.Namespace = ptr.To(gatewayv1.Namespace(ns))
		}
		return r
	}
	const split = "rule 0: more than one backend (weighted traffic splitting)"
	cases := []struct {
		name string
		refs []gatewayv1.HTTPBackendRef
		// missing are the Services that do not resolve; "<name>-first": only the first
		// ref's resolution fails (a pod read that failed once, say).
		missing     []string
		unsupported []string
	}{
		{name: "two refs to one Service port are one backend", refs: []gatewayv1.HTTPBackendRef{ref("", "web", 80), ref("prod", "web", 80)}},
		{name: "one backend whose first ref does not resolve yet is still one backend", refs: []gatewayv1.HTTPBackendRef{ref("", "web", 80), ref("", "web", 80)}, missing: []string{"web-first"}},
		{name: "two Services are a split", refs: []gatewayv1.HTTPBackendRef{ref("", "web", 80), ref("", "api", 80)}, unsupported: []string{split}},
		{name: "two ports of one Service are a split", refs: []gatewayv1.HTTPBackendRef{ref("", "web", 80), ref("", "web", 8080)}, unsupported: []string{split}},
		{name: "a split whose first Service is missing is still a split", refs: []gatewayv1.HTTPBackendRef{ref("", "gone", 80), ref("", "web", 80)}, missing: []string{"gone"}, unsupported: []string{split}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hr := &gatewayv1.HTTPRoute{}
			hr.Namespace = "prod"
			hr.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: tc.refs}}
			calls := 0
			resolve := func(r gatewayv1.BackendObjectReference) (route.Backend, *refProblem) {
				calls++
				name := string(r.Name)
				if calls == 1 && slices.Contains(tc.missing, name+"-first") || slices.Contains(tc.missing, name) {
					return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonBackendNotFound, message: name + " not found", transient: true}
				}
				return route.Backend{Host: name + ".prod.svc.cluster.local", Port: int32(*r.Port), Scheme: "http"}, nil
			}
			got := translate(hr, resolve)
			assert.Equal(t, tc.unsupported, got.unsupported)
		})
	}
}
