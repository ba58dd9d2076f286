package example

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)}, Data: data}
}

func newSource(t *testing.T, objs ...*corev1.ConfigMap) *Source {
	t.Helper()
	b := fake.NewClientBuilder()
	for _, idx := range Factory.Indexes(config.Default()) {
		b = b.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	for _, o := range objs {
		b = b.WithObjects(o)
	}
	src, err := Factory.New(context.Background(), plugin.SourceDeps{Client: b.Build(), Config: config.Default()})
	require.NoError(t, err)
	return src.(*Source)
}

func TestRoutes(t *testing.T) {
	cases := []struct {
		name  string
		data  map[string]string
		hosts []string
	}{
		{name: "a ConfigMap with a host publishes it", data: map[string]string{"host": "shop.example.com", "service": "web"}, hosts: []string{"shop.example.com"}},
		{name: "a ConfigMap without a host publishes nothing", data: map[string]string{"service": "web"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cm := configMap("shop", tc.data)
			res, err := newSource(t, cm).Routes(context.Background(), cm)
			require.NoError(t, err)
			assert.True(t, res.Managed)
			var hosts []string
			for _, r := range res.Routes {
				hosts = append(hosts, r.Host)
				assert.Equal(t, route.Backend{Host: "web.shop.svc.cluster.local", Port: 80, Scheme: "http"}, r.Paths[0].Backend)
			}
			assert.Equal(t, tc.hosts, hosts)
		})
	}
}

func TestClaims(t *testing.T) {
	cm := configMap("shop", map[string]string{"host": "shop.example.com", "service": "web"})
	claims := newSource(t, cm, configMap("other", map[string]string{"host": "other.example.com"})).Declare().Claims

	claimants, err := claims.Claimants(context.Background(), "shop.example.com")
	require.NoError(t, err)
	require.Len(t, claimants, 1)
	assert.Equal(t, "shop", claimants[0].Origin.Name, "the ConfigMap naming the host, from the index")

	_, ok, err := claims.Holder(context.Background(), route.Origin{Kind: "ConfigMap", Namespace: "shop", Name: "shop", UID: "uid-gone"})
	require.NoError(t, err)
	assert.False(t, ok, "a holder of another UID is a gone ConfigMap: it claims nothing")
	claim, ok, err := claims.Holder(context.Background(), route.Origin{Kind: "ConfigMap", Namespace: "shop", Name: "shop", UID: "uid-shop"})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "shop", claim.Origin.Name)
}
