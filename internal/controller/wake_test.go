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

const wokenHost = "app.example.com"

var (
	claimantA = route.Origin{Kind: "Ingress", Namespace: "shop", Name: "a", UID: "uid-a"}
	claimantB = route.Origin{Kind: "Ingress", Namespace: "shop", Name: "b", UID: "uid-b"}
)

// claimingReconciler is a reconciler of Ingresses whose source says that a and b claim
// wokenHost, and c waits for tunnel shop/default.
func claimingReconciler() *Reconciler {
	r := &Reconciler{
		kind: "Ingress",
		declared: plugin.Declaration{Claims: plugin.Claims{
			Claimants: func(_ context.Context, host string) ([]engine.Claim, error) {
				if host != wokenHost {
					return nil, nil
				}
				return []engine.Claim{{Origin: claimantA}, {Origin: claimantB}}, nil
			},
		}},
		waiting: &tunnelWaiters{byTunnel: map[route.TunnelRef]map[types.NamespacedName]bool{}},
	}
	r.waiting.set(route.TunnelRef{Namespace: "shop", Name: "default"}, types.NamespacedName{Namespace: "shop", Name: "c"}, true)
	return r
}

func newQueue(t *testing.T) queue {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	return q
}

// drained are the names of what q holds.
func drained(q queue) []string {
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		out = append(out, req.Name)
		q.Done(req)
	}
	return out
}

// ingressNamed is an Ingress as the API server stores it: generation 1 and on (a kind
// whose objects stay at 0 wakes on every update, see plugin.ChangedBeyondStatus).
func ingressNamed(name, rv string, labels map[string]string) client.Object {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", ResourceVersion: rv, Labels: labels, Generation: 1}}
}

func TestHostsMovedBringsBackTheHostsClaimants(t *testing.T) {
	// Every object claims wokenHost when named "x", nothing otherwise.
	hosts := func(_ context.Context, o client.Object) []string {
		if o.GetName() == "x" {
			return []string{wokenHost}
		}
		return nil
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		deliver func(h handler.EventHandler, q queue)
		want    []string
	}{
		{"a create", func(h handler.EventHandler, q queue) {
			h.Create(ctx, event.CreateEvent{Object: ingressNamed("x", "1", nil)}, q)
		}, []string{"a", "b"}},
		{"the initial list, at start: every claimant is reconciled anyway", func(h handler.EventHandler, q queue) {
			h.Create(ctx, event.CreateEvent{Object: ingressNamed("x", "1", nil), IsInInitialList: true}, q)
		}, nil},
		{"a change beyond status: the hosts before and after", func(h handler.EventHandler, q queue) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: ingressNamed("x", "1", nil), ObjectNew: ingressNamed("y", "2", map[string]string{"k": "v"})}, q)
		}, []string{"a", "b"}},
		{"a status write: nothing moved", func(h handler.EventHandler, q queue) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: ingressNamed("x", "1", nil), ObjectNew: ingressNamed("x", "2", nil)}, q)
		}, nil},
		{"a delete", func(h handler.EventHandler, q queue) {
			h.Delete(ctx, event.DeleteEvent{Object: ingressNamed("x", "1", nil)}, q)
		}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			tc.deliver(hostsMoved(hosts, claimingReconciler().claimantsOf), q)
			assert.ElementsMatch(t, tc.want, drained(q))
		})
	}
}

func TestResourceChangedSparesTheWriterOfItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	// Resources name their owner in the label "owner" and serve wokenHost; "echo"
	// marks the sink's own write for that owner.
	watch := plugin.ResourceWatch{
		Owners: func(o client.Object) []route.Origin {
			return []route.Origin{{Kind: "Ingress", Namespace: "shop", Name: o.GetLabels()["owner"], UID: types.UID("uid-" + o.GetLabels()["owner"])}}
		},
		Hosts: func(client.Object) []string { return []string{wokenHost} },
		WrittenBy: func(o client.Object, _ bool) (types.UID, bool) {
			return types.UID("uid-" + o.GetLabels()["owner"]), o.GetLabels()["echo"] == "yes"
		},
	}
	resource := func(rv, owner string, echo bool) client.Object {
		labels := map[string]string{"owner": owner}
		if echo {
			labels["echo"] = "yes"
		}
		return ingressNamed("res", rv, labels)
	}
	for _, tc := range []struct {
		name    string
		deliver func(h handler.EventHandler, q queue)
		want    []string
	}{
		{"a create someone else made: the owner and the host's claimants", func(h handler.EventHandler, q queue) {
			h.Create(ctx, event.CreateEvent{Object: resource("1", "a", false)}, q)
		}, []string{"a", "b"}},
		{"the echo of a's own create: the host's other claimants only", func(h handler.EventHandler, q queue) {
			h.Create(ctx, event.CreateEvent{Object: resource("1", "a", true)}, q)
		}, []string{"b"}},
		{"the initial list", func(h handler.EventHandler, q queue) {
			h.Create(ctx, event.CreateEvent{Object: resource("1", "a", false), IsInInitialList: true}, q)
		}, nil},
		{"an update someone else made: the owner", func(h handler.EventHandler, q queue) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: resource("1", "a", false), ObjectNew: resource("2", "a", false)}, q)
		}, []string{"a"}},
		{"the echo of a's own update: no one", func(h handler.EventHandler, q queue) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: resource("1", "a", false), ObjectNew: resource("2", "a", true)}, q)
		}, nil},
		{"a resync: no one", func(h handler.EventHandler, q queue) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: resource("1", "a", false), ObjectNew: resource("1", "a", false)}, q)
		}, nil},
		{"a delete someone else made", func(h handler.EventHandler, q queue) {
			h.Delete(ctx, event.DeleteEvent{Object: resource("1", "a", false)}, q)
		}, []string{"a", "b"}},
		{"a resource of an HTTPRoute's: no Ingress is its owner", func(h handler.EventHandler, q queue) {
			routeWatch := watch
			routeWatch.Owners = func(client.Object) []route.Origin {
				return []route.Origin{{Kind: "HTTPRoute", Namespace: "shop", Name: "c"}}
			}
			claimingReconciler().resourceChanged(routeWatch).Update(ctx, event.UpdateEvent{ObjectOld: resource("1", "c", false), ObjectNew: resource("2", "c", false)}, q)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			tc.deliver(claimingReconciler().resourceChanged(watch), q)
			assert.ElementsMatch(t, tc.want, drained(q))
		})
	}
}

func TestSinkChangedBringsBackOwnersClaimantsAndWaiters(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change plugin.Change
		want   []string
	}{
		{"an owner of the reconciler's kind", plugin.Change{Owners: []route.Origin{claimantA, {Kind: "HTTPRoute", Namespace: "shop", Name: "z"}}}, []string{"a"}},
		{"a host: its claimants", plugin.Change{Hosts: []string{wokenHost, "other.example.com"}}, []string{"a", "b"}},
		{"a tunnel: what waits for it", plugin.Change{Tunnels: []route.TunnelRef{{Namespace: "shop", Name: "default"}}}, []string{"c"}},
		{"a tunnel nothing waits for", plugin.Change{Tunnels: []route.TunnelRef{{Namespace: "shop", Name: "other"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			claimingReconciler().sinkChanged().Generic(ctx, event.TypedGenericEvent[plugin.Change]{Object: tc.change}, q)
			assert.ElementsMatch(t, tc.want, drained(q))
		})
	}
}
