package pangolin

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// clock is a time the test moves: the drift period passes when the test says so.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// onClock restarts w's sink on a clock of the test's.
func onClock(w *world) *clock {
	w.t.Helper()
	c := &clock{now: time.Unix(1800000000, 0)}
	w.sink = New(w.api, Options{OwnerID: "default", APIKey: secretKey.Token(), AccessRecords: w.accessRecords})
	w.sink.now = c.Now
	w.wake = &wakes{changes: w.sink.Declare().Changes()}
	require.NoError(w.t, w.sink.Refresh(w.ctx))
	return c
}

// perResourceReads counts the reads of one resource: GET, targets, policies.
func perResourceReads(f *simtest.Server) int {
	c := f.Counts()
	return c["GET /v1/resource/:resourceId"] + c["GET /v1/resource/:resourceId/targets"] + c["GET /v1/resource/:resourceId/policies"]
}

// Between full reads a refresh reads the lists only, and writes nothing.
func TestLightRefreshReadsTheListOnly(t *testing.T) {
	w := newWorld(t)
	for i := range 5 {
		o := ingress("shop", "web"+strconv.Itoa(i))
		w.converge(o, web(o, "app"+strconv.Itoa(i)+".example.com", 8080))
	}
	c := onClock(w)
	w.fake.ResetCounts()
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Zero(t, perResourceReads(w.fake), "unchanged list items are not read again")
	assert.Equal(t, 1, w.fake.Counts()["GET /v1/org/:orgId/resources"])
	assert.Equal(t, 3, w.fake.Reads(), "the domain, site and resource lists")
	assert.Zero(t, w.fake.Writes())
	assert.Empty(t, w.wake.heard().owners[5:], "nothing changed: no owner woken")

	c.Add(DefaultDriftPeriod)
	w.fake.ResetCounts()
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Equal(t, 10, perResourceReads(w.fake), "after the drift period, every resource whole")
	assert.Zero(t, w.fake.Writes())

	w.fake.ResetCounts()
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Zero(t, perResourceReads(w.fake), "and light again until the next drift period")
	for i := range 5 {
		o := ingress("shop", "web"+strconv.Itoa(i))
		w.converge(o, web(o, "app"+strconv.Itoa(i)+".example.com", 8080))
	}
	assert.Zero(t, w.fake.Writes(), "converged: no write")
}

// PIC's own write changes the list item: the next light refresh reads that resource
// again, finds what PIC wrote, and wakes no one.
func TestLightRefreshRereadsWhatChanged(t *testing.T) {
	w := newWorld(t)
	a, b := ingress("shop", "a"), ingress("shop", "b")
	w.converge(a, web(a, "a.example.com", 8080))
	w.converge(b, web(b, "b.example.com", 8080))
	onClock(w)
	w.converge(a, web(a, "a.example.com", 9090))
	w.wake.heard().owners = nil
	w.fake.ResetCounts()
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Equal(t, 2, perResourceReads(w.fake), "a's resource and targets, not b's")
	assert.Empty(t, w.wake.heard().owners)

	_, err := w.api.UpdateResource(w.ctx, w.resourceOn("b.example.com").ID, pangolinapi.ResourceUpdate{SSO: ptrTo(true)})
	require.NoError(t, err)
	w.fake.ResetCounts()
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Equal(t, 2, perResourceReads(w.fake))
	assert.Equal(t, []route.Origin{{Kind: "Ingress", Namespace: "shop", Name: "b"}}, w.wake.heard().owners, "sso set by hand shows in the list")
}

// An edit the list does not show (blockAccess, a target's path) is found by the
// first full read after the drift period, and repaired.
func TestHiddenDriftIsFoundAfterTheDriftPeriod(t *testing.T) {
	shop := ingress("shop", "web")
	cases := map[string]func(t *testing.T, w *world, r pangolinsim.Resource){
		"blockAccess set by hand": func(t *testing.T, w *world, r pangolinsim.Resource) {
			_, err := w.api.UpdateResource(w.ctx, r.ID, pangolinapi.ResourceUpdate{BlockAccess: ptrTo(true)})
			require.NoError(t, err)
		},
		"a header set by hand": func(t *testing.T, w *world, r pangolinsim.Resource) {
			_, err := w.api.UpdateResource(w.ctx, r.ID, pangolinapi.ResourceUpdate{Headers: &[]pangolinapi.Header{{Name: "X-Hand", Value: "1"}}})
			require.NoError(t, err)
		},
		"a target's priority edited by hand": func(t *testing.T, w *world, r pangolinsim.Resource) {
			tg := w.fake.Targets(r.ID)[0]
			_, err := w.api.UpdateTarget(w.ctx, tg.ID, pangolinapi.TargetUpdate{SiteID: 1, IP: tg.IP, Priority: 7})
			require.NoError(t, err)
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			rt := web(shop, "app.example.com", 8080)
			w.converge(shop, rt)
			c := onClock(w)
			w.wake.heard().owners = nil
			edit(t, w, w.fake.Resources()[0])

			require.NoError(t, w.sink.Refresh(w.ctx))
			assert.Empty(t, w.wake.heard().owners, "the list does not show it")
			c.Add(DefaultDriftPeriod)
			require.NoError(t, w.sink.Refresh(w.ctx))
			assert.Equal(t, []route.Origin{{Kind: "Ingress", Namespace: "shop", Name: "web"}}, w.wake.heard().owners, "the full read does")
			o := w.converge(shop, rt)
			assert.False(t, o.plan.Empty(), "repaired")
			assert.False(t, w.fake.Resources()[0].BlockAccess)
			assert.Empty(t, w.fake.Resources()[0].Headers)
			assert.Equal(t, w.fake.Targets(w.fake.Resources()[0].ID)[0].Priority, 101)
			assert.True(t, w.converge(shop, rt).plan.Empty())
		})
	}
}

// The first reconcile does not wait for every resource to be read: Current reads the
// owner's own, while the first refresh is still reading another's.
func TestCurrentAnswersBeforeTheFirstRefreshEnds(t *testing.T) {
	w := newWorld(t)
	a, b := ingress("shop", "a"), ingress("shop", "b")
	w.converge(a, web(a, "a.example.com", 8080))
	w.converge(b, web(b, "b.example.com", 8080))
	held := "/v1/resource/" + strconv.Itoa(w.resourceOn("b.example.com").ID)
	release := make(chan struct{})
	w.fault(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && r.URL.Path == held {
			<-release
		}
		return false
	})
	w.sink = New(w.api, Options{OwnerID: "default", APIKey: secretKey.Token(), AccessRecords: w.accessRecords})
	w.wake = &wakes{changes: w.sink.Declare().Changes()}
	refreshed := make(chan error, 1)
	go func() { refreshed <- w.sink.Refresh(w.ctx) }()

	existing, err := w.sink.Current(w.ctx, a)
	require.NoError(t, err)
	require.Len(t, existing, 1)
	assert.Equal(t, "a.example.com", existing[0].Host)
	select {
	case err := <-refreshed:
		t.Fatalf("the refresh ended (%v) while b's read was held", err)
	default:
	}
	o := w.reconcile(a, web(a, "a.example.com", 8080))
	require.NoError(t, o.err)
	assert.Empty(t, w.writesLogged(), "a is converged: nothing to write")
	assert.ElementsMatch(t, []route.Origin{{Kind: "Ingress", Namespace: "shop", Name: "a"}, {Kind: "Ingress", Namespace: "shop", Name: "b"}},
		w.wake.heard().owners, "every owner found is woken once the list is read")
	close(release)
	require.NoError(t, <-refreshed)
	w.converge(b, web(b, "b.example.com", 8080))
	assert.Empty(t, w.writesLogged())
}

// A read that fails after the list makes Current fail, for every owner: nothing is
// deleted, and the next refresh starts again.
func TestFirstRefreshFailingAfterTheListDeletesNothing(t *testing.T) {
	w := newWorld(t)
	a := ingress("shop", "a")
	w.converge(a, web(a, "a.example.com", 8080))
	before := w.fake.Resources()
	w.fault(simtest.When(func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/v1/resource/") },
		simtest.Outage(http.StatusServiceUnavailable)))
	w.sink = New(w.api, Options{OwnerID: "default", APIKey: secretKey.Token(), AccessRecords: w.accessRecords})
	w.wake = &wakes{changes: w.sink.Declare().Changes()}
	require.Error(t, w.sink.Refresh(w.ctx))
	o := w.reconcile(a) // deleted meanwhile
	require.Error(t, o.err)
	assert.True(t, plugin.IsUnreachable(o.err))
	assert.Empty(t, o.applied.Deleted)
	assert.Equal(t, before, w.fake.Resources())

	w.fault(nil)
	require.NoError(t, w.sink.Refresh(w.ctx))
	o = w.reconcile(a)
	require.NoError(t, o.err)
	assert.Len(t, o.applied.Deleted, 1, "once read, a gone object's resource is removed")
}

// A refresh's reads are in flight MaxConcurrentReads at a time, never more.
func TestReadsStayWithinTheLimit(t *testing.T) {
	w := newWorld(t)
	for i := range 6 {
		o := ingress("shop", "web"+strconv.Itoa(i))
		w.converge(o, web(o, "app"+strconv.Itoa(i)+".example.com", 8080))
	}
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, peak := 0, 0
	w.fault(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v1/resource/") {
			return false
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return false
	})
	w.sink = New(w.api, Options{OwnerID: "default", APIKey: secretKey.Token(), AccessRecords: w.accessRecords, MaxConcurrentReads: 2})
	w.wake = &wakes{changes: w.sink.Declare().Changes()}
	refreshed := make(chan error, 1)
	go func() { refreshed <- w.sink.Refresh(w.ctx) }()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return inFlight == 2 }, 10*time.Second, time.Millisecond)
	close(release)
	require.NoError(t, <-refreshed)
	assert.Equal(t, 2, peak, "two at once, never more")
	assert.Equal(t, 12, perResourceReads(w.fake))
}

// A reconcile's read waits behind a few of the first refresh's, not behind all of them:
// the refresh queues no more readers than it may run at once.
func TestCurrentReadsAheadOfTheFirstRefresh(t *testing.T) {
	const resources, limit = 30, 2
	w := newWorld(t)
	for i := range resources {
		o := ingress("shop", fmt.Sprintf("web%02d", i))
		w.converge(o, web(o, fmt.Sprintf("app%02d.example.com", i), 8080))
	}
	// The refresh reads the resources in the order of their nice ids: a reconcile
	// reading the middle one would find half of them queued before its read, if the
	// refresh queued them all at once.
	all := w.fake.Resources()
	slices.SortFunc(all, func(a, b pangolinsim.Resource) int { return strings.Compare(a.NiceID, b.NiceID) })
	middle := all[len(all)/2]
	var owner int
	_, err := fmt.Sscanf(middle.FullDomain, "app%02d.example.com", &owner)
	require.NoError(t, err)
	wanted := "/v1/resource/" + strconv.Itoa(middle.ID)

	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	w.fault(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v1/resource/") || strings.Count(r.URL.Path, "/") != 3 {
			return false
		}
		mu.Lock()
		order = append(order, r.URL.Path)
		mu.Unlock()
		<-release
		return false
	})
	w.sink = New(w.api, Options{OwnerID: "default", APIKey: secretKey.Token(), AccessRecords: w.accessRecords, MaxConcurrentReads: limit})
	w.wake = &wakes{changes: w.sink.Declare().Changes()}
	refreshed := make(chan error, 1)
	go func() { refreshed <- w.sink.Refresh(w.ctx) }()
	// The refresh's first reads are held, and whatever else it queues has time to: a
	// goroutine waiting for a slot of the refresh's errgroup shows nowhere, so a settle
	// is the only wait there is.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == limit }, 10*time.Second, time.Millisecond)
	time.Sleep(100 * time.Millisecond)

	current := make(chan error, 1)
	go func() {
		existing, err := w.sink.Current(w.ctx, ingress("shop", fmt.Sprintf("web%02d", owner)))
		if err == nil && len(existing) != 1 {
			err = fmt.Errorf("%d resources found, want 1", len(existing))
		}
		current <- err
	}()
	time.Sleep(100 * time.Millisecond) // Current queues for its read, which shows nowhere either
	close(release)
	require.NoError(t, <-current)
	require.NoError(t, <-refreshed)

	mu.Lock()
	defer mu.Unlock()
	position := slices.Index(order, wanted)
	require.NotEqual(t, -1, position, "the resource was read")
	assert.LessOrEqual(t, position, 2*limit, "read after the refresh's reads in flight, not after every one queued: %v", order)
}
