package pangolin

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// reasonsOf are the reasons of rejections, by host.
func reasonsOf(rejections []route.Rejection) map[string][]string {
	out := map[string][]string{}
	for _, rj := range rejections {
		out[rj.Host] = append(out[rj.Host], rj.Reason)
	}
	return out
}

func TestRefusedPortMoveKeepsTheLivePort(t *testing.T) {
	w := newWorld(t)
	db := service("prod", "db")
	w.converge(db, rawRoute(db, route.ProtocolTCP, 45432, 5432))
	live := w.rawOn("tcp", 45432)
	liveTargets := w.fake.Targets(live.ID)
	w.fake.SetDenyRawResources(true)

	o := w.reconcile(db, rawRoute(db, route.ProtocolTCP, 45441, 5432))
	require.NoError(t, o.err, "a refusal is no outage")
	assert.Equal(t, map[string][]string{
		"tcp:45441": {pic.ReasonPangolinError},
		"tcp:45432": {pic.ReasonReplacementRefused},
	}, reasonsOf(o.rejections))
	for _, rj := range o.rejections {
		assert.Equal(t, rj.Reason == pic.ReasonReplacementRefused, rj.Kept, "only the refusal to delete the live port keeps it published")
		if rj.Reason == pic.ReasonReplacementRefused {
			assert.Equal(t, "public port 45432/tcp stays published as it is: what replaces it, public port 45441/tcp (PangolinError), was refused; it goes once its replacement is published", rj.Message)
		}
	}
	assert.Empty(t, o.applied.Deleted)
	assert.Equal(t, live, w.rawOn("tcp", 45432), "the live port is kept as it is")
	assert.Equal(t, liveTargets, w.fake.Targets(live.ID), "with its targets")

	w.fake.SetDenyRawResources(false)
	o = w.reconcile(db, rawRoute(db, route.ProtocolTCP, 45441, 5432))
	require.NoError(t, o.err)
	assert.Empty(t, o.rejections)
	assert.Len(t, w.fake.Targets(w.rawOn("tcp", 45441).ID), 1, "the new port carries its target")
	for _, r := range w.fake.Resources() {
		assert.NotEqual(t, 45432, r.ProxyPort, "the old port goes once the new one is published")
	}
}

func TestRefusedHostChangeKeepsTheLiveHost(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	live := w.resourceOn("app.example.com")
	liveTargets := w.fake.Targets(live.ID)
	hand := w.fake.SeedResource(pangolinsim.Resource{Name: "blog", DomainID: "domain1", Subdomain: ptrTo("blog"), Enabled: true})

	o := w.reconcile(shop, web(shop, "blog.example.com", 8080))
	require.NoError(t, o.err)
	assert.Equal(t, map[string][]string{
		"blog.example.com": {pic.ReasonHostTakenInPangolin},
		"app.example.com":  {pic.ReasonReplacementRefused},
	}, reasonsOf(o.rejections))
	assert.Empty(t, o.applied.Deleted)
	assert.Equal(t, live, w.resourceOn("app.example.com"), "the live host is kept as it is")
	assert.Equal(t, liveTargets, w.fake.Targets(live.ID), "with its targets")
	assert.Equal(t, hand, w.resourceOn("blog.example.com"), "the hand-made resource is untouched")
}

func TestRenamedHostIsCreatedBeforeTheOldIsDeleted(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	w.fault(nil)

	w.converge(shop, web(shop, "www.example.com", 8080))
	writes := w.writesLogged()
	require.NotEmpty(t, writes)
	assert.Equal(t, "PUT /v1/org/interop/resource", writes[0], "the replacement is created first")
	assert.Equal(t, "DELETE /v1/resource/1", writes[len(writes)-1], "the old one is deleted last")
	assert.Equal(t, []string{"www.example.com"}, w.hosts())
	assert.NotEmpty(t, w.fake.Targets(w.resourceOn("www.example.com").ID))
}

func TestRefusedMoveInPlaceKeepsTheLiveHost(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	rt := web(shop, "app.example.com", 8080)
	w.converge(shop, rt)
	live := w.resourceOn("app.example.com")

	rt.DomainOverride = "example.org" // not a domain of the org
	o := w.reconcile(shop, rt)
	require.NoError(t, o.err)
	assert.Equal(t, []string{pic.ReasonDomainNotFound}, reasons(o.rejections))
	assert.True(t, o.rejections[0].Hold, "what is published for the host is held")
	assert.Equal(t, live, w.resourceOn("app.example.com"))
	assert.Len(t, w.fake.Targets(live.ID), 1)
}

func TestReplacementWithoutItsTargetsKeepsTheOld(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	live := w.resourceOn("app.example.com")
	w.fault(simtest.When(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/target")
	}, simtest.Outage(http.StatusBadRequest)))

	o := w.reconcile(shop, web(shop, "www.example.com", 8080))
	require.NoError(t, o.err)
	assert.Equal(t, map[string][]string{
		"www.example.com": {pic.ReasonPangolinError},
		"app.example.com": {pic.ReasonReplacementRefused},
	}, reasonsOf(o.rejections))
	assert.Equal(t, live, w.resourceOn("app.example.com"), "a replacement that carries no target replaces nothing")
	assert.Len(t, w.fake.Targets(live.ID), 1)

	// The next pass finds the replacement existing, still without a target: it is still
	// what the old host waits for.
	o = w.reconcile(shop, web(shop, "www.example.com", 8080))
	require.NoError(t, o.err)
	assert.Equal(t, map[string][]string{
		"www.example.com": {pic.ReasonPangolinError},
		"app.example.com": {pic.ReasonReplacementRefused},
	}, reasonsOf(o.rejections))
	assert.Empty(t, o.applied.Deleted, "a later pass does not delete what the refused replacement was to replace")
	assert.Equal(t, live, w.resourceOn("app.example.com"))
	assert.Len(t, w.fake.Targets(live.ID), 1)

	w.fault(nil)
	o = w.reconcile(shop, web(shop, "www.example.com", 8080))
	require.NoError(t, o.err)
	assert.Empty(t, o.rejections)
	assert.Equal(t, []string{"www.example.com"}, w.hosts(), "the old host goes once its replacement serves")
	assert.Len(t, w.fake.Targets(w.resourceOn("www.example.com").ID), 1)
}

// TestReplacementShortOfATargetKeepsTheOld: a replacement that landed with some of its
// targets, Pangolin having refused another, is short of what it replaces.
func TestReplacementShortOfATargetKeepsTheOld(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	twoPaths := func(host string) route.Route {
		rt := web(shop, host, 8080)
		rt.Paths = append(rt.Paths, route.PathRule{Path: "/api", Match: route.MatchPrefix, Backend: backend("api", shop.Namespace, 9090)})
		return rt
	}
	w.converge(shop, twoPaths("app.example.com"))
	live := w.resourceOn("app.example.com")
	require.Len(t, w.fake.Targets(live.ID), 2)
	var targetPuts atomic.Int32
	w.fault(simtest.When(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/target") && targetPuts.Add(1) == 2
	}, simtest.Outage(http.StatusBadRequest)))

	o := w.reconcile(shop, twoPaths("www.example.com"))
	require.NoError(t, o.err)
	assert.Equal(t, map[string][]string{
		"www.example.com": {pic.ReasonPangolinError},
		"app.example.com": {pic.ReasonReplacementRefused},
	}, reasonsOf(o.rejections))
	assert.Len(t, w.fake.Targets(w.resourceOn("www.example.com").ID), 1, "the replacement landed with one target")
	assert.Equal(t, live, w.resourceOn("app.example.com"), "a replacement short of a target replaces nothing")
	assert.Len(t, w.fake.Targets(live.ID), 2)

	// The replacement serves with one target now, and the next pass writes the other:
	// refused again, the old host stays.
	targetPuts.Store(1)
	o = w.reconcile(shop, twoPaths("www.example.com"))
	require.NoError(t, o.err)
	assert.Equal(t, map[string][]string{
		"www.example.com": {pic.ReasonPangolinError},
		"app.example.com": {pic.ReasonReplacementRefused},
	}, reasonsOf(o.rejections))
	assert.Empty(t, o.applied.Deleted)
	assert.Len(t, w.fake.Targets(live.ID), 2)
}

// TestHoldersNameWhoKeepsAHost: an object whose move away from a host was refused
// still holds that host; a host is held under the key it is published on.
func TestHoldersNameWhoKeepsAHost(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	w.fake.SeedResource(pangolinsim.Resource{Name: "blog", DomainID: "domain1", Subdomain: ptrTo("blog"), Enabled: true})
	require.NotEmpty(t, w.reconcile(shop, web(shop, "blog.example.com", 8080)).rejections, "the move is refused")
	api := ingress("shop", "api")
	overridden := web(api, "x.example.com", 8080)
	overridden.SubdomainOverride = "api"
	w.converge(api, overridden)
	db := service("prod", "db")
	w.converge(db, rawRoute(db, route.ProtocolTCP, 45432, 5432))

	holders := func(host string) []route.Origin {
		got, err := w.sink.Holders(w.ctx, host)
		require.NoError(t, err)
		return got
	}
	noUID := func(o route.Origin) route.Origin {
		return route.Origin{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
	}
	assert.Equal(t, []route.Origin{noUID(shop)}, holders("app.example.com"), "the kept host is still the object's")
	assert.Empty(t, holders("blog.example.com"), "a hand-made resource is nobody's")
	assert.Equal(t, []route.Origin{noUID(api)}, holders("api.example.com"), "held on the published host")
	assert.Empty(t, holders("x.example.com"), "not on the host as written")
	assert.Equal(t, []route.Origin{noUID(db)}, holders("tcp:45432"))
	assert.Empty(t, holders("tcp:45433"))
}
