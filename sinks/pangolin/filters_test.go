package pangolin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// filtered is a host with a prefix rewrite on /v1, a stripped /api, and headers.
func filtered(origin route.Origin, replace string, headers ...route.Header) route.Route {
	r := web(origin, "app.example.com", 80)
	api := backend("api", origin.Namespace, 8080)
	r.Paths = append(r.Paths,
		route.PathRule{Path: "/v1", Match: route.MatchPrefix, Backend: api, Rewrite: &route.PathRewrite{Type: route.RewritePrefixMatch, Value: replace}},
		route.PathRule{Path: "/api", Match: route.MatchPrefix, Backend: api, Rewrite: &route.PathRewrite{Type: route.RewritePrefixMatch, Value: "/"}},
	)
	r.RequestHeaders = headers
	return r
}

func rewritesOf(routers []pangolinsim.Router) map[string]string {
	out := map[string]string{}
	for _, r := range routers {
		if r.Rewrite != nil {
			out[r.Rule] = r.Rewrite.String()
		}
	}
	return out
}

// TestRewritesAndHeadersConverge: the rewrites and headers a host asks for are what
// Pangolin's routers do, a second reconcile writes nothing (before and after a
// restart), a changed rewrite updates its target in place, and headers removed are
// cleared.
func TestRewritesAndHeadersConverge(t *testing.T) {
	w := newWorld(t)
	app := ingress("shop", "app")
	env := route.Header{Name: "X-Env", Value: "prod"}
	w.converge(app, filtered(app, "/v2", env))

	assert.Equal(t, map[string]string{
		"Host(`app.example.com`) && PathRegexp(`^/v1(/.*)?$`)":      "replacePathRegex ^/v1(/.*)?$ -> /v2$1",
		"Host(`app.example.com`) && PathRegexp(`^/api(?:/(.*))?$`)": "replacePathRegex ^/api(?:/(.*))?$ -> /$1",
	}, rewritesOf(w.fake.Routers()))
	for _, r := range w.fake.Routers() {
		assert.Equal(t, map[string]string{"X-Env": "prod"}, r.RequestHeaders, "headers on every path of the host: %s", r.Name)
		assert.True(t, strings.HasSuffix(r.Middlewares[len(r.Middlewares)-1], "-headers-middleware"), "headers come last: %v", r.Middlewares)
	}

	w.fake.ResetCounts()
	again := w.converge(app, filtered(app, "/v2", env))
	assert.True(t, again.plan.Empty(), "Current reads rewrites and headers back: %+v", again.plan)
	w.restart("default")
	w.fake.ResetCounts()
	after := w.converge(app, filtered(app, "/v2", env))
	assert.Empty(t, after.applied.Updated, "and so after a restart")
	assert.Zero(t, w.fake.Writes())

	w.fault(nil)
	changed := w.converge(app, filtered(app, "/v3", env))
	assert.Len(t, changed.applied.Updated, 1)
	writes := w.writesLogged()
	require.Len(t, writes, 1, "one target updated in place, no router missing in between")
	assert.True(t, strings.HasPrefix(writes[0], "POST /v1/target/"), writes[0])
	assert.Contains(t, rewritesOf(w.fake.Routers()), "Host(`app.example.com`) && PathRegexp(`^/v1(/.*)?$`)")
	assert.Equal(t, "replacePathRegex ^/v1(/.*)?$ -> /v3$1", rewritesOf(w.fake.Routers())["Host(`app.example.com`) && PathRegexp(`^/v1(/.*)?$`)"])

	w.converge(app, filtered(app, "/v3"))
	for _, r := range w.fake.Routers() {
		assert.Nil(t, r.RequestHeaders, "cleared: %s", r.Name)
	}
	assert.True(t, w.converge(app, filtered(app, "/v3")).plan.Empty())

	w.converge(app, web(app, "app.example.com", 80))
	assert.Empty(t, rewritesOf(w.fake.Routers()), "rewrites go with their paths")
}

// TestLongRewrittenPrefixesKeepTheirRouters: rewritten paths whose router names
// Pangolin would cut to one are told apart too, and read back as written.
func TestLongRewrittenPrefixesKeepTheirRouters(t *testing.T) {
	w := newWorld(t)
	app := ingress("shop", "app")
	rt := longHost(app, notifications+"email", notifications+"sms")
	for i := range rt.Paths[1:] {
		rt.Paths[i+1].Rewrite = &route.PathRewrite{Type: route.RewritePrefixMatch, Value: "/n"}
	}
	w.converge(app, rt)
	routers := w.fake.Routers()
	require.Len(t, routers, 3, "one router per path: %v", routers)
	for _, r := range routers {
		if r.Rewrite != nil {
			assert.Equal(t, "/n$1", r.Rewrite.Replacement)
		}
	}
	assert.True(t, w.converge(app, rt).plan.Empty())
}
