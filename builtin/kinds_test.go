package builtin

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
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

// TestTrimmedKindsAreNeverWrittenWhole: the manager's cache trims what PIC only reads,
// or patches; a kind PIC writes whole from the cache is never trimmed.
func TestTrimmedKindsAreNeverWrittenWhole(t *testing.T) {
	for _, trimmed := range Registry.TrimmedKinds() {
		for _, written := range []client.Object{&networkingv1.Ingress{}, &gatewayv1.HTTPRoute{}, &gatewayv1.Gateway{}, &tunnelv1alpha1.PangolinResource{}} {
			assert.NotEqual(t, reflect.TypeOf(written), reflect.TypeOf(trimmed), "PIC writes %T whole from the cache", written)
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
