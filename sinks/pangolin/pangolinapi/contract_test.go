package pangolinapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// TestContract is what PIC relies on from Pangolin's Integration API, asserted once,
// against the in-repo fake by default and against a real server when the
// PIC_CONTRACT_PANGOLIN_* variables are set (see doc.go). Each assertion says which PIC
// behaviour it protects; quirks PIC does not depend on are logged, not asserted.
func TestContract(t *testing.T) {
	c := newContract(t)
	ctx := context.Background()
	cl := c.client

	t.Run("a resource is created, read, marked, listed and deleted", func(t *testing.T) {
		r := c.create(t, "crud")
		// PIC reads the routed host from fullDomain and compares its own lower-case
		// subdomain with the stored one.
		assert.Equal(t, c.host("crud"), r.FullDomain)
		assert.Equal(t, c.sub("crud"), r.Subdomain)
		assert.Equal(t, c.domain.DomainID, r.DomainID)
		// A new resource serves as soon as it has a target: PIC does not enable it.
		assert.True(t, r.Enabled)
		assert.NotEmpty(t, r.NiceID, "the server picks a niceId")

		got, err := cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		// SSO is on after create (CreateResource reports it so without a GET): PIC must
		// switch it off explicitly for a route that asks for no SSO.
		assert.True(t, got.SSO, "effective SSO after create")
		assert.False(t, got.BlockAccess)
		assert.Equal(t, r.FullDomain, got.FullDomain)

		// PIC marks its resources with a niceId it derives; the mark must stick and be
		// found again, since the API cannot create with it nor fetch by it.
		mark := c.sub("crud-mark")
		upd, err := cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{NiceID: mark})
		require.NoError(t, err)
		assert.Equal(t, mark, upd.NiceID)
		assert.Equal(t, r.FullDomain, upd.FullDomain, "setting a niceId leaves the host alone")
		found, ok, err := cl.FindResourceByNiceID(ctx, mark)
		require.NoError(t, err)
		require.True(t, ok, "the resource is found by its mark")
		assert.Equal(t, r.ResourceID, found.ResourceID)
		assert.Equal(t, r.FullDomain, found.FullDomain)

		// PIC's diff reads sso, blockAccess and enabled back; the list's 0/1 sso must
		// agree with GET's boolean.
		off, on := false, true
		upd, err = cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{SSO: &off, BlockAccess: &on})
		require.NoError(t, err)
		assert.False(t, upd.SSO)
		assert.True(t, upd.BlockAccess)
		got, err = cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.False(t, got.SSO, "GET shows the SSO just written")
		assert.True(t, got.BlockAccess)
		found, _, err = cl.FindResourceByNiceID(ctx, mark)
		require.NoError(t, err)
		assert.False(t, found.SSO, "the list shows it too")

		upd, err = cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Enabled: &off})
		require.NoError(t, err)
		assert.False(t, upd.Enabled)
		assert.False(t, upd.SSO, "an update that leaves sso alone still reports the effective value")

		// PIC deletes by id and treats "not found" as done, on the first try or a retry.
		require.NoError(t, cl.DeleteResource(ctx, r.ResourceID))
		_, err = cl.GetResource(ctx, r.ResourceID)
		assert.True(t, pangolinapi.IsNotFound(err), "GET after delete: %v", err)
		err = cl.DeleteResource(ctx, r.ResourceID)
		assert.True(t, pangolinapi.IsNotFound(err), "second delete: %v", err)
	})

	t.Run("a niceId is unique in the org and validated", func(t *testing.T) {
		a, b := c.create(t, "uniq-a"), c.create(t, "uniq-b")
		mark := c.sub("uniq")
		_, err := cl.UpdateResource(ctx, a.ResourceID, pangolinapi.ResourceUpdate{NiceID: mark})
		require.NoError(t, err)
		// Two PIC instances racing for one mark cannot both get it.
		_, err = cl.UpdateResource(ctx, b.ResourceID, pangolinapi.ResourceUpdate{NiceID: mark})
		var ae *pangolinapi.APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, http.StatusConflict, ae.Status, ae.Message)
		assert.False(t, pangolinapi.IsTransient(err), "a conflict is not retried as is")
		// PIC's marks must avoid what the server refuses: dots and underscores.
		_, err = cl.UpdateResource(ctx, b.ResourceID, pangolinapi.ResourceUpdate{NiceID: c.sub("bad_mark")})
		assert.True(t, pangolinapi.IsClientError(err), "an underscore: %v", err)
		_, err = cl.UpdateResource(ctx, b.ResourceID, pangolinapi.ResourceUpdate{NiceID: c.host("dots")})
		assert.True(t, pangolinapi.IsClientError(err), "dots: %v", err)
	})

	t.Run("the niceId lookup is exact although the query is a substring search", func(t *testing.T) {
		short, long := c.create(t, "find"), c.create(t, "find-longer")
		_, err := cl.UpdateResource(ctx, short.ResourceID, pangolinapi.ResourceUpdate{NiceID: c.sub("find")})
		require.NoError(t, err)
		_, err = cl.UpdateResource(ctx, long.ResourceID, pangolinapi.ResourceUpdate{NiceID: c.sub("find-longer")})
		require.NoError(t, err)

		// PIC must not adopt another object's resource whose mark merely contains its own.
		both, err := cl.ListResources(ctx, c.sub("find"))
		require.NoError(t, err)
		assert.Len(t, both, 2, "the query matches both")
		found, ok, err := cl.FindResourceByNiceID(ctx, c.sub("find"))
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, short.ResourceID, found.ResourceID)
		_, ok, err = cl.FindResourceByNiceID(ctx, c.sub("fin"))
		require.NoError(t, err)
		assert.False(t, ok, "a prefix of a niceId finds nothing")
	})

	t.Run("the host moves when subdomain and domainId are sent together", func(t *testing.T) {
		r := c.create(t, "move-from")
		// PIC changes a resource's host in place (no unrouted window) through Host.
		upd, err := cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Host: &pangolinapi.Host{DomainID: c.domain.DomainID, Subdomain: c.sub("move-to")}})
		require.NoError(t, err)
		assert.Equal(t, c.host("move-to"), upd.FullDomain)
		assert.Equal(t, c.sub("move-to"), upd.Subdomain)
		got, err := cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.Equal(t, c.host("move-to"), got.FullDomain)

		// A resource under an AccessPolicy moves closed: blockAccess in the same write.
		closed := true
		upd, err = cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{
			Host: &pangolinapi.Host{DomainID: c.domain.DomainID, Subdomain: c.sub("move-closed")}, BlockAccess: &closed,
		})
		require.NoError(t, err)
		assert.Equal(t, c.host("move-closed"), upd.FullDomain)
		assert.True(t, upd.BlockAccess, "moved and closed in one write")

		// Not relied upon (the client always sends both): does a subdomain alone still
		// leave the routed host behind?
		rep := c.raw(t, http.MethodPost, "/resource/"+strconv.Itoa(r.ResourceID), `{"subdomain":"`+c.sub("move-alone")+`"}`, true)
		got, err = cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		t.Logf("subdomain alone: status %d, fullDomain %s (%s with the defect, %s without)",
			rep.Status, got.FullDomain, c.host("move-closed"), c.host("move-alone"))
	})

	t.Run("targets keep path, match type and priority through create, update and delete", func(t *testing.T) {
		r := c.create(t, "targets")
		backend := c.prefix + ".invalid" // never resolves: the route leads nowhere
		api, err := cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{
			SiteID: c.site.SiteID, IP: backend, Port: 9090, Method: pangolinapi.MethodHTTP, Enabled: true,
			Path: "^/api(/.*)?$", PathMatchType: pangolinapi.MatchRegex, Priority: 104,
		})
		require.NoError(t, err)
		web, err := cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{
			SiteID: c.site.SiteID, IP: backend, Port: 8080, Method: pangolinapi.MethodHTTP, Enabled: true,
			Path: "/", PathMatchType: pangolinapi.MatchPrefix, Priority: 101,
		})
		require.NoError(t, err)
		// PIC's path rules become targets; its diff compares these fields.
		want := pangolinapi.Target{TargetID: api.TargetID, ResourceID: r.ResourceID, SiteID: c.site.SiteID, IP: backend, Port: 9090,
			Method: "http", Enabled: true, Path: "^/api(/.*)?$", PathMatchType: "regex", Priority: 104}
		assert.Equal(t, want, api)
		list, err := cl.ListTargets(ctx, r.ResourceID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.ElementsMatch(t, []int{api.TargetID, web.TargetID}, []int{list[0].TargetID, list[1].TargetID})
		for _, tg := range list {
			if tg.TargetID == api.TargetID {
				assert.Equal(t, want, tg, "the list reports what create returned")
			}
		}

		// PIC changes a backend in place: the target keeps its id, and what the update
		// leaves out keeps its value.
		moved, err := cl.UpdateTarget(ctx, api.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: backend, Port: 9091})
		require.NoError(t, err)
		want.Port = 9091
		assert.Equal(t, want, moved)
		got, err := cl.GetTarget(ctx, api.TargetID)
		require.NoError(t, err)
		assert.Equal(t, want, got)

		// A path rule changes and goes away in place too.
		off := false
		moved, err = cl.UpdateTarget(ctx, api.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: backend,
			Path: &pangolinapi.PathMatch{Path: "/v2", Type: pangolinapi.MatchExact}, Priority: 120, Enabled: &off})
		require.NoError(t, err)
		assert.Equal(t, "/v2", moved.Path)
		assert.Equal(t, "exact", moved.PathMatchType)
		assert.Equal(t, 120, moved.Priority)
		assert.False(t, moved.Enabled)
		moved, err = cl.UpdateTarget(ctx, api.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: backend, Path: &pangolinapi.PathMatch{}})
		require.NoError(t, err)
		assert.Empty(t, moved.Path)
		assert.Empty(t, moved.PathMatchType)

		// The nested delete route does not exist: a client using it would be told
		// "404" and, without UnknownRoute, believe the target already gone.
		rep := c.raw(t, http.MethodDelete, fmt.Sprintf("/resource/%d/target/%d", r.ResourceID, web.TargetID), "", true)
		assert.Equal(t, http.StatusNotFound, rep.Status)
		assert.False(t, rep.JSON, "an HTML page, not the envelope: %s", rep.Body)
		_, err = cl.GetTarget(ctx, web.TargetID)
		require.NoError(t, err, "the target is still there")

		require.NoError(t, cl.DeleteTarget(ctx, web.TargetID))
		_, err = cl.GetTarget(ctx, web.TargetID)
		assert.True(t, pangolinapi.IsNotFound(err), "GET after delete: %v", err)
		err = cl.DeleteTarget(ctx, web.TargetID)
		assert.True(t, pangolinapi.IsNotFound(err), "second delete: %v", err)
	})

	t.Run("router names are the group key cut at 50 characters, as PIC computes it", func(t *testing.T) {
		if c.traefikURL == "" {
			t.Skip("set " + traefikEnv + " to the real server's traefik-config URL to check router names")
		}
		r := c.create(t, "naming")
		long := "/" + strings.Repeat("a", 60) // past the 50 characters whatever the resource id
		paths := []struct {
			path string
			port int
		}{{"/short", 8080}, {long + "1", 8081}, {long + "2", 8082}}
		for _, p := range paths {
			_, err := cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{
				SiteID: c.site.SiteID, IP: c.prefix + ".invalid", Port: p.port, Method: pangolinapi.MethodHTTP, Enabled: true,
				Path: p.path, PathMatchType: pangolinapi.MatchPrefix, Priority: 150,
			})
			require.NoError(t, err)
		}
		var routers map[string]traefikRouter
		require.Eventually(t, func() bool {
			routers = c.routers(t, r.FullDomain)
			return len(routers) > 0
		}, 10*time.Second, 200*time.Millisecond, "no router for %s: is the site served by this server?", r.FullDomain)

		short := pangolin.RouterKey(r.ResourceID, "/short", "prefix", "", "")
		assert.Contains(t, routers, short+"-"+nameKey(r.Name)+"-router", "a short key is kept whole: %v", keys(routers))
		longKey := pangolin.RouterKey(r.ResourceID, long+"1", "prefix", "", "")
		require.Equal(t, longKey, pangolin.RouterKey(r.ResourceID, long+"2", "prefix", "", ""), "PIC expects the two long paths to meet")
		var named []string
		for name := range routers {
			if strings.HasPrefix(name, longKey+"-") {
				named = append(named, name)
			}
		}
		switch len(named) {
		case 1:
			t.Logf("Pangolin cuts router names as PIC expects: the long paths share %s", named[0])
			assert.Len(t, routers, 2, "one of the two long paths has no router")
		case 2:
			t.Logf("this Pangolin keeps long router names apart (%v): PIC's equivalent forms are harmless there", named)
		default:
			t.Errorf("no router named after %s for the long paths: Pangolin names routers otherwise than PIC expects: %v", longKey, keys(routers))
		}
	})

	t.Run("a target's rewrite and a resource's headers are kept, and the rewrite names the router", func(t *testing.T) {
		r := c.create(t, "filters")
		// PIC writes a Gateway API rewrite as a regex replacement on its element-wise
		// prefix expression, and compares what it reads back with what it wants.
		spec := pangolinapi.TargetSpec{
			SiteID: c.site.SiteID, IP: c.prefix + ".invalid", Port: 8080, Method: pangolinapi.MethodHTTP, Enabled: true,
			Path: "^/v1(/.*)?$", PathMatchType: pangolinapi.MatchRegex, Priority: 103,
			Rewrite: pangolinapi.Rewrite{Path: "/v2$1", Type: pangolinapi.MatchRegex},
		}
		created, err := cl.CreateTarget(ctx, r.ResourceID, spec)
		require.NoError(t, err)
		assert.Equal(t, "/v2$1", created.RewritePath)
		assert.Equal(t, "regex", created.RewritePathType)
		list, err := cl.ListTargets(ctx, r.ResourceID)
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, created, list[0], "the list reports the rewrite as create returned it")
		// A changed rewrite is an update in place, path sent with it.
		moved, err := cl.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: spec.IP,
			Path: &pangolinapi.PathMatch{Path: spec.Path, Type: spec.PathMatchType}, Rewrite: &pangolinapi.Rewrite{Path: "/v3$1", Type: "regex"}})
		require.NoError(t, err)
		assert.Equal(t, "/v3$1", moved.RewritePath)
		// A rule that loses its filter keeps its target: null clears the rewrite.
		cleared, err := cl.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: spec.IP,
			Path: &pangolinapi.PathMatch{Path: spec.Path, Type: spec.PathMatchType}, Rewrite: &pangolinapi.Rewrite{}})
		require.NoError(t, err)
		assert.Empty(t, cleared.RewritePath)
		assert.Empty(t, cleared.RewritePathType)
		_, err = cl.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: spec.IP,
			Path: &pangolinapi.PathMatch{Path: spec.Path, Type: spec.PathMatchType}, Rewrite: &pangolinapi.Rewrite{Path: "/v3$1", Type: "regex"}})
		require.NoError(t, err)

		// Headers: the update response encodes them as a string, GET as an array; PIC
		// reads both the same.
		headers := []pangolinapi.Header{{Name: "X-Env", Value: "prod"}, {Name: "X-Team", Value: "k8s"}}
		upd, err := cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Headers: &headers})
		require.NoError(t, err)
		assert.Equal(t, headers, upd.Headers)
		got, err := cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.Equal(t, headers, got.Headers)
		upd, err = cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Headers: &[]pangolinapi.Header{}})
		require.NoError(t, err)
		assert.Empty(t, upd.Headers, "an empty list clears them")

		if c.traefikURL == "" {
			t.Log("set " + traefikEnv + " to check the rewrite's router name and middleware on a real server")
			return
		}
		var routers map[string]traefikRouter
		require.Eventually(t, func() bool {
			routers = c.routers(t, r.FullDomain)
			return len(routers) > 0
		}, 10*time.Second, 200*time.Millisecond, "no router for %s", r.FullDomain)
		key := pangolin.RouterKey(r.ResourceID, spec.Path, spec.PathMatchType, "/v3$1", "regex")
		require.Contains(t, routers, key+"-"+nameKey(r.Name)+"-router", "the rewrite is part of the router name: %v", keys(routers))
		assert.Equal(t, []string{"badger", "rewrite-r" + strconv.Itoa(r.ResourceID) + "-" + key}, routers[key+"-"+nameKey(r.Name)+"-router"].Middlewares)
	})

	t.Run("deleting a resource deletes its targets", func(t *testing.T) {
		r := c.create(t, "cascade")
		tg, err := cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{SiteID: c.site.SiteID, IP: c.prefix + ".invalid", Port: 80, Method: pangolinapi.MethodHTTP, Enabled: true})
		require.NoError(t, err)
		// PIC deletes a host with one call and leaves no orphan target behind.
		require.NoError(t, cl.DeleteResource(ctx, r.ResourceID))
		_, err = cl.GetTarget(ctx, tg.TargetID)
		assert.True(t, pangolinapi.IsNotFound(err), "target after its resource's delete: %v", err)
	})

	t.Run("every resource on a host is listed, so strays can be found", func(t *testing.T) {
		first := c.create(t, "dup")
		second, err := cl.CreateResource(ctx, c.host("dup")+" (2)", pangolinapi.Host{DomainID: c.domain.DomainID, Subdomain: c.sub("dup")})
		if err != nil {
			// Not relied upon: PIC enforces uniqueness itself because Pangolin does not.
			t.Logf("the server now refuses a second resource on a host: %v", err)
			return
		}
		c.track(t, second.ResourceID)
		// PIC finds the resources on a host by listing, then deletes those it does
		// not keep.
		list, err := cl.ListResources(ctx, c.host("dup"))
		require.NoError(t, err)
		var ids []int
		for _, r := range list {
			if r.FullDomain == c.host("dup") {
				ids = append(ids, r.ResourceID)
			}
		}
		assert.ElementsMatch(t, []int{first.ResourceID, second.ResourceID}, ids)
	})

	t.Run("lists page through every item", func(t *testing.T) {
		r := c.create(t, "page-a")
		c.create(t, "page-b")
		c.create(t, "page-c")
		for port := 1; port <= 3; port++ {
			_, err := cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{SiteID: c.site.SiteID, IP: c.prefix + ".invalid", Port: port, Method: pangolinapi.MethodHTTP, Enabled: true})
			require.NoError(t, err)
		}
		// The client's paging (parameters per endpoint, pages from 1) must see all of
		// PIC's resources, or PIC would recreate what it cannot see.
		paged := c.newClient(t, func(cfg *pangolinapi.Config) { cfg.PageSize = 1 })
		res, err := paged.ListResources(ctx, c.sub("page-"))
		require.NoError(t, err)
		assert.Len(t, res, 3)
		if len(res) == 3 {
			assert.Equal(t, []string{c.host("page-a"), c.host("page-b"), c.host("page-c")}, []string{res[0].Name, res[1].Name, res[2].Name}, "by name")
		}
		tgs, err := paged.ListTargets(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.Len(t, tgs, 3)
		doms, err := paged.ListDomains(ctx)
		require.NoError(t, err)
		assert.Contains(t, doms, c.domain)
		sites, err := paged.ListSites(ctx)
		require.NoError(t, err)
		listed := c.site
		listed.Online = false // the list does not report it
		i := slices.IndexFunc(sites, func(s pangolinapi.Site) bool { return s.SiteID == c.site.SiteID })
		if assert.GreaterOrEqual(t, i, 0, "the site is listed") {
			got := sites[i]
			got.ResourceCount = 0 // only the list reports it, and the resources of this run change it
			assert.Equal(t, listed, got)
		}

		// The other paging style is refused, so a client that mixed them up would fail
		// loudly rather than read one page.
		for _, path := range []string{
			c.orgPath("/resources?limit=1&offset=0"),
			fmt.Sprintf("/resource/%d/targets?pageSize=1", r.ResourceID),
			c.orgPath("/domains?page=1"),
			c.orgPath("/sites?limit=1"),
		} {
			rep := c.raw(t, http.MethodGet, path, "", true)
			assert.Equal(t, http.StatusBadRequest, rep.Status, "%s: %s", path, rep.Body)
			assert.Contains(t, rep.Message, "Unrecognized key", path)
		}
	})

	t.Run("an unknown route is an HTML 404 the client does not take for a missing object", func(t *testing.T) {
		// There is no lookup by niceId: PIC must not assume one.
		rep := c.raw(t, http.MethodGet, c.orgPath("/resource/"+c.sub("none")), "", true)
		assert.Equal(t, http.StatusNotFound, rep.Status)
		assert.False(t, rep.JSON, rep.Body)
		assert.Contains(t, rep.Body, "Cannot GET")

		wrong := c.newClient(t, func(cfg *pangolinapi.Config) {
			cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/") + "/" + c.sub("nowhere")
		})
		err := wrong.DeleteTarget(ctx, 1)
		var ae *pangolinapi.APIError
		require.ErrorAs(t, err, &ae)
		assert.True(t, ae.UnknownRoute, ae.Error())
		// PIC treats "not found" on delete as done: a wrong route must not pass for it.
		assert.False(t, pangolinapi.IsNotFound(err))
	})

	t.Run("create refuses the keys PIC sets by update", func(t *testing.T) {
		// Why CreateResource sends only name, mode, subdomain and domainId and PIC
		// sets the niceId, SSO and state afterwards.
		for _, extra := range []string{`"niceId":"` + c.sub("nice") + `"`, `"sso":false`, `"enabled":false`, `"blockAccess":true`} {
			body := `{"name":"` + c.host("refused") + `","mode":"http","subdomain":"` + c.sub("refused") + `","domainId":"` + c.domain.DomainID + `",` + extra + `}`
			rep := c.raw(t, http.MethodPut, c.orgPath("/resource"), body, true)
			assert.Equal(t, http.StatusBadRequest, rep.Status, "%s: %s", extra, rep.Body)
			assert.Contains(t, rep.Message, "Unrecognized key", extra)
		}
	})

	t.Run("a missing or wrong key is refused with 401, which is not transient", func(t *testing.T) {
		// PIC reports a bad key as a configuration error instead of retrying forever.
		rep := c.raw(t, http.MethodGet, c.orgPath("/resources"), "", false)
		assert.Equal(t, http.StatusUnauthorized, rep.Status, rep.Body)
		id, _, _ := strings.Cut(c.cfg.APIKey, ".")
		bad := c.newClient(t, func(cfg *pangolinapi.Config) { cfg.APIKey = id + ".not-the-secret" })
		_, err := bad.ListDomains(ctx)
		var ae *pangolinapi.APIError
		require.True(t, errors.As(err, &ae), "%v", err)
		assert.Equal(t, http.StatusUnauthorized, ae.Status)
		assert.True(t, pangolinapi.IsClientError(err))
		assert.False(t, pangolinapi.IsTransient(err))
	})

	t.Run("an apex resource has no subdomain", func(t *testing.T) {
		if c.real {
			// Only this run's own names are touched on a real server, and the apex is
			// the org's: a second resource on it could take over its auth settings.
			t.Skip("not against a real server: the apex belongs to the org")
		}
		r, err := cl.CreateResource(ctx, "apex", pangolinapi.Host{DomainID: c.domain.DomainID})
		require.NoError(t, err)
		c.track(t, r.ResourceID)
		// PIC publishes a bare domain as the apex.
		assert.Equal(t, c.domain.BaseDomain, r.FullDomain)
		assert.Empty(t, r.Subdomain)
	})
}

// orgPath is path under the contract's org.
func (c *contract) orgPath(path string) string { return "/org/" + c.cfg.Org + path }

// nameKey is a resource name as Pangolin puts it in router names: letters, digits and
// '-', runs of anything else one '-', cut at 50 characters first.
func nameKey(name string) string {
	if len(name) > 50 {
		name = name[:50]
	}
	var b strings.Builder
	for _, r := range name {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else if !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
