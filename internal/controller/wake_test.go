package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// claimantsOnly is a source that answers Claimants and nothing else.
type claimantsOnly struct {
	plugin.Source
	claims map[string][]engine.Claim
}

func (c claimantsOnly) Claimants(_ context.Context, host string) ([]engine.Claim, error) {
	return c.claims[host], nil
}

func TestWokenSkipsTheClaimantThatChangedTheHost(t *testing.T) {
	const host = "app.example.com"
	a := route.Origin{Kind: "Ingress", Namespace: "shop", Name: "a", UID: "uid-a"}
	b := route.Origin{Kind: "Ingress", Namespace: "shop", Name: "b", UID: "uid-b"}
	routeA := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "a", UID: "uid-route-a"}
	r := &Reconciler{
		source:  claimantsOnly{claims: map[string][]engine.Claim{host: {{Origin: a}, {Origin: b}}}},
		waiting: &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}},
	}
	for _, tc := range []struct {
		name   string
		except *route.Origin
		want   []string
	}{
		{"every claimant", nil, []string{"a", "b"}},
		{"all but the one that changed it", &a, []string{"b"}},
		{"another kind's object of the same name changed it", &routeA, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			r.woken(context.Background(), "Ingress", wakeup{hosts: []string{host}, except: tc.except}, q)
			var got []string
			for q.Len() > 0 {
				req, _ := q.Get()
				got = append(got, req.Name)
				q.Done(req)
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}
