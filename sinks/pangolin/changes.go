package pangolin

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// changeBuffer absorbs a burst (a refresh that finds many owners changed) so that a
// refresh or an Apply does not wait on a controller that is busy or not started yet.
const changeBuffer = 4096

// changes tells every controller that subscribed what the sink saw change in Pangolin:
// Pangolin is outside Kubernetes, so nothing else would (plugin.SinkDeclaration.Changes).
type changes struct {
	mu          sync.Mutex
	subscribers []chan event.TypedGenericEvent[plugin.Change]
}

// subscribe returns a new channel that hears every change; called while controllers
// are set up, before the manager starts.
func (c *changes) subscribe() <-chan event.TypedGenericEvent[plugin.Change] {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan event.TypedGenericEvent[plugin.Change], changeBuffer)
	c.subscribers = append(c.subscribers, ch)
	return ch
}

// publish sends change to every subscriber, unless it is empty.
func (c *changes) publish(ctx context.Context, change plugin.Change) {
	if len(change.Owners) == 0 && len(change.Hosts) == 0 && len(change.Tunnels) == 0 {
		return
	}
	c.mu.Lock()
	subscribers := c.subscribers
	c.mu.Unlock()
	for _, ch := range subscribers {
		select {
		case ch <- event.TypedGenericEvent[plugin.Change]{Object: change}:
		case <-ctx.Done():
			return
		}
	}
}
