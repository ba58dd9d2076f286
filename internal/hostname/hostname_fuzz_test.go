package hostname

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// normalizeReasons are the reasons Normalize may give; anything else is a bug.
var normalizeReasons = map[string]bool{
	pic.ReasonEmptyHost: true, pic.ReasonInvalidHost: true, pic.ReasonWildcardHost: true,
	pic.ReasonIPAddressHost: true, pic.ReasonLocalhostHost: true, pic.ReasonSingleLabelHost: true,
	pic.ReasonClusterInternalHost: true,
}

// FuzzNormalize feeds arbitrary host strings through Normalize, then Split and Public,
// and checks what every caller relies on: an accepted host is a lower-case DNS name that
// Normalize leaves as it is, a refusal always says why, and a split recombines into the
// host. Seeds: the f.Add cases below and testdata/fuzz/FuzzNormalize.
func FuzzNormalize(f *testing.F) {
	for _, host := range []string{
		"app.example.com", "App.Example.COM", "app.example.com.", "  app.example.com  ",
		"*.example.com", "a.*.example.com", "192.168.1.1", "2001:db8::1", "[::1]", "[2001:db8::1]", "::1%eth0",
		"localhost", "app.localhost", "LOCALHOST.", "intranet", "my-svc.prod.svc.cluster.local", "x.svc", "printer.local",
		"bücher.example", "bücher.example.de", "xn--bcher-kva.example.de", "xn--zz.example.com", "faß.de", "ΑΒΓ.example.com",
		"example.com", "www.example.co.uk", "co.uk", "github.io", "user.github.io", "com", ".", "..", "a..b.com",
		"", " ", "-app.example.com", "app-.example.com", "my_app.example.com", "app.example.com/path",
		strings.Repeat("a", 63) + ".example.com", strings.Repeat("a", 64) + ".example.com",
		strings.Repeat("abcdefghi.", 24) + "example.com", strings.Repeat("abcdefghi.", 24) + "ab.example.com",
		"\x00.example.com", "a\u200d.example.com", "\xff\xfe.example.com", "example.com..",
	} {
		f.Add(host)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got, p := Normalize(host, "cluster.local")
		again, p2 := Normalize(host, "cluster.local")
		if got != again || (p == nil) != (p2 == nil) || p != nil && *p != *p2 {
			t.Fatalf("Normalize(%q) is not deterministic: %q, %v then %q, %v", host, got, p, again, p2)
		}
		if p != nil {
			if got != "" {
				t.Errorf("Normalize(%q) refused the host (%v) but returned %q", host, p, got)
			}
			if !normalizeReasons[p.Reason] {
				t.Errorf("Normalize(%q): reason %q is not one of Normalize's reasons", host, p.Reason)
			}
			if p.Message == "" {
				t.Errorf("Normalize(%q): reason %s without a message", host, p.Reason)
			}
			return
		}
		checkDNSName(t, "Normalize("+host+")", got)
		if strings.HasSuffix(got, ".cluster.local") || strings.HasSuffix(got, ".svc") || strings.HasSuffix(got, ".local") ||
			got == "localhost" || strings.HasSuffix(got, ".localhost") || !strings.Contains(got, ".") {
			t.Errorf("Normalize(%q) accepted %q, which is not a public multi-label host", host, got)
		}
		if n, p := Normalize(got, "cluster.local"); p != nil || n != got {
			t.Errorf("Normalize is not idempotent: %q -> %q -> %q (%v)", host, got, n, p)
		}

		sub, domain, sp := Split(got)
		sub2, domain2, sp2 := Split(got)
		if sub != sub2 || domain != domain2 || (sp == nil) != (sp2 == nil) {
			t.Fatalf("Split(%q) is not deterministic", got)
		}
		switch {
		case sp == nil:
			if sub == "" || domain == "" || sub+"."+domain != got {
				t.Errorf("Split(%q) = %q + %q, which does not recombine into the host", got, sub, domain)
			}
			checkDNSName(t, "domain of "+got, domain)
		case sp.Reason == pic.ReasonApexHost:
			if sub != "" || domain != got {
				t.Errorf("Split(%q): apex host with subdomain %q and domain %q", got, sub, domain)
			}
		case sp.Reason != pic.ReasonInvalidHost:
			t.Errorf("Split(%q): unexpected reason %q", got, sp.Reason)
		}
		if sp != nil && sp.Message == "" {
			t.Errorf("Split(%q): reason %s without a message", got, sp.Reason)
		}

		// Without overrides, Public is Split, except that it never returns a domain with a problem.
		psub, pdomain, pp := Public(got, "", "")
		if (pp == nil) != (sp == nil) || pp == nil && (psub != sub || pdomain != domain) || pp != nil && (pp.Reason != sp.Reason || psub != "" || pdomain != "") {
			t.Errorf("Public(%q, no overrides) = %q, %q, %v; Split gave %q, %q, %v", got, psub, pdomain, pp, sub, domain, sp)
		}
	})
}

// checkDNSName fails unless name is a lower-case RFC 1123 host name of at most 253
// characters whose labels have at most 63.
func checkDNSName(t *testing.T, what, name string) {
	t.Helper()
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		t.Errorf("%s: %q is not a DNS name: %v", what, name, errs)
	}
	if name != strings.ToLower(name) || len(name) > 253 {
		t.Errorf("%s: %q is not lower-case or longer than 253", what, name)
	}
	for _, label := range strings.Split(name, ".") {
		if errs := validation.IsDNS1123Label(label); len(errs) > 0 {
			t.Errorf("%s: label %q of %q: %v", what, label, name, errs)
		}
	}
}
