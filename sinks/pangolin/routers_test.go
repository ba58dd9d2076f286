package pangolin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// TestRouterKey: the reference's observed names, and the in-repo server's reading of
// the rule, written apart, agree.
func TestRouterKey(t *testing.T) {
	a44 := strings.Repeat("a", 44)
	key := func(id int, path, match string) string { return routerKey(id, form{path: path, match: match}) }
	assert.Equal(t, "71-5e2fapi282f2e2a293f24-regex", key(71, "^/api(/.*)?$", "regex"))
	assert.Equal(t, "124", key(124, "", ""))
	assert.Equal(t, "125-2f"+a44, key(125, "/"+a44+"1", "prefix"), "cut at 50")
	assert.Equal(t, key(125, "/"+a44+"1", "prefix"), key(125, "/"+a44+"2", "prefix"))
	assert.NotEqual(t, key(125, "/"+a44[1:]+"3x", "prefix"), key(125, "/"+a44[1:]+"4x", "prefix"))
	// The reference's section 7: the raw rewrite path goes through sanitize.
	assert.Equal(t, "124-2fapi-prefix-stripPrefix", routerKey(124, form{"/api", "prefix", "/", "stripPrefix"}))
	assert.Equal(t, "124-2fv1-prefix-api-v1-prefix", routerKey(124, form{"/v1", "prefix", "/api/v1", "prefix"}))
	assert.Equal(t, "124-5e2fu2f282e2a2924-regex-users-1-regex", routerKey(124, form{"^/u/(.*)$", "regex", "/users/$1", "regex"}))
	assert.Equal(t, routerKey(125, form{"/r", "prefix", "/a/b", "prefix"}), routerKey(125, form{"/r", "prefix", "/a-b", "prefix"}),
		"rewrite paths that differ in punctuation only meet")
	for _, path := range []string{"/", "/a/b", "/a-b", "^/x$", "/é/日本", "/" + strings.Repeat("b.", 40), "\t/x"} {
		for _, match := range []string{"exact", "prefix", "regex"} {
			for _, rw := range [][2]string{{}, {"/v2$1", "regex"}, {"/", "stripPrefix"}} {
				for _, id := range []int{1, 42, 125, 123456} {
					assert.Equal(t, pangolinsim.RouterKey(id, path, match, rw[0], rw[1]), RouterKey(id, path, match, rw[0], rw[1]), "%d %q %s %v", id, path, match, rw)
				}
			}
		}
	}
}

// TestAlternativesStandForTheirOriginal: every form reads back as the path group it
// replaces, and none but the first is the original.
func TestAlternativesStandForTheirOriginal(t *testing.T) {
	for _, f := range []form{
		{path: "/api/v1.2/x", match: "prefix"}, {path: "/healthz", match: "exact"}, {path: "^/api(/.*)?$", match: "regex"},
		{path: "noslash", match: "prefix"}, {path: "/old", match: "exact", rewrite: "/new", rewriteType: "exact"},
		{path: "^/v1(/.*)?$", match: "regex", rewrite: "/v2$1", rewriteType: "regex"},
	} {
		for n := range 4 {
			alt, ok := alternative(f, n)
			require.True(t, ok)
			want := f
			if n > 0 && f.path == "noslash" {
				want.path = "/noslash"
			}
			assert.Equal(t, want, original(alt), "form %d: %+v", n, alt)
			if n > 0 {
				assert.Equal(t, "regex", alt.match)
				assert.NotEqual(t, f.path, alt.path)
			}
		}
	}
	_, ok := alternative(form{path: "/api", match: "prefix", rewrite: "/", rewriteType: "stripPrefix"}, 1)
	assert.False(t, ok, "a rewrite that relies on Pangolin's prefix match has no equivalent form")
	plain := form{path: "^/plain$", match: "regex"}
	assert.Equal(t, plain, original(plain), "a user's regular expression is its own")
}

// longHost is the Ingress: two long prefixes that share their first 45
// characters, and a catch-all.
func longHost(origin route.Origin, paths ...string) route.Route {
	r := web(origin, "app.example.com", 8081)
	for i, p := range paths {
		r.Paths = append(r.Paths, route.PathRule{Path: p, Match: route.MatchPrefix, Backend: backend("api"+strings.Repeat("x", i), origin.Namespace, 9090)})
	}
	return r
}

const notifications = "/api/v1/organizations/settings/notifications/"

// TestLongPrefixesKeepTheirRouters: paths whose router names Pangolin would cut to one
// are written in equivalent forms: every path is served by its own backend, and a
// second reconcile finds nothing to change.
func TestLongPrefixesKeepTheirRouters(t *testing.T) {
	w := newWorld(t)
	app := ingress("shop", "app")
	rt := longHost(app, notifications+"email", notifications+"sms")
	o := w.converge(app, rt)
	require.Len(t, o.applied.Created, 1)

	routers := w.fake.Routers()
	require.Len(t, routers, 3, "one router per path: %v", routers)
	byServer := map[string]string{}
	for _, r := range routers {
		require.Len(t, r.Servers, 1)
		byServer[r.Servers[0]] = r.Rule
	}
	assert.Contains(t, byServer["http://api.shop.svc.cluster.local:9090"], "organizations/settings/notifications/email")
	assert.Contains(t, byServer["http://apix.shop.svc.cluster.local:9090"], "organizations/settings/notifications/sms")
	assert.Contains(t, byServer["http://web.shop.svc.cluster.local:8081"], "PathPrefix(`/`)")

	again := w.converge(app, rt)
	assert.True(t, again.plan.Empty(), "the equivalent form reads back as the path: %+v", again.plan)

	w.restart("default")
	w.fake.ResetCounts()
	after := w.converge(app, rt)
	assert.Empty(t, after.applied.Updated, "and so after a restart")
	assert.Zero(t, w.fake.Writes())
}

// TestUnroutablePathIsRefused: when no equivalent form is left, the shadowed path is
// refused with a Warning naming it, and the rest is published.
func TestUnroutablePathIsRefused(t *testing.T) {
	w := newWorld(t)
	app := ingress("shop", "app")
	var paths []string
	for i := range 12 {
		paths = append(paths, notifications+"channel"+string(rune('a'+i)))
	}
	o := w.reconcile(app, longHost(app, paths...))
	require.NoError(t, o.err)
	require.NotEmpty(t, o.applied.Rejections)
	routed := len(paths) + 1 - len(o.applied.Rejections)
	assert.Len(t, w.fake.Routers(), routed, "every path written has a router of its own")
	for _, rj := range o.applied.Rejections {
		assert.Equal(t, pic.ReasonPathNotRoutable, rj.Reason)
		assert.Equal(t, "app.example.com", rj.Host)
		assert.NotEmpty(t, rj.Path)
		assert.Contains(t, rj.Message, notifications+"channel", "the Warning names the path")
	}
	last := o.applied.Rejections[len(o.applied.Rejections)-1]
	assert.Contains(t, last.Message, "path "+notifications+"channell (Prefix) of host app.example.com is not published")

	again := w.reconcile(app, longHost(app, paths...))
	require.NoError(t, again.err)
	assert.Equal(t, o.applied.Rejections, again.applied.Rejections, "the same refusal, nothing written")
	assert.Empty(t, again.applied.Updated)
}
