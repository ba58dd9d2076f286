package manifests

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

const (
	// Where the chart is installed in these tests, as `helm install pic ... -n pic-system`.
	releaseName      = "pic"
	releaseNamespace = "pic-system"
	// PIC's IngressClass controller name.
	ingressController = "pangolin.io/ingress-controller"
)

// repoPath is a path relative to the repository root (go test runs in this package's
// directory, internal/manifests).
func repoPath(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

var chartDir = repoPath("charts", "pangolin-ingress-controller")

// kustomizeBuild renders a kustomization directory, as `kubectl apply -k` would.
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	data, err := m.AsYaml()
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	return objs
}

var loadChart = sync.OnceValues(func() (*chart.Chart, error) { return loader.Load(chartDir) })

// renderChart renders the chart with values given as a values file would be.
func renderChart(t *testing.T, values string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := tryRenderChart(values)
	require.NoError(t, err)
	return objs
}

func tryRenderChart(values string) ([]*unstructured.Unstructured, error) {
	files, err := renderChartFiles(values)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		base := filepath.Base(name)
		if base == "NOTES.txt" || strings.HasPrefix(base, "_") {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		o, err := testenv.DecodeYAML([]byte(files[name]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// renderChartFiles renders every template of the chart, NOTES.txt included, as
// `helm install pic charts/pangolin-ingress-controller -n pic-system -f values` would.
func renderChartFiles(values string) (map[string]string, error) {
	ch, err := loadChart()
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return nil, err
	}
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}
	rv, err := chartutil.ToRenderValues(ch, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// toYAML turns Go values into a values file.
func toYAML(t *testing.T, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func named(objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range ofKind(objs, kind) {
		if o.GetName() == name && o.GetNamespace() == namespace {
			return o
		}
	}
	return nil
}

// only returns the one object of a kind, decoded strictly into its type.
func only[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	list := ofKind(objs, kind)
	require.Len(t, list, 1, "objects of kind %s", kind)
	return decodeStrict[T](t, list[0])
}

// decodeStrict converts an object into its Kubernetes type, failing on any field the
// type does not have (a misspelt readOnlyRootFileSystem would otherwise be dropped).
func decodeStrict[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	data, err := json.Marshal(o.Object)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	out := new(T)
	require.NoError(t, dec.Decode(out), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	return out
}

// manager is the Deployment's PIC container.
func manager(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == "manager" {
			return c
		}
	}
	require.FailNow(t, "the Deployment has no container named manager")
	return nil
}

// picConfig is the configuration PIC loads when it starts in the rendered Deployment:
// its arguments and environment, with the ConfigMaps it mounts written to a temporary
// directory that stands for their mount paths.
func picConfig(t *testing.T, objs []*unstructured.Unstructured) (*config.Config, config.Origins) {
	t.Helper()
	cfg, origins, err := tryPICConfig(t, objs)
	require.NoError(t, err)
	return cfg, origins
}

func tryPICConfig(t *testing.T, objs []*unstructured.Unstructured) (*config.Config, config.Origins, error) {
	t.Helper()
	d := only[appsv1.Deployment](t, objs, "Deployment")
	c := manager(t, d)

	// Each file of a mounted ConfigMap or Secret is written to a directory of its own;
	// its path in the container, in the arguments, the variables and the mounted files,
	// is rewritten to it.
	paths := map[string]string{}    // path in the container → local path
	contents := map[string]string{} // local path → content
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		require.GreaterOrEqual(t, i, 0, "volume %s is mounted but not declared", m.Name)
		v := d.Spec.Template.Spec.Volumes[i]
		var files map[string]string
		switch {
		case v.ConfigMap != nil:
			cmObj := named(objs, "ConfigMap", d.Namespace, v.ConfigMap.Name)
			require.NotNil(t, cmObj, "ConfigMap %s/%s, mounted at %s, is not rendered", d.Namespace, v.ConfigMap.Name, m.MountPath)
			files = decodeStrict[corev1.ConfigMap](t, cmObj).Data
		case v.Secret != nil:
			files = secretFiles(t, v.Secret)
		default:
			continue
		}
		dir := filepath.Join(t.TempDir(), m.Name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for name, data := range files {
			local := filepath.Join(dir, name)
			paths[strings.TrimSuffix(m.MountPath, "/")+"/"+name] = local
			contents[local] = data
		}
	}
	local := func(path string) string {
		if l, ok := paths[path]; ok {
			return l
		}
		return path // not mounted: Load fails to read it, as PIC would
	}
	for file, data := range contents {
		for path, l := range paths {
			data = strings.ReplaceAll(data, path, l)
		}
		require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
	}

	var args []string
	if len(c.Command) > 1 {
		args = append(args, c.Command[1:]...)
	}
	args = append(args, c.Args...)
	for i, a := range args {
		if flag, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "--") {
			args[i] = flag + "=" + local(v)
		} else {
			args[i] = local(a)
		}
	}
	var environ []string
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			continue
		}
		environ = append(environ, e.Name+"="+local(e.Value))
	}
	return loadPIC(t, args, environ)
}

// testSecrets stand for the Secrets a user creates before installing PIC, by name and
// key: installations mount them and never ship them.
var testSecrets = map[string]map[string]string{
	"pangolin-api-key": {"apiKey": testAPIKey},
	"pangolin-ca":      {"ca.crt": testCABundle()},
}

// testCABundle is a PEM CA bundle: the certificate of a TLS test server.
func testCABundle() string {
	server := httptest.NewTLSServer(http.NotFoundHandler())
	defer server.Close()
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw}))
}

// testAPIKey is the Pangolin API key of testSecrets, in the form <apiKeyId>.<secret>.
const testAPIKey = "pictestkeyid.pictestsecret"

// secretFiles are the files of a Secret volume: the keys it selects, at their paths.
func secretFiles(t *testing.T, v *corev1.SecretVolumeSource) map[string]string {
	t.Helper()
	secret, ok := testSecrets[v.SecretName]
	require.True(t, ok, "the Secret %s is mounted: add it to testSecrets if a user is told to create it", v.SecretName)
	if len(v.Items) == 0 {
		return secret
	}
	files := map[string]string{}
	for _, item := range v.Items {
		data, ok := secret[item.Key]
		require.True(t, ok, "the Secret %s has no key %s", v.SecretName, item.Key)
		files[item.Path] = data
	}
	return files
}

// picPlugins are the names the manager's registry (builtin.Names) accepts: every
// adapter of config/rbac/adapters.yaml, which is generated from the registry
// (internal/ imports no adapter to ask it).
func picPlugins() config.Plugins {
	a := adapters()
	return config.Plugins{Sources: slices.Sorted(maps.Keys(a.Sources)), Sinks: slices.Sorted(maps.Keys(a.Sinks))}
}

// loadPIC runs PIC's configuration loader with args and environ (KEY=VALUE entries) as
// the only PIC_ and PANGOLIN_ variables of the process.
func loadPIC(t *testing.T, args, environ []string) (*config.Config, config.Origins, error) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "PIC_") || strings.HasPrefix(name, "PANGOLIN_") {
			t.Setenv(name, "") // restored after the test
			require.NoError(t, os.Unsetenv(name))
		}
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	return config.Load(args, picPlugins())
}
