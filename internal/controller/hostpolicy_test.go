package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// domainsSink is a sink that serves domains (nil: the public-suffix split).
type domainsSink struct {
	plugin.Sink
	domains []string
}

func (s domainsSink) Features() engine.Features { return engine.Features{Domains: s.domains} }

func TestAllowedHosts(t *testing.T) {
	teamA := route.Origin{Kind: "Ingress", Namespace: "team-a", Name: "web", UID: "uid-web"}
	host := func(h string) route.Route { return route.Route{Origin: teamA, Host: h} }
	overridden := func(h, domain, sub string) route.Route {
		r := host(h)
		r.DomainOverride, r.SubdomainOverride = domain, sub
		return r
	}
	port := route.RawRoute(teamA, route.ProtocolTCP, 5432, route.TunnelRef{}, route.Backend{}, route.Access{})
	policy := hostpolicy.Policy{
		{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}},
		{NamespaceSelector: "tenant=shop", Hosts: []string{"shop.example.com"}},
	}
	withPorts := hostpolicy.Policy{
		{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}, Ports: []string{"45000-45099/tcp"}},
	}
	portRoute := func(n int32) route.Route {
		return route.RawRoute(teamA, route.ProtocolTCP, n, route.TunnelRef{}, route.Backend{}, route.Access{})
	}
	publishedTCP := func(n int32) engine.Existing {
		return engine.Existing{Resource: engine.Resource{Origin: teamA, Host: route.PortKey(route.ProtocolTCP, n), Protocol: route.ProtocolTCP, ProxyPort: n}}
	}
	labels := func(l map[string]string) func(context.Context, string) (map[string]string, error) {
		return func(context.Context, string) (map[string]string, error) { return l, nil }
	}
	published := func(h, sub, domain string) engine.Existing {
		return engine.Existing{Resource: engine.Resource{Origin: teamA, Host: h, Subdomain: sub, Domain: domain}}
	}
	publishedPort := engine.Existing{Resource: engine.Resource{Origin: teamA, Host: "tcp:5432", Protocol: route.ProtocolTCP, ProxyPort: 5432}}
	cases := []struct {
		name     string
		policy   hostpolicy.Policy
		labels   map[string]string
		domains  []string
		routes   []route.Route
		existing []engine.Existing
		kept     []string
		refused  []string
		contains string
	}{
		{"without a policy every host is kept", nil, nil, nil, []route.Route{host("shop.example.com")}, nil, []string{"shop.example.com"}, nil, ""},
		{"a host the namespace's rule allows is kept", policy, nil, nil, []route.Route{host("app.team-a.example.com")}, nil, []string{"app.team-a.example.com"}, nil, ""},
		{"a host outside the namespace's patterns is refused, naming them", policy, nil, nil, []route.Route{host("app.example.com"), host("api.team-a.example.com")}, nil,
			[]string{"api.team-a.example.com"}, []string{"app.example.com"}, "lets namespace team-a publish only *.team-a.example.com"},
		{"an override is judged on the host it publishes", policy, nil, nil, []route.Route{overridden("app.team-a.example.com", "", "shop")}, nil,
			nil, []string{"app.team-a.example.com"}, "host shop.example.com is not published"},
		{"an override is judged under the org's domains", policy, nil, []string{"example.com", "team-a.example.com"}, []route.Route{overridden("x.team-a.example.com", "", "app")}, nil,
			[]string{"x.team-a.example.com"}, nil, ""},
		{"a namespace selected by its labels may publish its hosts", policy, map[string]string{"tenant": "shop"}, nil, []route.Route{host("shop.example.com")}, nil, []string{"shop.example.com"}, nil, ""},
		{"a TCP port is not a host, and is kept", policy, nil, nil, []route.Route{port}, []engine.Existing{publishedPort}, []string{"tcp:5432"}, nil, ""},
		{"a host published that no route asks for any more is judged, and revoked", policy, nil, nil, nil, []engine.Existing{published("shop.example.com", "shop", "example.com")},
			nil, []string{"shop.example.com"}, "host shop.example.com is published no more: the hostPolicy of PIC's configuration lets namespace team-a publish only *.team-a.example.com"},
		{"a host published where the policy allows stays", policy, nil, nil, nil, []engine.Existing{published("app.team-a.example.com", "app", "team-a.example.com")},
			nil, nil, ""},
		{"a host published is judged on the host it is published on", policy, nil, nil, nil, []engine.Existing{published("x.team-a.example.com", "shop", "example.com")},
			nil, []string{"x.team-a.example.com"}, "host shop.example.com is published no more"},
		{"a host a route asks for is judged once, on the route", policy, nil, nil, []route.Route{host("app.example.com")}, []engine.Existing{published("app.example.com", "app", "example.com")},
			nil, []string{"app.example.com"}, "host app.example.com is published no more"},
		{"a host whose published host cannot be told now is left to the engine, which holds it", policy, nil, []string{"example.org"},
			[]route.Route{overridden("app.example.org", "team-a.example.com", "")}, []engine.Existing{published("app.example.org", "app", "team-a.example.com")},
			[]string{"app.example.org"}, nil, ""},
		{"what such a host published is judged where it is published", policy, nil, []string{"example.org"},
			[]route.Route{overridden("x.team-a.example.com", "example.com", "")}, []engine.Existing{published("x.team-a.example.com", "x", "example.com")},
			[]string{"x.team-a.example.com"}, []string{"x.team-a.example.com"}, "host x.example.com is published no more"},
		{"once the policy lists ports, a port it allows is kept", withPorts, nil, nil, []route.Route{portRoute(45001)}, nil, []string{"tcp:45001"}, nil, ""},
		{"once the policy lists ports, a port outside them is refused, naming them", withPorts, nil, nil, []route.Route{portRoute(5432)}, nil,
			nil, []string{"tcp:5432"}, "public port 5432/tcp is not published: the hostPolicy of PIC's configuration lets namespace team-a publish only 45000-45099/tcp"},
		{"a port published that the policy no longer allows is revoked", withPorts, nil, nil, nil, []engine.Existing{publishedTCP(5432), publishedTCP(45002)},
			nil, []string{"tcp:5432"}, "public port 5432/tcp is published no more"},
		{"a host a route asks for where the policy allows is moved there, not revoked", policy, nil, nil, []route.Route{overridden("x.team-a.example.com", "", "")}, []engine.Existing{published("x.team-a.example.com", "shop", "example.com")},
			[]string{"x.team-a.example.com"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{sink: domainsSink{domains: tc.domains}, policy: tc.policy, nsLabels: labels(tc.labels)}
			o := newOutcome(plugin.Result{})
			kept, err := r.allowedClaims(context.Background(), teamA, tc.routes, tc.existing, tc.domains, o)
			require.NoError(t, err)
			refused := o.warnings()
			var keptHosts, refusedHosts []string
			for _, rt := range kept {
				keptHosts = append(keptHosts, rt.Host)
			}
			for _, rj := range refused {
				refusedHosts = append(refusedHosts, rj.Host)
				want := pic.ReasonHostNotAllowed
				if _, _, raw := route.ParsePortKey(rj.Host); raw {
					want = pic.ReasonPortNotAllowed
				}
				assert.Equal(t, want, rj.Reason)
				assert.False(t, rj.Hold, "a host the policy refuses is not held")
				assert.True(t, rj.Revoked, "nor kept by any other refusal of the object's")
				assert.Contains(t, rj.Message, tc.contains)
			}
			assert.Equal(t, tc.kept, keptHosts)
			assert.Equal(t, tc.refused, refusedHosts)
		})
	}

	t.Run("a namespace that cannot be read fails the reconcile, which removes nothing", func(t *testing.T) {
		r := &Reconciler{sink: domainsSink{}, policy: policy, nsLabels: func(context.Context, string) (map[string]string, error) {
			return nil, errors.New("forbidden")
		}}
		_, err := r.allowedClaims(context.Background(), teamA, []route.Route{host("shop.example.com")}, nil, nil, newOutcome(plugin.Result{}))
		assert.ErrorContains(t, err, "namespace team-a")
	})
}
