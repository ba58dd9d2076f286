package hostname

import (
	"fmt"
	"testing"
)

// benchHosts are the shapes a cluster's hosts take: one label under a common domain,
// several labels, a multi-label public suffix, mixed case with a trailing dot, and an IDN.
var benchHosts = []string{
	"app.example.com",
	"api.staging.eu.example.com",
	"www.example.co.uk",
	"App.Example.COM.",
	"bücher.example.de",
}

// BenchmarkNormalize is the validation every Ingress host goes through, in the
// translation and in the host index.
func BenchmarkNormalize(b *testing.B) {
	for _, host := range benchHosts {
		b.Run(host, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, p := Normalize(host, "cluster.local"); p != nil {
					b.Fatal(p)
				}
			}
		})
	}
}

// BenchmarkSplit is the public-suffix split of a normalized host.
func BenchmarkSplit(b *testing.B) {
	for _, host := range []string{"app.example.com", "api.staging.eu.example.com", "www.example.co.uk", "xn--bcher-kva.example.de"} {
		b.Run(host, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, p := Split(host); p != nil {
					b.Fatal(p)
				}
			}
		})
	}
}

// BenchmarkPublic is what the engine calls per host: the split plus the overrides and the
// final DNS check.
func BenchmarkPublic(b *testing.B) {
	for _, tc := range []struct{ name, host, domain, sub string }{
		{"no-override", "app.example.com", "", ""},
		{"domain-override", "api.staging.example.com", "staging.example.com", ""},
		{"subdomain-override", "example.com", "", "www"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, p := Public(tc.host, tc.domain, tc.sub); p != nil {
					b.Fatal(p)
				}
			}
		})
	}
}

// BenchmarkNormalizeAndSplit50 is the host work of one 50-host Ingress.
func BenchmarkNormalizeAndSplit50(b *testing.B) {
	hosts := make([]string, 50)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("app-%d.example.com", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, h := range hosts {
			n, p := Normalize(h, "cluster.local")
			if p != nil {
				b.Fatal(p)
			}
			if _, _, p := Public(n, "", ""); p != nil {
				b.Fatal(p)
			}
		}
	}
}
