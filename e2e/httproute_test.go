package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// specHTTPRoute publishes one HTTPRoute end to end, with the httproute source opted in:
// PIC accepts its GatewayClass and Gateway, creates the PangolinResource owned by the
// route, writes the route's status for its own parent, and the garbage collector
// removes the resource with the route.
func specHTTPRoute(t *testing.T, p Provider) {
	e := newEnv(t, p, "httproute")
	e.tunnel(e.ns, "default")
	e.service("web", 8080)
	pic := e.startPIC(PICOptions{Args: []string{"--sources=ingress,httproute"}, GatewayAPI: true})[0]

	// GatewayClasses are cluster-wide; the namespace makes the name unique per run.
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "pangolin-" + e.ns},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: "pangolin.io/gateway-controller"},
	}
	e.create(class)
	t.Cleanup(func() { _ = e.c.Delete(e.ctx, class) })
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "public", Namespace: e.ns},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(class.Name),
			Listeners:        []gatewayv1.Listener{{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}},
		},
	}
	e.create(gw)
	host := e.host("route")
	hr := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To(gatewayv1.PortNumber(8080))},
			}}}}},
		},
	}
	e.create(hr)

	var published tunnelv1alpha1.PangolinResource
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rs := e.owned(c, e.ns, hr.UID)
		if !assert.Len(c, names(rs), 1, "PangolinResources of HTTPRoute %s", hr.Name) {
			return
		}
		published = rs[0]
		assert.Equal(c, host, publishedHost(published))
		assert.Equal(c, e.svcAddr("web", 8080), testenv.Backend(published))
		ref := metav1.GetControllerOf(&published)
		if assert.NotNil(c, ref) {
			assert.Equal(c, "HTTPRoute", ref.Kind)
			assert.Equal(c, "gateway.networking.k8s.io/v1", ref.APIVersion)
		}
	}, eventually, tick)
	t.Logf("published %s for HTTPRoute %s", published.Name, hr.Name)

	// The statuses a Gateway implementation owes: the class and the Gateway accepted,
	// the route accepted by its parent with the current generation.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var gotClass gatewayv1.GatewayClass
		if assert.NoError(c, e.c.Get(e.ctx, client.ObjectKeyFromObject(class), &gotClass)) {
			assert.True(c, meta.IsStatusConditionTrue(gotClass.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted)), "GatewayClass Accepted")
		}
		var gotGW gatewayv1.Gateway
		if assert.NoError(c, e.c.Get(e.ctx, client.ObjectKeyFromObject(gw), &gotGW)) {
			assert.True(c, meta.IsStatusConditionTrue(gotGW.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)), "Gateway Programmed")
			if assert.Len(c, gotGW.Status.Listeners, 1) {
				assert.EqualValues(c, 1, gotGW.Status.Listeners[0].AttachedRoutes)
			}
		}
		var gotRoute gatewayv1.HTTPRoute
		if assert.NoError(c, e.c.Get(e.ctx, client.ObjectKeyFromObject(hr), &gotRoute)) && assert.Len(c, gotRoute.Status.Parents, 1) {
			parent := gotRoute.Status.Parents[0]
			assert.EqualValues(c, "pangolin.io/gateway-controller", parent.ControllerName)
			accepted := meta.FindStatusCondition(parent.Conditions, string(gatewayv1.RouteConditionAccepted))
			if assert.NotNil(c, accepted) {
				assert.Equal(c, metav1.ConditionTrue, accepted.Status)
				assert.Equal(c, gotRoute.Generation, accepted.ObservedGeneration)
			}
		}
	}, eventually, tick)

	// The route goes; Kubernetes' garbage collector removes what it owned, PIC sends
	// no delete.
	deletesBefore := e.writes(pic, "delete")
	require.NoError(t, e.c.Delete(e.ctx, hr, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		err := e.c.Get(e.ctx, client.ObjectKeyFromObject(&published), &tunnelv1alpha1.PangolinResource{})
		assert.True(c, apierrors.IsNotFound(err), "the PangolinResource of the deleted HTTPRoute still exists: %v", err)
	}, eventually, tick)
	require.Equal(t, deletesBefore, e.writes(pic, "delete"), "PIC deleted what the garbage collector must delete")
}
