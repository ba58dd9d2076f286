package config

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// DefaultNewtImage is the Newt agent PIC runs for a managed site unless
// pangolin.newtImage says otherwise: the release PIC was checked with.
const DefaultNewtImage = "docker.io/fosrl/newt:1.15.0"

// The Newt container's resources unless pangolin.newt*Request and newt*Limit say
// otherwise: Newt idles at a few MiB and a few millicores, and a memory limit keeps a
// leak from taking the node.
const (
	DefaultNewtCPURequest    = "10m"
	DefaultNewtMemoryRequest = "32Mi"
	DefaultNewtMemoryLimit   = "128Mi"
)

const wantQuantity = `want a positive Kubernetes quantity such as 50m, 0.5, 64Mi or 1Gi, or "" for none`

// isQuantity accepts a positive Kubernetes quantity.
func isQuantity(s string) bool {
	q, err := resource.ParseQuantity(s)
	return err == nil && q.Sign() > 0
}

// maxManagedSiteName keeps "newt-<tunnel>", the Newt Deployment's name and a label
// value, within the 63 characters of a DNS label.
const maxManagedSiteName = 63 - len("newt-")

// imagePattern is an image reference with a tag or a digest or both: the tag is what
// users read, the digest what pins it.
var imagePattern = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)

// isImage accepts an image reference that names a tag or a digest: "latest" by default
// would let a restart change the agent.
func isImage(s string) bool {
	if !imagePattern.MatchString(s) {
		return false
	}
	name, _, _ := strings.Cut(s, "@")
	last := name[strings.LastIndex(name, "/")+1:]
	return strings.Contains(last, ":") || strings.Contains(s, "@")
}

// ManagedSites are the names of the tunnels whose Pangolin site PIC creates and whose
// Newt agent it runs, sorted, each once.
func (c *Config) ManagedSites() []string {
	var names []string
	for _, t := range append([]tunnel.Tunnel{c.Tunnels.Default}, slices.Collect(maps.Values(c.Tunnels.Aliases))...) {
		if t.ManagedSite && !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names
}

// NewtEndpointURL is the URL the Newt agents connect to: pangolin.newtEndpoint, or
// pangolin.url without its /v1, which serves when the Integration API shares the
// dashboard's host.
func (p Pangolin) NewtEndpointURL() string {
	if p.NewtEndpoint != "" {
		return p.NewtEndpoint
	}
	return strings.TrimSuffix(strings.TrimSuffix(p.URL, "/"), "/v1")
}

// checkManagedSites refuses managedSite where PIC cannot honour it: outside direct
// mode, and on a tunnel name that cannot name its Newt Deployment.
func (l *loader) checkManagedSites(c *Config) {
	check := func(key string, t tunnel.Tunnel) {
		if !t.ManagedSite {
			return
		}
		name := key + ".managedSite"
		if c.Sink != pangolinSink {
			l.problems.add(name, "%s (%s) is true but sink is %s: PIC creates a site only in direct mode; set sink: %s, or remove managedSite",
				name, l.where(key), c.Sink, pangolinSink)
		}
		if !isNamespace(t.Name) || len(t.Name) > maxManagedSiteName {
			l.problems.add(name, "%s (%s): the tunnel name %q cannot name a managed site: want at most %d lowercase letters, digits and '-' (no '.'), since its Newt Deployment is newt-<name>",
				name, l.where(key), t.Name, maxManagedSiteName)
		}
	}
	check("defaultTunnel", c.Tunnels.Default)
	for _, alias := range slices.Sorted(maps.Keys(c.Tunnels.Aliases)) {
		check("tunnels."+alias, c.Tunnels.Aliases[alias])
	}
	l.checkNewtResources(c.Pangolin)
}

// checkNewtResources refuses a request above its limit, which the API server would
// refuse on every write of the agent's Deployment, long after PIC started.
func (l *loader) checkNewtResources(p Pangolin) {
	check := func(kind, requestKey, request, limitKey, limit string) {
		if request == "" || limit == "" || !isQuantity(request) || !isQuantity(limit) {
			return
		}
		if r, m := resource.MustParse(request), resource.MustParse(limit); r.Cmp(m) > 0 {
			l.problems.add(requestKey, "%s (%s) = %q is above %s (%s) = %q: the API server refuses a %s request above its limit; lower the request or raise the limit",
				requestKey, l.where(requestKey), request, limitKey, l.where(limitKey), limit, kind)
		}
	}
	check("CPU", "pangolin.newtCPURequest", p.NewtCPURequest, "pangolin.newtCPULimit", p.NewtCPULimit)
	check("memory", "pangolin.newtMemoryRequest", p.NewtMemoryRequest, "pangolin.newtMemoryLimit", p.NewtMemoryLimit)
}
