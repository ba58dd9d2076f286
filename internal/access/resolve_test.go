package access_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var webIngress = route.Origin{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Namespace: "shop", Name: "web"}

// secrets are the Secrets of namespace shop in these tests.
var secrets = access.Secrets{
	"web-auth": {
		"password":  []byte("hunter22"),
		"pin":       []byte("123456"),
		"username":  []byte("robot"),
		"short":     []byte("abc"),
		"empty":     []byte(""),
		"echoed":    []byte("hunter22\n"),
		"pin5":      []byte("12345"),
		"pinechoed": []byte("123456\n"),
		"pinalpha":  []byte("abcdef"),
		"long":      []byte(strings.Repeat("x", 101)),
		"max":       []byte(strings.Repeat("é", 100)),
		"colon":     []byte("ro:bot"),
		"binary":    {0xff, 0xfe, 0xfd, 0xfc},
	},
}

func secretKey(name, key string) *accessv1alpha1.SecretKeySource {
	return &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: name, Key: key}}
}

func ref(key string) route.SecretRef {
	return route.SecretRef{Namespace: "shop", Name: "web-auth", Key: key}
}

// resolved is the part of Resolve's answer a case checks, secrets as references.
type resolved struct {
	SSO, BlockAccess *bool
	Roles, Users     []string
	IdP              route.IdPRef
	Whitelist        []string
	Rules            []string
	Password, Pin    string
	HeaderAuth       string
}

func summarize(a route.Access) resolved {
	out := resolved{SSO: a.SSO, BlockAccess: a.BlockAccess}
	p := a.Policy
	if p == nil {
		return out
	}
	out.Roles, out.Users, out.IdP, out.Whitelist = p.Roles, p.Users, p.AutoLoginIdP, p.EmailWhitelist
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, r.String())
	}
	if p.Password != nil {
		out.Password = p.Password.Ref().Key + "=" + p.Password.Reveal()
	}
	if p.PinCode != nil {
		out.Pin = p.PinCode.Ref().Key + "=" + p.PinCode.Reveal()
	}
	if h := p.HeaderAuth; h != nil {
		out.HeaderAuth = fmt.Sprintf("%s:%s compat=%t", h.User.Reveal(), h.Password.Reveal(), h.ExtendedCompatibility)
	}
	return out
}

// TestResolve is the specification of what a policy, the annotations and the Secrets
// become in Pangolin, for a policy that can be applied.
func TestResolve(t *testing.T) {
	on, off := ptr(true), ptr(false)
	cases := []struct {
		name        string
		spec        func(*accessv1alpha1.AccessPolicySpec) // nil: no policy attached
		annotations route.Access
		want        resolved
		notices     []string // reasons after AccessPolicyAttached
	}{
		{
			name:        "without a policy the annotations alone decide and nothing else is managed",
			annotations: route.Access{SSO: off, BlockAccess: on},
			want:        resolved{SSO: off, BlockAccess: on},
		},
		{
			name: "a policy restricting to a role turns SSO on and grants that role",
			spec: func(s *accessv1alpha1.AccessPolicySpec) { s.Roles = []string{"k8s-devs"} },
			want: resolved{SSO: on, Roles: []string{"k8s-devs"}},
		},
		{
			name: "users by email and username, and an auto-login IdP by name, turn SSO on",
			spec: func(s *accessv1alpha1.AccessPolicySpec) {
				s.Users = []string{"alice@corp.example", "bob"}
				s.AutoLoginIdP = "corp-oidc"
			},
			want: resolved{SSO: on, Users: []string{"alice@corp.example", "bob"}, IdP: route.IdPRef{Name: "corp-oidc"}},
		},
		{
			name: "an auto-login IdP given as a number is its id",
			spec: func(s *accessv1alpha1.AccessPolicySpec) { s.AutoLoginIdP = "2" },
			want: resolved{SSO: on, IdP: route.IdPRef{ID: 2}},
		},
		{
			name: "an empty policy manages the host to nothing granted beyond Pangolin's Admin role",
			spec: func(*accessv1alpha1.AccessPolicySpec) {},
			want: resolved{},
		},
		{
			name: "a password from a Secret is carried with its reference",
			spec: func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = off; s.Password = secretKey("web-auth", "password") },
			want: resolved{SSO: off, Password: "password=hunter22"},
		},
		{
			name: "a password of 100 two-byte characters is within Pangolin's 100",
			spec: func(s *accessv1alpha1.AccessPolicySpec) { s.Password = secretKey("web-auth", "max") },
			want: resolved{Password: "max=" + strings.Repeat("é", 100)},
		},
		{
			name: "a PIN code of 6 digits is carried",
			spec: func(s *accessv1alpha1.AccessPolicySpec) { s.PinCode = secretKey("web-auth", "pin") },
			want: resolved{Pin: "pin=123456"},
		},
		{
			name: "header auth reads the basic-auth keys by default",
			spec: func(s *accessv1alpha1.AccessPolicySpec) {
				s.HeaderAuth = &accessv1alpha1.HeaderAuth{SecretRef: accessv1alpha1.SecretReference{Name: "web-auth"}, ExtendedCompatibility: true}
			},
			want: resolved{HeaderAuth: "robot:hunter22 compat=true"},
		},
		{
			name: "header auth reads the keys it names",
			spec: func(s *accessv1alpha1.AccessPolicySpec) {
				s.HeaderAuth = &accessv1alpha1.HeaderAuth{SecretRef: accessv1alpha1.SecretReference{Name: "web-auth"}, UserKey: "pin", PasswordKey: "password"}
			},
			want: resolved{HeaderAuth: "123456:hunter22 compat=false"},
		},
		{
			name: "the email whitelist is lower-cased as Pangolin stores it, each address once",
			spec: func(s *accessv1alpha1.AccessPolicySpec) {
				s.EmailWhitelist = []string{"ALICE@Corp.Example", "*@corp.example", "alice@corp.example"}
			},
			want: resolved{Whitelist: []string{"alice@corp.example", "*@corp.example"}},
		},
		{
			name: "rules keep their order as priorities, in Pangolin's terms",
			spec: func(s *accessv1alpha1.AccessPolicySpec) {
				s.Rules = []accessv1alpha1.Rule{
					{Action: accessv1alpha1.RuleAllow, Match: accessv1alpha1.MatchCIDR, Value: "10.0.0.0/8"},
					{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchPath, Value: "/admin/*"},
					{Action: accessv1alpha1.RulePass, Match: accessv1alpha1.MatchIP, Value: "2001:db8::1"},
				}
			},
			want: resolved{Rules: []string{"1 ACCEPT CIDR 10.0.0.0/8", "2 DROP PATH /admin/*", "3 PASS IP 2001:db8::1"}},
		},
		{
			name: "country, region and ASN rules are applied, with a notice that they need GeoIP",
			spec: func(s *accessv1alpha1.AccessPolicySpec) {
				s.Rules = []accessv1alpha1.Rule{
					{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchCountryIsNot, Value: "DE"},
					{Action: accessv1alpha1.RuleAllow, Match: accessv1alpha1.MatchCountry, Value: "ALL"},
					{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchRegion, Value: "150"},
					{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchASN, Value: "as15169"},
				}
			},
			want:    resolved{Rules: []string{"1 DROP COUNTRY_IS_NOT DE", "2 ACCEPT COUNTRY ALL", "3 DROP REGION 150", "4 DROP ASN AS15169"}},
			notices: []string{pic.ReasonAccessRuleNeedsGeoIP},
		},
		{
			name:        "the annotation's sso on wins over the policy's sso off",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = off },
			annotations: route.Access{SSO: on},
			want:        resolved{SSO: on},
			notices:     []string{pic.ReasonAccessPolicyAnnotationConflict},
		},
		{
			name:        "the policy's sso on wins over the annotation's sso off",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = on },
			annotations: route.Access{SSO: off},
			want:        resolved{SSO: on},
			notices:     []string{pic.ReasonAccessPolicyAnnotationConflict},
		},
		{
			name:        "roles turn SSO on over the annotation's sso off",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.Roles = []string{"ops"} },
			annotations: route.Access{SSO: off},
			want:        resolved{SSO: on, Roles: []string{"ops"}},
			notices:     []string{pic.ReasonAccessPolicyAnnotationConflict},
		},
		{
			name:        "the annotation's block-access wins over the policy's blockAccess false",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.BlockAccess = off },
			annotations: route.Access{BlockAccess: on},
			want:        resolved{BlockAccess: on},
			notices:     []string{pic.ReasonAccessPolicyAnnotationConflict},
		},
		{
			name:        "the policy's blockAccess wins over the annotation's false",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.BlockAccess = on },
			annotations: route.Access{BlockAccess: off},
			want:        resolved{BlockAccess: on},
			notices:     []string{pic.ReasonAccessPolicyAnnotationConflict},
		},
		{
			name:        "an annotation the policy does not contradict applies as written",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.Roles = []string{"ops"} },
			annotations: route.Access{SSO: on, BlockAccess: off},
			want:        resolved{SSO: on, BlockAccess: off, Roles: []string{"ops"}},
		},
		{
			name:        "agreeing annotation and policy make no notice",
			spec:        func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = off },
			annotations: route.Access{SSO: off},
			want:        resolved{SSO: off},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := access.Input{Route: route.Route{Origin: webIngress, Host: "web.example.com", Access: tc.annotations}, Secrets: secrets}
			if tc.spec != nil {
				p := policy("web-policy", 0, tc.spec, ingressRef("web"))
				in.Attachment = access.Attachment{Policy: &p, Via: ingress("web")}
			}
			got, rejections, notices := access.Resolve(in)
			require.Empty(t, rejections)
			assert.Equal(t, tc.want, summarize(got))
			if tc.spec == nil {
				assert.Nil(t, got.Policy)
				assert.Empty(t, notices)
				return
			}
			require.NotNil(t, got.Policy)
			assert.Equal(t, types.NamespacedName{Namespace: "shop", Name: "web-policy"}, got.Policy.Name)
			require.NotEmpty(t, notices)
			assert.Equal(t, pic.ReasonAccessPolicyAttached, notices[0].Reason)
			assert.Equal(t, "host web.example.com is protected by AccessPolicy shop/web-policy", notices[0].Message)
			assert.Equal(t, "web.example.com", notices[0].Protects, "the object's status repeats the notice")
			var reasons []string
			for _, n := range notices[1:] {
				reasons = append(reasons, n.Reason)
				assert.Equal(t, webIngress, n.Origin)
				assert.Empty(t, n.Protects, "only the attachment says what protects the host")
			}
			assert.Equal(t, tc.notices, reasons)
			for _, n := range notices {
				assert.NotContains(t, n.Message, "hunter22")
			}
		})
	}
}

func TestResolveSaysWhichValueWonAndWhy(t *testing.T) {
	p := policy("web-policy", 0, func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = ptr(false) }, ingressRef("web"))
	_, _, notices := access.Resolve(access.Input{
		Route:      route.Route{Origin: webIngress, Host: "web.example.com", Access: route.Access{SSO: ptr(true)}},
		Attachment: access.Attachment{Policy: &p, Via: ingress("web")},
	})
	require.Len(t, notices, 2)
	assert.Equal(t, `the annotation pangolin.ingress.k8s.io/sso is "true" and AccessPolicy shop/web-policy has sso false: sso true applies, from the annotation, because where the two disagree the stricter wins`, notices[1].Message)
}

func TestResolveNamesTheGatewayAndWhatItOverrides(t *testing.T) {
	gw := policy("gw-wide", 0, nil, gatewayRef("edge"))
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web"}
	_, _, notices := access.Resolve(access.Input{
		Route:      route.Route{Origin: origin, Host: "web.example.com"},
		Attachment: access.Attachment{Policy: &gw, Via: gateway("edge"), Overridden: []types.NamespacedName{{Namespace: "shop", Name: "lan-wide"}}},
	})
	require.NotEmpty(t, notices)
	assert.Equal(t, "host web.example.com is protected by AccessPolicy shop/gw-wide on Gateway shop/edge; it overrides AccessPolicy shop/lan-wide on a Gateway", notices[0].Message)
}

func TestResolveNamesTheRoutePolicyAGatewayOverrideReplaces(t *testing.T) {
	gw := policy("platform", 0, func(s *accessv1alpha1.AccessPolicySpec) { s.Mode = accessv1alpha1.ModeOverride }, gatewayRef("edge"))
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web"}
	_, _, notices := access.Resolve(access.Input{
		Route:      route.Route{Origin: origin, Host: "web.example.com"},
		Attachment: access.Attachment{Policy: &gw, Via: gateway("edge"), Superseded: &types.NamespacedName{Namespace: "shop", Name: "route-public"}},
	})
	require.NotEmpty(t, notices)
	assert.Equal(t, "host web.example.com is protected by AccessPolicy shop/platform on Gateway shop/edge, whose mode Override replaces AccessPolicy shop/route-public of the HTTPRoute", notices[0].Message)
}

// TestResolveFailsClosed: every policy that cannot be applied as written is one
// rejection that holds what Pangolin has, never a weaker access.
func TestResolveFailsClosed(t *testing.T) {
	rule := func(match accessv1alpha1.RuleMatch, value string) func(*accessv1alpha1.AccessPolicySpec) {
		return func(s *accessv1alpha1.AccessPolicySpec) {
			s.Rules = []accessv1alpha1.Rule{{Action: accessv1alpha1.RuleAllow, Match: match, Value: value}}
		}
	}
	password := func(name, key string) func(*accessv1alpha1.AccessPolicySpec) {
		return func(s *accessv1alpha1.AccessPolicySpec) { s.Password = secretKey(name, key) }
	}
	pin := func(key string) func(*accessv1alpha1.AccessPolicySpec) {
		return func(s *accessv1alpha1.AccessPolicySpec) { s.PinCode = secretKey("web-auth", key) }
	}
	headerAuth := func(userKey, passwordKey string) func(*accessv1alpha1.AccessPolicySpec) {
		return func(s *accessv1alpha1.AccessPolicySpec) {
			s.HeaderAuth = &accessv1alpha1.HeaderAuth{SecretRef: accessv1alpha1.SecretReference{Name: "web-auth"}, UserKey: userKey, PasswordKey: passwordKey}
		}
	}
	whitelist := func(e string) func(*accessv1alpha1.AccessPolicySpec) {
		return func(s *accessv1alpha1.AccessPolicySpec) { s.EmailWhitelist = []string{e} }
	}
	const invalid, notFound = pic.ReasonAccessPolicyInvalid, pic.ReasonAccessPolicySecretNotFound
	cases := []struct {
		name   string
		spec   func(*accessv1alpha1.AccessPolicySpec)
		reason string
		says   string
	}{
		{"a CIDR rule with a single address is refused", rule(accessv1alpha1.MatchCIDR, "10.0.0.1"), invalid, `spec.rules[0].value: "10.0.0.1" is not a CIDR`},
		{"a CIDR rule with a /33 is refused", rule(accessv1alpha1.MatchCIDR, "10.0.0.0/33"), invalid, "is not a CIDR"},
		{"an IP rule with a network is refused", rule(accessv1alpha1.MatchIP, "10.0.0.0/8"), invalid, "is not an IP address"},
		{"an IP rule with a zone is refused", rule(accessv1alpha1.MatchIP, "fe80::1%eth0"), invalid, "is not an IP address"},
		{"a path rule without a leading slash is refused", rule(accessv1alpha1.MatchPath, "no slash"), invalid, "is not a path glob"},
		{"a path rule with an empty segment is refused", rule(accessv1alpha1.MatchPath, "/a//b"), invalid, "is not a path glob"},
		{"a path rule with a bad percent-encoding is refused", rule(accessv1alpha1.MatchPath, "/a%zz"), invalid, "is not a path glob"},
		{"a lower-case country code is refused", rule(accessv1alpha1.MatchCountry, "de"), invalid, "is not an ISO 3166 country code"},
		{"an unassigned country code is refused", rule(accessv1alpha1.MatchCountryIsNot, "XX"), invalid, "is not an ISO 3166 country code"},
		{"an ASN without the AS prefix is refused", rule(accessv1alpha1.MatchASN, "15169"), invalid, "is not an autonomous system number"},
		{"an ASN beyond 32 bits is refused", rule(accessv1alpha1.MatchASN, "AS4294967296"), invalid, "AS1 to AS4294967295"},
		{"a region that is not an M49 id is refused", rule(accessv1alpha1.MatchRegion, "eu"), invalid, "is not a UN M49 region id"},
		{"a rule action outside the enum is refused", func(s *accessv1alpha1.AccessPolicySpec) {
			s.Rules = []accessv1alpha1.Rule{{Action: "Reject", Match: accessv1alpha1.MatchIP, Value: "10.0.0.1"}}
		}, invalid, `spec.rules[0].action: "Reject" is not one of Allow, Deny, Pass`},
		{"a rule match outside the enum is refused", rule("Method", "GET"), invalid, `spec.rules[0].match: "Method" is not one of`},
		{"a wildcard inside the local part is refused", whitelist("a*@corp.example"), invalid, "has a wildcard that is not the whole part before the @"},
		{"a whitelist entry that is no address is refused", whitelist("not-an-email"), invalid, "is not an email address"},
		{"a whitelist entry without a real domain is refused", whitelist("alice@localhost"), invalid, "has no valid domain"},
		{"a whitelist entry with two dots is refused", whitelist("a..b@corp.example"), invalid, "is not a valid email address"},
		{"a missing Secret is refused and retried", password("nope", "password"), notFound, "spec.password.secretRef: Secret shop/nope does not exist"},
		{"a missing key is refused and retried", password("web-auth", "nope"), notFound, "Secret shop/web-auth has no key nope"},
		{"an empty password is refused", password("web-auth", "empty"), invalid, "the password from Secret shop/web-auth key empty is empty"},
		{"a password of 3 characters is refused", password("web-auth", "short"), invalid, "must have 4 to 100 characters"},
		{"a password of 101 characters is refused", password("web-auth", "long"), invalid, "must have 4 to 100 characters"},
		{"a password ending with a line break is refused, with the likely cause", password("web-auth", "echoed"), invalid, "a Secret written with echo ends with one"},
		{"a password that is not UTF-8 is refused", password("web-auth", "binary"), invalid, "is not UTF-8 text"},
		{"a PIN of 5 digits is refused", pin("pin5"), invalid, "the PIN code from Secret shop/web-auth key pin5 must be exactly 6 digits"},
		{"a PIN of letters is refused", pin("pinalpha"), invalid, "must be exactly 6 digits"},
		{"a PIN ending with a line break is refused, with the likely cause", pin("pinechoed"), invalid, "it ends with a line break"},
		{"a header-auth user too short is refused", headerAuth("short", "password"), invalid, "the header-auth user from Secret shop/web-auth key short must have 4 to 100"},
		{"a header-auth user with a colon is refused", headerAuth("colon", "password"), invalid, "contains a colon"},
		{"a header-auth password missing is refused", headerAuth("username", "nope"), notFound, "spec.headerAuth.passwordKey: Secret shop/web-auth has no key nope"},
		{"sso off with roles is refused: the roles would do nothing", func(s *accessv1alpha1.AccessPolicySpec) {
			s.SSO = ptr(false)
			s.Roles = []string{"ops"}
		}, invalid, "spec.sso: false, but roles, users and autoLoginIdp only take effect with SSO on"},
		{"a role listed twice is refused", func(s *accessv1alpha1.AccessPolicySpec) { s.Roles = []string{"ops", "ops"} }, invalid, `spec.roles[1]: "ops" is listed twice`},
		{"a blank user is refused", func(s *accessv1alpha1.AccessPolicySpec) { s.Users = []string{" "} }, invalid, "spec.users[0]"},
		{"an IdP id of 0 is refused", func(s *accessv1alpha1.AccessPolicySpec) { s.AutoLoginIdP = "0" }, invalid, "is not a valid identity provider id"},
		{"an invalid value and a missing Secret together are Invalid, and not retried", func(s *accessv1alpha1.AccessPolicySpec) {
			rule(accessv1alpha1.MatchCIDR, "10.0.0.1")(s)
			s.PinCode = secretKey("nope", "pin")
		}, invalid, "Secret shop/nope does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := policy("web-policy", 0, tc.spec, ingressRef("web"))
			got, rejections, notices := access.Resolve(access.Input{
				Route:      route.Route{Origin: webIngress, Host: "web.example.com", Access: route.Access{SSO: ptr(false)}},
				Attachment: access.Attachment{Policy: &p, Via: ingress("web")},
				Secrets:    secrets,
			})
			assert.Equal(t, route.Access{}, got, "nothing to publish")
			assert.Empty(t, notices)
			require.Len(t, rejections, 1)
			r := rejections[0]
			assert.Equal(t, tc.reason, r.Reason)
			assert.Equal(t, webIngress, r.Origin)
			assert.Equal(t, "web.example.com", r.Host)
			assert.True(t, r.Hold, "what Pangolin holds is kept, never opened up")
			assert.Equal(t, tc.reason == notFound, r.Retry)
			assert.Contains(t, r.Message, tc.says)
			assert.Contains(t, r.Message, "AccessPolicy shop/web-policy cannot be applied")
			for _, v := range []string{"hunter22", "123456", "robot", "12345", "abcdef"} {
				assert.NotContains(t, r.Message, v, "no secret value in a rejection")
			}
			assert.NotEmpty(t, access.Validate(&p, secrets), "Validate agrees with Resolve")
		})
	}
}

func TestRuleValuesPangolinAccepts(t *testing.T) {
	cases := []struct {
		match accessv1alpha1.RuleMatch
		value string
	}{
		{accessv1alpha1.MatchCIDR, "10.0.0.0/8"},
		{accessv1alpha1.MatchCIDR, "2001:db8::/32"},
		{accessv1alpha1.MatchIP, "10.1.2.3"},
		{accessv1alpha1.MatchIP, "2001:db8::1"},
		{accessv1alpha1.MatchPath, "/"},
		{accessv1alpha1.MatchPath, "/public/*"},
		{accessv1alpha1.MatchPath, "/api/v1/"},
		{accessv1alpha1.MatchPath, "/files/%20name.txt"},
		{accessv1alpha1.MatchCountry, "US"},
		{accessv1alpha1.MatchCountry, "ALL"},
		{accessv1alpha1.MatchCountryIsNot, "DE"},
		{accessv1alpha1.MatchASN, "AS15169"},
		{accessv1alpha1.MatchRegion, "150"},
		{accessv1alpha1.MatchRegion, "019"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s is accepted", tc.match, tc.value), func(t *testing.T) {
			p := policy("p", 0, func(s *accessv1alpha1.AccessPolicySpec) {
				s.Rules = []accessv1alpha1.Rule{{Action: accessv1alpha1.RulePass, Match: tc.match, Value: tc.value}}
			}, ingressRef("web"))
			assert.Empty(t, access.Validate(&p, nil))
		})
	}
}

func TestUnsupportedByPangolinResource(t *testing.T) {
	secret := route.NewSecret(ref("password"), "hunter22")
	cases := []struct {
		name   string
		policy *route.AccessPolicy
		fields string // "" when the host can be published
	}{
		{"a host without a policy is published", nil, ""},
		{"a policy with nothing beyond sso and blockAccess is published", &route.AccessPolicy{}, ""},
		{"a policy with a password is refused", &route.AccessPolicy{Password: &secret}, "password"},
		{"a policy with roles and rules is refused, naming both", &route.AccessPolicy{Roles: []string{"ops"}, Rules: []route.AccessRule{{Priority: 1}}}, "roles, rules"},
		{"a policy with an auto-login IdP is refused", &route.AccessPolicy{AutoLoginIdP: route.IdPRef{ID: 1}}, "autoLoginIdp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.policy != nil {
				tc.policy.Name = types.NamespacedName{Namespace: "shop", Name: "web-policy"}
			}
			r := route.Route{Origin: webIngress, Host: "web.example.com", Access: route.Access{Policy: tc.policy}}
			got := access.Unsupported(r)
			if tc.fields == "" {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, pic.ReasonAccessPolicyUnsupported, got.Reason)
			assert.False(t, got.Hold, "what exists for the host is removed: kept, it would be less protected than asked")
			assert.True(t, got.AccessUnsupported, "nothing the host replaces stands in for it")
			assert.Contains(t, got.Message, "AccessPolicy shop/web-policy sets "+tc.fields+", which only the direct mode")
			assert.NotContains(t, got.Message, "hunter22")
		})
	}
}

// TestResolveOnAPortNamesThePolicyWhateverItSays: Pangolin applies no access control to
// a TCP or UDP port, so any policy on its Gateway, valid or not, reaches the engine as
// a request for protection, which refuses the port. A rejection that held the port
// would keep it published open on a typo in the policy.
func TestResolveOnAPortNamesThePolicyWhateverItSays(t *testing.T) {
	tcpRoute := route.Origin{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "TCPRoute", Namespace: "shop", Name: "db"}
	cases := []struct {
		name string
		spec func(*accessv1alpha1.AccessPolicySpec)
	}{
		{"a valid policy asks for protection", func(s *accessv1alpha1.AccessPolicySpec) { s.Roles = []string{"ops"} }},
		{"a policy with a bad rule asks for protection, not for a hold", func(s *accessv1alpha1.AccessPolicySpec) {
			s.Rules = []accessv1alpha1.Rule{{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchCIDR, Value: "10.0.0.1"}}
		}},
		{"a policy whose Secret is missing asks for protection, not for a hold", func(s *accessv1alpha1.AccessPolicySpec) {
			s.Password = secretKey("nope", "password")
		}},
		{"a policy that turns everything off still asks for protection", func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = ptr(false) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := policy("gw-wide", 0, tc.spec, gatewayRef("edge"))
			port := route.RawRoute(tcpRoute, route.ProtocolTCP, 5432, route.TunnelRef{}, route.Backend{}, route.Access{})
			got, rejections, _ := access.Resolve(access.Input{
				Route:      port,
				Attachment: access.Attachment{Policy: &p, Via: gateway("edge")},
				Secrets:    secrets,
			})
			assert.Empty(t, rejections, "no hold: the engine refuses the port, which unpublishes it")
			require.NotNil(t, got.Policy, "the engine must see the port asks for protection")
			assert.Equal(t, types.NamespacedName{Namespace: "shop", Name: "gw-wide"}, got.Policy.Name)
		})
	}
}

// TestResolveAnnotationsCannotWeakenAGatewayOverride: a Gateway policy in mode Override
// speaks for the platform team; a route's owner controls its annotations, so under an
// override they may make the host stricter, never weaker. Where the override leaves sso
// or blockAccess unset, PIC's default applies, not the route's "false".
func TestResolveAnnotationsCannotWeakenAGatewayOverride(t *testing.T) {
	rules := func(s *accessv1alpha1.AccessPolicySpec) {
		s.Rules = []accessv1alpha1.Rule{{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchCountry, Value: "RU"}}
	}
	override := func(edit func(*accessv1alpha1.AccessPolicySpec)) func(*accessv1alpha1.AccessPolicySpec) {
		return func(s *accessv1alpha1.AccessPolicySpec) {
			s.Mode = accessv1alpha1.ModeOverride
			if edit != nil {
				edit(s)
			}
		}
	}
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web"}
	cases := []struct {
		name        string
		spec        func(*accessv1alpha1.AccessPolicySpec)
		via         access.Target
		annotations route.Access
		want        route.Access
		ignored     bool // a notice says the annotation is ignored
	}{
		{name: "an override without sso ignores the route's sso false: the default applies",
			spec: override(rules), via: gateway("edge"), annotations: route.Access{SSO: ptr(false)}, want: route.Access{}, ignored: true},
		{name: "an override without blockAccess ignores the route's block-access false: the default applies",
			spec: override(rules), via: gateway("edge"), annotations: route.Access{BlockAccess: ptr(false)}, want: route.Access{}, ignored: true},
		{name: "an override without sso takes the route's sso true: stricter",
			spec: override(rules), via: gateway("edge"), annotations: route.Access{SSO: ptr(true), BlockAccess: ptr(true)}, want: route.Access{SSO: ptr(true), BlockAccess: ptr(true)}},
		{name: "an override's own sso false agrees with the route's sso false",
			spec: override(func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = ptr(false) }), via: gateway("edge"), annotations: route.Access{SSO: ptr(false)}, want: route.Access{SSO: ptr(false)}},
		{name: "a Gateway default policy without sso takes the route's sso false, as the route's own policy would replace it",
			spec: rules, via: gateway("edge"), annotations: route.Access{SSO: ptr(false)}, want: route.Access{SSO: ptr(false)}},
		{name: "the route's own policy in mode Override takes its own sso false: nothing is below it",
			spec: override(rules), via: httpRoute("web"), annotations: route.Access{SSO: ptr(false)}, want: route.Access{SSO: ptr(false)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := gatewayRef("edge")
			if tc.via.Kind == accessv1alpha1.KindHTTPRoute {
				ref = routeRef("web")
			}
			p := policy("platform", 0, tc.spec, ref)
			got, rejections, notices := access.Resolve(access.Input{
				Route:      route.Route{Origin: origin, Host: "web.example.com", Access: tc.annotations},
				Attachment: access.Attachment{Policy: &p, Via: tc.via},
			})
			require.Empty(t, rejections)
			assert.Equal(t, tc.want.SSO, got.SSO, "sso")
			assert.Equal(t, tc.want.BlockAccess, got.BlockAccess, "blockAccess")
			var conflicts []string
			for _, n := range notices {
				if n.Reason == pic.ReasonAccessPolicyAnnotationConflict {
					conflicts = append(conflicts, n.Message)
				}
			}
			if tc.ignored {
				require.Len(t, conflicts, 1)
				assert.Contains(t, conflicts[0], "mode Override")
			} else {
				assert.Empty(t, conflicts)
			}
		})
	}
}
