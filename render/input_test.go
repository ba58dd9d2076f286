package render_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/render"
)

// TestMainExitStatus: each outcome has its status, and a message that says what to do.
func TestMainExitStatus(t *testing.T) {
	dir := write(t, map[string]string{
		"app.yaml":    scenario,
		"clean.yaml":  strings.Split(scenario, "---\n")[0] + "---\n" + strings.Split(scenario, "---\n")[1],
		"broken.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web\n",
		"pic.yaml":    "tunnels:\n  edge: {name: edge-tunnel}\n",
		"bad.yaml":    "noSuchKey: 1\n",
	})
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string // a part of it
	}{
		{"a clean input renders with status 0", []string{"-f", in("clean.yaml"), "--fail-on-warning"}, render.ExitOK, ""},
		{"Warnings alone do not fail", []string{"-f", in("app.yaml")}, render.ExitOK, "WildcardHost"},
		{"Warnings fail with --fail-on-warning", []string{"-f", in("app.yaml"), "--fail-on-warning"}, render.ExitWarning, "WildcardHost"},
		{"--help prints the usage and succeeds", []string{"--help"}, render.ExitOK, ""},
		{"an unknown flag is a usage error", []string{"-f", in("app.yaml"), "--fail-on-warnings"}, render.ExitUsage, "unknown flag: --fail-on-warnings"},
		{"no input is a usage error", nil, render.ExitUsage, "no input"},
		{"an argument without -f is a usage error", []string{in("app.yaml")}, render.ExitUsage, "name inputs with -f"},
		{"standard input twice is a usage error", []string{"-f", "-", "-f", "-"}, render.ExitUsage, "standard input can be read once"},
		{"an unknown CRD variant is a usage error", []string{"-f", in("app.yaml"), "--crd-variant", "fork2"}, render.ExitUsage, `--crd-variant "fork2": want fork or original`},
		{"a bad configuration file is a usage error", []string{"-f", in("app.yaml"), "--config", in("bad.yaml")}, render.ExitUsage, "unknown key"},
		{"a missing configuration file is a usage error", []string{"-f", in("app.yaml"), "--config", in("none.yaml")}, render.ExitUsage, "none.yaml"},
		{"a missing input is unreadable", []string{"-f", in("none.yaml")}, render.ExitInput, "none.yaml: no such file"},
		{"invalid YAML is unreadable", []string{"-f", in("broken.yaml")}, render.ExitInput, "broken.yaml:"},
		{"a good configuration file is read", []string{"-f", in("clean.yaml"), "--config", in("pic.yaml")}, render.ExitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := run("", c.args...)
			assert.Equal(t, c.code, got.code, got.stderr)
			if c.stderr == "" {
				assert.NotContains(t, got.stderr, "render:")
			} else {
				assert.Contains(t, got.stderr, c.stderr)
			}
		})
	}
}

// TestMainHelp: the usage says how tunnels are assumed, and how claims are ordered.
func TestMainHelp(t *testing.T) {
	got := run("", "--help")
	require.Equal(t, 0, got.code)
	for _, s := range []string{"-f, --filename", "--fail-on-warning", "--crd-variant", "--config", "--sink", "--domain", "every site a tunnel names exists",
		"no PangolinTunnel at all, every tunnel is assumed", "metadata.creationTimestamp", "Exit status"} {
		assert.Contains(t, got.stdout, s)
	}
}

// TestMainUnreadableInput: a message names the file and the line, and the document.
func TestMainUnreadableInput(t *testing.T) {
	service := "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
	for _, c := range []struct {
		name, input, want string
	}{
		{"a YAML syntax error, at its line", service + "---\n# a comment\napiVersion: v1\nkind: Service\nmetadata:\n  name: [web\n",
			"in.yaml:10 (document 2): invalid YAML: "},
		{"a document that is not an object", service + "---\n- a\n- b\n", "in.yaml:6 (document 2): not a Kubernetes object"},
		{"a document without a kind", service + "---\napiVersion: v1\nmetadata: {name: x}\n", "in.yaml:6 (document 2): not a Kubernetes object: apiVersion and kind are required"},
		{"a field of the wrong type", "# first\n---\n" + service + "---\napiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: eighty}]}\n",
			"in.yaml:8 (document 2): Service v1: "},
		{"an item of a List", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n- {apiVersion: v1, kind: Service, metadata: {name: b}, spec: {ports: 3}}\n",
			"in.yaml:1 (document 1): item 2 of the List: Service v1: "},
		{"a version PIC does not read", "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: x}\n",
			"in.yaml:1 (document 1): Ingress networking.k8s.io/v1beta1: PIC reads Ingress at networking.k8s.io/v1"},
		{"invalid JSON, at its line", "{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"a\"}}\n{\"apiVersion\": \"v1\",\n \"kind\": }\n",
			"in.yaml:3 (document 2): invalid JSON: "},
		{"one name, two objects", service + "---\n" + strings.Replace(service, "80", "81", 1),
			"in.yaml:6 (document 2): Service default/web is defined twice, differently: first at "},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(write(t, map[string]string{"in.yaml": c.input}), "in.yaml")
			got := run("", "-f", file)
			assert.Equal(t, render.ExitInput, got.code)
			assert.Contains(t, got.stderr, file[:len(file)-len("in.yaml")]+c.want)
			assert.Empty(t, got.stdout)

			stdin := run(c.input, "-f", "-")
			assert.Equal(t, render.ExitInput, stdin.code)
			assert.Contains(t, stdin.stderr, "stdin"+strings.TrimPrefix(c.want, "in.yaml"), "standard input is named stdin")
		})
	}
}

// conflict holds two Ingresses claiming one host, and three more objects.
var conflict = []string{
	"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: prod}\nspec: {ports: [{port: 80}]}\n",
	"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: b, namespace: prod}\nspec:\n  ingressClassName: pangolin\n  rules: [{host: app.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]\n",
	"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a, namespace: prod}\nspec:\n  ingressClassName: pangolin\n  rules: [{host: app.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]\n",
	"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: c, namespace: prod}\nspec:\n  ingressClassName: pangolin\n  rules: [{host: '*.example.com'}, {host: c.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: missing, port: {number: 80}}}}]}}]\n",
	"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: d, namespace: dev}\nspec:\n  ingressClassName: pangolin\n  rules: [{host: d.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]\n",
}

// TestMainInputOrder: the order of documents and of files changes nothing, byte for
// byte; without creation times, the claim of prod/a is older than that of prod/b.
func TestMainInputOrder(t *testing.T) {
	want := run(strings.Join(conflict, "---\n"), "-f", "-")
	require.Equal(t, 0, want.code, want.stderr)
	assert.Contains(t, want.stderr, "Warning Ingress prod/b HostConflict: host app.example.com is already published by Ingress prod/a")
	assert.Contains(t, want.stderr, "Warning Ingress prod/c ServiceNotFound")
	assert.Contains(t, want.stderr, "Warning Ingress prod/c WildcardHost")
	assert.Contains(t, want.stderr, "Warning Ingress dev/d ServiceNotFound")
	assert.Equal(t, 4, strings.Count(want.stderr, "\n"), want.stderr)

	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		docs := append([]string(nil), conflict...)
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		assert.Equal(t, want, run(strings.Join(docs, "---\n"), "-f", "-"))

		files := map[string]string{}
		var args []string
		for i, d := range docs {
			name := string(rune('a'+i)) + ".yaml"
			files[name] = d
			args = append(args, "-f", "")
		}
		dir := write(t, files)
		for i := range docs {
			args[2*i+1] = filepath.Join(dir, string(rune('a'+(len(docs)-1-i)))+".yaml")
		}
		assert.Equal(t, want, run("", args...), "files in reverse order")
		assert.Equal(t, want, run("", "-f", dir), "a directory")
	}
}

// TestMainCreationOrder: creation times in the input decide who claims a host first; an
// object without one is newer than every object with one.
func TestMainCreationOrder(t *testing.T) {
	stamp := func(doc, ts string) string {
		return strings.Replace(doc, "namespace: prod}", "namespace: prod, creationTimestamp: '"+ts+"'}", 1)
	}
	older := func(out outcome) string {
		for _, name := range []string{"a", "b"} {
			if strings.Contains(out.stdout, "pic.ingress.k8s.io/name: "+name+"\n") {
				return name
			}
		}
		return ""
	}
	docs := conflict[:3]
	assert.Equal(t, "a", older(run(strings.Join(docs, "---\n"), "-f", "-")), "no times: by name")
	assert.Equal(t, "b", older(run(strings.Join([]string{docs[0], stamp(docs[1], "2024-05-01T00:00:00Z"), docs[2]}, "---\n"), "-f", "-")),
		"b exists, a is new")
	assert.Equal(t, "b", older(run(strings.Join([]string{docs[0], stamp(docs[1], "2024-05-01T00:00:00Z"), stamp(docs[2], "2024-06-01T00:00:00Z")}, "---\n"), "-f", "-")),
		"b is older")
	assert.Equal(t, "a", older(run(strings.Join([]string{docs[0], stamp(docs[1], "2024-07-01T00:00:00Z"), stamp(docs[2], "2024-06-01T00:00:00Z")}, "---\n"), "-f", "-")),
		"a is older")
}

// TestMainTunnels: without PangolinTunnels, every tunnel exists and is Ready; with one,
// a tunnel missing from the input is TunnelNotFound, and one not Ready is written.
func TestMainTunnels(t *testing.T) {
	app := strings.Join(conflict[:3], "---\n")
	tunnel := func(name, status string) string {
		return "---\napiVersion: tunnel.pangolin.io/v1alpha1\nkind: PangolinTunnel\nmetadata: {name: " + name + ", namespace: prod}\nstatus: {status: " + status + "}\n"
	}

	assumed := run(app, "-f", "-", "--fail-on-warning")
	assert.Equal(t, render.ExitWarning, assumed.code)
	assert.Contains(t, assumed.stdout, "kind: PangolinResource")
	assert.NotContains(t, assumed.stderr, "Tunnel")

	assert.Equal(t, assumed, run(app+tunnel("default", "Ready"), "-f", "-", "--fail-on-warning"), "the tunnel given, Ready")

	notReady := run(app+tunnel("default", "Error"), "-f", "-")
	assert.Equal(t, assumed.stdout, notReady.stdout, "routes through a tunnel not Ready yet are written")
	assert.NotContains(t, notReady.stderr, "Tunnel", "TunnelNotReady is a Normal event")

	missing := run(app+tunnel("other", "Ready"), "-f", "-")
	assert.Equal(t, 0, missing.code)
	assert.Empty(t, missing.stdout)
	assert.Contains(t, missing.stderr, "Warning Ingress prod/a TunnelNotFound: PangolinTunnel prod/default does not exist")
	assert.Contains(t, missing.stderr, "Warning Ingress prod/b TunnelNotFound")
}

// TestMainConfig: --config chooses the tunnels and the defaults, and the sources.
func TestMainConfig(t *testing.T) {
	route := "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: pangolin}\nspec: {controllerName: pangolin.io/gateway-controller}\n" +
		"---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: Gateway\nmetadata: {name: gw, namespace: prod}\nspec:\n  gatewayClassName: pangolin\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n" +
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: route, namespace: prod}\nspec:\n  parentRefs: [{name: gw}]\n  hostnames: [route.example.com]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n"
	dir := write(t, map[string]string{
		"app.yaml": strings.Join(conflict[:2], "---\n") + route,
		"pic.yaml": "defaultTunnel: pangolin-system/main\ndefaultSSO: false\n",
		"gw.yaml":  "sources: [ingress, httproute]\ndefaultTunnel: gw\n",
	})
	in := func(name string) string { return filepath.Join(dir, name) }

	defaults := run("", "-f", in("app.yaml"))
	require.Equal(t, 0, defaults.code, defaults.stderr)
	assert.Contains(t, defaults.stdout, "pic.ingress.k8s.io/name: route", "without --config, every source runs")
	assert.Contains(t, defaults.stdout, "sso: true")

	configured := run("", "-f", in("app.yaml"), "--config", in("pic.yaml"))
	require.Equal(t, 0, configured.code, configured.stderr)
	assert.Contains(t, configured.stdout, "tunnelRef:\n    name: main\n    namespace: pangolin-system\n")
	assert.Contains(t, configured.stdout, "sso: false")
	assert.NotContains(t, configured.stdout, "pic.ingress.k8s.io/name: route", "the configuration's sources: ingress alone by default")

	gateway := run("", "-f", in("app.yaml"), "--config", in("gw.yaml"))
	require.Equal(t, 0, gateway.code, gateway.stderr)
	assert.Contains(t, gateway.stdout, "pic.ingress.k8s.io/name: route")
}

// TestMainVariants: --crd-variant original writes one target and no access control.
func TestMainVariants(t *testing.T) {
	fork := run(scenario, "-f", "-")
	original := run(scenario, "-f", "-", "--crd-variant", "original")
	require.Equal(t, 0, original.code, original.stderr)
	assert.Contains(t, fork.stdout, "targets:")
	assert.Contains(t, fork.stdout, "sso: true")
	assert.Contains(t, original.stdout, "target:\n    ip: web.shop.svc.cluster.local\n    method: http\n    port: 8080\n")
	assert.NotContains(t, original.stdout, "sso:")
	assert.Equal(t, fork, run(scenario, "-f", "-", "--crd-variant", "fork"), "fork is the default")
}

// TestMainInputForms: directories are read recursively, manifests only; a List, a
// JSON stream and objects without a namespace are read; other kinds are ignored.
func TestMainInputForms(t *testing.T) {
	want := run(scenario, "-f", "-")
	docs := strings.Split(scenario, "---\n")
	unnamespaced := strings.ReplaceAll(scenario, ", namespace: shop}", "}")
	for _, c := range []struct {
		name  string
		files map[string]string
		same  bool // as want; otherwise in namespace default
	}{
		{"a directory, recursively, manifests only", map[string]string{
			"a.yaml": docs[0], "sub/b.yml": docs[1], "sub/deeper/c.json": yamlToJSON(t, docs[2]),
			"notes.txt": "not: a manifest", "d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: many}\n",
		}, true},
		{"a List", map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitems:\n" + indentItems(docs)}, true},
		{"a JSON stream", map[string]string{"all.json": yamlToJSON(t, docs[0]) + "\n" + yamlToJSON(t, docs[1]) + yamlToJSON(t, docs[2])}, true},
		{"other kinds among them", map[string]string{"all.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n---\n" + scenario +
			"---\napiVersion: tunnel.pangolin.io/v1alpha1\nkind: PangolinResource\nmetadata: {name: pic-shop-web-e50de40b59, namespace: shop}\nspec: {name: hand-made}\n"}, true},
		{"no namespace", map[string]string{"all.yaml": unnamespaced}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := write(t, c.files)
			got := run("", "-f", dir)
			require.Equal(t, 0, got.code, got.stderr)
			if c.same {
				assert.Equal(t, want, got)
				return
			}
			assert.Contains(t, got.stdout, "namespace: default\n")
			assert.Contains(t, got.stdout, "port: 8080\n")
			assert.Contains(t, got.stderr, "Warning Ingress default/wild WildcardHost")
		})
	}
}

func yamlToJSON(t *testing.T, doc string) string {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	return string(data)
}

func indentItems(docs []string) string {
	var b strings.Builder
	for _, d := range docs {
		lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
		for i, l := range lines {
			prefix := "  "
			if i == 0 {
				prefix = "- "
			}
			b.WriteString(prefix + l + "\n")
		}
	}
	return b.String()
}
