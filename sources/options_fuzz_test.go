package sources

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// optionKeys are the annotations ParseOptions reads, in the order of FuzzParseOptions's
// arguments; bit i of present says whether optionKeys[i] is set.
var optionKeys = []string{
	pic.AnnotationEnabled, pic.AnnotationTunnelName, pic.AnnotationDomainName, pic.AnnotationSubdomain,
	pic.AnnotationBackendScheme, pic.AnnotationSSO, pic.AnnotationBlockAccess,
}

// FuzzParseOptions feeds arbitrary annotation values (each present or absent) to
// ParseOptions and checks that it never guesses: every problem names the annotation it
// is about, a value it accepted is valid, a value it refused is left unset, and the same
// annotations always give the same answer. Seeds: below and testdata/fuzz/FuzzParseOptions.
func FuzzParseOptions(f *testing.F) {
	all := uint8(1<<len(optionKeys) - 1)
	f.Add(uint8(0), "", "", "", "", "", "", "")
	f.Add(all, "true", "default", "example.com", "app", "https", "false", "true")
	f.Add(all, " false ", "pangolin-system/edge", "Example.COM.", "API.Staging.", "HTTP", "true", "false")
	f.Add(all, "yes", "a/b/c", "*.example.com", "-bad", "ftp", "1", "TRUE")
	f.Add(all, "", "", "", "", "", "", "")
	f.Add(uint8(0b0001100), "", "", "bücher.example", "xn--bcher-kva", "", "", "")
	f.Add(uint8(0b0001100), "", "", "[::1]", "a..b", "", "", "")
	f.Add(uint8(0b0001100), "", "", "localhost", strings.Repeat("a", 64), "", "", "")
	f.Add(uint8(0b0001100), "", "", "svc.cluster.local", strings.Repeat("a.", 126)+"a", "", "", "")
	f.Add(uint8(0b0001100), "", "", strings.Repeat("abcdefghi.", 24)+"ab.example.com", "app_1", "", "", "")
	f.Add(uint8(0b0001100), "", "", "192.168.0.1", "ünï", "", "", "")
	f.Add(uint8(0b0001100), "", "", "\xff.example.com", "\xff", "", "", "")
	f.Add(uint8(0b1100001), "\ttrue\n", "", "", "", "", "\u00a0true", "false\x00")
	f.Fuzz(func(t *testing.T, present uint8, enabled, tunnel, domain, subdomain, scheme, sso, block string) {
		values := []string{enabled, tunnel, domain, subdomain, scheme, sso, block}
		annotations := map[string]string{"unrelated.example.com/key": "value"}
		for i, key := range optionKeys {
			if present&(1<<i) != 0 {
				annotations[key] = values[i]
			}
		}
		o, problems := ParseOptions(annotations, "http")
		o2, problems2 := ParseOptions(annotations, "http")
		if !reflect.DeepEqual(o, o2) || !reflect.DeepEqual(problems, problems2) {
			t.Fatalf("ParseOptions(%q) is not deterministic: %+v %q, then %+v %q", annotations, o, problems, o2, problems2)
		}

		// Each problem is about one annotation that is present, and each annotation has one problem at most.
		seen := map[string]bool{}
		for _, p := range problems {
			key := ""
			for _, k := range optionKeys {
				if strings.HasPrefix(p, k+"=") {
					key = k
				}
			}
			if key == "" {
				t.Fatalf("problem %q names none of PIC's annotations", p)
			}
			if _, ok := annotations[key]; !ok || seen[key] || len(p) <= len(key)+1 {
				t.Errorf("problem %q: annotation absent, reported twice, or no explanation", p)
			}
			seen[key] = true
		}

		checkBool := func(key string, got *bool) {
			v, ok := annotations[key]
			want := strings.TrimSpace(v)
			switch {
			case !ok && got != nil:
				t.Errorf("%s is absent but parsed as %v", key, *got)
			case ok && (want == "true" || want == "false"):
				if got == nil || *got != (want == "true") || seen[key] {
					t.Errorf("%s=%q: parsed as %v, problem %v", key, v, got, seen[key])
				}
			case ok && (got != nil || !seen[key]):
				t.Errorf("%s=%q is not a boolean but was parsed as %v, problem %v", key, v, got, seen[key])
			}
		}
		checkBool(pic.AnnotationEnabled, o.Enabled)
		checkBool(pic.AnnotationSSO, o.SSO)
		checkBool(pic.AnnotationBlockAccess, o.BlockAccess)

		if o.Tunnel != strings.TrimSpace(annotations[pic.AnnotationTunnelName]) {
			t.Errorf("tunnel %q read as %q", annotations[pic.AnnotationTunnelName], o.Tunnel)
		}
		if v, ok := annotations[pic.AnnotationDomainName]; ok && !seen[pic.AnnotationDomainName] {
			want, p := hostname.Normalize(v, "")
			if p != nil || o.Domain != want || len(validation.IsDNS1123Subdomain(o.Domain)) > 0 {
				t.Errorf("domain %q accepted as %q, which is not a normalized DNS name", v, o.Domain)
			}
		} else if o.Domain != "" {
			t.Errorf("domain %q absent or refused, yet set to %q", v, o.Domain)
		}
		if v, ok := annotations[pic.AnnotationSubdomain]; ok && !seen[pic.AnnotationSubdomain] {
			if len(o.Subdomain) > 253 || o.Subdomain != strings.ToLower(o.Subdomain) {
				t.Errorf("subdomain %q accepted as %q", v, o.Subdomain)
			}
			for _, label := range strings.Split(o.Subdomain, ".") {
				if errs := validation.IsDNS1123Label(label); len(errs) > 0 {
					t.Errorf("subdomain %q accepted as %q: label %q: %v", v, o.Subdomain, label, errs)
				}
			}
		} else if o.Subdomain != "" {
			t.Errorf("subdomain %q absent or refused, yet set to %q", v, o.Subdomain)
		}
		if o.BackendScheme != "http" && o.BackendScheme != "https" {
			t.Errorf("backend scheme %q accepted as %q", annotations[pic.AnnotationBackendScheme], o.BackendScheme)
		}
		if v, ok := annotations[pic.AnnotationBackendScheme]; ok && !seen[pic.AnnotationBackendScheme] &&
			o.BackendScheme != strings.ToLower(strings.TrimSpace(v)) {
			t.Errorf("backend scheme %q read as %q", v, o.BackendScheme)
		}
	})
}
