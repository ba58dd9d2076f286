package access_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

func TestAttach(t *testing.T) {
	deleted := policy("deleted", 0, nil, ingressRef("web"))
	deleted.DeletionTimestamp = ptr(metav1.NewTime(epoch))
	otherNamespace := policy("elsewhere", 0, nil, ingressRef("web"))
	otherNamespace.Namespace = "other"

	cases := []struct {
		name       string
		policies   []accessv1alpha1.AccessPolicy
		object     access.Target
		gateways   []access.Target
		want       string // the policy that applies, "" for none
		via        access.Target
		overridden []string
	}{
		{
			name:   "no policy means none applies",
			object: ingress("web"),
		},
		{
			name:     "a policy on the Ingress applies to it",
			policies: []accessv1alpha1.AccessPolicy{policy("web-auth", 0, nil, ingressRef("web"))},
			object:   ingress("web"), want: "web-auth", via: ingress("web"),
		},
		{
			name:     "a policy on another Ingress does not apply",
			policies: []accessv1alpha1.AccessPolicy{policy("web-auth", 0, nil, ingressRef("api"))},
			object:   ingress("web"),
		},
		{
			name:     "a policy in another namespace does not apply, even naming the same object",
			policies: []accessv1alpha1.AccessPolicy{otherNamespace},
			object:   ingress("web"),
		},
		{
			name:     "a policy naming an HTTPRoute of the same name does not apply to the Ingress",
			policies: []accessv1alpha1.AccessPolicy{policy("web-auth", 0, nil, routeRef("web"))},
			object:   ingress("web"),
		},
		{
			name: "a policy naming a kind with the wrong group does not apply",
			policies: []accessv1alpha1.AccessPolicy{policy("web-auth", 0, nil, gatewayv1.LocalPolicyTargetReference{
				Group: accessv1alpha1.GroupGateway, Kind: accessv1alpha1.KindIngress, Name: "web"})},
			object: ingress("web"),
		},
		{
			name:     "of two policies on one Ingress the oldest applies",
			policies: []accessv1alpha1.AccessPolicy{policy("young", 5, nil, ingressRef("web")), policy("old", 1, nil, ingressRef("web"))},
			object:   ingress("web"), want: "old", via: ingress("web"),
		},
		{
			name:     "of two policies created the same second the first by name applies",
			policies: []accessv1alpha1.AccessPolicy{policy("b", 1, nil, ingressRef("web")), policy("a", 1, nil, ingressRef("web"))},
			object:   ingress("web"), want: "a", via: ingress("web"),
		},
		{
			name:     "a policy being deleted no longer applies, and the next oldest does",
			policies: []accessv1alpha1.AccessPolicy{deleted, policy("next", 3, nil, ingressRef("web"))},
			object:   ingress("web"), want: "next", via: ingress("web"),
		},
		{
			name:     "a policy on the Gateway applies to a route that has none",
			policies: []accessv1alpha1.AccessPolicy{policy("gw-wide", 0, nil, gatewayRef("edge"))},
			object:   httpRoute("web"), gateways: []access.Target{gateway("edge")},
			want: "gw-wide", via: gateway("edge"),
		},
		{
			name:     "a policy on the route wins over an older one on its Gateway",
			policies: []accessv1alpha1.AccessPolicy{policy("gw-wide", 0, nil, gatewayRef("edge")), policy("route-own", 9, nil, routeRef("web"))},
			object:   httpRoute("web"), gateways: []access.Target{gateway("edge")},
			want: "route-own", via: httpRoute("web"), overridden: []string{"shop/gw-wide"},
		},
		{
			name:     "a policy on a Gateway the route is not published through does not apply",
			policies: []accessv1alpha1.AccessPolicy{policy("gw-wide", 0, nil, gatewayRef("other"))},
			object:   httpRoute("web"), gateways: []access.Target{gateway("edge")},
		},
		{
			name: "a route published through two Gateways with policies gets the oldest of them",
			policies: []accessv1alpha1.AccessPolicy{
				policy("edge-policy", 4, nil, gatewayRef("edge")),
				policy("lan-policy", 2, nil, gatewayRef("lan")),
			},
			object: httpRoute("web"), gateways: []access.Target{gateway("edge"), gateway("lan")},
			want: "lan-policy", via: gateway("lan"), overridden: []string{"shop/edge-policy"},
		},
		{
			name:     "one policy may target the route and its Gateway: it applies once, not overridden by itself",
			policies: []accessv1alpha1.AccessPolicy{policy("both", 0, nil, routeRef("web"), gatewayRef("edge"))},
			object:   httpRoute("web"), gateways: []access.Target{gateway("edge")},
			want: "both", via: httpRoute("web"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := access.Attach(tc.policies, tc.object, tc.gateways)
			if tc.want == "" {
				assert.Nil(t, got.Policy)
				return
			}
			require.NotNil(t, got.Policy)
			assert.Equal(t, tc.want, got.Policy.Name)
			assert.Equal(t, tc.via, got.Via)
			var overridden []string
			for _, o := range got.Overridden {
				overridden = append(overridden, o.String())
			}
			assert.Equal(t, tc.overridden, overridden)
			assert.Nil(t, got.Superseded, "no Gateway policy here is an override")
		})
	}
}

// TestAttachWithOverrides is the merge decision when a Gateway's policy has mode
// Override (GEP-713): it applies to the routes published through the Gateway whatever
// their own policies say; without it, the route's own replaces the Gateway's.
func TestAttachWithOverrides(t *testing.T) {
	override := func(s *accessv1alpha1.AccessPolicySpec) {
		s.Mode = accessv1alpha1.ModeOverride
		s.Roles = []string{"employees"}
	}
	defaults := func(s *accessv1alpha1.AccessPolicySpec) { s.Mode = accessv1alpha1.ModeDefault }
	public := func(s *accessv1alpha1.AccessPolicySpec) { s.SSO = ptr(false) }

	cases := []struct {
		name       string
		policies   []accessv1alpha1.AccessPolicy
		gateways   []access.Target
		want       string
		via        access.Target
		superseded string // the route's own policy, replaced; "" for none
		overridden []string
	}{
		{
			name:     "an override on the Gateway replaces the route's own policy, younger or older",
			policies: []accessv1alpha1.AccessPolicy{policy("route-public", 0, public, routeRef("web")), policy("platform", 9, override, gatewayRef("edge"))},
			gateways: []access.Target{gateway("edge")},
			want:     "platform", via: gateway("edge"), superseded: "shop/route-public",
		},
		{
			name:     "an override on the Gateway applies to a route without a policy, as a default would",
			policies: []accessv1alpha1.AccessPolicy{policy("platform", 0, override, gatewayRef("edge"))},
			gateways: []access.Target{gateway("edge")},
			want:     "platform", via: gateway("edge"),
		},
		{
			name:     "a policy in mode Default on the Gateway is replaced by the route's own, as without a mode",
			policies: []accessv1alpha1.AccessPolicy{policy("platform", 0, defaults, gatewayRef("edge")), policy("route-public", 9, public, routeRef("web"))},
			gateways: []access.Target{gateway("edge")},
			want:     "route-public", via: httpRoute("web"), overridden: []string{"shop/platform"},
		},
		{
			name:     "an override on a Gateway the route is not published through does not apply",
			policies: []accessv1alpha1.AccessPolicy{policy("platform", 0, override, gatewayRef("other")), policy("route-public", 9, public, routeRef("web"))},
			gateways: []access.Target{gateway("edge")},
			want:     "route-public", via: httpRoute("web"),
		},
		{
			name: "an override on one Gateway wins over an older default on another",
			policies: []accessv1alpha1.AccessPolicy{
				policy("lan-default", 0, nil, gatewayRef("lan")),
				policy("edge-override", 5, override, gatewayRef("edge")),
				policy("route-public", 9, public, routeRef("web")),
			},
			gateways: []access.Target{gateway("lan"), gateway("edge")},
			want:     "edge-override", via: gateway("edge"), superseded: "shop/route-public", overridden: []string{"shop/lan-default"},
		},
		{
			name: "of overrides on two Gateways the oldest applies",
			policies: []accessv1alpha1.AccessPolicy{
				policy("edge-override", 5, override, gatewayRef("edge")),
				policy("lan-override", 2, override, gatewayRef("lan")),
			},
			gateways: []access.Target{gateway("edge"), gateway("lan")},
			want:     "lan-override", via: gateway("lan"), overridden: []string{"shop/edge-override"},
		},
		{
			name: "a younger override on a Gateway whose oldest policy is a default is Conflicted there, and overrides nothing",
			policies: []accessv1alpha1.AccessPolicy{
				policy("old-default", 0, nil, gatewayRef("edge")),
				policy("young-override", 5, override, gatewayRef("edge")),
				policy("route-public", 9, public, routeRef("web")),
			},
			gateways: []access.Target{gateway("edge")},
			want:     "route-public", via: httpRoute("web"), overridden: []string{"shop/old-default"},
		},
		{
			name:     "an override being deleted no longer applies, and the route's own does",
			policies: []accessv1alpha1.AccessPolicy{deleting(policy("platform", 0, override, gatewayRef("edge"))), policy("route-public", 9, public, routeRef("web"))},
			gateways: []access.Target{gateway("edge")},
			want:     "route-public", via: httpRoute("web"),
		},
		{
			name:     "one override that targets the route and its Gateway applies once, superseding nothing",
			policies: []accessv1alpha1.AccessPolicy{policy("both", 0, override, routeRef("web"), gatewayRef("edge"))},
			gateways: []access.Target{gateway("edge")},
			want:     "both", via: gateway("edge"),
		},
		{
			name:     "a route published through no Gateway keeps its own policy, whatever overrides exist",
			policies: []accessv1alpha1.AccessPolicy{policy("platform", 0, override, gatewayRef("edge")), policy("route-public", 9, public, routeRef("web"))},
			want:     "route-public", via: httpRoute("web"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := access.Attach(tc.policies, httpRoute("web"), tc.gateways)
			require.NotNil(t, got.Policy)
			assert.Equal(t, tc.want, got.Policy.Name)
			assert.Equal(t, tc.via, got.Via)
			superseded := ""
			if got.Superseded != nil {
				superseded = got.Superseded.String()
			}
			assert.Equal(t, tc.superseded, superseded)
			var overridden []string
			for _, o := range got.Overridden {
				overridden = append(overridden, o.String())
			}
			assert.Equal(t, tc.overridden, overridden)
		})
	}
}

func deleting(p accessv1alpha1.AccessPolicy) accessv1alpha1.AccessPolicy {
	p.DeletionTimestamp = ptr(metav1.NewTime(epoch))
	return p
}

func TestAncestors(t *testing.T) {
	exists := func(t access.Target) bool { return t.Name != "gone" }
	gwOverride := policy("platform", 0, func(s *accessv1alpha1.AccessPolicySpec) { s.Mode = accessv1alpha1.ModeOverride }, gatewayRef("edge"))
	gwOverride.Namespace = "infra"
	overriddenBy := func(o accessv1alpha1.AccessPolicy) func(access.Target) *accessv1alpha1.AccessPolicy {
		return func(access.Target) *accessv1alpha1.AccessPolicy { return &o }
	}
	secretMissing := []access.Problem{{Field: "spec.password.secretRef", Reason: pic.ReasonAccessPolicySecretNotFound, Message: "Secret shop/web-auth does not exist"}}
	invalid := []access.Problem{{Field: "spec.rules[0].value", Reason: pic.ReasonAccessPolicyInvalid, Message: `"10.0.0.1" is not a CIDR`}}

	type want struct {
		accepted, acceptedReason, resolved, resolvedReason string
		message                                            string // part of the Accepted message
	}
	acceptedOK := want{"True", "Accepted", "True", "ResolvedRefs", "applies to Ingress shop/web"}
	cases := []struct {
		name     string
		policy   accessv1alpha1.AccessPolicy
		others   []accessv1alpha1.AccessPolicy
		override func(access.Target) *accessv1alpha1.AccessPolicy
		problems []access.Problem
		want     want
	}{
		{
			name:   "a valid policy on an existing Ingress is accepted",
			policy: policy("web-auth", 5, nil, ingressRef("web")),
			want:   acceptedOK,
		},
		{
			name:   "a policy on a missing object reports TargetNotFound",
			policy: policy("web-auth", 5, nil, ingressRef("gone")),
			want:   want{"False", "TargetNotFound", "True", "ResolvedRefs", "Ingress shop/gone does not exist"},
		},
		{
			name:   "the younger of two policies on one object reports Conflicted, naming the older",
			policy: policy("young", 5, nil, ingressRef("web")),
			others: []accessv1alpha1.AccessPolicy{policy("old", 1, nil, ingressRef("web"))},
			want:   want{"False", "Conflicted", "True", "ResolvedRefs", "AccessPolicy shop/old, older, also targets Ingress shop/web"},
		},
		{
			name:   "the older of two policies on one object is accepted",
			policy: policy("old", 1, nil, ingressRef("web")),
			others: []accessv1alpha1.AccessPolicy{policy("young", 5, nil, ingressRef("web"))},
			want:   acceptedOK,
		},
		{
			name:     "an invalid policy reports Invalid with the problem",
			policy:   policy("web-auth", 5, nil, ingressRef("web")),
			problems: invalid,
			want:     want{"False", "Invalid", "True", "ResolvedRefs", `spec.rules[0].value: "10.0.0.1" is not a CIDR`},
		},
		{
			name:     "a missing Secret leaves the policy accepted with ResolvedRefs false",
			policy:   policy("web-auth", 5, nil, ingressRef("web")),
			problems: secretMissing,
			want:     want{"True", "Accepted", "False", "AccessPolicySecretNotFound", "applies to Ingress shop/web"},
		},
		{
			name:     "a route's policy under a Gateway whose policy overrides reports Overridden, naming it",
			policy:   policy("route-public", 5, nil, routeRef("web")),
			override: overriddenBy(gwOverride),
			want:     want{"False", "Overridden", "True", "ResolvedRefs", "AccessPolicy infra/platform on a Gateway of HTTPRoute shop/web has mode Override"},
		},
		{
			name:   "an override that is the policy itself does not override it",
			policy: policy("both", 5, func(s *accessv1alpha1.AccessPolicySpec) { s.Mode = accessv1alpha1.ModeOverride }, routeRef("web")),
			override: func(access.Target) *accessv1alpha1.AccessPolicy {
				p := policy("both", 5, nil, routeRef("web"))
				return &p
			},
			want: want{"True", "Accepted", "True", "ResolvedRefs", "applies to HTTPRoute shop/web"},
		},
		{
			name:     "an override concerns HTTPRoutes only: an Ingress's policy stays accepted",
			policy:   policy("web-auth", 5, nil, ingressRef("web")),
			override: overriddenBy(gwOverride),
			want:     acceptedOK,
		},
		{
			name:     "the younger of two route policies under an override reports Conflicted first",
			policy:   policy("young", 5, nil, routeRef("web")),
			others:   []accessv1alpha1.AccessPolicy{policy("old", 1, nil, routeRef("web"))},
			override: overriddenBy(gwOverride),
			want:     want{"False", "Conflicted", "True", "ResolvedRefs", "AccessPolicy shop/old, older"},
		},
		{
			name: "a target of a kind PIC does not serve is Invalid",
			policy: policy("web-auth", 5, nil, gatewayv1.LocalPolicyTargetReference{
				Group: "", Kind: "Service", Name: "web"}),
			want: want{"False", "Invalid", "True", "ResolvedRefs", "an AccessPolicy can target an Ingress"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			all := append([]accessv1alpha1.AccessPolicy{tc.policy}, tc.others...)
			got := access.Ancestors(&all[0], all, exists, tc.override, tc.problems)
			require.Len(t, got, 1)
			a := got[0]
			assert.Equal(t, gatewayv1.GatewayController(pic.ControllerName), a.ControllerName)
			assert.Equal(t, gatewayv1.Namespace("shop"), *a.AncestorRef.Namespace)
			assert.Equal(t, tc.policy.Spec.TargetRefs[0].Kind, *a.AncestorRef.Kind)
			assert.Equal(t, tc.policy.Spec.TargetRefs[0].Name, a.AncestorRef.Name)
			require.Len(t, a.Conditions, 2)
			accepted, resolved := a.Conditions[0], a.Conditions[1]
			assert.Equal(t, pic.ConditionAccepted, accepted.Type)
			assert.Equal(t, tc.want.accepted, string(accepted.Status))
			assert.Equal(t, tc.want.acceptedReason, accepted.Reason)
			assert.Contains(t, accepted.Message, tc.want.message)
			assert.Equal(t, pic.ConditionResolvedRefs, resolved.Type)
			assert.Equal(t, tc.want.resolved, string(resolved.Status))
			assert.Equal(t, tc.want.resolvedReason, resolved.Reason)
			for _, c := range a.Conditions {
				assert.Equal(t, int64(3), c.ObservedGeneration)
			}
		})
	}
}

func TestAncestorsHasOneEntryPerTarget(t *testing.T) {
	p := policy("multi", 0, nil, ingressRef("web"), routeRef("gone"), gatewayRef("edge"))
	got := access.Ancestors(&p, []accessv1alpha1.AccessPolicy{p}, func(t access.Target) bool { return t.Name != "gone" }, nil, nil)
	require.Len(t, got, 3)
	reasons := []string{got[0].Conditions[0].Reason, got[1].Conditions[0].Reason, got[2].Conditions[0].Reason}
	assert.Equal(t, []string{"Accepted", "TargetNotFound", "Accepted"}, reasons)
	assert.Equal(t, gatewayv1.ObjectName("web"), got[0].AncestorRef.Name)
}
