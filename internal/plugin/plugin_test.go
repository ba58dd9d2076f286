package plugin

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
)

func TestStartWithCache(t *testing.T) {
	informers := &informertest.FakeInformers{Scheme: scheme.Scheme}

	require.NoError(t, StartWithCache(context.Background(), informers, &corev1.Service{}, &networkingv1.IngressClass{}))
	assert.Len(t, informers.InformersByGVK, 2)
	assert.Contains(t, informers.InformersByGVK, corev1.SchemeGroupVersion.WithKind("Service"))
	assert.Contains(t, informers.InformersByGVK, networkingv1.SchemeGroupVersion.WithKind("IngressClass"))

	informers.Error = errors.New("no such kind")
	err := StartWithCache(context.Background(), informers, &corev1.Namespace{})
	assert.ErrorContains(t, err, "watch *v1.Namespace: no such kind")
}
