package pangolin

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// TestGolden: routes in, the requests PIC sends to Pangolin and what Traefik then serves
// out, so that a reviewer reads behaviour. go test ./sinks/pangolin -run TestGolden
// -update rewrites the expectations.
func TestGolden(t *testing.T) {
	shop := ingress("shop", "web")
	api := route.PathRule{Path: "/api", Match: route.MatchPrefix, Backend: backend("api", "shop", 9090)}
	health := route.PathRule{Path: "/healthz", Match: route.MatchExact, Backend: backend("api", "shop", 9091)}
	db := service("prod", "db")
	cases := []struct {
		name   string
		origin *route.Origin // nil: shop
		steps  [][]route.Route
	}{
		{"a host with three paths", nil, [][]route.Route{{withPaths(web(shop, "app.example.com", 8080), api, health)}}},
		{"an apex and an override", nil, [][]route.Route{{
			web(shop, "example.com", 8080),
			func() route.Route {
				r := web(shop, "internal.other.org", 8080)
				r.DomainOverride, r.SubdomainOverride = "example.com", "internal"
				return r
			}(),
		}}},
		{"a backend moves, a path goes, SSO turns on", nil, [][]route.Route{
			{withPaths(web(shop, "app.example.com", 8080), api)},
			{func() route.Route {
				r := web(shop, "app.example.com", 8081)
				r.Access.SSO = ptrTo(true)
				return r
			}()},
		}},
		{"the object goes", nil, [][]route.Route{{web(shop, "app.example.com", 8080)}, nil}},
		{"a role, then a password without SSO, then the policy goes", nil, [][]route.Route{
			{protected(web(shop, "app.example.com", 8080), true, route.AccessPolicy{Roles: []string{"Member"}, Rules: []route.AccessRule{{Action: route.RuleAccept, Match: route.MatchCIDR, Value: "10.0.0.0/8"}}})},
			{func() route.Route {
				pw := secretOf("web-auth", "password", passwordValue)
				return protected(web(shop, "app.example.com", 8080), false, route.AccessPolicy{Password: &pw})
			}()},
			{web(shop, "app.example.com", 8080)},
		}},
		{"two long prefixes whose router names Pangolin cuts alike", nil, [][]route.Route{{withPaths(web(shop, "app.example.com", 8081),
			route.PathRule{Path: "/api/v1/organizations/settings/notifications/email", Match: route.MatchPrefix, Backend: backend("api", "shop", 9090)},
			route.PathRule{Path: "/api/v1/organizations/settings/notifications/sms", Match: route.MatchPrefix, Backend: backend("web", "shop", 8081)},
		)}}},
		{"a TCP and a UDP port, then the TCP port changes, then the object goes", &db, [][]route.Route{
			{rawRoute(db, route.ProtocolTCP, 5432, 5432), rawRoute(db, route.ProtocolUDP, 5432, 5433)},
			{rawRoute(db, route.ProtocolTCP, 6432, 5432), rawRoute(db, route.ProtocolUDP, 5432, 5433)},
			nil,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			var out strings.Builder
			for i, routes := range c.steps {
				w.mu.Lock()
				w.requests = nil
				w.mu.Unlock()
				w.fault(nil)
				origin := shop
				if c.origin != nil {
					origin = *c.origin
				}
				w.converge(origin, routes...)
				fmt.Fprintf(&out, "# step %d: writes\n", i+1)
				for _, r := range w.writesLogged() {
					fmt.Fprintln(&out, r)
				}
				fmt.Fprintln(&out, "# resources")
				for _, r := range w.fake.Resources() {
					if r.Mode != "http" {
						// A raw resource: no host, and no access settings that mean anything.
						fmt.Fprintf(&out, "%d %s %q mode=%s proxyPort=%d enabled=%t\n", r.ID, r.NiceID, r.Name, r.Mode, r.ProxyPort, r.Enabled)
					} else {
						fmt.Fprintf(&out, "%d %s %q host=%s sso=%t blockAccess=%t enabled=%t\n", r.ID, r.NiceID, r.Name, r.FullDomain, r.SSO, r.BlockAccess, r.Enabled)
					}
					if p, _ := w.fake.Policy(r.ID); p.ApplyRules || p.EmailWhitelistEnabled || p.IdpID != 0 || len(p.RoleIDs)+len(p.UserIDs)+len(p.Whitelist)+len(p.Rules) > 0 || p.PasswordID+p.PincodeID+p.HeaderAuthID > 0 {
						fmt.Fprintf(&out, "  access roles=%v users=%v idp=%d whitelist=%t%v applyRules=%t rules=%v passwordId=%d pincodeId=%d headerAuthId=%d\n",
							p.RoleIDs, p.UserIDs, p.IdpID, p.EmailWhitelistEnabled, p.Whitelist, p.ApplyRules, ruleSummary(p), p.PasswordID, p.PincodeID, p.HeaderAuthID)
					}
					for _, tg := range w.fake.Targets(r.ID) {
						fmt.Fprintf(&out, "  target %d site=%d %s://%s:%d path=%q match=%s priority=%d enabled=%t\n",
							tg.ID, tg.SiteID, tg.Method, tg.IP, tg.Port, tg.Path, tg.PathMatchType, tg.Priority, tg.Enabled)
					}
				}
				fmt.Fprintln(&out, "# routers")
				for _, r := range w.fake.Routers() {
					fmt.Fprintf(&out, "%s\n  %s priority=%d -> %s\n", r.Name, r.Rule, r.Priority, strings.Join(r.Servers, ", "))
				}
				for _, r := range w.fake.RawRouters() {
					fmt.Fprintf(&out, "%s\n  %s on %s %q -> %s\n", r.Name, r.Protocol, r.EntryPoint, r.Rule, strings.Join(r.Servers, ", "))
				}
			}
			file := filepath.Join("testdata", strings.ReplaceAll(c.name, " ", "-")+".golden")
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(out.String()), 0o644))
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), out.String())
		})
	}
}

func withPaths(r route.Route, paths ...route.PathRule) route.Route {
	r.Paths = append(r.Paths, paths...)
	return r
}
