package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// claimant is an object created at minute `created` of the day: the lower, the older.
func claimant(kind, name string, created int) route.Origin {
	return route.Origin{Kind: kind, Namespace: "team", Name: name, UID: types.UID("uid-" + name),
		Created: time.Date(2026, 1, 1, 0, created, 0, 0, time.UTC)}
}

var (
	shop   = claimant("Ingress", "shop", 10)
	older  = claimant("Ingress", "older", 5)
	young  = claimant("Ingress", "young", 20)
	route1 = claimant("HTTPRoute", "route-1", 1)
	route2 = claimant("HTTPRoute", "route-2", 2)
	route3 = claimant("HTTPRoute", "route-3", 3)
)

// TestDecide is the rule of host ownership ("Who owns a host" in the docs), as a table:
// the claims of one host in, the owner and the merged claims out.
func TestDecide(t *testing.T) {
	type want struct {
		owner  route.Origin
		merged []route.Origin
	}
	gw := func(o route.Origin, gateway, settings string, keeps bool) Claim {
		return Claim{Origin: o, Group: gateway, Settings: settings, Keeps: keeps}
	}
	sameTime := shop
	sameTime.Name, sameTime.UID = "a-first-by-name", "uid-a"
	cases := []struct {
		name   string
		self   Claim
		others []Claim
		want   want
	}{
		{"a host nobody else claims is self's",
			Claim{Origin: shop}, nil, want{owner: shop}},
		{"an older claim that keeps a resource for the host owns it",
			Claim{Origin: shop}, []Claim{{Origin: older, Keeps: true}}, want{owner: older}},
		{"an older claim that keeps nothing for the host takes nothing from self",
			Claim{Origin: shop, Keeps: true}, []Claim{{Origin: older}}, want{owner: shop}},
		{"a younger claim that keeps a resource steps back for self",
			Claim{Origin: shop}, []Claim{{Origin: young, Keeps: true}}, want{owner: shop}},
		{"a claim being deleted claims nothing, even while its resource remains",
			Claim{Origin: shop}, []Claim{{Origin: older, Keeps: true, Deleting: true}}, want{owner: shop}},
		{"of several older claims that keep a resource, the oldest owns the host",
			Claim{Origin: young}, []Claim{{Origin: shop, Keeps: true}, {Origin: older, Keeps: true}}, want{owner: older}},
		{"at the same creation time, namespace/name decides",
			Claim{Origin: shop}, []Claim{{Origin: sameTime, Keeps: true}}, want{owner: sameTime}},
		{"a held claim that keeps its resource keeps the host from a younger one",
			Claim{Origin: young}, []Claim{{Origin: shop, Keeps: true}}, want{owner: shop}},
		{"an Ingress and an HTTPRoute follow the same rule",
			Claim{Origin: shop}, []Claim{{Origin: route1, Keeps: true}}, want{owner: route1}},
		{"self is listed among the claimants: it is not its own rival",
			Claim{Origin: shop}, []Claim{{Origin: shop, Keeps: true}}, want{owner: shop}},
		{"routes on one Gateway: the oldest owns the host, whether or not it keeps a resource yet",
			gw(route2, "gw", "sso=true", true), []Claim{gw(route1, "gw", "sso=true", false)},
			want{owner: route1, merged: []route.Origin{route1, route2}}},
		{"routes on one Gateway with the same settings are merged into the oldest",
			gw(route1, "gw", "", false), []Claim{gw(route3, "gw", "", false), gw(route2, "gw", "", false)},
			want{owner: route1, merged: []route.Origin{route1, route2, route3}}},
		{"a route whose settings differ is not merged: it loses the host",
			gw(route2, "gw", "sso=false", false), []Claim{gw(route1, "gw", "sso=true", false)},
			want{owner: route1, merged: []route.Origin{route1}}},
		{"routes on different Gateways follow the rule between objects",
			gw(route2, "gw-a", "", false), []Claim{gw(route1, "gw-b", "", false)},
			want{owner: route2, merged: []route.Origin{route2}}},
		{"a route being deleted is not merged, and owns nothing",
			gw(route2, "gw", "", false), []Claim{{Origin: route1, Group: "gw", Deleting: true}},
			want{owner: route2, merged: []route.Origin{route2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.self, tc.others)
			assert.Equal(t, tc.want.owner.Key(), got.Owner.Key(), "owner")
			assert.Equal(t, keys(tc.want.merged), keys(got.Merged), "merged")
			assert.Equal(t, tc.want.owner.UID == tc.self.Origin.UID, got.Owns(tc.self.Origin))
		})
	}
}

// TestDecideAgrees checks that every claimant of a host, deciding on its own, names the
// same owner: the rule needs no coordination between replicas or reconciles.
func TestDecideAgrees(t *testing.T) {
	claims := []Claim{{Origin: young, Keeps: true}, {Origin: shop}, {Origin: older, Keeps: true}, {Origin: route1}}
	for _, self := range claims {
		if !self.Keeps {
			continue // only claimants that publish can disagree about who does
		}
		assert.Equal(t, older.Key(), Decide(self, claims).Owner.Key(), "seen from %s", self.Origin.Key())
	}
}

func keys(origins []route.Origin) []string {
	out := []string{}
	for _, o := range origins {
		out = append(out, fmt.Sprint(o.Key()))
	}
	return out
}
