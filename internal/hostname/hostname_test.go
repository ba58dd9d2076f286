package hostname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

func TestNormalize(t *testing.T) {
	cases := []struct {
		name   string
		host   string
		want   string
		reason string
	}{
		{"a plain host is kept", "app.example.com", "app.example.com", ""},
		{"mixed case is lower-cased", "App.Example.COM", "app.example.com", ""},
		{"a trailing dot is removed", "app.example.com.", "app.example.com", ""},
		{"an IDN host becomes punycode", "bücher.example.de", "xn--bcher-kva.example.de", ""},
		{"an empty host is reported as such", "", "", pic.ReasonEmptyHost},
		{"a wildcard is refused", "*.example.com", "", pic.ReasonWildcardHost},
		{"an IPv4 address is refused", "192.168.1.1", "", pic.ReasonIPAddressHost},
		{"an IPv6 address is refused", "2001:db8::1", "", pic.ReasonIPAddressHost},
		{"a bracketed IPv6 address is refused", "[::1]", "", pic.ReasonIPAddressHost},
		{"localhost is refused", "localhost", "", pic.ReasonLocalhostHost},
		{"a localhost subdomain is refused", "app.localhost", "", pic.ReasonLocalhostHost},
		{"a single label is refused", "intranet", "", pic.ReasonSingleLabelHost},
		{"the cluster domain is refused", "my-svc.prod.svc.cluster.local", "", pic.ReasonClusterInternalHost},
		{"a .svc name is refused", "my-svc.prod.svc", "", pic.ReasonClusterInternalHost},
		{"an mDNS .local name is refused", "printer.local", "", pic.ReasonClusterInternalHost},
		{"a label of 64 characters is invalid", strings.Repeat("a", 64) + ".example.com", "", pic.ReasonInvalidHost},
		{"a host of 254 characters is invalid", strings.Repeat("abcdefghi.", 24) + "ab.example.com", "", pic.ReasonInvalidHost},
		{"a label of 63 characters is fine", strings.Repeat("a", 63) + ".example.com", strings.Repeat("a", 63) + ".example.com", ""},
		{"an underscore is invalid", "my_app.example.com", "", pic.ReasonInvalidHost},
		{"a label starting with a hyphen is invalid", "-app.example.com", "", pic.ReasonInvalidHost},
		{"invalid UTF-8 is invalid, not punycoded as U+FFFD", "\xff\xfe.example.com", "", pic.ReasonInvalidHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problem := Normalize(tc.host, "cluster.local")
			if tc.reason == "" {
				assert.Nil(t, problem)
				assert.Equal(t, tc.want, got)
				return
			}
			if assert.NotNil(t, problem) {
				assert.Equal(t, tc.reason, problem.Reason)
				assert.NotEmpty(t, problem.Message)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name, host, subdomain, domain, reason string
	}{
		{"the standard case splits off one label", "app.example.com", "app", "example.com", ""},
		{"several subdomain levels are preserved", "api.staging.example.com", "api.staging", "example.com", ""},
		{"a multi-label public suffix is respected", "www.example.co.uk", "www", "example.co.uk", ""},
		{"a private suffix from the list is respected", "app.user.github.io", "app", "user.github.io", ""},
		{"an apex host cannot be expressed", "example.com", "", "example.com", pic.ReasonApexHost},
		{"a public suffix has no registrable domain", "co.uk", "", "", pic.ReasonInvalidHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, domain, problem := Split(tc.host)
			assert.Equal(t, tc.subdomain, sub)
			assert.Equal(t, tc.domain, domain)
			if tc.reason == "" {
				assert.Nil(t, problem)
			} else if assert.NotNil(t, problem) {
				assert.Equal(t, tc.reason, problem.Reason)
			}
		})
	}
}

func TestPublic(t *testing.T) {
	cases := []struct {
		name, host, domainOverride, subdomainOverride string
		subdomain, domain, reason                     string
	}{
		{"no override uses the split", "app.example.com", "", "", "app", "example.com", ""},
		{"a domain override the host ends with keeps the rest as subdomain", "api.staging.example.com", "staging.example.com", "", "api", "staging.example.com", ""},
		{"another domain override replaces only the domain", "app.example.com", "example.org", "", "app", "example.org", ""},
		{"a subdomain override replaces only the subdomain", "app.example.com", "", "web", "web", "example.com", ""},
		{"both overrides replace both", "app.example.com", "example.org", "web", "web", "example.org", ""},
		{"a subdomain override makes an apex host publishable", "example.com", "", "www", "www", "example.com", ""},
		{"an apex host stays an apex with only its own domain as override", "example.com", "example.com", "", "", "", pic.ReasonApexHost},
		{"overrides that together exceed 253 characters are refused", "app.example.com", "", strings.Repeat("abcdefghi.", 25) + "abc", "", "", pic.ReasonInvalidAnnotation},
		{"a public host of exactly 253 characters is fine", "app.example.com", "", strings.Repeat("abcdefghi.", 24) + "a", strings.Repeat("abcdefghi.", 24) + "a", "example.com", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, domain, problem := Public(tc.host, tc.domainOverride, tc.subdomainOverride)
			assert.Equal(t, tc.subdomain, sub)
			assert.Equal(t, tc.domain, domain)
			if tc.reason == "" {
				assert.Nil(t, problem)
			} else if assert.NotNil(t, problem) {
				assert.Equal(t, tc.reason, problem.Reason)
			}
		})
	}
}

func TestPublicIn(t *testing.T) {
	domains := []string{"example.com", "apps.example.com", "example.org"}
	cases := []struct {
		name                       string
		host, domain, subdomain    string
		wantSub, wantDomain, wantP string
	}{
		{"a host splits against the org's domain", "app.example.com", "", "", "app", "example.com", ""},
		{"the longest domain wins", "shop.apps.example.com", "", "", "shop", "apps.example.com", ""},
		{"a subdomain may have several labels", "a.b.example.org", "", "", "a.b", "example.org", ""},
		{"an org domain itself is published as the apex", "example.org", "", "", "", "example.org", ""},
		{"a host under none of the org's domains is refused", "app.other.net", "", "", "", "", pic.ReasonDomainNotFound},
		{"a suffix that is not a label boundary does not match", "badexample.com", "", "", "", "", pic.ReasonDomainNotFound},
		{"a domain override must be an org domain", "app.example.com", "other.net", "", "", "", pic.ReasonDomainNotFound},
		{"a domain override among the org's domains is kept", "app.example.com", "example.org", "", "app", "example.org", ""},
		{"a subdomain override replaces the split", "app.example.com", "", "www", "www", "example.com", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, domain, p := PublicIn(domains, tc.host, tc.domain, tc.subdomain)
			if tc.wantP != "" {
				require.NotNil(t, p)
				assert.Equal(t, tc.wantP, p.Reason)
				return
			}
			require.Nil(t, p)
			assert.Equal(t, tc.wantSub, sub)
			assert.Equal(t, tc.wantDomain, domain)
		})
	}
}

func TestPublished(t *testing.T) {
	cases := []struct {
		name              string
		domains           []string
		host, domain, sub string
		want              string
		reason            string
	}{
		{"a host without overrides is published as written", nil, "app.example.com", "", "", "app.example.com", ""},
		{"a subdomain override replaces the subdomain", nil, "x.example.com", "", "app", "app.example.com", ""},
		{"a domain override the host ends with keeps the rest as the subdomain", nil, "api.staging.example.com", "staging.example.com", "", "api.staging.example.com", ""},
		{"a domain override elsewhere replaces the domain", nil, "app.example.org", "example.com", "", "app.example.com", ""},
		{"both overrides ignore the host", nil, "x.example.org", "example.com", "app", "app.example.com", ""},
		{"a subdomain override splits against the org's longest domain", []string{"example.com", "staging.example.com"}, "x.staging.example.com", "", "app", "app.staging.example.com", ""},
		{"an apex the org serves is published as is", []string{"example.com"}, "example.com", "", "", "example.com", ""},
		{"an apex without an org list is refused", nil, "example.com", "", "", "", pic.ReasonApexHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, p := Published(tc.domains, tc.host, tc.domain, tc.sub)
			if tc.reason != "" {
				require.NotNil(t, p)
				assert.Equal(t, tc.reason, p.Reason)
				return
			}
			require.Nil(t, p)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestClaimable(t *testing.T) {
	cases := []struct {
		name              string
		host, domain, sub string
		want              []string
	}{
		{"a host without overrides claims itself", "app.example.com", "", "", []string{"app.example.com"}},
		{"both overrides claim one host, whatever the split", "x.a.example.org", "example.com", "app", []string{"app.example.com"}},
		{"a subdomain override claims it under every possible domain", "x.staging.example.com", "", "app", []string{"app.example.com", "app.x.staging.example.com", "app.staging.example.com"}},
		{"a domain override claims every possible subdomain under it", "api.staging.example.org", "example.com", "", []string{"api.staging.example.com", "example.com", "api.example.com"}},
		{"a domain override the host ends with claims the host", "api.staging.example.com", "staging.example.com", "", []string{"api.staging.example.com"}},
		{"an apex with a domain override alone claims itself when nothing can be published", "example.org", "example.com", "", []string{"example.com"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Claimable(tc.host, tc.domain, tc.sub))
		})
	}
}

// Every host Published gives, whatever domains the org has, is among those Claimable
// gives without them: the sources' indexes, built without the org's domains, find every
// object that may publish a host.
func TestClaimableHoldsEveryPublishedHost(t *testing.T) {
	hosts := []string{"app.example.com", "x.staging.example.com", "a.b.c.example.co.uk", "example.com", "www.example.co.uk"}
	domainLists := [][]string{nil, {}, {"example.com"}, {"staging.example.com"}, {"example.com", "staging.example.com"},
		{"c.example.co.uk", "example.co.uk"}, {"b.c.example.co.uk"}, {"example.org"}, {"example.com", "example.org"}, {"x.staging.example.com"}}
	overrides := [][2]string{{"", ""}, {"", "app"}, {"", "api.v2"}, {"example.org", ""}, {"example.com", ""}, {"staging.example.com", ""}, {"example.org", "app"}}
	for _, host := range hosts {
		for _, o := range overrides {
			claimable := Claimable(host, o[0], o[1])
			for _, domains := range domainLists {
				published, p := Published(domains, host, o[0], o[1])
				if p != nil {
					continue
				}
				assert.Contains(t, claimable, published, "host %s, domain %q, subdomain %q, org domains %v", host, o[0], o[1], domains)
			}
		}
	}
}
