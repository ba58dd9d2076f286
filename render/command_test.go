package render_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/render"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// outcome is what one run of Main did.
type outcome struct {
	code           int
	stdout, stderr string
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", o.code, o.stdout, o.stderr)
}

// run runs `manager render args...` with stdin.
func run(stdin string, args ...string) outcome {
	var stdout, stderr bytes.Buffer
	code := render.Main(args, strings.NewReader(stdin), &stdout, &stderr)
	return outcome{code, stdout.String(), stderr.String()}
}

// write writes files under a temporary folder and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return dir
}

// TestMainGolden renders the input of every golden translation case of the sources
// (sources/*/testdata/golden) and compares exit status, standard output and standard
// error with testdata/golden/<source>/<case>.txt. The cases' expectations of the
// controller itself are the sources' own golden files; these show what render makes of
// the same manifests: PangolinResources a case held beforehand are not read, tunnels
// are assumed when a case has none, and creation order comes from names.
//
// testdata/golden-direct holds the same cases rendered with the pangolin sink: the
// Pangolin resources and targets direct mode would create.
//
// go test ./render -run TestMainGolden -update rewrites the expectations.
func TestMainGolden(t *testing.T) {
	for _, mode := range []struct{ dir, sink string }{{"golden", "pangolinresource"}, {"golden-direct", "pangolin"}} {
		for _, source := range []string{"ingress", "gatewayapi", "loadbalancer"} {
			inputs, err := filepath.Glob(filepath.Join("..", "sources", source, "testdata", "golden", "*", "input.yaml"))
			require.NoError(t, err)
			require.NotEmpty(t, inputs)
			for _, input := range inputs {
				name := filepath.Base(filepath.Dir(input))
				t.Run(mode.sink+"/"+source+"/"+name, func(t *testing.T) {
					golden(t, run("", "-f", input, "--sink", mode.sink).String(), filepath.Join("testdata", mode.dir, source, name+".txt"))
				})
			}
		}
	}
}

// golden compares got with the file want, or rewrites it with -update.
func golden(t *testing.T, got, wantFile string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(wantFile), 0o755))
		require.NoError(t, os.WriteFile(wantFile, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(wantFile)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), got)
}

// scenario is a Service and two Ingresses of PIC's class: one valid, whose backend port
// is named, one with a wildcard host. No PangolinTunnel: tunnels are assumed.
const scenario = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports:
    - {name: metrics, port: 9090}
    - {name: http, port: 8080, targetPort: 3000}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  ingressClassName: pangolin
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: wild, namespace: shop}
spec:
  ingressClassName: pangolin
  rules:
    - host: "*.example.com"
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 8080}}}}
`

// TestMainScenario: the named port is resolved through the Service, the wildcard host
// is a Warning, --fail-on-warning turns it into exit status 1, and standard input gives
// what the file gives.
func TestMainScenario(t *testing.T) {
	file := filepath.Join(write(t, map[string]string{"app.yaml": scenario}), "app.yaml")

	got := run("", "-f", file)
	require.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, `apiVersion: tunnel.pangolin.io/v1alpha1
kind: PangolinResource
metadata:
  annotations:
    pic.ingress.k8s.io/host: shop.example.com
  labels:
    app.kubernetes.io/managed-by: pangolin-ingress-controller
    pic.ingress.k8s.io/name: web
    pic.ingress.k8s.io/namespace: shop
    pic.ingress.k8s.io/uid: b7cfc40c-9c05-546d-8fa6-a598c26855f4
  name: pic-shop-web-e50de40b59
  namespace: shop
  ownerReferences:
  - apiVersion: networking.k8s.io/v1
    blockOwnerDeletion: true
    controller: true
    kind: Ingress
    name: web
    uid: b7cfc40c-9c05-546d-8fa6-a598c26855f4
spec:
  enabled: true
  httpConfig:
    blockAccess: false
    domainName: example.com
    sso: true
    subdomain: shop
  name: shop.example.com
  protocol: http
  targets:
  - ip: web.shop.svc.cluster.local
    method: http
    path: /
    pathMatchType: prefix
    port: 8080
    priority: 101
  tunnelRef:
    name: default
`, got.stdout)
	assert.Equal(t, `Warning Ingress shop/wild WildcardHost: host "*.example.com" is a wildcard: Pangolin resources need one concrete host; list each host explicitly
`, got.stderr)

	failing := run("", "-f", file, "--fail-on-warning")
	assert.Equal(t, render.ExitWarning, failing.code)
	assert.Equal(t, got.stdout, failing.stdout, "--fail-on-warning still prints what it rendered")
	assert.Equal(t, got.stderr, failing.stderr)

	assert.Equal(t, got, run(scenario, "-f", "-"), "standard input gives what the file gives")
	assert.Equal(t, failing, run(scenario, "-f", "-", "--fail-on-warning"))
}

// TestMainNeverPrintsASecret: a policy's password reaches neither render's output nor
// its warnings, whichever sink renders it: direct mode shows it by reference, the
// PangolinResource sink refuses it.
func TestMainNeverPrintsASecret(t *testing.T) {
	const password = "correct-horse-battery"
	manifest := `
apiVersion: v1
kind: Secret
metadata: {name: web-auth, namespace: shop}
stringData: {password: ` + password + `}
data: {password: Y29ycmVjdC1ob3JzZS1iYXR0ZXJ5}
---
apiVersion: pic.pangolin.io/v1alpha1
kind: AccessPolicy
metadata: {name: web, namespace: shop}
spec:
  targetRefs: [{group: networking.k8s.io, kind: Ingress, name: web}]
  password: {secretRef: {name: web-auth, key: password}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  ingressClassName: pangolin
  rules:
  - host: shop.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`
	for _, sink := range []string{"pangolinresource", "pangolin"} {
		t.Run(sink, func(t *testing.T) {
			got := run(manifest, "-f", "-", "--sink", sink)
			t.Log(got)
			assert.NotContains(t, got.stdout, password)
			assert.NotContains(t, got.stderr, password)
			assert.NotContains(t, got.stderr, "Y29ycmVjdC1ob3JzZS1iYXR0ZXJ5")
			if sink == "pangolin" {
				assert.Contains(t, got.stdout, "password: from Secret shop/web-auth key password", "direct mode shows the password by reference")
			} else {
				assert.Contains(t, got.stderr, "AccessPolicyUnsupported", "the operator cannot carry a password: refused")
			}
		})
	}
}
