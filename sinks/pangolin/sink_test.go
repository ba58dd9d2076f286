package pangolin

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

func TestCreatePublishesMarkedResourceWithTargets(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	rt := web(shop, "app.example.com", 8080)
	rt.Paths = append(rt.Paths, route.PathRule{Path: "/api", Match: route.MatchPrefix, Backend: backend("api", "shop", 9090)})

	o := w.converge(shop, rt)
	require.Len(t, o.applied.Created, 1)

	r := w.resourceOn("app.example.com")
	assert.Equal(t, "pic-default-"+niceID("default", mark{Kind: "Ingress", Namespace: "shop", Name: "web", Host: "app.example.com"})[len("pic-default-"):], r.NiceID)
	assert.Regexp(t, `^pic-default-[0-9a-f]{16}$`, r.NiceID)
	assert.Equal(t, "app.example.com (Ingress shop/web)", r.Name)
	assert.Equal(t, "app", *r.Subdomain)
	assert.Equal(t, "domain1", r.DomainID)
	assert.True(t, r.Enabled)
	assert.False(t, r.SSO, "the default, written at once: Pangolin creates with SSO on")
	assert.False(t, r.BlockAccess)

	targets := w.fake.Targets(r.ID)
	for i := range targets {
		targets[i].ID = 0
	}
	assert.ElementsMatch(t, []pangolinsim.Target{
		{ResourceID: r.ID, SiteID: 1, IP: "api.shop.svc.cluster.local", Port: 9090, Method: "http", Enabled: true,
			Path: `^/api(/.*)?$`, PathMatchType: "regex", Priority: 104, HCHealth: "unknown"},
		{ResourceID: r.ID, SiteID: 1, IP: "web.shop.svc.cluster.local", Port: 8080, Method: "http", Enabled: true,
			Path: "/", PathMatchType: "prefix", Priority: 101, HCHealth: "unknown"},
	}, targets)

	var rules []string
	for _, rt := range w.fake.Routers() {
		rules = append(rules, rt.Rule+" -> "+strings.Join(rt.Servers, ","))
	}
	assert.ElementsMatch(t, []string{
		"Host(`app.example.com`) && PathRegexp(`^/api(/.*)?$`) -> http://api.shop.svc.cluster.local:9090",
		"Host(`app.example.com`) && PathPrefix(`/`) -> http://web.shop.svc.cluster.local:8080",
	}, rules, "what Traefik serves")

	existing, err := w.sink.Current(w.ctx, shop)
	require.NoError(t, err)
	require.Len(t, existing, 1)
	assert.Equal(t, engine.ResourceName(shop, "app.example.com"), existing[0].Name)
	assert.Equal(t, engine.PhaseReady, existing[0].Status.Phase)
	assert.Equal(t, "https://app.example.com", existing[0].Status.URL)
	assert.Contains(t, w.wake.heard().hosts, "app.example.com", "the host's claimants look again")
}

func TestSteadyStateWritesNothing(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	rt := web(shop, "app.example.com", 8080)
	rt.Access.SSO = ptrTo(true)
	w.converge(shop, rt)
	writes := w.fake.Writes()

	t.Run("a second reconcile plans and writes nothing", func(t *testing.T) {
		o := w.converge(shop, rt)
		assert.True(t, o.plan.Empty(), "plan: %+v", o.plan)
		assert.Equal(t, writes, w.fake.Writes())
	})
	t.Run("a restarted PIC writes nothing and reports no update", func(t *testing.T) {
		w.restart("default")
		o := w.converge(shop, rt)
		assert.Empty(t, o.applied.Updated, "nothing changed in Pangolin")
		assert.Equal(t, writes, w.fake.Writes())
		o = w.converge(shop, rt)
		assert.True(t, o.plan.Empty(), "the tunnel's namespace is known after the first reconcile: %+v", o.plan)
	})
	t.Run("a resync that finds nothing changed wakes no one", func(t *testing.T) {
		w.wake.heard().owners = nil
		require.NoError(t, w.sink.Refresh(w.ctx))
		assert.Empty(t, w.wake.heard().owners)
		assert.Equal(t, writes, w.fake.Writes())
	})
}

func TestUpdates(t *testing.T) {
	shop := ingress("shop", "web")
	cases := []struct {
		name   string
		change func(*route.Route)
		// writes are the requests that may be sent, in order.
		writes []string
		check  func(t *testing.T, w *world, before, after pangolinsim.Resource)
	}{
		{
			name:   "a backend port change updates the target in place",
			change: func(r *route.Route) { r.Paths[0].Backend.Port = 8081 },
			writes: []string{"POST /v1/target/1"},
			check: func(t *testing.T, w *world, before, after pangolinsim.Resource) {
				tg := w.fake.Targets(after.ID)
				require.Len(t, tg, 1)
				assert.Equal(t, 1, tg[0].ID, "same target")
				assert.Equal(t, 8081, tg[0].Port)
			},
		},
		{
			name: "a path change creates the new target before deleting the old one",
			change: func(r *route.Route) {
				r.Paths[0].Path, r.Paths[0].Match = "/shop", route.MatchExact
			},
			writes: []string{"PUT /v1/resource/1/target", "DELETE /v1/target/1"},
			check: func(t *testing.T, w *world, before, after pangolinsim.Resource) {
				tg := w.fake.Targets(after.ID)
				require.Len(t, tg, 1)
				assert.Equal(t, "/shop", tg[0].Path)
				assert.Equal(t, "exact", tg[0].PathMatchType)
			},
		},
		{
			name: "a new path adds a target and keeps the others",
			change: func(r *route.Route) {
				r.Paths = append(r.Paths, route.PathRule{Path: "/api", Match: route.MatchPrefix, Backend: backend("api", "shop", 9090)})
			},
			writes: []string{"PUT /v1/resource/1/target"},
			check: func(t *testing.T, w *world, before, after pangolinsim.Resource) {
				assert.Len(t, w.fake.Targets(after.ID), 2)
			},
		},
		{
			name:   "turning SSO on reaches Pangolin",
			change: func(r *route.Route) { r.Access.SSO = ptrTo(true) },
			writes: []string{"POST /v1/resource/1"},
			check: func(t *testing.T, w *world, before, after pangolinsim.Resource) {
				assert.True(t, after.SSO)
			},
		},
		{
			name:   "blocking access reaches Pangolin",
			change: func(r *route.Route) { r.Access.BlockAccess = ptrTo(true) },
			writes: []string{"POST /v1/resource/1"},
			check: func(t *testing.T, w *world, before, after pangolinsim.Resource) {
				assert.True(t, after.BlockAccess)
			},
		},
		{
			name:   "a subdomain override moves the host with subdomain and domain together",
			change: func(r *route.Route) { r.SubdomainOverride = "shop" },
			writes: []string{"POST /v1/resource/1"},
			check: func(t *testing.T, w *world, before, after pangolinsim.Resource) {
				assert.Equal(t, before.ID, after.ID, "moved, not recreated")
				assert.Equal(t, "shop.example.com", after.FullDomain)
				assert.Equal(t, "shop.example.com (Ingress shop/web, host app.example.com)", after.Name)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			rt := web(shop, "app.example.com", 8080)
			w.converge(shop, rt)
			before := w.fake.Resources()[0]
			w.fault(nil)

			c.change(&rt)
			o := w.converge(shop, rt)
			assert.Len(t, o.applied.Updated, 1)
			assert.Equal(t, c.writes, w.writesLogged())
			after := w.fake.Resources()
			require.Len(t, after, 1)
			c.check(t, w, before, after[0])

			n := w.fake.Writes()
			o = w.converge(shop, rt)
			assert.True(t, o.plan.Empty(), "converged: %+v", o.plan)
			assert.Equal(t, n, w.fake.Writes())
		})
	}
}

func TestDriftIsRestored(t *testing.T) {
	shop := ingress("shop", "web")
	cases := []struct {
		name string
		edit func(t *testing.T, w *world, r pangolinsim.Resource)
	}{
		{"a disabled resource is enabled again", func(t *testing.T, w *world, r pangolinsim.Resource) {
			_, err := w.api.UpdateResource(w.ctx, r.ID, pangolinapi.ResourceUpdate{Enabled: ptrTo(false)})
			require.NoError(t, err)
		}},
		{"a disabled target is enabled again", func(t *testing.T, w *world, r pangolinsim.Resource) {
			tg := w.fake.Targets(r.ID)[0]
			_, err := w.api.UpdateTarget(w.ctx, tg.ID, pangolinapi.TargetUpdate{SiteID: 1, IP: tg.IP, Enabled: ptrTo(false)})
			require.NoError(t, err)
		}},
		{"a target moved to another port is moved back", func(t *testing.T, w *world, r pangolinsim.Resource) {
			tg := w.fake.Targets(r.ID)[0]
			_, err := w.api.UpdateTarget(w.ctx, tg.ID, pangolinapi.TargetUpdate{SiteID: 1, IP: tg.IP, Port: 1234})
			require.NoError(t, err)
		}},
		{"SSO turned on by hand is turned off again", func(t *testing.T, w *world, r pangolinsim.Resource) {
			_, err := w.api.UpdateResource(w.ctx, r.ID, pangolinapi.ResourceUpdate{SSO: ptrTo(true)})
			require.NoError(t, err)
		}},
		{"a stray target is deleted", func(t *testing.T, w *world, r pangolinsim.Resource) {
			_, err := w.api.CreateTarget(w.ctx, r.ID, pangolinapi.TargetSpec{SiteID: 1, IP: "evil.example.org", Port: 80, Method: "http", Enabled: true})
			require.NoError(t, err)
		}},
		{"a deleted resource is created again", func(t *testing.T, w *world, r pangolinsim.Resource) {
			require.NoError(t, w.api.DeleteResource(w.ctx, r.ID))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			rt := web(shop, "app.example.com", 8080)
			w.converge(shop, rt)
			want := w.fake.Routers()
			c.edit(t, w, w.fake.Resources()[0])

			w.wake.heard().owners = nil
			require.NoError(t, w.sink.Refresh(w.ctx))
			assert.Equal(t, []route.Origin{{Kind: "Ingress", Namespace: "shop", Name: "web"}}, w.wake.heard().owners, "the owner is woken")
			w.converge(shop, rt)
			got := w.fake.Routers()
			for i := range got {
				got[i].Name, got[i].ResourceID = "", 0
			}
			for i := range want {
				want[i].Name, want[i].ResourceID = "", 0
			}
			assert.Equal(t, want, got)
			o := w.converge(shop, rt)
			assert.True(t, o.plan.Empty(), "converged: %+v", o.plan)
		})
	}
}

func TestDeleteRemovesTheResource(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080), web(shop, "www.example.com", 8080))
	require.Len(t, w.fake.Resources(), 2)

	o := w.converge(shop, web(shop, "www.example.com", 8080))
	assert.Len(t, o.applied.Deleted, 1)
	assert.Equal(t, []string{"www.example.com"}, w.hosts())

	o = w.converge(route.Origin{Kind: "Ingress", Namespace: "shop", Name: "web"}) // gone: no UID, as the core releases it
	assert.Len(t, o.applied.Deleted, 1)
	assert.Empty(t, w.fake.Resources())
	assert.Empty(t, w.fake.Routers())
}

func TestOthersResourcesAreUntouched(t *testing.T) {
	w := newWorld(t)
	other := w.fake.SeedResource(pangolinsim.Resource{
		NiceID: niceID("cluster-b", mark{Kind: "Ingress", Namespace: "shop", Name: "web", Host: "b.example.com"}),
		Name:   "b.example.com (Ingress shop/web)", DomainID: "domain1", Subdomain: ptrTo("b"), Enabled: true,
	})
	forged := w.fake.SeedResource(pangolinsim.Resource{
		NiceID: "pic-default-0123456789abcdef", Name: "forged.example.com (Ingress shop/web)",
		DomainID: "domain1", Subdomain: ptrTo("forged"), Enabled: true,
	})
	hand := w.fake.SeedResource(pangolinsim.Resource{Name: "my blog", DomainID: "domain1", Subdomain: ptrTo("blog"), Enabled: true, SSO: true})
	w.fake.SeedTarget(pangolinsim.Target{ResourceID: hand.ID, SiteID: 1, IP: "10.0.0.9", Port: 80, Method: "http", Enabled: true})
	before := w.fake.Resources()
	w.restart("default")
	shop := ingress("shop", "web")

	existing, err := w.sink.Current(w.ctx, shop)
	require.NoError(t, err)
	assert.Empty(t, existing, "another owner id's, a forged mark and a hand-made resource are not PIC's")

	o := w.reconcile(shop, web(shop, "blog.example.com", 8080), web(shop, "app.example.com", 8080))
	require.NoError(t, o.err)
	require.Len(t, o.rejections, 1)
	rj := o.rejections[0]
	assert.Equal(t, pic.ReasonHostTakenInPangolin, rj.Reason)
	assert.Equal(t, "blog.example.com", rj.Host)
	assert.Equal(t, `host blog.example.com is already served by Pangolin resource `+hand.NiceID+` ("my blog"), which PIC did not create: PIC leaves it untouched and publishes no duplicate`, rj.Message)
	assert.Len(t, o.applied.Created, 1, "the other host is published")

	after := w.fake.Resources()
	assert.Equal(t, before, after[:3], "the three decoys are as they were")
	assert.Len(t, w.fake.Targets(hand.ID), 1)
	w.converge(shop)
	assert.Equal(t, before, w.fake.Resources(), "deleting everything of the object's leaves them too")
	_, _ = other, forged
}

func TestOutageDeletesNothing(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	before := w.fake.Resources()

	w.fault(simtest.Outage(http.StatusServiceUnavailable))
	assert.Error(t, w.sink.Refresh(w.ctx))
	_, err := w.sink.Current(w.ctx, shop)
	assert.ErrorContains(t, err, "503", "a failed read is an error, never an empty list")
	assert.True(t, plugin.IsUnreachable(err), "the core tells the object Pangolin is out of reach")
	o := w.reconcile(shop) // the object was deleted meanwhile
	assert.Error(t, o.err)
	assert.Empty(t, o.applied.Deleted)

	w.fault(nil)
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Equal(t, before, w.fake.Resources(), "nothing was deleted")

	t.Run("a write during an outage is an error, for the core to retry", func(t *testing.T) {
		w.fault(simtest.When(simtest.IsWrite, simtest.Outage(http.StatusBadGateway)))
		o := w.reconcile(shop, web(shop, "app.example.com", 8080), web(shop, "new.example.com", 8080))
		assert.ErrorContains(t, o.err, "502")
		assert.True(t, plugin.IsUnreachable(o.err))
		assert.Empty(t, o.rejections)
		w.fault(nil)
		w.converge(shop, web(shop, "app.example.com", 8080), web(shop, "new.example.com", 8080))
		assert.ElementsMatch(t, []string{"app.example.com", "new.example.com"}, w.hosts())
	})
}

func TestRefusedRequestIsRejectionNotError(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.fault(simtest.When(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/target")
	}, simtest.Outage(http.StatusBadRequest)))

	o := w.reconcile(shop, web(shop, "app.example.com", 8080))
	require.NoError(t, o.err, "no error: the core would retry it at once, forever")
	require.Len(t, o.rejections, 1)
	assert.Equal(t, pic.ReasonPangolinError, o.rejections[0].Reason)
	assert.Equal(t, "host app.example.com: Pangolin refused to create a target: 400 Bad Request", o.rejections[0].Message)

	w.fault(nil)
	w.converge(shop, web(shop, "app.example.com", 8080))
	assert.Len(t, w.fake.Routers(), 1, "the next reconcile completes it")
}

func TestInterruptedCreate(t *testing.T) {
	shop := ingress("shop", "web")
	markPost := func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/resource/")
	}
	t.Run("a failed marking deletes the unmarked resource", func(t *testing.T) {
		w := newWorld(t)
		w.fault(simtest.When(markPost, simtest.Outage(http.StatusServiceUnavailable)))
		o := w.reconcile(shop, web(shop, "app.example.com", 8080))
		assert.ErrorContains(t, o.err, "mark the new resource")
		assert.Empty(t, w.fake.Resources(), "no unmarked duplicate is left")
		w.fault(nil)
		w.converge(shop, web(shop, "app.example.com", 8080))
		w.resourceOn("app.example.com")
	})
	t.Run("a marking Pangolin refuses deletes the resource and is a rejection", func(t *testing.T) {
		w := newWorld(t)
		w.fault(simtest.When(markPost, simtest.Outage(http.StatusConflict)))
		o := w.reconcile(shop, web(shop, "app.example.com", 8080))
		require.NoError(t, o.err)
		require.Len(t, o.rejections, 1)
		assert.Equal(t, pic.ReasonPangolinError, o.rejections[0].Reason)
		assert.Empty(t, w.fake.Resources())
	})
	t.Run("a resource left unmarked by a stop between the two calls is adopted", func(t *testing.T) {
		w := newWorld(t)
		w.fault(simtest.When(func(r *http.Request) bool {
			return markPost(r) || r.Method == http.MethodDelete
		}, simtest.Outage(http.StatusServiceUnavailable)))
		o := w.reconcile(shop, web(shop, "app.example.com", 8080))
		require.Error(t, o.err)
		stray := w.resourceOn("app.example.com")
		assert.NotContains(t, stray.NiceID, "pic-", "Pangolin's random niceId")

		w.fault(nil)
		w.restart("default")
		o = w.converge(shop, web(shop, "app.example.com", 8080))
		adopted := w.resourceOn("app.example.com")
		assert.Equal(t, stray.ID, adopted.ID, "adopted, not duplicated")
		assert.Equal(t, niceID("default", markOf(shop, "app.example.com", "app.example.com")), adopted.NiceID)
		assert.Len(t, w.fake.Targets(adopted.ID), 1)
		assert.Len(t, w.fake.Routers(), 1)
		assert.Empty(t, o.applied.Created)
		assert.Len(t, o.applied.Updated, 1)
	})
	t.Run("a resource named alike with targets and no mark is not adopted", func(t *testing.T) {
		w := newWorld(t)
		mark := markOf(shop, "app.example.com", "app.example.com")
		other := w.fake.SeedResource(pangolinsim.Resource{Name: resourceName(mark), DomainID: "domain1", Subdomain: ptrTo("app"), Enabled: true})
		w.fake.SeedTarget(pangolinsim.Target{ResourceID: other.ID, SiteID: 1, IP: "elsewhere.example.org", Port: 80, Method: "http", Enabled: true})

		o := w.reconcile(shop, web(shop, "app.example.com", 8080))
		require.NoError(t, o.err)
		assert.Equal(t, []string{pic.ReasonHostTakenInPangolin}, reasons(o.rejections))
		assert.Equal(t, other, w.resourceOn("app.example.com"), "left untouched")
		assert.Equal(t, "elsewhere.example.org", w.fake.Targets(other.ID)[0].IP)
	})
}

func TestHosts(t *testing.T) {
	shop := ingress("shop", "web")
	cases := []struct {
		name       string
		route      func(route.Route) route.Route
		domains    []pangolinsim.Domain
		wantHost   string
		wantSub    *string
		wantReason string
	}{
		{name: "an apex host is published without a subdomain", route: func(r route.Route) route.Route { r.Host = "example.com"; return r },
			wantHost: "example.com"},
		{name: "a host with dots in its subdomain is published", route: func(r route.Route) route.Route { r.Host = "a.b.example.com"; return r },
			wantHost: "a.b.example.com", wantSub: ptrTo("a.b")},
		{name: "a host under the longest matching domain", route: func(r route.Route) route.Route { r.Host = "app.eu.example.com"; return r },
			domains: []pangolinsim.Domain{
				{ID: "d1", BaseDomain: "example.com", Verified: true},
				{ID: "d2", BaseDomain: "eu.example.com", Verified: true},
			},
			wantHost: "app.eu.example.com", wantSub: ptrTo("app")},
		{name: "a host under no domain of the org is DomainNotFound", route: func(r route.Route) route.Route { r.Host = "app.other.org"; return r },
			wantReason: pic.ReasonDomainNotFound},
		{name: "a host under an unverified domain is DomainNotFound", route: func(r route.Route) route.Route { r.Host = "app.example.com"; return r },
			domains:    []pangolinsim.Domain{{ID: "d1", BaseDomain: "example.com"}},
			wantReason: pic.ReasonDomainNotFound},
		{name: "a CNAME domain serves its base", route: func(r route.Route) route.Route { r.Host = "cname.example.net"; return r },
			domains:  []pangolinsim.Domain{{ID: "c", BaseDomain: "cname.example.net", Type: "cname", Verified: true}},
			wantHost: "cname.example.net"},
		{name: "a CNAME domain serves no subdomain", route: func(r route.Route) route.Route { r.Host = "app.cname.example.net"; return r },
			domains:    []pangolinsim.Domain{{ID: "c", BaseDomain: "cname.example.net", Type: "cname", Verified: true}},
			wantReason: pic.ReasonDomainNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, func(o *pangolinsim.Options) { o.Domains = c.domains })
			o := w.reconcile(shop, c.route(web(shop, "", 8080)))
			require.NoError(t, o.err)
			if c.wantReason != "" {
				require.Len(t, o.rejections, 1)
				assert.Equal(t, c.wantReason, o.rejections[0].Reason)
				assert.Zero(t, w.fake.Writes())
				return
			}
			require.Empty(t, o.rejections)
			r := w.resourceOn(c.wantHost)
			assert.Equal(t, c.wantSub, r.Subdomain)
			o = w.converge(shop, c.route(web(shop, "", 8080)))
			assert.True(t, o.plan.Empty(), "converged: %+v", o.plan)
		})
	}
}

func TestOwnersAreWoken(t *testing.T) {
	w := newWorld(t)
	shop, blog := ingress("shop", "web"), ingress("blog", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	w.converge(blog, web(blog, "blog.example.com", 8080))

	t.Run("the first read wakes every owner found, so that orphans are released", func(t *testing.T) {
		w.restart("default")
		assert.ElementsMatch(t, []route.Origin{
			{Kind: "Ingress", Namespace: "shop", Name: "web"},
			{Kind: "Ingress", Namespace: "blog", Name: "web"},
		}, w.wake.heard().owners)
		o := w.converge(route.Origin{Kind: "Ingress", Namespace: "blog", Name: "web"}) // gone while PIC was down
		assert.Len(t, o.applied.Deleted, 1)
		assert.Equal(t, []string{"app.example.com"}, w.hosts())
	})
	t.Run("another owner id's PIC wakes no one for them", func(t *testing.T) {
		w.restart("cluster-b")
		assert.Empty(t, w.wake.heard().owners)
	})
}

func TestTunnelIsSite(t *testing.T) {
	w := newWorld(t, func(o *pangolinsim.Options) {
		o.Sites = []pangolinsim.Site{{ID: 1, NiceID: site}, {ID: 2, NiceID: "far-away-site", Offline: true}}
	})
	cases := []struct {
		name    string
		ref     route.TunnelRef
		state   string
		message string
	}{
		{"an online site is ready, whatever the namespace", route.TunnelRef{Namespace: "any", Name: site}, "Ready", ""},
		{"an offline site is not ready", route.TunnelRef{Namespace: "shop", Name: "far-away-site"}, "NotReady",
			`Pangolin site "far-away-site" is not online: its routes are written, and Pangolin serves them once the site connects`},
		{"a missing site is not found, naming the org", route.TunnelRef{Namespace: "shop", Name: "nope"}, "NotFound",
			`Pangolin site "nope" does not exist in org "interop": `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check, err := w.sink.Tunnel(w.ctx, c.ref)
			require.NoError(t, err)
			assert.Equal(t, c.state, string(check.State))
			if c.message == "" {
				assert.Empty(t, check.Message)
			} else {
				assert.Contains(t, check.Message, c.message)
			}
		})
	}
	t.Run("answers are cached, and a resync wakes the waiters of a site that changed", func(t *testing.T) {
		reads := w.fake.Reads()
		_, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Namespace: "shop", Name: "far-away-site"})
		require.NoError(t, err)
		assert.Equal(t, reads, w.fake.Reads())
		w.fake.SetSiteOnline("far-away-site", true)
		require.NoError(t, w.sink.Refresh(w.ctx))
		assert.Equal(t, []route.TunnelRef{{Namespace: "shop", Name: "far-away-site"}}, w.wake.heard().tunnels)
		check, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Namespace: "shop", Name: "far-away-site"})
		require.NoError(t, err)
		assert.Equal(t, "Ready", string(check.State))
	})
	t.Run("the workers asking at once about a site send one request", func(t *testing.T) {
		w.fault(simtest.Latency(50 * time.Millisecond))
		before := w.fake.Counts()["GET /v1/org/:orgId/site/:niceId"]
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				check, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Namespace: "shop", Name: "never-asked-before"})
				assert.NoError(t, err)
				assert.Equal(t, "NotFound", string(check.State))
			})
		}
		wg.Wait()
		assert.Equal(t, before+1, w.fake.Counts()["GET /v1/org/:orgId/site/:niceId"])
	})
	t.Run("an outage is an error", func(t *testing.T) {
		w.fault(simtest.Outage(http.StatusInternalServerError))
		_, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Name: "never-asked"})
		assert.Error(t, err)
	})
}

func TestFeatures(t *testing.T) {
	w := newWorld(t, func(o *pangolinsim.Options) {
		o.Domains = []pangolinsim.Domain{
			{ID: "d1", BaseDomain: "Example.com", Verified: true},
			{ID: "d2", BaseDomain: "pending.org"},
		}
	})
	f := w.sink.Features()
	assert.Equal(t, engine.Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, AccessPolicies: true, Rewrites: true, RequestHeaders: true, RawResources: true, HealthChecks: true, Domains: []string{"example.com"}}, f)

	none := newWorld(t, func(o *pangolinsim.Options) { o.Domains = []pangolinsim.Domain{} })
	assert.NotNil(t, none.sink.Features().Domains, "no domain allows no host, not every host")
}

func TestKeyNeverShows(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	var texts []string
	collect := func(o outcome) {
		if o.err != nil {
			texts = append(texts, o.err.Error())
		}
		for _, rj := range o.rejections {
			texts = append(texts, rj.Message)
		}
	}
	// A server that echoes what it was sent, the key included, in its error message.
	echo := func(rw http.ResponseWriter, r *http.Request) bool {
		body := `{"data":null,"success":false,"error":true,"message":"bad header ` + r.Header.Get("Authorization") + `","status":400}`
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusBadRequest)
		_, _ = rw.Write([]byte(body))
		return true
	}
	for _, f := range []simtest.Fault{
		simtest.Outage(http.StatusServiceUnavailable),
		simtest.When(simtest.IsWrite, echo),
		simtest.DropConnection(),
	} {
		w.fault(f)
		collect(w.reconcile(shop, web(shop, "app.example.com", 8080)))
		if err := w.sink.Refresh(w.ctx); err != nil {
			texts = append(texts, err.Error())
		}
		if _, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Name: "other"}); err != nil {
			texts = append(texts, err.Error())
		}
	}
	texts = append(texts, Options{APIKey: secretKey.Token()}.String())
	require.NotEmpty(t, texts)
	for _, s := range texts {
		assert.NotContains(t, s, secretKey.Secret)
	}
}

func TestMoveOntoAnotherResourcesHostIsConflict(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	rt := web(shop, "app.example.com", 8080)
	w.converge(shop, rt)
	hand := w.fake.SeedResource(pangolinsim.Resource{Name: "blog", DomainID: "domain1", Subdomain: ptrTo("blog"), Enabled: true})
	before, writes := w.fake.Resources(), w.fake.Writes()

	rt.SubdomainOverride = "blog"
	o := w.reconcile(shop, rt)
	require.NoError(t, o.err)
	require.Len(t, o.rejections, 2)
	assert.Equal(t, pic.ReasonHostTakenInPangolin, o.rejections[0].Reason)
	assert.Contains(t, o.rejections[0].Message, hand.NiceID)
	assert.False(t, o.rejections[0].Kept)
	assert.Equal(t, pic.ReasonReplacementRefused, o.rejections[1].Reason)
	assert.True(t, o.rejections[1].Kept, "the move is refused: the old host stays published")
	assert.Equal(t, "host app.example.com stays published as it is: what replaces it, host blog.example.com (HostTakenInPangolin), was refused; it goes once its replacement is published", o.rejections[1].Message)
	assert.Equal(t, writes, w.fake.Writes(), "no move, no write")
	assert.Equal(t, before, w.fake.Resources())
}

// TestOutageReportsNoWrite: while every write fails, Apply reports nothing created,
// updated or deleted, whatever it tried.
func TestOutageReportsNoWrite(t *testing.T) {
	w := newWorld(t)
	app := ingress("shop", "app")
	w.converge(app, web(app, "app.example.com", 80))
	other := ingress("shop", "other")
	w.converge(other, web(other, "other.example.com", 80))

	w.fault(simtest.When(simtest.IsWrite, simtest.Outage(http.StatusServiceUnavailable)))
	for range 3 {
		moved := w.reconcile(app, web(app, "app.example.com", 8081))
		require.Error(t, moved.err)
		assert.Empty(t, moved.applied.Created)
		assert.Empty(t, moved.applied.Updated, "a failed target update is no Updated")
		assert.Empty(t, moved.applied.Deleted)

		created := w.reconcile(ingress("shop", "new"), web(ingress("shop", "new"), "new.example.com", 80))
		require.Error(t, created.err)
		assert.Empty(t, created.applied.Created)

		gone := w.reconcile(other)
		require.Error(t, gone.err)
		assert.Empty(t, gone.applied.Deleted)
	}
	w.fault(nil)
	moved := w.reconcile(app, web(app, "app.example.com", 8081))
	require.NoError(t, moved.err)
	assert.Len(t, moved.applied.Updated, 1, "once Pangolin answers, the update is reported")
}

// TestDescribeNamesWhatUsersFindInPangolin: events name the resource's niceId, as
// Pangolin's dashboard shows it, and the site without a namespace.
func TestDescribeNamesWhatUsersFindInPangolin(t *testing.T) {
	w := newWorld(t)
	app := ingress("shop", "app")
	o := w.converge(app, web(app, "app.example.com", 80))
	require.Len(t, o.applied.Created, 1)
	d := w.sink.Describe(o.applied.Created[0])
	assert.Equal(t, "Pangolin resource", d.Kind)
	assert.Equal(t, w.resourceOn("app.example.com").NiceID, d.Name)
	assert.Equal(t, "site "+site, d.Tunnel)
	assert.Nil(t, d.Object)
}

// TestA404ForATargetWriteForgetsNoResource: Pangolin answers 404 for other things a
// write names than the resource (a site it no longer has). The resource, read back, is
// there: the write is refused, and the resource stays known, its host its owner's.
func TestA404ForATargetWriteForgetsNoResource(t *testing.T) {
	w := newWorld(t)
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	w.fault(simtest.When(func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/target")
	}, simtest.Outage(http.StatusNotFound)))

	o := w.reconcile(shop, web(shop, "app.example.com", 9090))
	require.NoError(t, o.err, "the resource is there: a refusal, not a resource to create again")
	assert.Equal(t, []string{pic.ReasonPangolinError}, reasons(o.rejections))
	holders, err := w.sink.Holders(w.ctx, "app.example.com")
	require.NoError(t, err)
	assert.Equal(t, []route.Origin{{Kind: "Ingress", Namespace: "shop", Name: "web"}}, holders, "the host is still its owner's")

	w.fault(nil)
	w.converge(shop, web(shop, "app.example.com", 9090))
	assert.Len(t, w.fake.Resources(), 1, "no resource created beside it")
	assert.Equal(t, 9090, w.fake.Targets(w.resourceOn("app.example.com").ID)[0].Port)
}
