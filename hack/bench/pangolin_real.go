package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// A real Pangolin as the direct part's server, named by the same settings as the
// contract suite's (sinks/pangolin/pangolinapi, contract_helpers_test.go).

// realPangolinEnv names the settings that point the direct part at a real Pangolin: all
// of them, or none.
var realPangolinEnv = []string{
	"PIC_CONTRACT_PANGOLIN_URL",
	"PIC_CONTRACT_PANGOLIN_API_KEY",
	"PIC_CONTRACT_PANGOLIN_ORG",
	"PIC_CONTRACT_PANGOLIN_SITE",
	"PIC_CONTRACT_PANGOLIN_DOMAIN",
}

// realPangolin is where a real Pangolin is, and the key to it.
type realPangolin struct {
	URL    string // the Integration API's base URL, including /v1
	APIKey secret // <apiKeyId>.<secret>
	Org    string
	Site   string // a site niceId: PIC's default tunnel
	Domain string // a verified base domain: the hosts are under it
}

// realPangolinFromEnv reads the five settings: nil when none is set.
func realPangolinFromEnv() (*realPangolin, error) {
	vals := map[string]string{}
	var missing []string
	for _, k := range realPangolinEnv {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			vals[k] = v
		} else {
			missing = append(missing, k)
		}
	}
	switch len(missing) {
	case len(realPangolinEnv):
		return nil, nil
	case 0:
	default:
		return nil, fmt.Errorf("set all of %s to point the direct part at a real Pangolin, or none of them; missing %s",
			strings.Join(realPangolinEnv, ", "), strings.Join(missing, ", "))
	}
	cfg := &realPangolin{
		URL:    vals["PIC_CONTRACT_PANGOLIN_URL"],
		APIKey: secret(vals["PIC_CONTRACT_PANGOLIN_API_KEY"]),
		Org:    vals["PIC_CONTRACT_PANGOLIN_ORG"],
		Site:   vals["PIC_CONTRACT_PANGOLIN_SITE"],
		Domain: vals["PIC_CONTRACT_PANGOLIN_DOMAIN"],
	}
	// The values are left out of these errors: a URL may carry a password, and the
	// key is a secret.
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, errors.New("PIC_CONTRACT_PANGOLIN_URL: want http(s)://host[:port]/v1, without credentials")
	}
	if id, rest, ok := strings.Cut(string(cfg.APIKey), "."); !ok || id == "" || rest == "" {
		return nil, errors.New("PIC_CONTRACT_PANGOLIN_API_KEY: want <apiKeyId>.<secret>")
	}
	return cfg, nil
}

// host is the host of the URL, for the log and the results.
func (r *realPangolin) host() string {
	u, err := url.Parse(r.URL)
	if err != nil {
		return ""
	}
	return u.Host
}

func (r *realPangolin) clientConfig() pangolinapi.Config {
	return pangolinapi.Config{BaseURL: r.URL, APIKey: r.APIKey.reveal(), Org: r.Org}
}

// realPollInterval is the least interval between the bench's checks of a real server:
// a check is a request or a few, each taking one of the slots PIC's requests wait for.
const realPollInterval = 500 * time.Millisecond

// sweepWorkers is how many deletes the sweep sends at once: a real Pangolin's thread
// pool.
const sweepWorkers = simtest.PaceMaxConcurrent

// realServer is a real Pangolin behind a counting proxy on loopback. PIC and the plain
// clients go through the proxy, which counts their requests by route; the bench's own
// checks, its hand edits and its sweeps go straight to the server. It is both the
// pangolinUnderTest and, after each fresh start, the run's pangolinServer.
//
// What the bench creates is on hosts <prefix>direct-NNNNN.<domain>, the prefix unique
// to the run: a fresh start and close delete the resources on such hosts, and nothing
// else. PIC runs with an owner id of the run's, so that it takes no resource of the
// org for its own (a PIC of the default owner id may publish there).
type realServer struct {
	cfg     realPangolin
	api     *pangolinapi.Client // straight to the server
	site    pangolinapi.Site
	domain  pangolinapi.Domain
	prefix  string // "pic-bench-<hex>-"
	ownerID string // "bench-<hex>"
	proxy   *countingProxy
	logf    func(format string, args ...any)
}

// newRealServer checks the site and the domain, and starts the proxy.
func newRealServer(ctx context.Context, cfg realPangolin, logf func(string, ...any)) (*realServer, error) {
	api, err := pangolinapi.New(cfg.clientConfig())
	if err != nil {
		return nil, fmt.Errorf("real Pangolin: %w", err)
	}
	site, err := api.GetSiteByNiceID(ctx, cfg.Site)
	if err != nil {
		return nil, fmt.Errorf("real Pangolin at %s: site %q of org %q: %w", cfg.host(), cfg.Site, cfg.Org, err)
	}
	domains, err := api.ListDomains(ctx)
	if err != nil {
		return nil, fmt.Errorf("real Pangolin at %s: domains of org %q: %w", cfg.host(), cfg.Org, err)
	}
	r := &realServer{cfg: cfg, api: api, site: site, logf: logf}
	for _, d := range domains {
		if strings.EqualFold(d.BaseDomain, cfg.Domain) && d.Verified {
			r.domain = d
			r.domain.BaseDomain = strings.ToLower(d.BaseDomain)
		}
	}
	if r.domain.DomainID == "" {
		return nil, fmt.Errorf("real Pangolin at %s: no verified domain %s in org %q", cfg.host(), cfg.Domain, cfg.Org)
	}
	run := make([]byte, 4)
	if _, err := rand.Read(run); err != nil {
		return nil, err
	}
	r.prefix = "pic-bench-" + hex.EncodeToString(run) + "-"
	r.ownerID = "bench-" + hex.EncodeToString(run)
	upstream, _ := url.Parse(cfg.URL) // checked by realPangolinFromEnv
	r.proxy = newCountingProxy(upstream)
	return r, nil
}

func (r *realServer) server() (string, string) { return serverReal, r.cfg.host() }

// pace is the default simulated pace, a real Pangolin's on an idle machine: the bench
// cannot know the server's own, and only its timeouts and repair bounds use it.
func (r *realServer) pace() (time.Duration, int, bool) {
	return simtest.PaceServiceTime, simtest.PaceMaxConcurrent, false
}
func (r *realServer) hostPrefix() string { return r.prefix }
func (r *realServer) baseDomain() string { return r.domain.BaseDomain }
func (r *realServer) shared() bool       { return true }

func (r *realServer) freshStart(ctx context.Context) (pangolinServer, error) {
	if _, err := r.sweep(ctx); err != nil {
		return nil, err
	}
	r.proxy.reset()
	return r, nil
}

// close sweeps, even when the run was interrupted: what the bench created must not stay
// in the org.
func (r *realServer) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	// The proxy first, which waits for the requests it is forwarding: a create sent just
	// before PIC stopped lands before the sweep lists what to delete.
	r.proxy.close()
	n, err := r.sweep(ctx)
	if err != nil {
		return fmt.Errorf("remove the bench's resources (hosts %s*.%s) from %s: %w", r.prefix, r.domain.BaseDomain, r.cfg.host(), err)
	}
	r.logf("direct mode: removed the %d resources this run left (hosts %s*.%s) from %s", n, r.prefix, r.domain.BaseDomain, r.cfg.host())
	if failed := r.proxy.failures(); failed > 0 {
		r.logf("direct mode: the proxy could not reach %s %d times (PIC saw 502s)", r.cfg.host(), failed)
	}
	return nil
}

// ours reports whether a host is one of this run's: one label under the base domain,
// starting with the run's prefix.
func (r *realServer) ours(host string) bool {
	label, ok := strings.CutSuffix(strings.ToLower(host), "."+r.domain.BaseDomain)
	return ok && strings.HasPrefix(label, r.prefix) && !strings.Contains(label, ".")
}

// sweep deletes this run's resources, and returns how many.
func (r *realServer) sweep(ctx context.Context) (int, error) {
	list, err := r.resources(ctx)
	if err != nil {
		return 0, err
	}
	// One failed delete does not stop the others: what is left in the org is what failed.
	var (
		mu     sync.Mutex
		failed []error
	)
	err = parallel(ctx, sweepWorkers, len(list), func(ctx context.Context, i int) error {
		if err := r.api.DeleteResource(ctx, list[i].ID); err != nil && !pangolinapi.IsNotFound(err) {
			mu.Lock()
			failed = append(failed, fmt.Errorf("delete resource %d (%s): %w", list[i].ID, list[i].FullDomain, err))
			mu.Unlock()
		}
		return nil
	})
	return len(list), errors.Join(append(failed, err)...)
}

func (r *realServer) endpoint() pangolinEndpoint {
	return pangolinEndpoint{
		URL: r.proxy.url() + "/v1", APIKey: r.cfg.APIKey, Org: r.cfg.Org,
		SiteNiceID: r.site.NiceID, SiteID: r.site.SiteID, BaseDomain: r.domain.BaseDomain, DomainID: r.domain.DomainID,
		// PIC's default tunnel is the site; its owner id the run's.
		PICFlags: []string{"--default-tunnel=" + r.site.NiceID, "--pangolin-owner-id=" + r.ownerID},
	}
}

func (r *realServer) sideClient() (*pangolinapi.Client, error) { return r.api, nil }

// published counts the resources whose target create the server accepted, as the
// proxy saw them, since the fresh start: reading each resource's targets would add a
// request per host to the server PIC is timed against. The run checks the server's own
// state once PIC has settled (checkPublished).
func (r *realServer) published(context.Context) (int, error) { return r.proxy.published(), nil }

func (r *realServer) resources(ctx context.Context) ([]benchResource, error) {
	list, err := r.api.ListResources(ctx, r.prefix)
	if err != nil {
		return nil, err
	}
	var out []benchResource
	for _, res := range list {
		if r.ours(res.FullDomain) {
			out = append(out, benchResource{ID: res.ResourceID, FullDomain: res.FullDomain})
		}
	}
	return out, nil
}

func (r *realServer) resourceOn(ctx context.Context, host string) (benchResource, bool, error) {
	if !r.ours(host) {
		return benchResource{}, false, fmt.Errorf("%s is not a host of this run", host)
	}
	list, err := r.api.ListResources(ctx, host)
	if err != nil {
		return benchResource{}, false, err
	}
	for _, res := range list {
		if strings.EqualFold(res.FullDomain, host) {
			return benchResource{ID: res.ResourceID, FullDomain: res.FullDomain}, true, nil
		}
	}
	return benchResource{}, false, nil
}

func (r *realServer) targets(ctx context.Context, resourceID int) ([]benchTarget, error) {
	list, err := r.api.ListTargets(ctx, resourceID)
	if err != nil {
		return nil, err
	}
	out := make([]benchTarget, 0, len(list))
	for _, t := range list {
		out = append(out, benchTarget{ID: t.TargetID, SiteID: t.SiteID, IP: t.IP, Port: t.Port})
	}
	return out, nil
}

func (r *realServer) blockAccess(ctx context.Context, resourceID int) (bool, error) {
	res, err := r.api.GetResource(ctx, resourceID)
	return res.BlockAccess, err
}

func (r *realServer) reads() int             { return r.proxy.reads() }
func (r *realServer) writes() int            { return r.proxy.writes() }
func (r *realServer) counts() map[string]int { return r.proxy.snapshot() }
func (r *realServer) resetCounts()           { r.proxy.resetCounts() }
func (r *realServer) pollInterval(inRepo time.Duration) time.Duration {
	return max(inRepo, realPollInterval)
}
func (r *realServer) release() {}
