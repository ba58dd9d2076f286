package plugin

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestKindsAnd: a source's kinds with a shared part's are both schemes, and each kind
// once.
func TestKindsAnd(t *testing.T) {
	var added []string
	adds := func(name string) func(*runtime.Scheme) error {
		return func(*runtime.Scheme) error { added = append(added, name); return nil }
	}
	own := Kinds{Scheme: adds("own"), Status: []client.Object{&networkingv1.Ingress{}}, Trimmed: []client.Object{&corev1.Service{}}}
	shared := Kinds{Scheme: adds("shared"), Trimmed: []client.Object{&corev1.Service{}, &networkingv1.IngressClass{}}}
	both := own.And(Kinds{}, shared)
	require.NoError(t, both.Scheme(runtime.NewScheme()))
	assert.Equal(t, []string{"own", "shared"}, added)
	assert.Equal(t, []client.Object{&networkingv1.Ingress{}}, both.Status)
	assert.Equal(t, []client.Object{&corev1.Service{}, &networkingv1.IngressClass{}}, both.Trimmed)
	assert.Len(t, own.Trimmed, 1, "own is left as it was")
}

// TestRegistrySchemeFailsWithAnAdapter: a scheme an adapter cannot add to stops the
// start, rather than leaving its kinds unknown.
func TestRegistrySchemeFailsWithAnAdapter(t *testing.T) {
	broken := Registry{Sources: map[string]SourceFactory{"broken": {Kinds: Kinds{Scheme: func(*runtime.Scheme) error { return errors.New("no") }}}}}
	_, err := broken.Scheme()
	require.Error(t, err)

	s, err := Registry{}.Scheme()
	require.NoError(t, err)
	assert.True(t, s.IsGroupRegistered("networking.k8s.io"), "client-go's kinds are always there")
}
