package gatewayapi

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// TestRouteReconcileReadsEachServicesPodsOnce: an HTTPRoute sharing its hosts with an
// older route evaluates that route to merge with it; one reconcile reads the pods of the
// Service both use once, however many hosts they share.
func TestRouteReconcileReadsEachServicesPodsOnce(t *testing.T) {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "public"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{
			{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80},
		}},
	}
	route := func(name string, created time.Time) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created)},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
				Hostnames:       []gatewayv1.Hostname{"x.example.com", "y.example.com"},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backendRef("web", 80)}}}},
			},
		}
	}
	now := time.Now()
	objs := []client.Object{
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
		gw,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
		route("older", now.Add(-time.Hour)), route("younger", now),
	}
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objs...)
	for _, idx := range plugin.DistinctIndexes(Factory.Indexes(&config.Config{ClusterDomain: "cluster.local"})) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	podLists := 0
	pods := interceptor.NewClient(fake.NewClientBuilder().WithScheme(apis.Scheme()).Build(),
		interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			podLists++
			return c.List(ctx, list, opts...)
		}})
	conf := Config{Tunnels: tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}}, BackendScheme: "http", ClusterDomain: "cluster.local",
		Health: sources.HealthChecks{Default: true, Pods: pods}}
	s := &Source{&gatewayAPI{client: builder.Build(), config: conf, kinds: []routeKind{httpRoutes}}}

	res, err := s.Routes(context.Background(), types.NamespacedName{Namespace: "prod", Name: "younger"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"x.example.com", "y.example.com"}, res.MergedInto, "both hosts are published through the older route")
	assert.Equal(t, 1, podLists, "the pods of Service web, read once for both routes and both hosts")
}
