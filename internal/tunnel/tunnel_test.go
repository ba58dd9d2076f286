package tunnel

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func TestResolve(t *testing.T) {
	resolver := Resolver{
		Default: Tunnel{Name: "default"},
		Aliases: map[string]Tunnel{
			"edge-eu":  {Name: "edge-eu-tunnel", Namespace: "pangolin-system"},
			"partners": {Name: "partners", AllowedNamespaces: []string{"team-a", "team-b"}},
			"open":     {Name: "open", AllowedNamespaces: []string{"*"}},
		},
	}
	central := resolver
	central.Namespace = "pangolin-system"
	listedOnly := resolver
	listedOnly.OnlyListed = true

	cases := []struct {
		name             string
		resolver         Resolver
		namespace, alias string
		explicit         string
		want             route.TunnelRef
		reason           string
	}{
		{"class pangolin uses the default tunnel in the object's namespace", resolver, "prod", "", "", route.TunnelRef{Namespace: "prod", Name: "default"}, ""},
		{"a configured tunnel namespace holds unqualified names", central, "prod", "", "", route.TunnelRef{Namespace: "pangolin-system", Name: "default"}, ""},
		{"a mapped alias gives its tunnel and namespace", resolver, "prod", "edge-eu", "", route.TunnelRef{Namespace: "pangolin-system", Name: "edge-eu-tunnel"}, ""},
		{"an unmapped alias names the tunnel itself", resolver, "prod", "lab", "", route.TunnelRef{Namespace: "prod", Name: "lab"}, ""},
		{"the annotation beats the class", resolver, "prod", "edge-eu", "other", route.TunnelRef{Namespace: "prod", Name: "other"}, ""},
		{"the annotation may name a namespace", resolver, "prod", "", "infra/shared", route.TunnelRef{Namespace: "infra", Name: "shared"}, ""},
		{"an annotation with an empty namespace is invalid", resolver, "prod", "", "/shared", route.TunnelRef{}, pic.ReasonInvalidAnnotation},
		{"an annotation with two slashes is invalid", resolver, "prod", "", "a/b/c", route.TunnelRef{}, pic.ReasonInvalidAnnotation},
		{"an allowed namespace may use a restricted tunnel", resolver, "team-a", "partners", "", route.TunnelRef{Namespace: "team-a", Name: "partners"}, ""},
		{"another namespace may not use a restricted tunnel", resolver, "prod", "partners", "", route.TunnelRef{}, pic.ReasonTunnelNotAllowed},
		{"the policy also applies when the annotation names the tunnel", resolver, "prod", "", "partners", route.TunnelRef{}, pic.ReasonTunnelNotAllowed},
		{"a star allows every namespace", resolver, "prod", "open", "", route.TunnelRef{Namespace: "prod", Name: "open"}, ""},
		{"without a default tunnel, class pangolin has none", Resolver{}, "prod", "", "", route.TunnelRef{}, pic.ReasonTunnelNotFound},
		{"with only listed tunnels, the default tunnel serves", listedOnly, "prod", "", "", route.TunnelRef{Namespace: "prod", Name: "default"}, ""},
		{"with only listed tunnels, a mapped alias serves", listedOnly, "prod", "edge-eu", "", route.TunnelRef{Namespace: "pangolin-system", Name: "edge-eu-tunnel"}, ""},
		{"with only listed tunnels, the annotation may name a listed one", listedOnly, "prod", "", "pangolin-system/edge-eu-tunnel", route.TunnelRef{Namespace: "pangolin-system", Name: "edge-eu-tunnel"}, ""},
		{"with only listed tunnels, an annotation naming another is denied", listedOnly, "prod", "", "infra/shared", route.TunnelRef{}, pic.ReasonTunnelNotAllowed},
		{"with only listed tunnels, a listed name in another namespace is denied", listedOnly, "prod", "", "infra/edge-eu-tunnel", route.TunnelRef{}, pic.ReasonTunnelNotAllowed},
		{"with only listed tunnels, an unmapped alias is denied", listedOnly, "prod", "lab", "", route.TunnelRef{}, pic.ReasonTunnelNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problem := tc.resolver.Resolve(tc.namespace, tc.alias, tc.explicit)
			if tc.reason != "" {
				if assert.NotNil(t, problem) {
					assert.Equal(t, tc.reason, problem.Reason)
					assert.Equal(t, tc.reason == pic.ReasonTunnelNotAllowed, problem.Denied, "only the namespace policy denies")
					assert.NotEmpty(t, problem.Message)
				}
				return
			}
			assert.Nil(t, problem)
			assert.Equal(t, tc.want, got)
		})
	}
}
