package manager

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

func meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:          "x",
		Annotations:   map[string]string{lastApplied: `{"big":"copy"}`, "keep": "me"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}
}

// TestTrimmer: the kinds the adapters declare they only read, and Namespaces, which the
// core only reads, lose kubectl's last-applied copy; every kind loses its managedFields.
func TestTrimmer(t *testing.T) {
	trim := trimmer([]client.Object{&corev1.Service{}, &tunnelv1alpha1.PangolinTunnel{}, &gatewayv1.ReferenceGrant{}})
	for _, obj := range []metav1.Object{
		&corev1.Service{ObjectMeta: meta()},
		&corev1.Namespace{ObjectMeta: meta()},
		&tunnelv1alpha1.PangolinTunnel{ObjectMeta: meta()},
		&gatewayv1.ReferenceGrant{ObjectMeta: meta()},
	} {
		out, err := trim(obj)
		require.NoError(t, err)
		m := out.(metav1.Object)
		assert.Empty(t, m.GetManagedFields(), "%T", obj)
		assert.Equal(t, map[string]string{"keep": "me"}, m.GetAnnotations(), "%T: read only, the last-applied copy goes", obj)
	}
	// Objects PIC writes from the cache keep their metadata whole.
	for _, obj := range []metav1.Object{
		&networkingv1.Ingress{ObjectMeta: meta()},
		&networkingv1.IngressClass{ObjectMeta: meta()}, // read only, but declared by no adapter here
		&tunnelv1alpha1.PangolinResource{ObjectMeta: meta()},
	} {
		out, err := trim(obj)
		require.NoError(t, err)
		m := out.(metav1.Object)
		assert.Empty(t, m.GetManagedFields(), "%T", obj)
		assert.Contains(t, m.GetAnnotations(), lastApplied, "%T: not declared trimmed, kept whole", obj)
	}
}

// TestSecretsAreWatchedWhereTheyMayBeRead: with secretNamespaces, the cache watches
// Secrets in those namespaces only (PIC's RBAC grants no more); without, as every kind.
func TestSecretsAreWatchedWhereTheyMayBeRead(t *testing.T) {
	resync := time.Hour
	cfg := config.Default()
	assert.Empty(t, cacheOptions(cfg, &resync, plugin.SinkFactory{}).ByObject, "cluster-wide by default")

	cfg.SecretNamespaces = []string{"team-a", "team-b"}
	opts := cacheOptions(cfg, &resync, plugin.SinkFactory{})
	var secrets *cache.ByObject
	for obj, byObject := range opts.ByObject {
		if _, ok := obj.(*corev1.Secret); ok {
			secrets = &byObject
		}
	}
	require.NotNil(t, secrets, "a setting for Secrets")
	assert.Equal(t, []string{"team-a", "team-b"}, slices.Sorted(maps.Keys(secrets.Namespaces)))
}
