package pangolin

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

func service(namespace, name string) route.Origin {
	return route.Origin{Version: "v1", Kind: "Service", Namespace: namespace, Name: name,
		UID: types.UID(namespace + "-" + name + "-uid"), Created: time.Unix(1700000000, 0)}
}

// rawRoute is origin's public port over proto, to one backend of its namespace.
func rawRoute(origin route.Origin, proto route.Protocol, port int32, backendPort int32) route.Route {
	return route.Route{
		Origin: origin, Host: route.PortKey(proto, port), Protocol: proto, Port: port,
		Tunnel: route.TunnelRef{Namespace: origin.Namespace, Name: site},
		Paths:  []route.PathRule{{Backend: route.Backend{Host: origin.Name + "." + origin.Namespace + ".svc.cluster.local", Port: backendPort, Scheme: string(proto)}}},
	}
}

// rawOn is the one resource on port over mode, failing the test unless there is one.
func (w *world) rawOn(mode string, port int) pangolinsim.Resource {
	w.t.Helper()
	var found []pangolinsim.Resource
	for _, r := range w.fake.Resources() {
		if r.Mode == mode && r.ProxyPort == port {
			found = append(found, r)
		}
	}
	require.Len(w.t, found, 1, "resources on %s %d", mode, port)
	return found[0]
}

// bodies records every request the fake receives with its body, "METHOD /path body".
type bodies struct {
	mu   sync.Mutex
	seen []string
}

func (b *bodies) record(w *world) {
	w.fault(func(_ http.ResponseWriter, r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		defer b.mu.Unlock()
		b.seen = append(b.seen, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+string(body)))
		return false
	})
}

func (b *bodies) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen...)
}

func TestRawResourceIsPublishedWithoutAccessControl(t *testing.T) {
	w := newWorld(t)
	db := service("prod", "db")
	var sent bodies
	sent.record(w)

	o := w.converge(db, rawRoute(db, route.ProtocolTCP, 5432, 5432))
	require.Len(t, o.applied.Created, 1)
	r := w.rawOn("tcp", 5432)
	assert.Equal(t, "tcp:5432 (Service prod/db)", r.Name)
	assert.Equal(t, niceID("default", markOf(db, "tcp:5432", "tcp:5432")), r.NiceID)
	assert.Empty(t, r.FullDomain)
	tg := w.fake.Targets(r.ID)
	require.Len(t, tg, 1)
	assert.Equal(t, pangolinsim.Target{ID: tg[0].ID, ResourceID: r.ID, SiteID: 1, IP: "db.prod.svc.cluster.local", Port: 5432, Enabled: true, Priority: 100, HCHealth: "unknown"}, tg[0])
	assert.Equal(t, []pangolinsim.RawRouter{{
		Name: "1-tcp-5432-Service-prod-db-router", ResourceID: r.ID, Protocol: "tcp", EntryPoint: "tcp-5432",
		Rule: "HostSNI(`*`)", Servers: []string{"db.prod.svc.cluster.local:5432"},
	}}, w.fake.RawRouters())

	// Every write a raw resource gets: the resource, its mark alone (a raw resource
	// refuses sso, blockAccess and the rest), its target without a method. No read or
	// write of access control.
	var writes []string
	for _, req := range sent.all() {
		if !strings.HasPrefix(req, http.MethodGet) {
			writes = append(writes, req)
		}
		for _, access := range []string{"/roles", "/users", "/password", "/pincode", "/header-auth", "/whitelist", "/rule", "/policies"} {
			assert.NotContains(t, req, access, "no access-control call for a raw resource")
		}
	}
	assert.Equal(t, []string{
		`PUT /v1/org/interop/resource {"name":"tcp:5432 (Service prod/db)","mode":"tcp","proxyPort":5432}`,
		`POST /v1/resource/1 {"niceId":"` + r.NiceID + `"}`,
		`PUT /v1/resource/1/target {"siteId":1,"ip":"db.prod.svc.cluster.local","port":5432,"enabled":true}`,
	}, writes)
	assert.Empty(t, o.rejections)
}

// Steady state: a raw resource read back equals what the engine wants, so neither a
// reconcile, nor a resync (light or full), nor a restart writes anything.
func TestRawResourceSteadyStateWritesNothing(t *testing.T) {
	w := newWorld(t)
	db, dns := service("prod", "db"), service("kube-system", "dns")
	w.converge(db, rawRoute(db, route.ProtocolTCP, 5432, 5432))
	w.converge(dns, rawRoute(dns, route.ProtocolUDP, 53, 5353))
	clock := onClock(w) // a restart, which wakes every owner found
	w.wake.heard().owners = nil
	w.fake.ResetCounts()

	for round := range 3 {
		if round == 2 {
			clock.Add(DefaultDriftPeriod) // the next refresh reads every resource whole
		}
		require.NoError(t, w.sink.Refresh(w.ctx))
		for origin, rt := range map[route.Origin]route.Route{db: rawRoute(db, route.ProtocolTCP, 5432, 5432), dns: rawRoute(dns, route.ProtocolUDP, 53, 5353)} {
			o := w.converge(origin, rt)
			assert.Empty(t, o.plan.Create, "round %d", round)
			assert.Empty(t, o.plan.Delete, "round %d", round)
			// Right after the restart the plan may hold an update: the tunnel's
			// namespace is not in Pangolin (as for HTTP), and Apply writes nothing for it.
			assert.Empty(t, o.applied.Updated, "round %d", round)
			if round > 0 {
				assert.Empty(t, o.plan.Update, "round %d: once written, read back equal", round)
			}
		}
	}
	assert.Zero(t, w.fake.Writes(), "no write after a restart and across resyncs")
	assert.Empty(t, w.wake.heard().owners, "nothing looked changed behind PIC's back")
}

func TestRawResourceChanges(t *testing.T) {
	db := service("prod", "db")
	cases := []struct {
		name string
		// before runs after the first publication of tcp 5432.
		before func(t *testing.T, w *world)
		routes []route.Route
		check  func(t *testing.T, w *world, o outcome)
	}{
		{
			// The port is the claim: another port is another claim, so another resource
			// (the engine creates the new one, then deletes the old).
			name:   "a port change is a new resource, and the old one goes",
			routes: []route.Route{rawRoute(db, route.ProtocolTCP, 5433, 5432)},
			check: func(t *testing.T, w *world, o outcome) {
				assert.Len(t, o.applied.Created, 1)
				assert.Len(t, o.applied.Deleted, 1)
				r := w.rawOn("tcp", 5433)
				assert.Equal(t, "tcp:5433 (Service prod/db)", r.Name)
				assert.Len(t, w.fake.Resources(), 1)
				assert.Equal(t, []string{"PUT /v1/org/interop/resource", "POST /v1/resource/2", "PUT /v1/resource/2/target", "DELETE /v1/resource/1"}, w.writesLogged())
			},
		},
		{
			name:   "a backend port change updates the target in place",
			routes: []route.Route{rawRoute(db, route.ProtocolTCP, 5432, 6432)},
			check: func(t *testing.T, w *world, o outcome) {
				r := w.rawOn("tcp", 5432)
				tg := w.fake.Targets(r.ID)
				require.Len(t, tg, 1)
				assert.Equal(t, 6432, tg[0].Port)
				assert.Equal(t, []string{"POST /v1/target/1"}, w.writesLogged())
			},
		},
		{
			name:   "the object goes, and its resource with it",
			routes: nil,
			check: func(t *testing.T, w *world, o outcome) {
				assert.Empty(t, w.fake.Resources())
				assert.Equal(t, []string{"DELETE /v1/resource/1"}, w.writesLogged())
			},
		},
		{
			name: "a port moved by hand is moved back",
			before: func(t *testing.T, w *world) {
				_, err := w.api.UpdateResource(w.ctx, 1, pangolinapi.ResourceUpdate{ProxyPort: 6000})
				require.NoError(t, err)
				require.NoError(t, w.sink.Refresh(w.ctx))
			},
			routes: []route.Route{rawRoute(db, route.ProtocolTCP, 5432, 5432)},
			check: func(t *testing.T, w *world, o outcome) {
				assert.Equal(t, 5432, w.rawOn("tcp", 5432).ProxyPort)
				assert.Equal(t, []string{"POST /v1/resource/1"}, w.writesLogged())
			},
		},
		{
			name: "a port moved by hand onto a port another resource holds stays, with a Warning",
			before: func(t *testing.T, w *world) {
				_, err := w.api.UpdateResource(w.ctx, 1, pangolinapi.ResourceUpdate{ProxyPort: 6000})
				require.NoError(t, err)
				require.NoError(t, w.sink.Refresh(w.ctx))
				w.fake.SeedResource(pangolinsim.Resource{Name: "pg by hand", NiceID: "brave-quiet-otter", Mode: "tcp", ProxyPort: 5432, Enabled: true})
			},
			routes: []route.Route{rawRoute(db, route.ProtocolTCP, 5432, 5432)},
			check: func(t *testing.T, w *world, o outcome) {
				require.Len(t, o.rejections, 1)
				assert.Equal(t, pic.ReasonHostTakenInPangolin, o.rejections[0].Reason)
				assert.Empty(t, w.writesLogged())
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.converge(db, rawRoute(db, route.ProtocolTCP, 5432, 5432))
			if tc.before != nil {
				tc.before(t, w)
			}
			w.fault(nil)
			o := w.reconcile(db, tc.routes...)
			require.NoError(t, o.err)
			tc.check(t, w, o)
		})
	}
}

func TestRawResourceRefused(t *testing.T) {
	db := service("prod", "db")
	cases := []struct {
		name        string
		deny        bool // the server's flags.allow_raw_resources: false
		seed        []pangolinsim.Resource
		route       route.Route
		wantReason  string
		wantMessage []string
		wantCreated int // resources PIC created
	}{
		{
			name:        "a port a resource PIC did not create holds",
			seed:        []pangolinsim.Resource{{Name: "pg by hand", NiceID: "brave-quiet-otter", Mode: "tcp", ProxyPort: 5432, Enabled: true}},
			route:       rawRoute(db, route.ProtocolTCP, 5432, 5432),
			wantReason:  pic.ReasonHostTakenInPangolin,
			wantMessage: []string{"public port 5432/tcp is already served by Pangolin resource brave-quiet-otter (\"pg by hand\")"},
		},
		{
			name:        "another owner id's resource on the port",
			seed:        []pangolinsim.Resource{{Name: "tcp:5432 (Service prod/db)", NiceID: niceID("cluster-b", markOf(db, "tcp:5432", "tcp:5432")), Mode: "tcp", ProxyPort: 5432, Enabled: true}},
			route:       rawRoute(db, route.ProtocolTCP, 5432, 5432),
			wantReason:  pic.ReasonHostTakenInPangolin,
			wantMessage: []string{"public port 5432/tcp is already served"},
		},
		{
			name:        "the same port over UDP does not hold a TCP port",
			seed:        []pangolinsim.Resource{{Name: "dns by hand", Mode: "udp", ProxyPort: 5432, Enabled: true}},
			route:       rawRoute(db, route.ProtocolTCP, 5432, 5432),
			wantCreated: 1,
		},
		{
			name:        "an HTTP host does not hold a port",
			seed:        []pangolinsim.Resource{{Name: "tcp:5432", DomainID: "domain1", Subdomain: ptrTo("tcp"), Enabled: true}},
			route:       rawRoute(db, route.ProtocolTCP, 5432, 5432),
			wantCreated: 1,
		},
		{
			// PIC's own resource, created while the switch was on, moved by hand since.
			name: "a server with raw resources off refuses to move a port back",
			deny: true,
			seed: []pangolinsim.Resource{{
				Name: "tcp:5432 (Service prod/db)", NiceID: niceID("default", markOf(db, "tcp:5432", "tcp:5432")),
				Mode: "tcp", ProxyPort: 6000, Enabled: true,
			}},
			route:       rawRoute(db, route.ProtocolTCP, 5432, 5432),
			wantReason:  pic.ReasonPangolinError,
			wantMessage: []string{"public port 5432/tcp: Pangolin refused to update the resource: 400 Validation error: Cannot update proxyPort", "flags.allow_raw_resources: true"},
		},
		{
			name:        "a server with raw resources off: Pangolin's refusal, and where the switch is",
			deny:        true,
			route:       rawRoute(db, route.ProtocolTCP, 5432, 5432),
			wantReason:  pic.ReasonPangolinError,
			wantMessage: []string{"public port 5432/tcp: Pangolin refused to create the resource: 400 Raw resources are not allowed", "flags.allow_raw_resources: true"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, func(o *pangolinsim.Options) { o.DenyRawResources = tc.deny })
			var seeded []pangolinsim.Resource
			for _, r := range tc.seed {
				seeded = append(seeded, w.fake.SeedResource(r))
			}
			w.restart("default") // the seeds are in Pangolin before PIC starts
			// Twice: a refusal is a Warning each time, never an error to retry, and
			// never a delete.
			for range 2 {
				w.fake.ResetCounts()
				o := w.reconcile(db, tc.route)
				require.NoError(t, o.err)
				if tc.wantReason == "" {
					assert.Empty(t, o.rejections)
				} else {
					require.Len(t, o.rejections, 1)
					assert.Equal(t, tc.wantReason, o.rejections[0].Reason)
					for _, m := range tc.wantMessage {
						assert.Contains(t, o.rejections[0].Message, m)
					}
				}
				assert.Zero(t, w.fake.Deletes())
			}
			all := w.fake.Resources()
			assert.Len(t, all, len(seeded)+tc.wantCreated)
			if len(seeded) > 0 {
				assert.Equal(t, seeded, all[:len(seeded)], "what was there is untouched")
			}
		})
	}
}
