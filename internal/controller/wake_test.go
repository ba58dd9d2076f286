package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
	aBefore := route.Origin{Kind: "Ingress", Namespace: "shop", Name: "a", UID: "uid-a-deleted"}
	r := &Reconciler{
		source:  claimantsOnly{claims: map[string][]engine.Claim{host: {{Origin: a}, {Origin: b}}}},
		waiting: &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}},
	}
	for _, tc := range []struct {
		name   string
		except types.UID
		want   []string
	}{
		{"every claimant", "", []string{"a", "b"}},
		{"all but the one that changed it", a.UID, []string{"b"}},
		{"another kind's object of the same name changed it", routeA.UID, []string{"a", "b"}},
		{"a same-named predecessor changed it", aBefore.UID, []string{"a", "b"}},
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

// hostsByName is a source whose objects each claim <name>.example.com.
type hostsByName struct{ plugin.Source }

func (hostsByName) Hosts(_ context.Context, o client.Object) []string {
	return []string{o.GetName() + ".example.com"}
}

// wokenHosts records the hosts woken.
type wokenHosts struct {
	plugin.Wake
	hosts []string
}

func (w *wokenHosts) Hosts(_ context.Context, hosts ...string) { w.hosts = append(w.hosts, hosts...) }

func TestClaimsChangedWakesHostClaimants(t *testing.T) {
	ing := func(name, rv string, labels map[string]string) client.Object {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", ResourceVersion: rv, Labels: labels}}
	}
	for _, tc := range []struct {
		name    string
		deliver func(h handler.EventHandler)
		want    []string
	}{
		{"a create", func(h handler.EventHandler) {
			h.Create(context.Background(), event.CreateEvent{Object: ing("a", "1", nil)}, nil)
		}, []string{"a.example.com"}},
		{"the initial list, at start: every claimant is reconciled anyway", func(h handler.EventHandler) {
			h.Create(context.Background(), event.CreateEvent{Object: ing("a", "1", nil), IsInInitialList: true}, nil)
		}, nil},
		{"a change beyond status: the hosts before and after", func(h handler.EventHandler) {
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: ing("a", "1", nil), ObjectNew: ing("b", "2", map[string]string{"x": "y"})}, nil)
		}, []string{"a.example.com", "b.example.com"}},
		{"a delete", func(h handler.EventHandler) {
			h.Delete(context.Background(), event.DeleteEvent{Object: ing("a", "1", nil)}, nil)
		}, []string{"a.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &wokenHosts{}
			tc.deliver(claimsChanged(hostsByName{}, w))
			assert.Equal(t, tc.want, w.hosts)
		})
	}
}
