package engine

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var (
	fork     = Features{PathRouting: true, AccessControl: true, TunnelNamespace: true}
	original = Features{}
	prod     = route.Origin{Kind: "Ingress", Group: "networking.k8s.io", Version: "v1", Namespace: "prod", Name: "shop", UID: "uid-shop", Created: time.Unix(100, 0)}
	web      = route.Backend{Host: "web.prod.svc.cluster.local", Port: 80, Scheme: "http"}
	api      = route.Backend{Host: "api.prod.svc.cluster.local", Port: 8080, Scheme: "http"}
	tunnel   = route.TunnelRef{Namespace: "prod", Name: "default"}
)

func rt(host string, paths ...route.PathRule) route.Route {
	return route.Route{Origin: prod, Host: host, Tunnel: tunnel, Paths: paths}
}

func prefix(path string, b route.Backend) route.PathRule {
	return route.PathRule{Path: path, Match: route.MatchPrefix, Backend: b}
}

func exact(path string, b route.Backend) route.PathRule {
	return route.PathRule{Path: path, Match: route.MatchExact, Backend: b}
}

func reasons(rs []route.Rejection) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Reason)
	}
	return out
}

func TestDesiredTargets(t *testing.T) {
	cases := []struct {
		name    string
		route   route.Route
		want    []Target
		reasons []string
	}{
		{
			name:  "a root prefix is a plain Pangolin prefix",
			route: rt("app.example.com", prefix("/", web)),
			want:  []Target{{Backend: web, Path: "/", Match: "prefix", Priority: 101}},
		},
		{
			name:  "a prefix matches whole path elements through a regex",
			route: rt("app.example.com", prefix("/api", api)),
			want:  []Target{{Backend: api, Path: `^/api(/.*)?$`, Match: "regex", Priority: 104}},
		},
		{
			name:  "a trailing slash on a prefix is ignored, as Kubernetes does",
			route: rt("app.example.com", prefix("/api/", api)),
			want:  []Target{{Backend: api, Path: `^/api(/.*)?$`, Match: "regex", Priority: 105}},
		},
		{
			name:  "regex metacharacters in a prefix are escaped",
			route: rt("app.example.com", prefix("/v1.0", api)),
			want:  []Target{{Backend: api, Path: `^/v1\.0(/.*)?$`, Match: "regex", Priority: 105}},
		},
		{
			name:  "exact before prefix, longer before shorter, default backend last",
			route: rt("app.example.com", prefix("/", web), prefix("/api", api), exact("/api/health", api), route.PathRule{Path: "/", Match: route.MatchPrefix, Backend: web, Fallback: true}),
			want: []Target{
				{Backend: api, Path: "/api/health", Match: "exact", Priority: 611},
				{Backend: api, Path: `^/api(/.*)?$`, Match: "regex", Priority: 104},
				{Backend: web, Path: "/", Match: "prefix", Priority: 101},
				{Backend: web, Path: "/", Match: "prefix", Priority: 1},
			},
		},
		{
			name:  "a user regular expression is kept as written",
			route: rt("app.example.com", route.PathRule{Path: "^/u/[0-9]+$", Match: route.MatchRegex, Backend: api}),
			want:  []Target{{Backend: api, Path: "^/u/[0-9]+$", Match: "regex", Priority: 111}},
		},
		{
			name:    "a host without paths has nothing to publish",
			route:   rt("app.example.com"),
			reasons: []string{pic.ReasonNoBackend},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{tc.route}, Features: fork})
			assert.Equal(t, tc.reasons, reasons(rejections))
			if tc.want == nil {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tc.want, got[0].Targets)
			for _, target := range got[0].Targets {
				assert.True(t, target.Priority >= 1 && target.Priority <= 1000, "priority %d within the CRD's 1-1000", target.Priority)
				if target.Match == "regex" {
					_, err := regexp.Compile(target.Path)
					assert.NoError(t, err)
				}
			}
		})
	}
}

func TestPrefixRegexMatchesWholeElements(t *testing.T) {
	got, _ := Desired(Input{Routes: []route.Route{rt("app.example.com", prefix("/foo", web))}, Features: fork})
	require.Len(t, got, 1)
	re := regexp.MustCompile(got[0].Targets[0].Path)
	for path, match := range map[string]bool{"/foo": true, "/foo/": true, "/foo/bar": true, "/foobar": false, "/bar/foo": false} {
		assert.Equal(t, match, re.MatchString(path), path)
	}
}

func TestDesiredOriginalVariant(t *testing.T) {
	fallback := route.PathRule{Path: "/", Match: route.MatchPrefix, Backend: api, Fallback: true}
	cases := []struct {
		name    string
		route   route.Route
		want    []Target
		reasons []string
	}{
		{"one backend for every path is one target", rt("app.example.com", prefix("/", web), exact("/x", web)), []Target{{Backend: web}}, nil},
		{"several backends fall back to the root path's backend", rt("app.example.com", prefix("/api", api), prefix("/", web)), []Target{{Backend: web}}, []string{pic.ReasonPathRoutingUnsupported}},
		{"several backends without a root path fall back to the default backend", rt("app.example.com", prefix("/web", web), fallback), []Target{{Backend: api}}, []string{pic.ReasonPathRoutingUnsupported}},
		{"several backends and no catch-all are not published", rt("app.example.com", prefix("/web", web), prefix("/api", api)), nil, []string{pic.ReasonPathRoutingUnsupported}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{tc.route}, Features: original})
			assert.Equal(t, tc.reasons, reasons(rejections))
			if tc.want == nil {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tc.want, got[0].Targets)
			assert.Nil(t, got[0].SSO, "the original CRD cannot carry sso")
		})
	}
}

func TestDesiredAccessControl(t *testing.T) {
	withAccess := func(sso, block *bool) route.Route {
		r := rt("app.example.com", prefix("/", web))
		r.Access = route.Access{SSO: sso, BlockAccess: block}
		return r
	}
	cases := []struct {
		name               string
		features           Features
		defaults           Defaults
		route              route.Route
		published          bool
		wantSSO, wantBlock *bool
		reasons            []string
	}{
		{"the fork always writes the configured defaults", fork, Defaults{SSO: true}, withAccess(nil, nil), true, ptr.To(true), ptr.To(false), nil},
		{"annotations beat the defaults", fork, Defaults{SSO: true}, withAccess(ptr.To(false), ptr.To(true)), true, ptr.To(false), ptr.To(true), nil},
		{"the original variant fails closed when sso is asked", original, Defaults{}, withAccess(ptr.To(true), nil), false, nil, nil, []string{pic.ReasonAccessControlUnsupported}},
		{"the original variant fails closed when block-access is asked", original, Defaults{}, withAccess(nil, ptr.To(true)), false, nil, nil, []string{pic.ReasonAccessControlUnsupported}},
		{"the original variant publishes with a warning when sso=false is asked", original, Defaults{}, withAccess(ptr.To(false), nil), true, nil, nil, []string{pic.ReasonAccessControlUnsupported}},
		{"the original variant publishes silently when nothing is asked", original, Defaults{SSO: true}, withAccess(nil, nil), true, nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{tc.route}, Features: tc.features, Defaults: tc.defaults})
			assert.Equal(t, tc.reasons, reasons(rejections))
			for _, rj := range rejections {
				assert.Equal(t, !tc.published, rj.AccessUnsupported, "a refusal for the access asked, and only one, says so: nothing it replaces stands in for it")
			}
			if !tc.published {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tc.wantSSO, got[0].SSO)
			assert.Equal(t, tc.wantBlock, got[0].BlockAccess)
		})
	}
}

func TestDesiredHosts(t *testing.T) {
	elsewhere := route.TunnelRef{Namespace: "pangolin-system", Name: "edge"}
	older := route.Origin{Kind: "Ingress", Namespace: "other", Name: "first", UID: "uid-first"}
	cases := []struct {
		name      string
		features  Features
		routes    []route.Route
		hostOwner map[string]route.Origin
		published []string // public hosts
		reasons   []string
	}{
		{"each host is one resource", fork, []route.Route{rt("a.example.com", prefix("/", web)), rt("b.example.com", prefix("/", web))}, nil, []string{"a.example.com", "b.example.com"}, nil},
		{"an apex host is refused", fork, []route.Route{rt("example.com", prefix("/", web))}, nil, nil, []string{pic.ReasonApexHost}},
		{"a subdomain override on two hosts of one domain collides", fork, []route.Route{
			{Origin: prod, Host: "a.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "app"},
			{Origin: prod, Host: "b.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "app"},
		}, nil, nil, []string{pic.ReasonOverrideConflict, pic.ReasonOverrideConflict}},
		{"a subdomain override on hosts of different domains does not collide", fork, []route.Route{
			{Origin: prod, Host: "a.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "app"},
			{Origin: prod, Host: "a.example.org", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "app"},
		}, nil, []string{"app.example.com", "app.example.org"}, nil},
		{"a tunnel in another namespace needs the fork", original, []route.Route{{Origin: prod, Host: "a.example.com", Tunnel: elsewhere, Paths: []route.PathRule{prefix("/", web)}}}, nil, nil, []string{pic.ReasonTunnelNamespaceUnsupported}},
		{"a tunnel in another namespace works with the fork", fork, []route.Route{{Origin: prod, Host: "a.example.com", Tunnel: elsewhere, Paths: []route.PathRule{prefix("/", web)}}}, nil, []string{"a.example.com"}, nil},
		{"a host owned by an older object is not served", fork, []route.Route{rt("a.example.com", prefix("/", web)), rt("b.example.com", prefix("/", web))}, map[string]route.Origin{"a.example.com": older, "b.example.com": prod}, []string{"b.example.com"}, []string{pic.ReasonHostConflict}},
		{"a subdomain override onto a host an older object owns is a conflict", fork, []route.Route{
			{Origin: prod, Host: "x.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/login", web)}, SubdomainOverride: "app"},
		}, map[string]route.Origin{"app.example.com": older}, nil, []string{pic.ReasonHostConflict}},
		{"a domain override onto a host an older object owns is a conflict", fork, []route.Route{
			{Origin: prod, Host: "app.example.org", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, DomainOverride: "example.com"},
		}, map[string]route.Origin{"app.example.com": older}, nil, []string{pic.ReasonHostConflict}},
		{"both overrides onto a host an older object owns are a conflict", fork, []route.Route{
			{Origin: prod, Host: "x.example.org", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, DomainOverride: "example.com", SubdomainOverride: "app"},
		}, map[string]route.Origin{"app.example.com": older}, nil, []string{pic.ReasonHostConflict}},
		{"the host as written owned by another object is no conflict once overridden elsewhere", fork, []route.Route{
			{Origin: prod, Host: "app.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "shop"},
		}, map[string]route.Origin{"app.example.com": older, "shop.example.com": prod}, []string{"shop.example.com"}, nil},
		{"an override splits against the org's domains before ownership is decided", Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, Domains: []string{"example.com", "staging.example.com"}}, []route.Route{
			{Origin: prod, Host: "x.staging.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "app"},
		}, map[string]route.Origin{"app.staging.example.com": older}, nil, []string{pic.ReasonHostConflict}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Routes: tc.routes, Features: tc.features, Owners: tc.hostOwner}
			got, rejections := Desired(in)
			assert.Equal(t, tc.reasons, reasons(rejections))
			var public []string
			for _, r := range got {
				public = append(public, r.PublishedHost())
				assert.Equal(t, ResourceName(prod, r.Host), r.Name)
				assert.Equal(t, prod.Namespace, r.Namespace)
			}
			assert.Equal(t, tc.published, public)
		})
	}
}

func TestResourceName(t *testing.T) {
	dnsLabel := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	long := route.Origin{Kind: "Ingress", Namespace: strings.Repeat("n", 63), Name: strings.Repeat("x", 200) + ".with.dots"}
	cases := []struct {
		name   string
		origin route.Origin
		host   string
		want   string
	}{
		{"the readable part is pic-namespace-name", prod, "app.example.com", "pic-prod-shop-"},
		{"dots in an object name become hyphens", route.Origin{Kind: "Ingress", Namespace: "prod", Name: "shop.v2"}, "app.example.com", "pic-prod-shop-v2-"},
		{"a long readable part is truncated, not the hash", long, "app.example.com", "pic-nnnn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ResourceName(tc.origin, tc.host)
			assert.True(t, strings.HasPrefix(got, tc.want), got)
			assert.LessOrEqual(t, len(got), 63)
			assert.Regexp(t, dnsLabel, got)
			assert.Equal(t, got, ResourceName(tc.origin, tc.host), "deterministic")
			assert.NotEqual(t, got, ResourceName(tc.origin, "other."+tc.host), "each host has its own name")
		})
	}
	httpRoute := prod
	httpRoute.Kind = "HTTPRoute"
	assert.NotEqual(t, ResourceName(prod, "app.example.com"), ResourceName(httpRoute, "app.example.com"), "an HTTPRoute never takes an Ingress's name")
}

func TestCalculate(t *testing.T) {
	a := Resource{Name: "pic-a", Host: "a.example.com", Subdomain: "a", Domain: "example.com", Targets: []Target{{Backend: web}}}
	b := Resource{Name: "pic-b", Host: "b.example.com", Subdomain: "b", Domain: "example.com", Targets: []Target{{Backend: web}}}
	bChanged := b
	bChanged.Targets = []Target{{Backend: api}}
	holdAll := []route.Rejection{{Origin: prod, Reason: "TunnelNotFound", Hold: true}}
	holdB := []route.Rejection{{Origin: prod, Host: "b.example.com", Reason: "ServiceNotFound", Hold: true}}
	refuseB := []route.Rejection{{Origin: prod, Host: "b.example.com", Reason: "WildcardHost"}}
	olderOwnsB := map[string]route.Origin{"b.example.com": {Kind: "Ingress", Namespace: "prod", Name: "older", UID: "uid-older"}}
	// bAsApp is b published as app.example.com through the subdomain override.
	bAsApp := b
	bAsApp.Subdomain = "app"
	olderOwnsApp := map[string]route.Origin{"app.example.com": olderOwnsB["b.example.com"]}
	cases := []struct {
		name                   string
		desired                []Resource
		existing               []Existing
		rejections             []route.Rejection
		owners                 map[string]route.Origin
		create, update, delete []string
	}{
		{"a missing resource is created", []Resource{a}, nil, nil, nil, []string{"pic-a"}, nil, nil},
		{"an equal resource is left alone", []Resource{a}, []Existing{{Resource: a}}, nil, nil, nil, nil, nil},
		{"a changed resource is updated", []Resource{bChanged}, []Existing{{Resource: b}}, nil, nil, nil, []string{"pic-b"}, nil},
		{"a drifted resource is updated even if the model is equal", []Resource{a}, []Existing{{Resource: a, Drifted: true}}, nil, nil, nil, []string{"pic-a"}, nil},
		{"a resource no longer desired is deleted", []Resource{a}, []Existing{{Resource: a}, {Resource: b}}, nil, nil, nil, nil, []string{"pic-b"}},
		{"a rejection that does not hold deletes", nil, []Existing{{Resource: a}, {Resource: b}}, refuseB, nil, nil, nil, []string{"pic-a", "pic-b"}},
		{"a held host is neither updated nor deleted", nil, []Existing{{Resource: a}, {Resource: b}}, holdB, nil, nil, nil, []string{"pic-a"}},
		{"holding everything deletes nothing", nil, []Existing{{Resource: a}, {Resource: b}}, holdAll, nil, nil, nil, nil},
		{"holding everything still creates what is missing", []Resource{a}, nil, holdAll, nil, []string{"pic-a"}, nil, nil},
		{"holding everything updates nothing", []Resource{bChanged}, []Existing{{Resource: b}}, holdAll, nil, nil, nil, nil},
		{"a held host an older object now publishes is deleted", nil, []Existing{{Resource: a}, {Resource: b}}, holdAll, olderOwnsB, nil, nil, []string{"pic-b"}},
		{"a host self owns is held as usual", nil, []Existing{{Resource: b}}, holdB, map[string]route.Origin{"b.example.com": prod}, nil, nil, nil},
		{"a held host is judged on its published host, not the host as written", nil, []Existing{{Resource: bAsApp}}, holdB, olderOwnsApp, nil, nil, []string{"pic-b"}},
		{"a held host another object owns as written, published elsewhere, is kept", nil, []Existing{{Resource: bAsApp}}, holdB, olderOwnsB, nil, nil, nil},
	}
	names := func(rs []Resource) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := Calculate(prod, tc.desired, tc.existing, tc.rejections, tc.owners)
			assert.Equal(t, tc.create, names(plan.Create))
			assert.Equal(t, tc.update, names(plan.Update))
			var deleted []string
			for _, e := range plan.Delete {
				deleted = append(deleted, e.Name)
			}
			assert.Equal(t, tc.delete, deleted)
			assert.Equal(t, len(tc.create)+len(tc.update)+len(tc.delete) == 0, plan.Empty())
		})
	}
}

func TestDesiredAccessPolicy(t *testing.T) {
	policy := &route.AccessPolicy{Name: types.NamespacedName{Namespace: "prod", Name: "devs"}, Roles: []string{"Developers"}}
	ssoOnly := &route.AccessPolicy{Name: types.NamespacedName{Namespace: "prod", Name: "sso"}}
	withPolicy := func(p *route.AccessPolicy) route.Route {
		r := rt("app.example.com", prefix("/", web))
		r.Access = route.Access{SSO: ptr.To(true), Policy: p}
		return r
	}
	direct := fork
	direct.AccessPolicies = true
	cases := []struct {
		name       string
		features   Features
		route      route.Route
		published  bool
		wantPolicy *route.AccessPolicy
		reasons    []string
	}{
		{"a sink that applies policies gets the policy with the resource", direct, withPolicy(policy), true, policy, nil},
		{"a sink that cannot apply roles does not publish the host: it fails closed", fork, withPolicy(policy), false, nil, []string{pic.ReasonAccessPolicyUnsupported}},
		{"a policy of sso alone needs no more than sso: every sink publishes it", fork, withPolicy(ssoOnly), true, nil, nil},
		{"no policy, no policy on the resource", direct, withPolicy(nil), true, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{tc.route}, Features: tc.features})
			assert.Equal(t, tc.reasons, reasons(rejections))
			if !tc.published {
				assert.Empty(t, got)
				require.Len(t, rejections, 1)
				assert.False(t, rejections[0].Hold, "what exists for the host is removed, not kept less protected than asked")
				assert.True(t, rejections[0].AccessUnsupported, "nothing the host replaces stands in for it")
				return
			}
			require.Len(t, got, 1)
			assert.Same(t, tc.wantPolicy, got[0].Policy)
		})
	}
}

func TestCalculateAccess(t *testing.T) {
	policy := &route.AccessPolicy{Name: types.NamespacedName{Namespace: "prod", Name: "devs"}, Roles: []string{"Developers"}}
	plain := Resource{Name: "pic-a", Host: "a.example.com", Subdomain: "a", Domain: "example.com", Targets: []Target{{Backend: web}}}
	protected := plain
	protected.Policy = policy
	changed := protected
	changed.Targets = []Target{{Backend: api}}
	hold := []route.Rejection{{Origin: prod, Host: "a.example.com", Reason: "ServiceNotFound", Hold: true}}
	cases := []struct {
		name                 string
		desired              Resource
		existing             Existing
		rejections           []route.Rejection
		update, accessChecks []string
	}{
		{"a governed host otherwise unchanged gets an access check", protected, Existing{Resource: plain, Governed: true}, nil, nil, []string{"pic-a"}},
		{"a host with a new policy gets an access check", protected, Existing{Resource: plain}, nil, nil, []string{"pic-a"}},
		{"a host whose policy was detached gets one, to undo what the policy wrote", plain, Existing{Resource: plain, Governed: true}, nil, nil, []string{"pic-a"}},
		{"a host that never had a policy gets none", plain, Existing{Resource: plain}, nil, nil, nil},
		{"an update carries the policy: no separate check", changed, Existing{Resource: plain, Governed: true}, nil, []string{"pic-a"}, nil},
		{"a held host gets none", protected, Existing{Resource: plain, Governed: true}, hold, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := Calculate(prod, []Resource{tc.desired}, []Existing{tc.existing}, tc.rejections, nil)
			var update, checks []string
			for _, r := range plan.Update {
				update = append(update, r.Name)
			}
			for _, r := range plan.Access {
				checks = append(checks, r.Name)
			}
			assert.Equal(t, tc.update, update)
			assert.Equal(t, tc.accessChecks, checks)
			assert.Equal(t, len(tc.update) == 0, plan.Empty(), "an access check alone leaves the plan empty of writes")
		})
	}
}
