package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Wakeups fans every plugin.Wake out to the controller of each source: a host, a
// tunnel or an owner concerns objects of any kind, and each controller knows only its
// own. Wake-ups come from watch handlers, which run in started controllers only, so
// on the leader only, like the controllers that hear them.
type Wakeups struct {
	mu       sync.Mutex
	channels []chan event.TypedGenericEvent[wakeup]
	// tunnelChannels hear Tunnels only: sources' own controllers (Gateway status).
	tunnelChannels []chan event.TypedGenericEvent[route.TunnelRef]
}

var _ plugin.Wake = (*Wakeups)(nil)

// wakeup is one Wake call.
type wakeup struct {
	owners []route.Origin
	hosts  []string
	// except is the UID of the claimant of hosts that made the change itself
	// (HostsChangedBy), which is not woken.
	except  types.UID
	tunnels []route.TunnelRef
}

// wakeupBuffer absorbs a burst (a Gateway with many listeners, a sink's resync) so that
// a watch handler does not wait on a controller that is busy or not started yet.
const wakeupBuffer = 4096

// subscribe returns a channel that hears every wake-up; called while controllers are
// set up, before the manager starts.
func (w *Wakeups) subscribe() <-chan event.TypedGenericEvent[wakeup] {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan event.TypedGenericEvent[wakeup], wakeupBuffer)
	w.channels = append(w.channels, ch)
	return ch
}

func (w *Wakeups) send(ctx context.Context, wu wakeup) {
	w.mu.Lock()
	channels := w.channels
	w.mu.Unlock()
	for _, ch := range channels {
		select {
		case ch <- event.TypedGenericEvent[wakeup]{Object: wu}:
		case <-ctx.Done():
			return
		}
	}
}

// Owners implements plugin.Wake.
func (w *Wakeups) Owners(ctx context.Context, owners ...route.Origin) {
	if len(owners) > 0 {
		w.send(ctx, wakeup{owners: owners})
	}
}

// Hosts implements plugin.Wake.
func (w *Wakeups) Hosts(ctx context.Context, hosts ...string) {
	if len(hosts) > 0 {
		w.send(ctx, wakeup{hosts: hosts})
	}
}

// HostsChangedBy implements plugin.Wake.
func (w *Wakeups) HostsChangedBy(ctx context.Context, by route.Origin, hosts ...string) {
	if len(hosts) > 0 {
		w.send(ctx, wakeup{hosts: hosts, except: by.UID})
	}
}

// Tunnels implements plugin.Wake.
func (w *Wakeups) Tunnels(ctx context.Context, tunnels ...route.TunnelRef) {
	if len(tunnels) == 0 {
		return
	}
	w.send(ctx, wakeup{tunnels: tunnels})
	w.mu.Lock()
	channels := w.tunnelChannels
	w.mu.Unlock()
	for _, ch := range channels {
		for _, t := range tunnels {
			select {
			case ch <- event.TypedGenericEvent[route.TunnelRef]{Object: t}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// sinkTunnels is the sink's word on tunnels as sources get it: its checks, and the
// changes it reports through Wakeups.
type sinkTunnels struct {
	plugin.TunnelChecker
	wakeups *Wakeups
}

var _ plugin.Tunnels = sinkTunnels{}

// Changes implements plugin.Tunnels.
func (t sinkTunnels) Changes() <-chan event.TypedGenericEvent[route.TunnelRef] {
	t.wakeups.mu.Lock()
	defer t.wakeups.mu.Unlock()
	ch := make(chan event.TypedGenericEvent[route.TunnelRef], wakeupBuffer)
	t.wakeups.tunnelChannels = append(t.wakeups.tunnelChannels, ch)
	return ch
}
