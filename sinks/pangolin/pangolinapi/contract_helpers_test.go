package pangolinapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// contractEnv names the variables that point the contract suite at a real Pangolin.
var contractEnv = []string{
	"PIC_CONTRACT_PANGOLIN_URL",
	"PIC_CONTRACT_PANGOLIN_API_KEY",
	"PIC_CONTRACT_PANGOLIN_ORG",
	"PIC_CONTRACT_PANGOLIN_SITE",
	"PIC_CONTRACT_PANGOLIN_DOMAIN",
}

// contractFixture is the fake's org: the reference fixture, with the roles and users of
// its access-control session (section 11).
var contractFixture = pangolinsim.Options{
	Roles: []pangolinsim.Role{
		{ID: 2, Name: "Member", Description: "Members can only view resources"},
		{ID: 3, Name: "k8s-devs", Description: "ctrl test"},
		{ID: 4, Name: "k8s-ops"},
	},
	Users: []pangolinsim.User{
		pangolinsim.DefaultOwner,
		{ID: "fihwbfec93u7yua", Email: "alice@corp.example", Username: "alice", Type: "oidc", IdpID: 1, IdpName: "test-idp", RoleIDs: []int{3}},
	},
}

// traefikEnv, optional, is the URL of the real server's Traefik configuration
// (http://<server>:3001/api/v1/traefik-config, Pangolin's internal port): with it the
// suite checks how Pangolin names routers. Against the in-repo server it is always on.
const traefikEnv = "PIC_CONTRACT_PANGOLIN_TRAEFIK_URL"

// contract is the server under contract: the in-repo fake, or a real Pangolin.
type contract struct {
	traefikURL string // "" when the real server's Traefik configuration is not reachable
	client     *pangolinapi.Client
	cfg        pangolinapi.Config
	site       pangolinapi.Site
	domain     pangolinapi.Domain
	prefix     string // "pic-contract-<random>": every name and host this run creates starts with it
	real       bool
	created    map[int]bool
}

func newContract(t *testing.T) *contract {
	t.Helper()
	vals := map[string]string{}
	var missing []string
	for _, k := range contractEnv {
		if v := os.Getenv(k); v != "" {
			vals[k] = v
		} else {
			missing = append(missing, k)
		}
	}
	c := &contract{prefix: "pic-contract-" + randomHex(t, 4), created: map[int]bool{}}
	var siteNiceID, baseDomain string
	switch len(missing) {
	case 0:
		c.real = true
		c.cfg = pangolinapi.Config{
			BaseURL: vals["PIC_CONTRACT_PANGOLIN_URL"],
			APIKey:  vals["PIC_CONTRACT_PANGOLIN_API_KEY"],
			Org:     vals["PIC_CONTRACT_PANGOLIN_ORG"],
		}
		siteNiceID, baseDomain = vals["PIC_CONTRACT_PANGOLIN_SITE"], vals["PIC_CONTRACT_PANGOLIN_DOMAIN"]
		c.traefikURL = os.Getenv(traefikEnv)
		t.Logf("contract against %s, org %s, names prefixed %s", c.cfg.BaseURL, c.cfg.Org, c.prefix)
	case len(contractEnv):
		s := simtest.NewServer(contractFixture)
		t.Cleanup(s.Close)
		// Runs after the sweep: the suite must leave nothing behind.
		t.Cleanup(func() { require.Empty(t, s.Resources(), "resources left after the contract") })
		c.cfg = pangolinapi.Config{BaseURL: s.BaseURL(), APIKey: pangolinsim.RootKey.Token(), Org: "interop"}
		siteNiceID, baseDomain = "murky-merriams-shrew", "example.com"
		c.traefikURL = s.URL + pangolinsim.TraefikConfigPath
	default:
		t.Fatalf("set all of %s to run the contract against a real Pangolin; missing %s",
			strings.Join(contractEnv, ", "), strings.Join(missing, ", "))
	}
	c.client = c.newClient(t, nil)
	ctx := context.Background()

	site, err := c.client.GetSiteByNiceID(ctx, siteNiceID)
	require.NoError(t, err, "site %s", siteNiceID)
	c.site = site
	domains, err := c.client.ListDomains(ctx)
	require.NoError(t, err)
	for _, d := range domains {
		if strings.EqualFold(d.BaseDomain, baseDomain) && d.Verified {
			c.domain = d
		}
	}
	require.NotEmpty(t, c.domain.DomainID, "no verified domain %s in org %s", baseDomain, c.cfg.Org)

	// Registered first, so it runs last: whatever a failed test left behind under this
	// run's prefix goes, and nothing else is ever touched.
	t.Cleanup(func() { c.sweep(t) })
	return c
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func (c *contract) newClient(t *testing.T, mod func(*pangolinapi.Config)) *pangolinapi.Client {
	t.Helper()
	cfg := c.cfg
	if mod != nil {
		mod(&cfg)
	}
	cl, err := pangolinapi.New(cfg)
	require.NoError(t, err)
	return cl
}

// sub is a subdomain of this run: "<prefix>-<label>".
func (c *contract) sub(label string) string { return c.prefix + "-" + label }

// host is the full host of sub(label).
func (c *contract) host(label string) string { return c.sub(label) + "." + c.domain.BaseDomain }

// ours reports whether a resource was created by this run.
func (c *contract) ours(r pangolinapi.ResourceSummary) bool {
	return strings.HasPrefix(r.Name, c.prefix) || strings.HasPrefix(r.FullDomain, c.prefix+"-")
}

// create creates a resource named after its host and deletes it when the test ends.
func (c *contract) create(t *testing.T, label string) pangolinapi.Resource {
	t.Helper()
	r, err := c.client.CreateResource(context.Background(), c.host(label), pangolinapi.Host{DomainID: c.domain.DomainID, Subdomain: c.sub(label)})
	require.NoError(t, err)
	c.track(t, r.ResourceID)
	return r
}

func (c *contract) track(t *testing.T, id int) {
	c.created[id] = true
	t.Cleanup(func() {
		if err := c.client.DeleteResource(context.Background(), id); err != nil && !pangolinapi.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// sweep deletes what this run created and lost track of (a test that failed between a
// create and its bookkeeping).
func (c *contract) sweep(t *testing.T) {
	ctx := context.Background()
	list, err := c.client.ListResources(ctx, c.prefix)
	if err != nil {
		t.Errorf("sweep: %v", err)
		return
	}
	for _, r := range list {
		if !c.ours(r) {
			continue
		}
		if err := c.client.DeleteResource(ctx, r.ResourceID); err != nil && !pangolinapi.IsNotFound(err) {
			t.Errorf("sweep: %v", err)
		} else if !c.created[r.ResourceID] {
			t.Logf("sweep: deleted resource %d (%s) left by a failed step", r.ResourceID, r.FullDomain)
		}
	}
}

// rawReply is an answer read without the client: status, body text and, when the body
// is JSON, its message.
type rawReply struct {
	Status  int
	Body    string
	JSON    bool
	Message string
}

// raw sends a request without the client, to observe what the client hides. path is
// relative to the base URL (which holds /v1). With auth false no key is sent.
func (c *contract) raw(t *testing.T, method, path, body string, auth bool) rawReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.cfg.BaseURL, "/")+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := rawReply{Status: resp.StatusCode, Body: string(b)}
	var env struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &env) == nil {
		out.JSON, out.Message = true, env.Message
	}
	return out
}

// traefikRouter is a router of Pangolin's Traefik configuration, with its servers.
type traefikRouter struct {
	Rule        string
	Priority    int
	Servers     []string
	Middlewares []string
}

// routers reads the Traefik configuration and returns the routers whose rule names host,
// by name.
func (c *contract) routers(t *testing.T, host string) map[string]traefikRouter {
	t.Helper()
	var cfg struct {
		HTTP struct {
			Routers map[string]struct {
				Rule        string   `json:"rule"`
				Service     string   `json:"service"`
				Priority    int      `json:"priority"`
				Middlewares []string `json:"middlewares"`
			} `json:"routers"`
			Services map[string]struct {
				LoadBalancer struct {
					Servers []struct {
						URL string `json:"url"`
					} `json:"servers"`
				} `json:"loadBalancer"`
			} `json:"services"`
		} `json:"http"`
	}
	c.traefikConfig(t, &cfg)
	out := map[string]traefikRouter{}
	for name, r := range cfg.HTTP.Routers {
		if strings.HasSuffix(name, "-redirect") || !strings.Contains(r.Rule, "Host(`"+host+"`)") {
			continue
		}
		rt := traefikRouter{Rule: r.Rule, Priority: r.Priority, Middlewares: r.Middlewares}
		for _, s := range cfg.HTTP.Services[r.Service].LoadBalancer.Servers {
			rt.Servers = append(rt.Servers, s.URL)
		}
		out[name] = rt
	}
	return out
}

// traefikConfig reads the server's Traefik configuration into cfg.
func (c *contract) traefikConfig(t *testing.T, cfg any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.traefikURL, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(cfg))
}
