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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
)

// managerWithCache is a manager of which only the cache is used.
type managerWithCache struct {
	ctrl.Manager
	cache cache.Cache
}

func (m managerWithCache) GetCache() cache.Cache { return m.cache }

func TestStartWithCache(t *testing.T) {
	informers := &informertest.FakeInformers{Scheme: scheme.Scheme}
	mgr := managerWithCache{cache: informers}

	require.NoError(t, StartWithCache(context.Background(), mgr, &corev1.Service{}, &networkingv1.IngressClass{}))
	assert.Len(t, informers.InformersByGVK, 2)
	assert.Contains(t, informers.InformersByGVK, corev1.SchemeGroupVersion.WithKind("Service"))
	assert.Contains(t, informers.InformersByGVK, networkingv1.SchemeGroupVersion.WithKind("IngressClass"))

	informers.Error = errors.New("no such kind")
	err := StartWithCache(context.Background(), mgr, &corev1.Namespace{})
	assert.ErrorContains(t, err, "watch *v1.Namespace: no such kind")
}
