package integration_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// gatewayPolicy is an AccessPolicy in the test namespace on the Gateway named gateway.
func gatewayPolicy(name, gateway string, spec accessv1alpha1.AccessPolicySpec) *accessv1alpha1.AccessPolicy {
	spec.TargetRefs = []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: accessv1alpha1.KindGateway, Name: gatewayv1.ObjectName(gateway)}}
	return &accessv1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// TestAnInvalidGatewayPolicyUnpublishesItsPorts: Pangolin applies no access control to
// a TCP port, so a policy on its Gateway unpublishes it (AccessControlUnsupported),
// whether the policy is valid or not: a bad rule or a missing Secret must not keep a
// published port open.
func TestAnInvalidGatewayPolicyUnpublishesItsPorts(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		startDirect(t, env, fake, ns, withPorts)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		class := "pangolin-" + ns
		w.create(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}})
		t.Cleanup(func() {
			_ = w.c.Delete(context.Background(), &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: class}})
		})
		w.create(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "public"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class),
				Listeners: []gatewayv1.Listener{{Name: "pg", Protocol: gatewayv1.TCPProtocolType, Port: 15433}}},
		})
		w.service("postgres", 5432)
		w.create(&gatewayv1.TCPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: gatewayv1.TCPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
				Rules: []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: "postgres", Port: ptr.To(gatewayv1.PortNumber(5432))},
				}}}},
			},
		})
		published := map[string][]string{"tcp-15433": {"postgres." + ns + ".svc.cluster.local:5432"}}
		eventuallyRawServed(t, fake, published)

		for _, tc := range []struct {
			name string
			spec accessv1alpha1.AccessPolicySpec
		}{
			{"bad-rule", accessv1alpha1.AccessPolicySpec{Rules: []accessv1alpha1.Rule{{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchCIDR, Value: "10.0.0.1"}}}},
			{"missing-secret", accessv1alpha1.AccessPolicySpec{Password: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "nope", Key: "password"}}}},
		} {
			policy := gatewayPolicy(tc.name, "public", tc.spec)
			w.create(policy)
			eventuallyRawServed(t, fake, map[string][]string{})
			note := w.eventuallyEventIn(ns, pic.ReasonAccessControlUnsupported)
			assert.Contains(t, note, "AccessPolicy "+ns+"/", "the event names the policy")

			require.NoError(t, w.c.Delete(w.ctx, policy))
			eventuallyRawServed(t, fake, published)
		}
	})
}

// TestAGatewayOverridePolicyAppliesToItsRoutes: a Gateway's policy in mode Override
// applies to an HTTPRoute published through the Gateway instead of the route's own
// policy, which reports Accepted=False, reason Overridden; in mode Default the route's
// own replaces it again.
func TestAGatewayOverridePolicyAppliesToItsRoutes(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{Roles: []pangolinsim.Role{{ID: 3, Name: "employees"}}})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		t.Setenv("POD_NAMESPACE", ns)
		startDirect(t, env, fake, ns, withHTTPRoutes)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		gw := &gatewayWorld{world: w, class: "pangolin-" + ns}
		w.create(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: gw.class}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}})
		t.Cleanup(func() {
			_ = w.c.Delete(context.Background(), &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: gw.class}})
		})
		w.create(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "public"},
			Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(gw.class), Listeners: []gatewayv1.Listener{httpListener("")}},
		})
		w.service("web", 8080)

		platform := gatewayPolicy("platform", "public", accessv1alpha1.AccessPolicySpec{Mode: accessv1alpha1.ModeOverride, Roles: []string{"employees"}})
		w.create(platform)
		w.create(&accessv1alpha1.AccessPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "shop-public"},
			Spec: accessv1alpha1.AccessPolicySpec{
				TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: accessv1alpha1.KindHTTPRoute, Name: "shop"}},
				SSO:        ptr.To(false),
			},
		})
		w.create(gw.httpRoute("shop", ns, "shop.example.com"))
		eventuallyServed(t, fake, map[string][]string{"shop.example.com": {"http://web." + ns + ".svc.cluster.local:8080"}})
		ssoAndRoles := func(c *assert.CollectT) (bool, []int) {
			for _, r := range fake.Resources() {
				if r.FullDomain == "shop.example.com" {
					p, ok := fake.Policy(r.ID)
					assert.True(c, ok)
					return p.SSO, p.RoleIDs
				}
			}
			assert.Fail(c, "shop.example.com is not published")
			return false, nil
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			sso, roles := ssoAndRoles(c)
			assert.True(c, sso, "the Gateway's override, not the route's sso: false")
			assert.Equal(c, []int{3}, roles)
		}, wait, tick)
		w.policyCondition("shop-public", "Accepted", metav1.ConditionFalse, pic.PolicyReasonOverridden)
		w.policyCondition("platform", "Accepted", metav1.ConditionTrue, "Accepted")

		require.NoError(t, testenv.Update(w.ctx, w.c, client.ObjectKeyFromObject(platform), func(p *accessv1alpha1.AccessPolicy) {
			p.Spec.Mode = accessv1alpha1.ModeDefault
		}, wait))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			sso, _ := ssoAndRoles(c)
			assert.False(c, sso, "a default: the route's own policy replaces it")
		}, wait, tick)
		w.policyCondition("shop-public", "Accepted", metav1.ConditionTrue, "Accepted")
	})
}
