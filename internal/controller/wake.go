package controller

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// This file is the one answer to "why was this object reconciled?". Besides a change
// to the object itself (For, in setup.go), a source's object is brought back by:
//
//	a claimant of one of its hosts, of any source, created, changed or deleted  → hostsMoved
//	an object that moves hosts (a Gateway's listener hostnames)                 → hostsMoved
//	a related object its source declares (a Service, an IngressClass)          → the source's map function
//	a resource the sink keeps for it, changed by someone else                   → resourceChanged
//	a resource the sink keeps for a host it claims, created or deleted          → resourceChanged
//	a tunnel it waits for, changed                                              → tunnelChanged
//	a change the sink saw outside Kubernetes (Pangolin's API)                  → sinkChanged
//
// The initial list at start wakes no one: every object is reconciled then, from its own.

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// watch adds to b every watch of the reconciler's source objects, and returns the kinds
// it watches.
func (r *Reconciler) watch(b *builder.Builder, sink plugin.SinkDeclaration) []client.Object {
	var kinds []client.Object
	add := func(obj client.Object, h handler.EventHandler, opts ...builder.WatchesOption) {
		b.Watches(obj, h, opts...)
		kinds = append(kinds, obj)
	}
	for _, src := range r.claims.sources {
		claims := src.Declaration.Claims
		add(src.Object(), hostsMoved(claims.Hosts, r.claimantsOf))
		for _, m := range claims.Movers {
			add(m.Object, hostsMoved(func(_ context.Context, o client.Object) []string { return m.Hosts(o) }, r.claimantsOf))
		}
	}
	for _, w := range r.declared.Watches {
		add(w.Object, handler.EnqueueRequestsFromMapFunc(w.Requests), watchOptions(w)...)
	}
	for _, rw := range sink.Resources {
		add(rw.Object, r.resourceChanged(rw))
	}
	for _, tw := range sink.Tunnels {
		add(tw.Object, tunnelChanged(tw, r.waiting.of))
	}
	if sink.Changes != nil {
		b.WatchesRawSource(source.TypedChannel(sink.Changes(), r.sinkChanged()))
	}
	return kinds
}

// watchController adds to b the watches of a source's other controller, and returns
// the kinds it watches.
func watchController(b *builder.Builder, c plugin.Controller, sink plugin.SinkDeclaration) []client.Object {
	var kinds []client.Object
	for _, w := range c.Watches {
		b.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Requests), watchOptions(w)...)
		kinds = append(kinds, w.Object)
	}
	if c.Tunnels == nil {
		return kinds
	}
	for _, tw := range sink.Tunnels {
		b.Watches(tw.Object, tunnelChanged(tw, c.Tunnels))
		kinds = append(kinds, tw.Object)
	}
	if sink.Changes != nil {
		b.WatchesRawSource(source.TypedChannel(sink.Changes(), handler.TypedEnqueueRequestsFromMapFunc(
			func(ctx context.Context, ch plugin.Change) []reconcile.Request {
				var out []reconcile.Request
				for _, t := range ch.Tunnels {
					out = append(out, c.Tunnels(ctx, t)...)
				}
				return out
			})))
	}
	return kinds
}

func watchOptions(w plugin.Watch) []builder.WatchesOption {
	if w.IgnoreStatus {
		return []builder.WatchesOption{builder.WithPredicates(plugin.SpecOrMetadataChanged())}
	}
	return nil
}

// hostsMoved brings back the claimants of the hosts an object named before and names
// now, when it is created, deleted, or changed beyond its status: a host it takes or
// releases concerns its claimants of every kind. The next one takes it at once, and the
// owner of a host several HTTPRoutes share merges a sibling's change.
func hostsMoved(hosts func(context.Context, client.Object) []string, claimants func(context.Context, []string, types.UID) []reconcile.Request) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if !e.IsInInitialList {
				addAll(q, claimants(ctx, hosts(ctx, e.Object), ""))
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			if plugin.ChangedBeyondStatus(e.ObjectOld, e.ObjectNew) {
				addAll(q, claimants(ctx, append(hosts(ctx, e.ObjectOld), hosts(ctx, e.ObjectNew)...), ""))
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			addAll(q, claimants(ctx, hosts(ctx, e.Object), ""))
		},
	}
}

// resourceChanged brings back the owner of a resource the sink keeps when it changed,
// and the claimants of its host when it came or went; but not for the echo of the
// owner's own write (the reconcile that wrote it knows what it did, and ran in full),
// nor for a resync (the owner's own resync covers it).
func (r *Reconciler) resourceChanged(rw plugin.ResourceWatch) handler.EventHandler {
	writer := func(obj client.Object, deleted bool) (types.UID, bool) {
		if rw.WrittenBy == nil {
			return "", false
		}
		return rw.WrittenBy(obj, deleted)
	}
	cameOrWent := func(ctx context.Context, obj client.Object, deleted bool, q queue) {
		if uid, echo := writer(obj, deleted); echo {
			addAll(q, r.claimantsOf(ctx, rw.Hosts(obj), uid))
			return
		}
		addAll(q, r.ownersOf(rw.Owners(obj)))
		addAll(q, r.claimantsOf(ctx, rw.Hosts(obj), ""))
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if !e.IsInInitialList {
				cameOrWent(ctx, e.Object, false, q)
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
				return
			}
			if _, echo := writer(e.ObjectNew, false); !echo {
				addAll(q, r.ownersOf(rw.Owners(e.ObjectNew)))
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			cameOrWent(ctx, e.Object, true, q)
		},
	}
}

// tunnelChanged brings back what waits for a tunnel that appeared, changed or went.
func tunnelChanged(tw plugin.TunnelWatch, waiting func(context.Context, route.TunnelRef) []reconcile.Request) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return waiting(ctx, tw.Tunnel(obj))
	})
}

// sinkChanged maps what the sink saw change outside Kubernetes to the source objects it
// concerns.
func (r *Reconciler) sinkChanged() handler.TypedEventHandler[plugin.Change, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, ch plugin.Change) []reconcile.Request {
		out := r.ownersOf(ch.Owners)
		out = append(out, r.claimantsOf(ctx, ch.Hosts, "")...)
		for _, t := range ch.Tunnels {
			out = append(out, r.waiting.of(ctx, t)...)
		}
		return out
	})
}

// ownersOf are the requests for the owners of this reconciler's kind.
func (r *Reconciler) ownersOf(owners []route.Origin) []reconcile.Request {
	var out []reconcile.Request
	for _, o := range owners {
		if o.Kind == r.kind {
			out = append(out, reconcile.Request{NamespacedName: o.NamespacedName()})
		}
	}
	return out
}

// claimantsOf are the requests for this reconciler's objects that claim one of hosts,
// but the one with UID except.
func (r *Reconciler) claimantsOf(ctx context.Context, hosts []string, except types.UID) []reconcile.Request {
	var out []reconcile.Request
	for _, host := range hosts {
		claimants, err := r.declared.Claims.Claimants(ctx, host)
		if err != nil {
			log.FromContext(ctx).Error(err, "cannot find the claimants of a host", "host", host)
			continue
		}
		for _, c := range claimants {
			req := reconcile.Request{NamespacedName: c.Origin.NamespacedName()}
			if c.Origin.UID != except && !slices.Contains(out, req) {
				out = append(out, req)
			}
		}
	}
	return out
}

func addAll(q queue, requests []reconcile.Request) {
	for _, req := range requests {
		q.Add(req)
	}
}
