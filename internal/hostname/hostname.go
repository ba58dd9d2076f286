// Package hostname validates public host names and splits them into the subdomain and
// registrable domain that Pangolin wants. It is pure: no I/O, no Kubernetes types.
package hostname

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// Problem is why a host cannot be published, with a stable reason for the Warning event.
type Problem struct {
	Reason  string
	Message string
}

func (p *Problem) Error() string { return p.Reason + ": " + p.Message }

func problem(reason, format string, args ...any) *Problem {
	return &Problem{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// The lookup profile maps Unicode to its punycode form the way browsers do, and refuses
// what a browser would refuse.
var idnaProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false))

// Normalize returns host lower-cased, without a trailing dot and in punycode, or the
// reason it cannot be a public Pangolin host. clusterDomain (e.g. "cluster.local") marks
// names that only resolve inside the cluster.
func Normalize(host, clusterDomain string) (string, *Problem) {
	raw := host
	host = strings.TrimSuffix(strings.TrimSpace(host), ".")
	if host == "" {
		return "", problem(pic.ReasonEmptyHost, "the rule has no host: Pangolin publishes named hosts only; set spec.rules[].host")
	}
	if strings.Contains(host, "*") {
		return "", problem(pic.ReasonWildcardHost, "host %q is a wildcard: Pangolin resources need one concrete host; list each host explicitly", raw)
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return "", problem(pic.ReasonIPAddressHost, "host %q is an IP address: Pangolin publishes DNS names; use a host name in one of your Pangolin domains", raw)
	}
	// idna encodes invalid UTF-8 as U+FFFD instead of refusing it, which yields a punycode
	// label ("\xff.example.com" -> "xn--zn7c.example.com") that is not a valid IDN: found
	// by FuzzNormalize.
	if !utf8.ValidString(host) {
		return "", problem(pic.ReasonInvalidHost, "host %q is not a valid DNS name: it is not valid UTF-8", raw)
	}
	ascii, err := idnaProfile.ToASCII(host)
	if err != nil {
		return "", problem(pic.ReasonInvalidHost, "host %q is not a valid DNS name: %v", raw, err)
	}
	host = strings.ToLower(ascii)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "", problem(pic.ReasonLocalhostHost, "host %q is a localhost name, which cannot be reached from outside", raw)
	}
	if internal := clusterInternalSuffix(host, clusterDomain); internal != "" {
		return "", problem(pic.ReasonClusterInternalHost, "host %q is under %q, which resolves only inside the cluster; use a public host name", raw, internal)
	}
	if !strings.Contains(host, ".") {
		return "", problem(pic.ReasonSingleLabelHost, "host %q has a single label; a public host needs a domain (for example %s.example.com)", raw, host)
	}
	if err := validDNSName(host); err != nil {
		return "", problem(pic.ReasonInvalidHost, "host %q is not a valid DNS name: %v", raw, err)
	}
	return host, nil
}

func clusterInternalSuffix(host, clusterDomain string) string {
	for _, suffix := range []string{clusterDomain, "svc", "local"} {
		if suffix != "" && (host == suffix || strings.HasSuffix(host, "."+suffix)) {
			return suffix
		}
	}
	return ""
}

// validDNSName checks RFC 1123 host syntax: at most 253 characters, labels of 1 to 63
// letters, digits and hyphens that neither start nor end with a hyphen.
func validDNSName(host string) error {
	if len(host) > 253 {
		return fmt.Errorf("%d characters, more than 253", len(host))
	}
	for _, label := range strings.Split(host, ".") {
		switch {
		case label == "":
			return fmt.Errorf("empty label")
		case len(label) > 63:
			return fmt.Errorf("label %q has %d characters, more than 63", label, len(label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Errorf("label %q starts or ends with a hyphen", label)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("label %q has the character %q", label, c)
			}
		}
	}
	return nil
}

// Split splits a normalized host into Pangolin's subdomain and domain with the public
// suffix list: api.staging.example.com is "api.staging" + "example.com", www.example.co.uk
// is "www" + "example.co.uk". An apex host has no subdomain, which the operator's CRDs
// cannot express: Split then returns the domain with an ApexHost problem.
func Split(host string) (subdomain, domain string, p *Problem) {
	domain, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return "", "", problem(pic.ReasonInvalidHost, "host %q has no registrable domain: %v", host, err)
	}
	if domain == host {
		return "", domain, apexProblem(host)
	}
	return strings.TrimSuffix(host, "."+domain), domain, nil
}

func apexProblem(host string) *Problem {
	return problem(pic.ReasonApexHost,
		"host %q is an apex domain: the operator's PangolinResource requires a non-empty subdomain, so it cannot be published; use a subdomain such as www.%s, or set the %s annotation", host, host, pic.AnnotationSubdomain)
}

// Public returns the subdomain and domain Pangolin publishes for host, applying the
// user's overrides. A domain override that host ends with keeps the rest of host as the
// subdomain (api.staging.example.com with domain staging.example.com is "api"); any
// other domain override replaces only the domain.
func Public(host, domainOverride, subdomainOverride string) (subdomain, domain string, p *Problem) {
	return PublicIn(nil, host, domainOverride, subdomainOverride)
}

// PublicIn is Public against a given list of domains, those a Pangolin org serves: the
// host splits against the longest one it is or ends with, and may be one of them (its
// apex, with an empty subdomain). A host under none of them is DomainNotFound, and so
// is a domain override that is not one of them. With no list (nil), the split follows
// the public-suffix list, as Public.
func PublicIn(domains []string, host, domainOverride, subdomainOverride string) (subdomain, domain string, p *Problem) {
	if domains == nil {
		subdomain, domain, p = Split(host)
	} else {
		subdomain, domain, p = splitIn(host, domains)
		if domainOverride != "" && !slices.Contains(domains, domainOverride) {
			return "", "", problem(pic.ReasonDomainNotFound, "the %s annotation names domain %s, which is not one of the Pangolin organization's domains (%s)",
				pic.AnnotationDomainName, domainOverride, strings.Join(domains, ", "))
		}
	}
	if domainOverride != "" {
		domain = domainOverride
		if rest, ok := strings.CutSuffix(host, "."+domainOverride); ok {
			subdomain, p = rest, nil
		}
	}
	if subdomainOverride != "" {
		subdomain = subdomainOverride
	}
	if p != nil && (p.Reason == pic.ReasonApexHost || p.Reason == pic.ReasonDomainNotFound && domainOverride != "") && subdomain != "" {
		p = nil
	}
	if p != nil {
		return "", "", p
	}
	if subdomain == "" { // the apex of one of the org's domains
		return "", domain, nil
	}
	// Each override is valid alone, but not every pair is: a subdomain of 253 characters
	// makes too long a host under any domain (found by FuzzTranslate).
	if err := validDNSName(subdomain + "." + domain); err != nil {
		return "", "", problem(pic.ReasonInvalidAnnotation, "the %s and %s annotations publish host %q as %q, which is not a valid DNS name: %v",
			pic.AnnotationDomainName, pic.AnnotationSubdomain, host, subdomain+"."+domain, err)
	}
	return subdomain, domain, nil
}

// splitIn splits host against the longest of domains that it is or ends with.
func splitIn(host string, domains []string) (subdomain, domain string, p *Problem) {
	for _, d := range domains {
		if len(d) <= len(domain) {
			continue
		}
		if host == d {
			subdomain, domain = "", d
		} else if rest, ok := strings.CutSuffix(host, "."+d); ok {
			subdomain, domain = rest, d
		}
	}
	if domain == "" {
		return "", "", problem(pic.ReasonDomainNotFound, "host %s is under none of the Pangolin organization's domains (%s): add its domain to the organization, or use one of them",
			host, strings.Join(domains, ", "))
	}
	return subdomain, domain, nil
}

// Join is the host a subdomain and a domain make: the domain itself for an empty
// subdomain (the apex of one of the org's domains).
func Join(subdomain, domain string) string {
	if subdomain == "" {
		return domain
	}
	return subdomain + "." + domain
}

// Published is the host users reach for host, after the overrides, split against
// domains as PublicIn does (nil: the public-suffix list). It is what an object claims:
// host ownership is decided on it, never on the host as written, so that an override
// cannot land on a host another object owns.
func Published(domains []string, host, domainOverride, subdomainOverride string) (string, *Problem) {
	sub, domain, p := PublicIn(domains, host, domainOverride, subdomainOverride)
	if p != nil {
		return "", p
	}
	return Join(sub, domain), nil
}

// Claimable are the hosts Published may give for host, whatever domains the Pangolin
// org has: those of the public-suffix split, and those of a split against each suffix
// of host under its registrable domain (a Pangolin domain is a registrable domain or
// one of its subdomains). They are the keys of the sources' host indexes, which are
// built without the org's domains: with no override, or with both, there is one;
// with one override alone, one per such suffix. A host that cannot be published under
// any split claims itself, so that it still finds the objects it competes with.
func Claimable(host, domainOverride, subdomainOverride string) []string {
	if domainOverride == "" && subdomainOverride == "" {
		return []string{host}
	}
	var out []string
	add := func(domains []string) {
		if h, p := Published(domains, host, domainOverride, subdomainOverride); p == nil && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	add(nil)
	if registrable, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		for suffix := host; ; {
			domains := []string{suffix}
			if domainOverride != "" && domainOverride != suffix {
				domains = append(domains, domainOverride)
			}
			add(domains)
			var found bool
			if _, suffix, found = strings.Cut(suffix, "."); !found || len(suffix) < len(registrable) {
				break
			}
		}
	}
	if len(out) == 0 {
		return []string{host}
	}
	return out
}
