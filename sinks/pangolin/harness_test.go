package pangolin

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// secretKey's secret is long and distinctive: finding it anywhere means the key leaked.
var secretKey = pangolinsim.Key{ID: "leakcheck000001", Secret: "TOPSECRET-do-not-print-7f3a"}

// site is the fake's default site, the tunnel every test route goes through.
const site = "murky-merriams-shrew"

// world is one test's Pangolin and a sink on it.
type world struct {
	t    *testing.T
	ctx  context.Context
	fake *simtest.Server
	api  *pangolinapi.Client
	sink *Sink
	wake *wakes
	// accessRecords is where the sink keeps its access records across restarts.
	accessRecords AccessRecordStore
	// requests are the fake's requests, in order, "METHOD /path".
	mu       sync.Mutex
	requests []string
}

func newWorld(t *testing.T, opts ...func(*pangolinsim.Options)) *world {
	t.Helper()
	// Identity provider 7 is the one the access policies of these tests skip to.
	o := pangolinsim.Options{Keys: []pangolinsim.Key{secretKey}, IdentityProviders: []int{1, 7}}
	for _, f := range opts {
		f(&o)
	}
	fake := simtest.NewServer(o)
	t.Cleanup(fake.Close)
	w := &world{t: t, ctx: context.Background(), fake: fake, accessRecords: &MemoryAccessRecords{}}
	api, err := pangolinapi.New(pangolinapi.Config{BaseURL: fake.BaseURL(), Org: "interop", APIKey: secretKey.Token(), Timeout: 5 * time.Second, Observe: Observe})
	require.NoError(t, err)
	w.api = api
	w.restart("default")
	return w
}

// restart replaces the sink by a new one with ownerID, as a restarted PIC, and loads it.
func (w *world) restart(ownerID string) {
	w.t.Helper()
	w.sink = New(w.api, Options{OwnerID: ownerID, APIKey: secretKey.Token(), AccessRecords: w.accessRecords})
	w.wake = &wakes{changes: w.sink.Declare().Changes()}
	require.NoError(w.t, w.sink.Refresh(w.ctx))
}

// fault installs f, and logs every request the fake receives whatever f does.
func (w *world) fault(f simtest.Fault) {
	w.fake.SetFault(func(rw http.ResponseWriter, r *http.Request) bool {
		w.mu.Lock()
		w.requests = append(w.requests, r.Method+" "+r.URL.Path)
		w.mu.Unlock()
		return f != nil && f(rw, r)
	})
}

// writesLogged are the logged requests that write, in order.
func (w *world) writesLogged() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, r := range w.requests {
		if !strings.HasPrefix(r, http.MethodGet) {
			out = append(out, r)
		}
	}
	return out
}

// outcome is what one reconcile did.
type outcome struct {
	plan       engine.Plan
	applied    plugin.Applied
	rejections []route.Rejection // the engine's and the sink's
	err        error
}

// reconcile does what the core does for one object: Current, Desired, Calculate,
// Apply. No routes is an object that is gone or no longer published.
func (w *world) reconcile(origin route.Origin, routes ...route.Route) outcome {
	w.t.Helper()
	existing, err := w.sink.Current(w.ctx, origin)
	if err != nil {
		return outcome{err: err}
	}
	desired, rejections := engine.Desired(engine.Input{Routes: routes, Features: w.sink.Features(), Defaults: engine.Defaults{SSO: false}})
	plan := engine.Calculate(origin, desired, existing, rejections, nil)
	applied, err := w.sink.Apply(w.ctx, origin, plan)
	return outcome{plan: plan, applied: applied, rejections: append(rejections, applied.Rejections...), err: err}
}

// converge reconciles and requires success without rejections.
func (w *world) converge(origin route.Origin, routes ...route.Route) outcome {
	w.t.Helper()
	o := w.reconcile(origin, routes...)
	require.NoError(w.t, o.err)
	require.Empty(w.t, o.rejections)
	return o
}

// resourceOn is the one resource serving host, failing the test unless there is one.
func (w *world) resourceOn(host string) pangolinsim.Resource {
	w.t.Helper()
	var found []pangolinsim.Resource
	for _, r := range w.fake.Resources() {
		if r.FullDomain == host {
			found = append(found, r)
		}
	}
	require.Len(w.t, found, 1, "resources serving %s", host)
	return found[0]
}

func (w *world) hosts() []string {
	var out []string
	for _, r := range w.fake.Resources() {
		out = append(out, r.FullDomain)
	}
	return out
}

// wakes records the changes the sink tells the controllers of (plugin.Change).
type wakes struct {
	changes <-chan event.TypedGenericEvent[plugin.Change]
	owners  []route.Origin
	hosts   []string
	tunnels []route.TunnelRef
}

// heard adds the changes told since the last call, and returns the record: the sink
// tells them before the call that makes them returns.
func (k *wakes) heard() *wakes {
	for {
		select {
		case e := <-k.changes:
			k.owners = append(k.owners, e.Object.Owners...)
			k.hosts = append(k.hosts, e.Object.Hosts...)
			k.tunnels = append(k.tunnels, e.Object.Tunnels...)
		default:
			return k
		}
	}
}

func ingress(namespace, name string) route.Origin {
	return route.Origin{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Namespace: namespace, Name: name,
		UID: types.UID(namespace + "-" + name + "-uid"), Created: time.Unix(1700000000, 0)}
}

// web is a route of origin's for host, every path to one backend.
func web(origin route.Origin, host string, port int32) route.Route {
	return route.Route{
		Origin: origin, Host: host, Tunnel: route.TunnelRef{Namespace: origin.Namespace, Name: site},
		Paths: []route.PathRule{{Path: "/", Match: route.MatchPrefix, Backend: backend("web", origin.Namespace, port)}},
	}
}

func backend(service, namespace string, port int32) route.Backend {
	return route.Backend{Host: service + "." + namespace + ".svc.cluster.local", Port: port, Scheme: "http"}
}
