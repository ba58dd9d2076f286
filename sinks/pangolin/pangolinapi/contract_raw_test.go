package pangolinapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// notAllowed is Pangolin's refusal of a raw create with flags.allow_raw_resources off.
const notAllowed = "Raw resources are not allowed"

// TestContractRawResources is what PIC relies on for TCP and UDP ("raw") resources
// (the reference's section 15). Against a real server it uses public ports no resource
// of the org holds, drawn from 40000-49999, and backends that never resolve: a router on
// a port whose Traefik entry point exists would forward to nothing, and one on a port
// without an entry point is dead. With flags.allow_raw_resources off on that server the
// raw cases are skipped and the refusal is checked instead.
func TestContractRawResources(t *testing.T) {
	c := newContract(t)
	ctx := context.Background()
	cl := c.client

	port := c.freePort(t, pangolinapi.ModeTCP)
	probe, err := cl.CreateRawResource(ctx, c.prefix+"-raw-probe", pangolinapi.ModeTCP, port)
	allowed := err == nil
	if allowed {
		c.track(t, probe.ResourceID)
	} else {
		require.ErrorContains(t, err, notAllowed, "a raw create fails only for the server's switch")
	}

	t.Run("a TCP resource is created, marked, listed, moved and deleted", func(t *testing.T) {
		if !allowed {
			t.Skip("the server has flags.allow_raw_resources off")
		}
		port := c.freePort(t, pangolinapi.ModeTCP)
		r, err := cl.CreateRawResource(ctx, c.prefix+"-pg", pangolinapi.ModeTCP, port)
		require.NoError(t, err)
		c.track(t, r.ResourceID)
		// PIC reads a raw resource back by its mode and port; it has no host.
		assert.Equal(t, pangolinapi.ModeTCP, r.Mode)
		assert.Equal(t, port, r.ProxyPort)
		assert.Empty(t, r.FullDomain)
		assert.True(t, r.Enabled, "a new raw resource serves once it has a target")

		// PIC marks a raw resource like an HTTP one, in an update that carries only the
		// niceId: a raw resource refuses the access fields.
		mark := c.sub("pg-mark")
		upd, err := cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{NiceID: mark, Name: c.prefix + "-pg (marked)"})
		require.NoError(t, err)
		assert.Equal(t, mark, upd.NiceID)
		assert.Equal(t, port, upd.ProxyPort)
		found, ok, err := cl.FindResourceByNiceID(ctx, mark)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, pangolinapi.ModeTCP, found.Mode, "the list says the mode")
		assert.Equal(t, port, found.ProxyPort, "the list says the port")

		// PIC finds who holds a port by listing the mode's resources.
		holders, err := cl.ListRawResources(ctx, pangolinapi.ModeTCP)
		require.NoError(t, err)
		assert.True(t, holds(holders, r.ResourceID, port), "the TCP list holds it on %d", port)
		udp, err := cl.ListRawResources(ctx, pangolinapi.ModeUDP)
		require.NoError(t, err)
		assert.False(t, holds(udp, r.ResourceID, port), "the UDP list does not")

		// A raw target is site, ip and port: no method.
		backend := c.prefix + ".invalid"
		tg, err := cl.CreateRawTarget(ctx, r.ResourceID, pangolinapi.RawTargetSpec{SiteID: c.site.SiteID, IP: backend, Port: 5432, Enabled: true})
		require.NoError(t, err)
		assert.Equal(t, backend, tg.IP)
		assert.Equal(t, 5432, tg.Port)
		assert.Empty(t, tg.Method)
		targets, err := cl.ListTargets(ctx, r.ResourceID)
		require.NoError(t, err)
		require.Len(t, targets, 1)
		assert.Equal(t, tg.TargetID, targets[0].TargetID)
		// PIC changes the backend in place, as for HTTP.
		moved, err := cl.UpdateTarget(ctx, tg.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: backend, Port: 5433})
		require.NoError(t, err)
		assert.Equal(t, 5433, moved.Port)

		// PIC moves a resource whose port was edited by hand back to its own.
		other := c.freePort(t, pangolinapi.ModeTCP)
		upd, err = cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{ProxyPort: other})
		require.NoError(t, err)
		assert.Equal(t, other, upd.ProxyPort)
		got, err := cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.Equal(t, other, got.ProxyPort)
		assert.Equal(t, pangolinapi.ModeTCP, got.Mode)

		if c.traefikURL != "" {
			var routers map[string]rawRouter
			require.Eventually(t, func() bool {
				routers = c.rawRouters(t, "tcp", other)
				return len(routers) > 0
			}, 10*time.Second, 200*time.Millisecond, "no TCP router on tcp-%d", other)
			for name, rt := range routers {
				assert.Equal(t, "HostSNI(`*`)", rt.Rule, name)
				assert.Equal(t, []string{backend + ":5433"}, rt.Servers, name)
				assert.Empty(t, rt.Middlewares, "no badger: Pangolin applies no access control to raw resources")
			}
		} else {
			t.Log("set " + traefikEnv + " to check the TCP router on a real server")
		}

		require.NoError(t, cl.DeleteResource(ctx, r.ResourceID))
		_, err = cl.GetResource(ctx, r.ResourceID)
		assert.True(t, pangolinapi.IsNotFound(err), "GET after delete: %v", err)
	})

	t.Run("a UDP resource is created and read back", func(t *testing.T) {
		if !allowed {
			t.Skip("the server has flags.allow_raw_resources off")
		}
		port := c.freePort(t, pangolinapi.ModeUDP)
		r, err := cl.CreateRawResource(ctx, c.prefix+"-dns", pangolinapi.ModeUDP, port)
		require.NoError(t, err)
		c.track(t, r.ResourceID)
		got, err := cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.Equal(t, pangolinapi.ModeUDP, got.Mode)
		assert.Equal(t, port, got.ProxyPort)
	})

	t.Run("a raw resource refuses the HTTP fields", func(t *testing.T) {
		if !allowed {
			t.Skip("the server has flags.allow_raw_resources off")
		}
		// Why PIC sends a raw resource only its niceId, name, port and enabled: every
		// access field is refused, so a mark update carrying sso would fail.
		for _, body := range []string{`{"sso":false}`, `{"blockAccess":false}`, `{"applyRules":false}`, `{"headers":null}`} {
			rep := c.raw(t, http.MethodPost, "/resource/"+strconv.Itoa(probe.ResourceID), body, true)
			assert.Equal(t, http.StatusBadRequest, rep.Status, "%s: %s", body, rep.Body)
			assert.Contains(t, rep.Message, "Unrecognized key", body)
		}
		// And the create takes no host: a port selects the raw schema.
		body := fmt.Sprintf(`{"name":%q,"mode":"tcp","proxyPort":%d,"subdomain":%q,"domainId":%q}`, c.prefix+"-refused", c.freePort(t, pangolinapi.ModeTCP), c.sub("refused"), c.domain.DomainID)
		rep := c.raw(t, http.MethodPut, c.orgPath("/resource"), body, true)
		assert.Equal(t, http.StatusBadRequest, rep.Status, rep.Body)
		assert.Contains(t, rep.Message, "Unrecognized keys")
	})

	t.Run("a second resource on a port is accepted, so PIC checks ports itself", func(t *testing.T) {
		if !allowed {
			t.Skip("the server has flags.allow_raw_resources off")
		}
		dup, err := cl.CreateRawResource(ctx, c.prefix+"-raw-dup", pangolinapi.ModeTCP, probe.ProxyPort)
		if err != nil {
			// Not relied upon: PIC refuses a port held by another resource itself.
			t.Logf("the server now refuses a second resource on a port: %v", err)
			return
		}
		c.track(t, dup.ResourceID)
		holders, err := cl.ListRawResources(ctx, pangolinapi.ModeTCP)
		require.NoError(t, err)
		assert.True(t, holds(holders, probe.ResourceID, probe.ProxyPort))
		assert.True(t, holds(holders, dup.ResourceID, probe.ProxyPort))
	})

	t.Run("with flags.allow_raw_resources off, a create and a port move are refused", func(t *testing.T) {
		target := cl
		if c.real {
			if allowed {
				t.Skip("the server allows raw resources: these refusals need flags.allow_raw_resources: false, checked against the in-repo server only")
			}
		} else {
			// The in-repo server with the switch off, the rest of the fixture alike.
			s := simtest.NewServer(pangolinsim.Options{DenyRawResources: true})
			t.Cleanup(s.Close)
			off := &contract{cfg: pangolinapi.Config{BaseURL: s.BaseURL(), APIKey: pangolinsim.RootKey.Token(), Org: "interop"}}
			target = off.newClient(t, nil)
			seeded := s.SeedResource(pangolinsim.Resource{Name: "pg", Mode: "tcp", ProxyPort: 5432, Enabled: true})
			// PIC reports the refusal with Pangolin's message: a 400, not retried.
			_, err := target.UpdateResource(ctx, seeded.ID, pangolinapi.ResourceUpdate{ProxyPort: 5433})
			require.Error(t, err)
			assert.True(t, pangolinapi.IsClientError(err) && !pangolinapi.IsTransient(err), "%v", err)
			assert.Contains(t, err.Error(), "Cannot update proxyPort")
			_, err = target.UpdateResource(ctx, seeded.ID, pangolinapi.ResourceUpdate{Name: "renamed"})
			assert.NoError(t, err, "other updates still work")
		}
		_, err := target.CreateRawResource(ctx, c.prefix+"-refused", pangolinapi.ModeTCP, 40000)
		require.Error(t, err)
		assert.True(t, pangolinapi.IsClientError(err) && !pangolinapi.IsTransient(err), "%v", err)
		assert.Contains(t, err.Error(), notAllowed)
	})
}

// holds reports whether the list has resource id on port.
func holds(list []pangolinapi.ResourceSummary, id, port int) bool {
	for _, r := range list {
		if r.ResourceID == id && r.ProxyPort == port {
			return true
		}
	}
	return false
}

// freePort is a public port of mode that no resource of the org holds: the in-repo
// server's are all free, so it counts up from 45432; a real server's is drawn at random.
func (c *contract) freePort(t *testing.T, mode string) int {
	t.Helper()
	held, err := c.client.ListRawResources(context.Background(), mode)
	require.NoError(t, err)
	taken := map[int]bool{}
	for _, r := range held {
		taken[r.ProxyPort] = true
	}
	for try := range 100 {
		port := 45432 + try
		if c.real {
			port = 40000 + rand.IntN(10000)
		}
		if !taken[port] {
			return port
		}
	}
	t.Fatalf("no free %s port found", mode)
	return 0
}

// rawRouter is a TCP or UDP router of Pangolin's Traefik configuration, with its
// servers' addresses.
type rawRouter struct {
	Rule        string
	Servers     []string
	Middlewares []string
}

// rawRouters reads the Traefik configuration and returns the routers of protocol
// ("tcp" or "udp") on the entry point of port, by name.
func (c *contract) rawRouters(t *testing.T, protocol string, port int) map[string]rawRouter {
	t.Helper()
	var cfg map[string]struct {
		Routers map[string]struct {
			EntryPoints []string `json:"entryPoints"`
			Service     string   `json:"service"`
			Rule        string   `json:"rule"`
			Middlewares []string `json:"middlewares"`
		} `json:"routers"`
		Services map[string]struct {
			LoadBalancer struct {
				Servers []struct {
					Address string `json:"address"`
				} `json:"servers"`
			} `json:"loadBalancer"`
		} `json:"services"`
	}
	c.traefikConfig(t, &cfg)
	out := map[string]rawRouter{}
	section := cfg[protocol]
	entryPoint := protocol + "-" + strconv.Itoa(port)
	for name, r := range section.Routers {
		if len(r.EntryPoints) != 1 || !strings.EqualFold(r.EntryPoints[0], entryPoint) {
			continue
		}
		rt := rawRouter{Rule: r.Rule, Middlewares: r.Middlewares}
		for _, s := range section.Services[r.Service].LoadBalancer.Servers {
			rt.Servers = append(rt.Servers, s.Address)
		}
		out[name] = rt
	}
	return out
}
