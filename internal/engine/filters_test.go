package engine

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var direct = Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, Rewrites: true, RequestHeaders: true}

func rewrite(p route.PathRule, typ route.RewriteType, value string) route.PathRule {
	p.Rewrite = &route.PathRewrite{Type: typ, Value: value}
	return p
}

func regex(path string, b route.Backend) route.PathRule {
	return route.PathRule{Path: path, Match: route.MatchRegex, Backend: b}
}

func TestDesiredRewrites(t *testing.T) {
	cases := []struct {
		name    string
		path    route.PathRule
		want    Target
		reasons []string
	}{
		{
			name: "a prefix replaced by another keeps the rest of the path",
			path: rewrite(prefix("/v1", api), route.RewritePrefixMatch, "/v2"),
			want: Target{Backend: api, Path: `^/v1(/.*)?$`, Match: "regex", Priority: 103, Rewrite: "/v2$1", RewriteType: "regex"},
		},
		{
			name: "a trailing slash of the replacement is ignored",
			path: rewrite(prefix("/v1/", api), route.RewritePrefixMatch, "/v2/"),
			want: Target{Backend: api, Path: `^/v1(/.*)?$`, Match: "regex", Priority: 104, Rewrite: "/v2$1", RewriteType: "regex"},
		},
		{
			name: "a prefix replaced by / is stripped",
			path: rewrite(prefix("/api", api), route.RewritePrefixMatch, "/"),
			want: Target{Backend: api, Path: `^/api(?:/(.*))?$`, Match: "regex", Priority: 104, Rewrite: "/$1", RewriteType: "regex"},
		},
		{
			name: "a prefix replaced by nothing is stripped",
			path: rewrite(prefix("/api", api), route.RewritePrefixMatch, ""),
			want: Target{Backend: api, Path: `^/api(?:/(.*))?$`, Match: "regex", Priority: 104, Rewrite: "/$1", RewriteType: "regex"},
		},
		{
			name: "the root prefix replaced by another prefixes every path",
			path: rewrite(prefix("/", web), route.RewritePrefixMatch, "/app"),
			want: Target{Backend: web, Path: `^(/.*)?$`, Match: "regex", Priority: 101, Rewrite: "/app$1", RewriteType: "regex"},
		},
		{
			name: "a full path replacement on a prefix replaces every path it matches",
			path: rewrite(prefix("/old", web), route.RewriteFullPath, "/new"),
			want: Target{Backend: web, Path: `^/old(/.*)?$`, Match: "regex", Priority: 104, Rewrite: "/new", RewriteType: "regex"},
		},
		{
			name: "a full path replacement on an exact path is Pangolin's exact rewrite",
			path: rewrite(exact("/old", web), route.RewriteFullPath, "/new"),
			want: Target{Backend: web, Path: "/old", Match: "exact", Priority: 604, Rewrite: "/new", RewriteType: "exact"},
		},
		{
			name: "a full path replacement on an anchored regular expression replaces the whole path",
			path: rewrite(regex("^/u/[0-9]+$", api), route.RewriteFullPath, "/users"),
			want: Target{Backend: api, Path: "^/u/[0-9]+$", Match: "regex", Priority: 111, Rewrite: "/users", RewriteType: "regex"},
		},
		{
			name: "a dollar sign of a value is a literal in the replacement",
			path: rewrite(prefix("/a", api), route.RewritePrefixMatch, "/$b"),
			want: Target{Backend: api, Path: `^/a(/.*)?$`, Match: "regex", Priority: 102, Rewrite: "/$$b$1", RewriteType: "regex"},
		},
		{
			name:    "a prefix replacement on an exact path is refused",
			path:    rewrite(exact("/old", web), route.RewritePrefixMatch, "/new"),
			reasons: []string{pic.ReasonFilterUnsupported},
		},
		{
			name:    "a full path replacement on an unanchored regular expression is refused",
			path:    rewrite(regex("/u/[0-9]+", api), route.RewriteFullPath, "/users"),
			reasons: []string{pic.ReasonFilterUnsupported},
		},
		{
			name:    "a regular expression anchored only through an alternation is refused",
			path:    rewrite(regex("^/a|/b$", api), route.RewriteFullPath, "/users"),
			reasons: []string{pic.ReasonFilterUnsupported},
		},
		{
			name:    "a relative replacement is refused",
			path:    rewrite(prefix("/a", api), route.RewriteFullPath, "b"),
			reasons: []string{pic.ReasonFilterUnsupported},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{rt("app.example.com", tc.path)}, Features: direct})
			assert.Equal(t, tc.reasons, reasons(rejections))
			if tc.reasons != nil {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, []Target{tc.want}, got[0].Targets)
		})
	}
}

// TestRewritesFollowTheGatewayAPITable applies each rewrite as Traefik does
// (replacePathRegex: the path expression, the replacement) to the requests of the
// Gateway API's ReplacePrefixMatch table.
func TestRewritesFollowTheGatewayAPITable(t *testing.T) {
	cases := []struct{ request, prefix, replace, want string }{
		{"/foo/bar", "/foo", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo", "/xyz/", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz/", "/xyz/bar"},
		{"/foo", "/foo", "/xyz", "/xyz"},
		{"/foo/", "/foo", "/xyz", "/xyz/"},
		{"/foo/bar", "/foo", "", "/bar"},
		{"/foo/", "/foo", "", "/"},
		{"/foo", "/foo", "", "/"},
		{"/foo/", "/foo", "/", "/"},
		{"/foo", "/foo", "/", "/"},
		{"/x/y", "/", "/app", "/app/x/y"},
	}
	for _, tc := range cases {
		got, _ := Desired(Input{Routes: []route.Route{rt("app.example.com", rewrite(prefix(tc.prefix, api), route.RewritePrefixMatch, tc.replace))}, Features: direct})
		require.Len(t, got, 1)
		target := got[0].Targets[0]
		re := regexp.MustCompile(target.Path)
		require.True(t, re.MatchString(tc.request), "%s matches %s", target.Path, tc.request)
		assert.Equal(t, tc.want, re.ReplaceAllString(tc.request, target.Rewrite), "%s with prefix %q replaced by %q", tc.request, tc.prefix, tc.replace)
		if elements := strings.TrimRight(tc.prefix, "/"); elements != "" {
			assert.False(t, re.MatchString(elements+"x"), "still matches whole path elements only")
		}
	}
}

func TestDesiredFilterFeatures(t *testing.T) {
	headers := []route.Header{{Name: "X-Env", Value: "prod"}}
	withHeaders := rt("app.example.com", prefix("/", web))
	withHeaders.RequestHeaders = headers
	withRewrite := rt("app.example.com", rewrite(prefix("/api", api), route.RewritePrefixMatch, "/"), prefix("/", web))
	cases := []struct {
		name        string
		features    Features
		route       route.Route
		wantHeaders []route.Header
		reasons     []string
	}{
		{"the direct sink carries request headers", direct, withHeaders, headers, nil},
		{"the direct sink carries rewrites", direct, withRewrite, nil, nil},
		{"the fork's CRD fails closed on request headers", fork, withHeaders, nil, []string{pic.ReasonFilterUnsupported}},
		{"the fork's CRD fails closed on rewrites", fork, withRewrite, nil, []string{pic.ReasonFilterUnsupported}},
		{"the original CRD fails closed on rewrites", original, withRewrite, nil, []string{pic.ReasonFilterUnsupported}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{tc.route}, Features: tc.features})
			assert.Equal(t, tc.reasons, reasons(rejections))
			if tc.reasons != nil {
				assert.Empty(t, got, "nothing is published")
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tc.wantHeaders, got[0].Headers)
		})
	}
}

func TestEqualComparesHeaders(t *testing.T) {
	a := Resource{Name: "r", Headers: []route.Header{{Name: "X-Env", Value: "prod"}}}
	b := a
	b.Headers = []route.Header{{Name: "X-Env", Value: "dev"}}
	assert.False(t, a.Equal(b))
	c := a
	c.Headers = []route.Header{{Name: "X-Env", Value: "prod"}}
	assert.True(t, a.Equal(c))
}
