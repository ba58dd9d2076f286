package builtin

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

var update = flag.Bool("update", false, "write testdata/footprint.yaml and config/rbac/adapters.yaml from the registry")

// footprint is what this build's adapters declare that users and the installation
// depend on: the names users write in the configuration, the kind each source
// reconciles, and the kinds PIC reads, writes the status of, and trims in its cache.
// It is generated from the registry (go test ./builtin -update), so that adding an
// adapter is its package and one line in builtin.go: the change of footprint shows in
// review as a diff of testdata/footprint.yaml.
type footprint struct {
	Sources []sourceFootprint `json:"sources"`
	Sinks   []string          `json:"sinks"`
	// Kinds are named Kind.group ("Ingress.networking.k8s.io"; "Service" for the core
	// group), sorted.
	StatusKinds        []string `json:"statusKinds"`
	TrimmedKinds       []string `json:"trimmedKinds"`
	ReadKinds          []string `json:"readKinds"`
	ClusterScopedReads []string `json:"clusterScopedReads"`
}

type sourceFootprint struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

const footprintHeader = "# What this build's adapters declare, generated from the registry by\n" +
	"# `go test ./builtin -update`: the configuration names users write, the kind each source\n" +
	"# reconciles, and the kinds PIC reads, writes the status of, and trims in its cache.\n"

// adaptersHeader heads config/rbac/adapters.yaml, which the installation's tests read.
const adaptersHeader = "# The ClusterRoles of config/rbac each registered source and sink needs besides\n" +
	"# role.yaml, by directory (plugin.Kinds.RBAC), generated from the registry by\n" +
	"# `go test ./builtin -update`; every adapter is listed, [] when it needs none of its\n" +
	"# own. A sink's directory holds, under a source's directory name, what the sink needs on\n" +
	"# that source's kinds (pangolinresource/gateway-api). The tests in internal/manifests,\n" +
	"# which may not import the adapters, read it to know the adapters' names and which\n" +
	"# ClusterRoles an installation must render. It is no kustomize resource.\n"

func kindName(t *testing.T, obj client.Object) string {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, apis.Scheme())
	require.NoError(t, err, "%T is in PIC's scheme", obj)
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

func kindNames(t *testing.T, objs []client.Object) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, kindName(t, o))
	}
	slices.Sort(out)
	return out
}

func buildFootprint(t *testing.T) footprint {
	t.Helper()
	fp := footprint{Sinks: SinkNames()}
	deps := plugin.SourceDeps{Config: config.Default(), Shared: plugin.NewShared()}
	for _, name := range SourceNames() {
		src, err := Registry.Sources[name].New(context.Background(), deps)
		require.NoError(t, err, name)
		fp.Sources = append(fp.Sources, sourceFootprint{Name: name, Kind: kindName(t, src.Object())})
	}
	fp.StatusKinds = kindNames(t, Registry.StatusKinds())
	fp.TrimmedKinds = kindNames(t, Registry.TrimmedKinds())
	var read, clusterScoped []client.Object
	for _, k := range Registry.ReadKinds() {
		read = append(read, k.Object)
		if k.ClusterScoped {
			clusterScoped = append(clusterScoped, k.Object)
		}
	}
	fp.ReadKinds = kindNames(t, read)
	fp.ClusterScopedReads = kindNames(t, clusterScoped)
	return fp
}

// adapterRoles is config/rbac/adapters.yaml's content.
type adapterRoles struct {
	Sources map[string][]string `json:"sources"`
	Sinks   map[string][]string `json:"sinks"`
}

func declaredRoles() adapterRoles {
	roles := adapterRoles{Sources: map[string][]string{}, Sinks: map[string][]string{}}
	for name, f := range Registry.Sources {
		roles.Sources[name] = append([]string{}, f.Kinds.RBAC...)
	}
	for name, f := range Registry.Sinks {
		roles.Sinks[name] = append([]string{}, f.Kinds.RBAC...)
	}
	return roles
}

// checkGenerated compares a generated file with what is on disk, or writes it.
func checkGenerated(t *testing.T, path, header string, v any) {
	t.Helper()
	body, err := yaml.Marshal(v)
	require.NoError(t, err)
	want := header + string(body)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "%s is not what the registry declares: review the change, then run go test ./builtin -update", path)
}

// TestFootprint: testdata/footprint.yaml is what the registry declares.
func TestFootprint(t *testing.T) {
	checkGenerated(t, filepath.Join("testdata", "footprint.yaml"), footprintHeader, buildFootprint(t))
}

// TestConfigRBACListsWhatTheAdaptersDeclare: config/rbac/adapters.yaml, from which the
// installation's tests learn the adapters' names and the ClusterRoles each needs, is
// what the registered adapters declare, and each ClusterRole it names exists.
func TestConfigRBACListsWhatTheAdaptersDeclare(t *testing.T) {
	roles := declaredRoles()
	checkGenerated(t, filepath.Join("..", "config", "rbac", "adapters.yaml"), adaptersHeader, roles)
	for _, byAdapter := range []map[string][]string{roles.Sources, roles.Sinks} {
		for _, dirs := range byAdapter {
			for _, dir := range dirs {
				assert.FileExists(t, filepath.Join("..", "config", "rbac", dir, "role.yaml"), "the ClusterRole an adapter declares")
			}
		}
	}
}
