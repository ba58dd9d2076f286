package builtin

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// TestTheRegistryDeclaresEveryKindPICKnows: the scheme the manager and render build
// from the adapters' declarations knows exactly the kinds of internal/apis, which the
// tests decode with.
func TestTheRegistryDeclaresEveryKindPICKnows(t *testing.T) {
	scheme, err := Registry.Scheme()
	require.NoError(t, err)
	assert.Equal(t, apis.Scheme().AllKnownTypes(), scheme.AllKnownTypes())
}

// TestTheRegistryDeclaresStatusAndTrimmedKinds: the kinds whose status is a
// subresource in render, and those the manager's cache trims, are what the adapters
// declare, and what PIC writes and reads.
func TestTheRegistryDeclaresStatusAndTrimmedKinds(t *testing.T) {
	assert.ElementsMatch(t, typesOf(
		&networkingv1.Ingress{}, &corev1.Service{}, &tunnelv1alpha1.PangolinResource{}, &tunnelv1alpha1.PangolinTunnel{},
		&gatewayv1.HTTPRoute{}, &gatewayv1.TCPRoute{}, &gatewayv1.UDPRoute{}, &gatewayv1.Gateway{}, &gatewayv1.GatewayClass{},
		&accessv1alpha1.AccessPolicy{},
	), typesOf(Registry.StatusKinds()...), "status kinds")
	assert.ElementsMatch(t, typesOf(
		&corev1.Service{}, &networkingv1.IngressClass{}, &tunnelv1alpha1.PangolinTunnel{}, &gatewayv1.ReferenceGrant{},
	), typesOf(Registry.TrimmedKinds()...), "kinds PIC only reads, or patches")
	for _, trimmed := range Registry.TrimmedKinds() {
		for _, written := range []client.Object{&networkingv1.Ingress{}, &gatewayv1.HTTPRoute{}, &gatewayv1.Gateway{}, &tunnelv1alpha1.PangolinResource{}} {
			assert.NotEqual(t, reflect.TypeOf(written), reflect.TypeOf(trimmed), "PIC writes %T whole from the cache", written)
		}
	}
}

// TestTheRegistryDeclaresTheKindsRenderReads: `manager render` loads from its input
// the kinds the adapters read, with their scope.
func TestTheRegistryDeclaresTheKindsRenderReads(t *testing.T) {
	clusterScoped := map[reflect.Type]bool{}
	var read []client.Object
	for _, k := range Registry.ReadKinds() {
		read = append(read, k.Object)
		clusterScoped[reflect.TypeOf(k.Object)] = k.ClusterScoped
	}
	assert.ElementsMatch(t, typesOf(
		&corev1.Service{}, &corev1.Namespace{}, &networkingv1.Ingress{}, &networkingv1.IngressClass{},
		&gatewayv1.HTTPRoute{}, &gatewayv1.TCPRoute{}, &gatewayv1.UDPRoute{}, &gatewayv1.Gateway{}, &gatewayv1.GatewayClass{}, &gatewayv1.ReferenceGrant{},
		&tunnelv1alpha1.PangolinTunnel{}, &accessv1alpha1.AccessPolicy{}, &corev1.Secret{},
	), typesOf(read...))
	assert.Equal(t, map[reflect.Type]bool{
		reflect.TypeFor[*corev1.Namespace](): true, reflect.TypeFor[*networkingv1.IngressClass](): true, reflect.TypeFor[*gatewayv1.GatewayClass](): true,
	}, onlyTrue(clusterScoped), "the cluster-scoped kinds")
}

func onlyTrue(m map[reflect.Type]bool) map[reflect.Type]bool {
	out := map[reflect.Type]bool{}
	for k, v := range m {
		if v {
			out[k] = true
		}
	}
	return out
}

func typesOf(kinds ...client.Object) []reflect.Type {
	out := make([]reflect.Type, len(kinds))
	for i, k := range kinds {
		out[i] = reflect.TypeOf(k)
	}
	return out
}

// TestConfigRBACListsWhatTheAdaptersDeclare: config/rbac/adapters.yaml, from which the
// installation's tests learn which ClusterRoles each source and sink needs, is what
// the registered adapters declare (plugin.Kinds.RBAC).
func TestConfigRBACListsWhatTheAdaptersDeclare(t *testing.T) {
	type roles = map[string][]string
	declared := struct {
		Sources roles `json:"sources"`
		Sinks   roles `json:"sinks"`
	}{Sources: roles{}, Sinks: roles{}}
	// An adapter that needs no ClusterRole of its own need not be listed.
	for name, f := range Registry.Sources {
		if len(f.Kinds.RBAC) > 0 {
			declared.Sources[name] = f.Kinds.RBAC
		}
	}
	for name, f := range Registry.Sinks {
		if len(f.Kinds.RBAC) > 0 {
			declared.Sinks[name] = f.Kinds.RBAC
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "adapters.yaml"))
	require.NoError(t, err)
	var listed struct {
		Sources roles `json:"sources"`
		Sinks   roles `json:"sinks"`
	}
	require.NoError(t, yaml.UnmarshalStrict(data, &listed))
	for _, list := range []roles{listed.Sources, listed.Sinks} {
		maps.DeleteFunc(list, func(_ string, dirs []string) bool { return len(dirs) == 0 })
	}
	want, err := yaml.Marshal(declared)
	require.NoError(t, err)
	assert.Equal(t, declared.Sources, listed.Sources, "config/rbac/adapters.yaml's sources; what the adapters declare:\n%s", want)
	assert.Equal(t, declared.Sinks, listed.Sinks, "config/rbac/adapters.yaml's sinks; what the adapters declare:\n%s", want)
	for _, dirs := range []roles{declared.Sources, declared.Sinks} {
		for _, list := range dirs {
			for _, dir := range list {
				assert.FileExists(t, filepath.Join("..", "config", "rbac", dir, "role.yaml"), "the ClusterRole an adapter declares")
			}
		}
	}
}

// TestEverySourceDeclaresItsOwnKindRead: a source's own kind is among the kinds it
// declares it reads, or `manager render` would skip its objects.
func TestEverySourceDeclaresItsOwnKindRead(t *testing.T) {
	deps := plugin.SourceDeps{Config: config.Default(), Shared: plugin.NewShared()}
	for name, f := range Registry.Sources {
		src, err := f.New(context.Background(), deps)
		require.NoError(t, err, name)
		assert.True(t, slices.ContainsFunc(f.Kinds.Read, func(k plugin.ReadKind) bool {
			return reflect.TypeOf(k.Object) == reflect.TypeOf(src.Object())
		}), "the %s source declares it reads %T", name, src.Object())
	}
}
