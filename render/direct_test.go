package render_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/render"
)

// TestMainDirectScenario: with the pangolin sink, render prints the Pangolin resource and
// targets the direct sink sends for the scenario, the same Warnings, and the same exit
// statuses; standard input gives what the file gives.
func TestMainDirectScenario(t *testing.T) {
	file := filepath.Join(write(t, map[string]string{"app.yaml": scenario}), "app.yaml")

	got := run("", "-f", file, "--sink", "pangolin")
	require.Equal(t, render.ExitOK, got.code, got.stderr)
	assert.Equal(t, `blockAccess: false
domain: example.com
enabled: true
fullDomain: shop.example.com
name: shop.example.com (Ingress shop/web)
niceId: pic-default-c02b8ecac722fbe3
routers:
- name: 1-2f-prefix-shop-example-com-Ingress-shop-web-router
  priority: 101
  rule: Host(`+"`shop.example.com`"+`) && PathPrefix(`+"`/`"+`)
  servers:
  - http://web.shop.svc.cluster.local:8080
sso: true
subdomain: shop
targets:
- enabled: true
  ip: web.shop.svc.cluster.local
  method: http
  path: /
  pathMatchType: prefix
  port: 8080
  priority: 101
  site: default
`, got.stdout)
	assert.Equal(t, `Warning Ingress shop/wild WildcardHost: host "*.example.com" is a wildcard: Pangolin resources need one concrete host; list each host explicitly
`, got.stderr)

	failing := run("", "-f", file, "--sink", "pangolin", "--fail-on-warning")
	assert.Equal(t, render.ExitWarning, failing.code)
	assert.Equal(t, got.stdout, failing.stdout)
	assert.Equal(t, got, run(scenario, "-f", "-", "--sink", "pangolin"), "standard input gives what the file gives")
}

// TestMainDirectDomains: the org's domains decide the split and DomainNotFound; without
// --domain each host's registrable domain is assumed.
func TestMainDirectDomains(t *testing.T) {
	const web = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80}]}
---
`
	const apps = web + `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: pangolin
  rules:
    - host: shop.apps.example.com
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
    - host: example.com
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
    - host: blog.example.org
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`
	const annotated = web + `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: prod
  annotations: {pangolin.ingress.k8s.io/domain-name: "Apps.Example.com."}
spec:
  ingressClassName: pangolin
  rules:
    - host: shop.apps.example.com
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`
	for _, c := range []struct {
		name    string
		input   string // apps unless set
		domains []string
		want    []string // "fullDomain domain subdomain" of each resource
		warning string
	}{
		{name: "derived: each host's registrable domain",
			want: []string{"blog.example.org example.org blog", "example.com example.com -", "shop.apps.example.com example.com shop.apps"}},
		{name: "the longest of the org's domains wins", domains: []string{"example.com", "apps.example.com", "example.org"},
			want: []string{"blog.example.org example.org blog", "example.com example.com -", "shop.apps.example.com apps.example.com shop"}},
		{name: "the org's domains as users write them", domains: []string{"Example.COM.", "APPS.example.com", "example.org"},
			want: []string{"blog.example.org example.org blog", "example.com example.com -", "shop.apps.example.com apps.example.com shop"}},
		{name: "derived: the domain-name annotation as the source reads it", input: annotated,
			want: []string{"shop.apps.example.com apps.example.com shop"}},
		{name: "a host under none of the org's domains is DomainNotFound", domains: []string{"apps.example.com"},
			want:    []string{"shop.apps.example.com apps.example.com shop"},
			warning: `Warning Ingress prod/shop DomainNotFound: `},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-f", "-", "--sink", "pangolin"}
			for _, d := range c.domains {
				args = append(args, "--domain", d)
			}
			input := apps
			if c.input != "" {
				input = c.input
			}
			got := run(input, args...)
			require.Equal(t, render.ExitOK, got.code, got.stderr)
			var resources []string
			for _, doc := range strings.Split(got.stdout, "---\n") {
				field := func(name string) string {
					for _, line := range strings.Split(doc, "\n") {
						if v, ok := strings.CutPrefix(line, name+": "); ok {
							return v
						}
					}
					return "-"
				}
				resources = append(resources, field("fullDomain")+" "+field("domain")+" "+field("subdomain"))
			}
			assert.Equal(t, c.want, resources)
			if c.warning == "" {
				assert.Empty(t, got.stderr)
			} else {
				assert.Contains(t, got.stderr, c.warning)
				assert.Contains(t, got.stderr, "example.com")
			}
		})
	}
}

// TestMainDirectConfig: a direct-mode configuration whose API key and CA bundle are
// mounted files that do not exist where render runs is still read; its org and owner id
// show in what is printed.
func TestMainDirectConfig(t *testing.T) {
	dir := write(t, map[string]string{
		"app.yaml": scenario,
		"pic.yaml": "sink: pangolin\npangolin:\n  url: https://pangolin.example.com/v1\n  org: acme\n  ownerId: prod\n" +
			"  apiKeyFile: /etc/pic-pangolin/api-key\n  caFile: /etc/pic-pangolin/ca.crt\ndefaultTunnel: edge-site\n",
		"plain.yaml": "defaultTunnel: edge-site\n",
	})
	in := func(name string) string { return filepath.Join(dir, name) }

	got := run("", "-f", in("app.yaml"), "--config", in("pic.yaml"))
	require.Equal(t, render.ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "niceId: pic-prod-")
	assert.Contains(t, got.stdout, "site: edge-site")
	assert.NotContains(t, got.stdout, "kind: PangolinResource")

	assert.Equal(t, run("", "-f", in("app.yaml"), "--config", in("plain.yaml"), "--sink", "pangolin").stdout,
		strings.ReplaceAll(got.stdout, "pic-prod-", "pic-default-"), "--sink over a configuration: the same resources, another owner id")
	assert.Contains(t, run("", "-f", in("app.yaml"), "--config", in("pic.yaml"), "--sink", "pangolinresource").stdout,
		"kind: PangolinResource", "--sink wins over the file")

	for _, c := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"an unknown sink", []string{"--sink", "operator"}, `--sink "operator": want one of pangolin, pangolinresource`},
		{"--domain without direct mode", []string{"--domain", "example.com"}, "--domain is for sink pangolin"},
		{"a malformed domain", []string{"--sink", "pangolin", "--domain", "exa mple.com"}, `--domain "exa mple.com"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := run("", append([]string{"-f", in("app.yaml")}, c.args...)...)
			assert.Equal(t, render.ExitUsage, got.code)
			assert.Contains(t, got.stderr, c.stderr)
		})
	}
}

// TestMainDirectInputOrder: direct mode's output too is the same whatever the input's
// order.
func TestMainDirectInputOrder(t *testing.T) {
	want := run(strings.Join(conflict, "---\n"), "-f", "-", "--sink", "pangolin")
	require.Equal(t, render.ExitOK, want.code, want.stderr)
	require.NotEmpty(t, want.stdout)
	assert.Contains(t, want.stderr, "Warning Ingress prod/b HostConflict")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		docs := append([]string(nil), conflict...)
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		assert.Equal(t, want, run(strings.Join(docs, "---\n"), "-f", "-", "--sink", "pangolin"))
	}
}

// TestMainDirectHealthCheck: render shows each target's health check as the direct sink
// writes it, and the target served, as once Newt reports it healthy.
func TestMainDirectHealthCheck(t *testing.T) {
	const checked = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 8080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  annotations: {pangolin.ingress.k8s.io/health-check-path: /healthz}
spec:
  ingressClassName: pangolin
  rules:
    - host: shop.example.com
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}]}
`
	got := run(checked, "-f", "-", "--sink", "pangolin")
	require.Equal(t, render.ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, `  healthCheck:
    hcHostname: web.shop.svc.cluster.local
    hcMethod: GET
    hcMode: http
    hcPath: /healthz
    hcPort: 8080
    hcScheme: http
`)
	assert.Contains(t, got.stdout, `  servers:
  - http://web.shop.svc.cluster.local:8080
`, "served")
	assert.Empty(t, got.stderr)
}

// TestMainDirectManagedSite: a managed site of the configuration is printed after the
// resources, with its agent and the version it would run, and no credential.
func TestMainDirectManagedSite(t *testing.T) {
	dir := write(t, map[string]string{
		"app.yaml": scenario,
		"pic.yaml": "sink: pangolin\npangolin:\n  ownerId: prod\n  newtImage: docker.io/fosrl/newt:1.16.0@sha256:" + strings.Repeat("ab", 32) +
			"\n  newtReplicas: 2\ndefaultTunnel: {name: edge, managedSite: true}\n",
	})
	got := run("", "-f", filepath.Join(dir, "app.yaml"), "--config", filepath.Join(dir, "pic.yaml"))
	require.Equal(t, render.ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "site: edge", "the resources are published through the managed site")
	docs := strings.Split(got.stdout, "---\n")
	assert.Equal(t, strings.Join([]string{
		"deployment: newt-edge",
		"image: docker.io/fosrl/newt:1.16.0@sha256:" + strings.Repeat("ab", 32),
		"managedSite: edge",
		`name: edge (PIC prod)`,
		"newtVersion: 1.16.0",
		"online: true",
		"replicas: 2",
		"type: newt",
	}, "\n")+"\n", docs[len(docs)-1], "the managed site comes last")
	assert.NotContains(t, strings.ToLower(got.stdout), "secret")
	assert.NotContains(t, got.stdout, "NEWT_ID")
}
