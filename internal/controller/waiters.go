package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// tunnelWaiters remembers which objects wait for which tunnel to appear or become
// Ready, so that a tunnel event brings them back at once instead of at the next backoff.
type tunnelWaiters struct {
	mu       sync.Mutex
	byTunnel map[route.TunnelRef]map[types.NamespacedName]bool
}

func (w *tunnelWaiters) set(t route.TunnelRef, key types.NamespacedName, waiting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !waiting {
		delete(w.byTunnel[t], key)
		return
	}
	if w.byTunnel[t] == nil {
		w.byTunnel[t] = map[types.NamespacedName]bool{}
	}
	w.byTunnel[t][key] = true
}

func (w *tunnelWaiters) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, keys := range w.byTunnel {
		delete(keys, key)
	}
}

func (w *tunnelWaiters) of(_ context.Context, t route.TunnelRef) []reconcile.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []reconcile.Request
	for key := range w.byTunnel[t] {
		out = append(out, reconcile.Request{NamespacedName: key})
	}
	return out
}
