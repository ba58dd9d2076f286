package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func TestConditionTypesAreGatewayAPIs(t *testing.T) {
	assert.Equal(t, string(gatewayv1.RouteConditionAccepted), pic.ConditionAccepted)
	assert.Equal(t, string(gatewayv1.RouteConditionResolvedRefs), pic.ConditionResolvedRefs)
	assert.Equal(t, string(gatewayv1.RouteConditionPartiallyInvalid), pic.ConditionPartiallyInvalid)
}

func TestDecideStatus(t *testing.T) {
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web", UID: "uid-web", Generation: 3}
	accepted := plugin.Condition{Type: pic.ConditionAccepted, Status: true, Reason: "Accepted", Message: "attached to a Pangolin Gateway"}
	resolved := plugin.Condition{Type: pic.ConditionResolvedRefs, Status: true, Reason: "ResolvedRefs", Message: "every backendRef resolved"}
	notAllowed := plugin.Condition{Type: pic.ConditionAccepted, Status: false, Reason: "NotAllowedByListeners", Message: "no listener admits the route"}
	routes := func(hosts ...string) []route.Route {
		var out []route.Route
		for _, h := range hosts {
			out = append(out, route.Route{Origin: origin, Host: h})
		}
		return out
	}
	conflict := route.Rejection{Origin: origin, Host: "a.example.com", Reason: pic.ReasonHostConflict, Message: "host a.example.com is already published by Ingress shop/old"}
	unknownDomain := route.Rejection{Origin: origin, Host: "b.example.org", Reason: pic.ReasonDomainNotFound, Message: "no domain of the org serves b.example.org"}
	noTunnel := route.Rejection{Origin: origin, Reason: pic.ReasonTunnelNotFound, Message: "PangolinTunnel shop/default does not exist"}
	shadowed := route.Rejection{Origin: origin, Host: "a.example.com", Path: "/long/b", Reason: pic.ReasonPathNotRoutable, Message: "path /long/b of host a.example.com is not published"}

	for _, tc := range []struct {
		name       string
		parent     []plugin.Condition
		routes     []route.Route
		mergedInto []string
		refused    []route.Rejection
		want       []plugin.Condition
	}{
		{
			name:   "a route whose one host merges into an older route's and whose other is refused is partly refused",
			parent: []plugin.Condition{accepted, resolved}, mergedInto: []string{"b.example.org"}, refused: []route.Rejection{conflict},
			want: []plugin.Condition{accepted, resolved, {
				Type: pic.ConditionPartiallyInvalid, Status: true, Reason: pic.ReasonHostConflict,
				Message: "Dropped Rule(s) for host a.example.com: " + conflict.Message,
			}},
		},
		{
			name:   "an accepted route with nothing refused stays accepted",
			parent: []plugin.Condition{accepted, resolved}, routes: routes("a.example.com"),
			want: []plugin.Condition{accepted, resolved},
		},
		{
			name:   "a route whose only host another object owns is not accepted, for that reason",
			parent: []plugin.Condition{accepted, resolved}, routes: routes("a.example.com"), refused: []route.Rejection{conflict},
			want: []plugin.Condition{{Type: pic.ConditionAccepted, Reason: pic.ReasonHostConflict, Message: conflict.Message}, resolved},
		},
		{
			name:   "a route refused as a whole (its tunnel is missing) is not accepted",
			parent: []plugin.Condition{accepted, resolved}, routes: routes("a.example.com", "b.example.org"), refused: []route.Rejection{noTunnel},
			want: []plugin.Condition{{Type: pic.ConditionAccepted, Reason: pic.ReasonTunnelNotFound, Message: noTunnel.Message}, resolved},
		},
		{
			name:   "a route with one host of two refused stays accepted, partially invalid",
			parent: []plugin.Condition{accepted, resolved}, routes: routes("a.example.com", "b.example.org"), refused: []route.Rejection{unknownDomain},
			want: []plugin.Condition{accepted, resolved, {
				Type: pic.ConditionPartiallyInvalid, Status: true, Reason: pic.ReasonDomainNotFound,
				Message: "Dropped Rule(s) for host b.example.org: " + unknownDomain.Message,
			}},
		},
		{
			name:   "every host refused, for two reasons: the first reason, both messages",
			parent: []plugin.Condition{accepted, resolved}, routes: routes("a.example.com", "b.example.org"), refused: []route.Rejection{conflict, unknownDomain},
			want: []plugin.Condition{{Type: pic.ConditionAccepted, Reason: pic.ReasonHostConflict, Message: conflict.Message + "; " + unknownDomain.Message}, resolved},
		},
		{
			name:   "a route whose only host is published without one of its paths stays accepted, partially invalid",
			parent: []plugin.Condition{accepted, resolved}, routes: routes("a.example.com"), refused: []route.Rejection{shadowed},
			want: []plugin.Condition{accepted, resolved, {
				Type: pic.ConditionPartiallyInvalid, Status: true, Reason: pic.ReasonPathNotRoutable,
				Message: "Dropped Rule(s) for host a.example.com: " + shadowed.Message,
			}},
		},
		{
			name:   "a parent the source did not accept keeps the source's reason: the first cause stands",
			parent: []plugin.Condition{notAllowed, resolved}, routes: routes("a.example.com"), refused: []route.Rejection{conflict},
			want: []plugin.Condition{notAllowed, resolved},
		},
		{
			name:   "a PartiallyInvalid the source passes on is decided again: gone once nothing is refused",
			parent: []plugin.Condition{accepted, resolved, {Type: pic.ConditionPartiallyInvalid, Status: true}}, routes: routes("a.example.com"),
			want: []plugin.Condition{accepted, resolved},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := plugin.Result{Origin: &origin, Routes: tc.routes, MergedInto: tc.mergedInto, Parents: []plugin.ParentStatus{{Parent: "gw", Conditions: tc.parent}}}
			hostnames := plugin.Hostnames{Served: []string{"a.example.com"}}
			got := decideStatus(res, tc.refused, nil, hostnames)
			assert.Equal(t, plugin.Status{Generation: 3, Hostnames: hostnames, Parents: []plugin.ParentStatus{{Parent: "gw", Conditions: tc.want}}}, got)
		})
	}
}

func TestDecideStatusNamesTheProtectingPolicy(t *testing.T) {
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web", Generation: 1}
	accepted := plugin.Condition{Type: pic.ConditionAccepted, Status: true, Reason: "Accepted", Message: "attached to a Pangolin Gateway"}
	res := plugin.Result{
		Origin: &origin, Routes: []route.Route{{Origin: origin, Host: "a.example.com"}},
		Parents: []plugin.ParentStatus{{Parent: "gw", Conditions: []plugin.Condition{accepted}}},
		Notices: []route.Notice{
			{Origin: origin, Reason: pic.ReasonAccessPolicyAttached, Message: "host a.example.com is protected by AccessPolicy shop/devs", Protects: "a.example.com"},
			{Origin: origin, Reason: pic.ReasonAccessRuleNeedsGeoIP, Message: "AccessPolicy shop/devs: Country rules match on GeoIP data"},
		},
	}
	got := newOutcome(res).status(plugin.Hostnames{})
	assert.Equal(t, "attached to a Pangolin Gateway; host a.example.com is protected by AccessPolicy shop/devs", got.Parents[0].Conditions[0].Message,
		"the notice that says what protects a host, and no other")
}

func TestDecideStatusWithoutParents(t *testing.T) {
	origin := route.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", Generation: 2}
	hostnames := plugin.Hostnames{Served: []string{"a.example.com"}, Pending: []string{"b.example.com"}}
	got := decideStatus(plugin.Result{Origin: &origin}, []route.Rejection{{Host: "c.example.com", Reason: pic.ReasonHostConflict}}, nil, hostnames)
	assert.Equal(t, plugin.Status{Generation: 2, Hostnames: hostnames}, got, "an Ingress's status is its hostnames; its refusals are events")
}

// tunnelsOnly is a sink that knows one tunnel, "present"; it answers nothing else.
type tunnelsOnly struct{ plugin.Sink }

func (tunnelsOnly) Tunnel(_ context.Context, ref route.TunnelRef) (plugin.TunnelCheck, error) {
	if ref.Name == "present" {
		return plugin.TunnelCheck{State: plugin.TunnelReady}, nil
	}
	return plugin.TunnelCheck{State: plugin.TunnelNotFound, Message: "PangolinTunnel " + ref.String() + " does not exist"}, nil
}

// TestAMissingTunnelRefusesItsHostsOnly: a route published through two Gateways, one of
// whose tunnels is missing, is refused for that Gateway's host only: one event for the
// tunnel, one refusal per host for the status, and the route is partly invalid.
func TestAMissingTunnelRefusesItsHostsOnly(t *testing.T) {
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web", UID: "uid-web"}
	r := &Reconciler{sink: tunnelsOnly{}, waiting: &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}}}
	routes := []route.Route{
		{Origin: origin, Host: "a.example.com", Tunnel: route.TunnelRef{Namespace: "shop", Name: "present"}},
		{Origin: origin, Host: "b.example.com", Tunnel: route.TunnelRef{Namespace: "shop", Name: "missing"}},
		{Origin: origin, Host: "c.example.com", Tunnel: route.TunnelRef{Namespace: "shop", Name: "missing"}},
	}
	accepted := plugin.Condition{Type: pic.ConditionAccepted, Status: true, Reason: "Accepted"}
	res := plugin.Result{Origin: &origin, Routes: routes, Parents: []plugin.ParentStatus{{Parent: "gw", Conditions: []plugin.Condition{accepted}}}}
	o := newOutcome(res)
	kept, err := r.checkTunnels(context.Background(), origin.NamespacedName(), routes, o)
	require.NoError(t, err)
	assert.Equal(t, []route.Route{routes[0]}, kept)
	events := o.warnings()
	require.Len(t, events, 1, "one event for the missing tunnel")
	assert.Empty(t, events[0].Host)
	dropped := o.unpublished()
	require.Len(t, dropped, 2)
	assert.Equal(t, "b.example.com", dropped[0].Host)
	assert.Equal(t, "c.example.com", dropped[1].Host)

	got := o.status(plugin.Hostnames{})
	require.Len(t, got.Parents[0].Conditions, 2)
	assert.True(t, got.Parents[0].Conditions[0].Status, "still accepted: a.example.com is published")
	assert.Equal(t, pic.ConditionPartiallyInvalid, got.Parents[0].Conditions[1].Type)
	assert.Equal(t, pic.ReasonTunnelNotFound, got.Parents[0].Conditions[1].Reason)
}
