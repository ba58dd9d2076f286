// Package config is PIC's configuration: one typed Config, every default in one place
// (the key table), read from flags, the environment (PIC_*) and a YAML file through
// viper, and validated before anything starts. It is the only package that imports
// viper. Source and sink names are the caller's (Plugins), not its own.
package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// Config is the effective configuration.
type Config struct {
	// Tunnels: the default tunnel, where unqualified tunnel names live, and the
	// class-alias table (from tunnelClassMapping and the file's tunnels section).
	Tunnels tunnel.Resolver `mapstructure:"-"`

	BackendScheme      string `mapstructure:"backendScheme"`
	ClusterDomain      string `mapstructure:"clusterDomain"`
	DefaultSSO         bool   `mapstructure:"defaultSSO"`
	DefaultBlockAccess bool   `mapstructure:"defaultBlockAccess"`
	// LoadBalancerClass is the spec.loadBalancerClass of the Services PIC publishes as
	// TCP/UDP ports (source service); LoadBalancerAddress is what their
	// status.loadBalancer.ingress shows (see PublicAddress).
	LoadBalancerClass   string `mapstructure:"loadBalancerClass"`
	LoadBalancerAddress string `mapstructure:"loadBalancerAddress"`
	// HealthChecks: backends get health checks that follow their pods' readiness
	// probes, unless their object says otherwise (direct mode).
	HealthChecks bool     `mapstructure:"healthChecks"`
	Sources      []string `mapstructure:"sources"` // names from Plugins.Sources
	Sink         string   `mapstructure:"sink"`    // a name from Plugins.Sinks
	Pangolin     Pangolin `mapstructure:"pangolin"`

	// HostPolicy is which hosts each namespace may publish (the file's hostPolicy
	// section); empty, every namespace may publish any host.
	HostPolicy hostpolicy.Policy `mapstructure:"hostPolicy"`

	WatchNamespaces         []string       `mapstructure:"watchNamespaces"` // empty: all namespaces
	SecretNamespaces        []string       `mapstructure:"secretNamespaces"`
	ResyncPeriod            time.Duration  `mapstructure:"resyncPeriod"`
	MaxConcurrentReconciles int            `mapstructure:"maxConcurrentReconciles"`
	Kubeconfig              string         `mapstructure:"kubeconfig"`
	KubeAPIQPS              float32        `mapstructure:"kubeAPIQPS"`
	KubeAPIBurst            int            `mapstructure:"kubeAPIBurst"`
	MetricsBindAddress      string         `mapstructure:"metricsBindAddress"`
	HealthProbeBindAddress  string         `mapstructure:"healthProbeBindAddress"`
	PprofBindAddress        string         `mapstructure:"pprofBindAddress"`
	LeaderElection          LeaderElection `mapstructure:"leaderElection"`
	LogLevel                string         `mapstructure:"logLevel"`
	LogFormat               string         `mapstructure:"logFormat"`

	// PrintConfig is --print-config: print the configuration (Print) and exit. It is a
	// command, not a setting: it has no file key and no environment variable.
	PrintConfig bool `mapstructure:"-"`
}

// LeaderElection configures the Lease that lets several replicas run with one active.
type LeaderElection struct {
	Enabled   bool   `mapstructure:"enabled"`
	ID        string `mapstructure:"id"`
	Namespace string `mapstructure:"namespace"`
}

// Pangolin is how the pangolin sink reaches Pangolin's Integration API.
type Pangolin struct {
	URL        string `mapstructure:"url"`
	Org        string `mapstructure:"org"`
	APIKeyFile string `mapstructure:"apiKeyFile"`
	OwnerID    string `mapstructure:"ownerId"` // marks what this PIC creates, so that clusters sharing an org keep apart
	CAFile     string `mapstructure:"caFile"`
	// DriftPeriod is how often the sink reads every resource it owns whole; the refresh
	// of every resyncPeriod between reads only the resource list.
	DriftPeriod time.Duration `mapstructure:"driftPeriod"`
	// MaxConcurrentReads is how many reads of one refresh are in flight at once.
	MaxConcurrentReads int `mapstructure:"maxConcurrentReads"`
	// Newt is how PIC runs the Newt agent of each managed site (docs/direct-mode.md,
	// "Managed sites").
	NewtImage    string `mapstructure:"newtImage"`
	NewtReplicas int    `mapstructure:"newtReplicas"`
	// NewtCPURequest, NewtMemoryRequest, NewtCPULimit and NewtMemoryLimit are the Newt
	// container's resources, Kubernetes quantities; "" sets none.
	NewtCPURequest    string `mapstructure:"newtCPURequest"`
	NewtMemoryRequest string `mapstructure:"newtMemoryRequest"`
	NewtCPULimit      string `mapstructure:"newtCPULimit"`
	NewtMemoryLimit   string `mapstructure:"newtMemoryLimit"`
	// NewtEndpoint is the URL Newt connects to; "" derives it from URL.
	NewtEndpoint string `mapstructure:"newtEndpoint"`
	// NewtOwner is PIC's own Deployment, which owns the Newt Deployments and Secrets
	// so that uninstalling PIC removes them.
	NewtOwner string `mapstructure:"newtOwner"`
	// APIKey comes from PIC_PANGOLIN_API_KEY or the file APIKeyFile, never from a flag or
	// the configuration file, so that it is in neither a process list nor a ConfigMap.
	APIKey Secret `mapstructure:"-"`
}

// PublicAddress is where users reach the TCP and UDP ports PIC publishes: the
// configured loadBalancerAddress, or else, in direct mode, the host of Pangolin's API
// URL (most installs serve the API, the dashboard and Traefik's entry points on one
// host); "" when neither says.
func (c *Config) PublicAddress() string {
	if c.LoadBalancerAddress != "" {
		return c.LoadBalancerAddress
	}
	if u, err := url.Parse(c.Pangolin.URL); err == nil && c.Pangolin.URL != "" {
		return u.Hostname()
	}
	return ""
}

// Secret is a value that prints as [redacted] whichever way it is formatted or encoded;
// Reveal gives it to the one caller that must send it.
type Secret string

const redacted = "[redacted]"

func (s Secret) Reveal() string             { return string(s) }
func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) Format(f fmt.State, _ rune)   { _, _ = io.WriteString(f, redacted) }
func (Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }
func (Secret) MarshalYAML() (any, error)    { return redacted, nil }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Plugins names the sources and sinks the program can build: sources and sink are
// checked against these, so that a new one is named in one place, where it is built.
type Plugins struct {
	Sources []string
	Sinks   []string
}

// Default returns the configuration used when nothing is configured.
func Default() *Config { return newLoader(Plugins{}).decode() }

// key is one setting: its names in every source, its default and its rule. The table
// below is the single place where defaults live; viper's defaults, the flags, the
// environment bindings, validation and --print-config are all derived from it.
type key struct {
	name    string                 // file key and viper key; a dot nests ("leaderElection.enabled")
	env     []string               // environment variables, the first one set wins
	flag    string                 // "" for the file-only key tunnels
	def     any                    // typed default; its type is the flag's type
	usage   string                 // flag help
	want    string                 // what is accepted, for errors
	ok      func(v any) bool       // the rule for a decoded value, if any
	allowed []string               // the values accepted, when they are a fixed few
	plugins func(Plugins) []string // the names the caller builds, which a value must be among
}

const (
	wantBool        = "want true or false"
	wantPositiveInt = "want a whole number of at least 1"
	wantNamespace   = "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
	wantAddr        = `want host:port or :port, such as :8080, or "0" to disable`
	wantOwnerID     = "want 1 to 20 lowercase letters, digits and '-', starting and ending with a letter or digit (it becomes part of the niceId of what PIC creates in Pangolin)"
	wantTunnelRef   = "want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default"
	wantAllowed     = `want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`
	wantHostPolicy  = `want a list of rules {namespaces: [names, or "*"], namespaceSelector: "a label selector", hosts: [shop.example.com, "*.team-a.example.com"], ports: ["45000-45099/tcp"]}, or nothing for no restriction`
)

// keys is every setting, in the order --print-config shows them.
var keys = []*key{
	{name: "defaultTunnel", env: []string{"PIC_DEFAULT_TUNNEL_NAME", "PANGOLIN_DEFAULT_TUNNEL_NAME"}, flag: "default-tunnel", def: "default",
		usage: `PangolinTunnel for IngressClass "pangolin": name or namespace/name ("" for none)`,
		want:  wantTunnelRef + `, or a mapping with name, namespace and allowedNamespaces, or "" for no default tunnel`},
	{name: "tunnelNamespace", env: []string{"PIC_TUNNEL_NAMESPACE"}, flag: "tunnel-namespace", def: "", ok: optional(isNamespace),
		usage: `namespace of tunnels named without one ("": the namespace of each Ingress)`, want: "want a namespace name (" + wantNamespace + `), or "" for the namespace of each Ingress`},
	{name: "tunnelClassMapping", env: []string{"PIC_TUNNEL_CLASS_MAPPING"}, flag: "tunnel-class-mapping", def: "",
		usage: "IngressClass aliases: alias=tunnel entries, one per line or comma-separated (class pangolin-<alias>)",
		want:  "want lines of alias=tunnel (commas also separate entries; blank lines and # comments are ignored); for structured entries use the tunnels section"},
	{name: "tunnels", want: "want a mapping of alias to a tunnel name, namespace/name, or {name, namespace, allowedNamespaces}"},
	{name: "onlyListedTunnels", env: []string{"PIC_ONLY_LISTED_TUNNELS"}, flag: "only-listed-tunnels", def: false,
		usage: "publish only through defaultTunnel and the tunnels of tunnels and tunnelClassMapping: a tunnel-name annotation, a class or a Gateway naming another is TunnelNotAllowed", want: wantBool},
	{name: "backendScheme", env: []string{"PIC_BACKEND_SCHEME"}, flag: "backend-scheme", def: "http", allowed: []string{"http", "https"},
		usage: "scheme PIC uses to reach backend Services: http or https", want: "want http or https"},
	{name: "clusterDomain", env: []string{"PIC_CLUSTER_DOMAIN"}, flag: "cluster-domain", def: "cluster.local", ok: is(isSubdomain),
		usage: "cluster DNS domain, for <service>.<namespace>.svc.<domain>", want: "want a DNS name such as cluster.local"},
	{name: "defaultSSO", env: []string{"PIC_DEFAULT_SSO"}, flag: "default-sso", def: true,
		usage: "require Pangolin SSO on resources whose Ingress does not say", want: wantBool},
	{name: "defaultBlockAccess", env: []string{"PIC_DEFAULT_BLOCK_ACCESS"}, flag: "default-block-access", def: false,
		usage: "block access to resources whose Ingress does not say", want: wantBool},
	{name: "loadBalancerClass", env: []string{"PIC_LOAD_BALANCER_CLASS"}, flag: "load-balancer-class", def: "pangolin.io/tunnel", ok: is(isQualifiedName),
		usage: "spec.loadBalancerClass of the Services of type LoadBalancer PIC publishes as TCP/UDP ports (source service)",
		want:  "want a qualified name such as pangolin.io/tunnel: an optional DNS prefix and '/', then letters, digits, '-', '_' and '.'"},
	{name: "loadBalancerAddress", env: []string{"PIC_LOAD_BALANCER_ADDRESS"}, flag: "load-balancer-address", def: "", ok: optional(isHostOrIP),
		usage: `address users reach the Pangolin server's TCP/UDP ports at, shown in Service status ("": the host of pangolin.url in direct mode, else none)`,
		want:  `want a DNS name such as pangolin.example.com or an IP address, or "" for the host of pangolin.url`},
	{name: "healthChecks", env: []string{"PIC_HEALTH_CHECKS"}, flag: "health-checks", def: false,
		usage: "give Pangolin targets health checks that follow their pods' readiness probes, where the object does not say (direct mode)", want: wantBool},
	{name: "sources", env: []string{"PIC_SOURCES"}, flag: "sources", def: []string{"ingress"}, plugins: func(p Plugins) []string { return p.Sources },
		usage: "kinds of objects to publish, comma-separated:", want: "want a comma-separated list of at least one of"},
	{name: "sink", env: []string{"PIC_SINK"}, flag: "sink", def: "pangolinresource", plugins: func(p Plugins) []string { return p.Sinks },
		usage: "what applies the desired state:", want: "want one of"},
	{name: "pangolin.url", env: []string{"PIC_PANGOLIN_URL"}, flag: "pangolin-url", def: "", ok: optional(isURL),
		usage: "base URL of Pangolin's Integration API, such as https://pangolin.example.com/v1 (sink pangolin)", want: "want an absolute http or https URL, such as https://pangolin.example.com/v1"},
	{name: "pangolin.org", env: []string{"PIC_PANGOLIN_ORG"}, flag: "pangolin-org", def: "",
		usage: "Pangolin organization id (sink pangolin)", want: "want an organization id"},
	{name: "pangolin.apiKeyFile", env: []string{"PIC_PANGOLIN_API_KEY_FILE"}, flag: "pangolin-api-key-file", def: "",
		usage: "file holding the Pangolin API key, such as a mounted Secret (or set " + EnvAPIKey + ")", want: "want the path of a readable file holding the API key"},
	{name: "pangolin.ownerId", env: []string{"PIC_PANGOLIN_OWNER_ID"}, flag: "pangolin-owner-id", def: "default", ok: is(func(s string) bool { return len(s) <= 20 && isNamespace(s) }),
		usage: "marks what this PIC creates in Pangolin; give each cluster sharing an org its own", want: wantOwnerID},
	{name: "pangolin.caFile", env: []string{"PIC_PANGOLIN_CA_FILE"}, flag: "pangolin-ca-file", def: "",
		usage: `PEM CA bundle to trust for Pangolin's TLS ("": the system's)`, want: "want the path of a readable PEM file holding at least one certificate"},
	{name: "pangolin.driftPeriod", env: []string{"PIC_PANGOLIN_DRIFT_PERIOD"}, flag: "pangolin-drift-period", def: time.Hour, ok: func(v any) bool { return v.(time.Duration) > 0 },
		usage: "how often the pangolin sink reads every resource it owns whole, to find edits the resource list does not show (Go duration)", want: "want a positive Go duration such as 30m or 1h"},
	{name: "pangolin.maxConcurrentReads", env: []string{"PIC_PANGOLIN_MAX_CONCURRENT_READS"}, flag: "pangolin-max-concurrent-reads", def: 4, ok: atLeastOne,
		usage: "reads of Pangolin in flight at once when the pangolin sink reads what it owns", want: wantPositiveInt},
	{name: "pangolin.newtImage", env: []string{"PIC_PANGOLIN_NEWT_IMAGE"}, flag: "pangolin-newt-image", def: DefaultNewtImage, ok: is(isImage),
		usage: "image of the Newt agent PIC runs for each managed site; pin a digest with name:tag@sha256:...", want: "want an image reference such as docker.io/fosrl/newt:1.15.0, optionally followed by @sha256:<digest>"},
	{name: "pangolin.newtReplicas", env: []string{"PIC_PANGOLIN_NEWT_REPLICAS"}, flag: "pangolin-newt-replicas", def: 1, ok: atLeastOne,
		usage: "replicas of each managed site's Newt Deployment", want: wantPositiveInt},
	{name: "pangolin.newtCPURequest", env: []string{"PIC_PANGOLIN_NEWT_CPU_REQUEST"}, flag: "pangolin-newt-cpu-request", def: DefaultNewtCPURequest, ok: optional(isQuantity),
		usage: `CPU request of each managed site's Newt container, a Kubernetes quantity ("": none)`, want: wantQuantity},
	{name: "pangolin.newtMemoryRequest", env: []string{"PIC_PANGOLIN_NEWT_MEMORY_REQUEST"}, flag: "pangolin-newt-memory-request", def: DefaultNewtMemoryRequest, ok: optional(isQuantity),
		usage: `memory request of each managed site's Newt container, a Kubernetes quantity ("": none)`, want: wantQuantity},
	{name: "pangolin.newtCPULimit", env: []string{"PIC_PANGOLIN_NEWT_CPU_LIMIT"}, flag: "pangolin-newt-cpu-limit", def: "", ok: optional(isQuantity),
		usage: `CPU limit of each managed site's Newt container, a Kubernetes quantity ("": none)`, want: wantQuantity},
	{name: "pangolin.newtMemoryLimit", env: []string{"PIC_PANGOLIN_NEWT_MEMORY_LIMIT"}, flag: "pangolin-newt-memory-limit", def: DefaultNewtMemoryLimit, ok: optional(isQuantity),
		usage: `memory limit of each managed site's Newt container, a Kubernetes quantity ("": none)`, want: wantQuantity},
	{name: "pangolin.newtEndpoint", env: []string{"PIC_PANGOLIN_NEWT_ENDPOINT"}, flag: "pangolin-newt-endpoint", def: "", ok: optional(isURL),
		usage: `URL the Newt agents connect to, Pangolin's dashboard URL ("": pangolin.url without its /v1)`, want: `want an absolute http or https URL such as https://pangolin.example.com, or "" for pangolin.url without its /v1`},
	{name: "pangolin.newtOwner", env: []string{"PIC_PANGOLIN_NEWT_OWNER"}, flag: "pangolin-newt-owner", def: "pangolin-ingress-controller", ok: is(isSubdomain),
		usage: "PIC's own Deployment, which owns the Newt Deployments and Secrets of managed sites so that uninstalling PIC removes them", want: "want a Deployment name: lowercase letters, digits, '-' and '.'"},
	{name: "hostPolicy", def: hostpolicy.Policy{}, want: wantHostPolicy},
	{name: "watchNamespaces", env: []string{"PIC_WATCH_NAMESPACES"}, flag: "watch-namespaces", def: []string{}, ok: func(v any) bool { return !slices.ContainsFunc(v.([]string), notNamespace) },
		usage: "namespaces to watch, comma-separated (empty: all namespaces)", want: "want a comma-separated list of names of " + wantNamespace + ", or nothing for all namespaces"},
	{name: "secretNamespaces", env: []string{"PIC_SECRET_NAMESPACES"}, flag: "secret-namespaces", def: []string{}, ok: func(v any) bool { return !slices.ContainsFunc(v.([]string), notNamespace) },
		usage: "namespaces where AccessPolicies may reference Secrets, comma-separated, when PIC may read Secrets only there (empty: every watched namespace)",
		want:  "want a comma-separated list of names of " + wantNamespace + ", or nothing for every watched namespace"},
	{name: "resyncPeriod", env: []string{"PIC_RESYNC_PERIOD"}, flag: "resync-period", def: 5 * time.Minute, ok: func(v any) bool { return v.(time.Duration) > 0 },
		usage: "how often every object is reconciled again even without changes (Go duration)", want: "want a positive Go duration such as 30s, 5m or 1h"},
	{name: "maxConcurrentReconciles", env: []string{"PIC_MAX_CONCURRENT_RECONCILES"}, flag: "max-concurrent-reconciles", def: 4, ok: atLeastOne,
		usage: "objects reconciled in parallel, per source", want: wantPositiveInt},
	{name: "kubeconfig", env: []string{"PIC_KUBECONFIG"}, flag: "kubeconfig", def: "", want: "want a file path",
		usage: `kubeconfig file ("": in-cluster, or client-go's usual KUBECONFIG and ~/.kube/config)`},
	{name: "kubeAPIQPS", env: []string{"PIC_KUBE_API_QPS"}, flag: "kube-api-qps", def: float32(-1), ok: validQPS,
		usage: "client-side limit of requests per second to the Kubernetes API (-1: none, the API server's priority and fairness decides)", want: "want -1 (no client-side limit) or a number greater than 0, such as 50"},
	{name: "kubeAPIBurst", env: []string{"PIC_KUBE_API_BURST"}, flag: "kube-api-burst", def: 100, ok: atLeastOne,
		usage: "burst of requests to the Kubernetes API above the QPS, when kubeAPIQPS sets a limit", want: wantPositiveInt},
	{name: "metricsBindAddress", env: []string{"PIC_METRICS_BIND_ADDRESS"}, flag: "metrics-bind-address", def: ":8080", ok: is(isAddr),
		usage: `address of the Prometheus /metrics endpoint ("0" disables it)`, want: wantAddr},
	{name: "pprofBindAddress", env: []string{"PIC_PPROF_BIND_ADDRESS"}, flag: "pprof-bind-address", def: "0", ok: is(isAddr),
		usage: `address of Go's /debug/pprof endpoints, for profiling ("0" disables them)`, want: wantAddr},
	{name: "healthProbeBindAddress", env: []string{"PIC_HEALTH_PROBE_BIND_ADDRESS"}, flag: "health-probe-bind-address", def: ":8081", ok: is(isAddr),
		usage: `address of the /healthz and /readyz endpoints ("0" disables them)`, want: wantAddr},
	{name: "leaderElection.enabled", env: []string{"PIC_LEADER_ELECT"}, flag: "leader-elect", def: false,
		usage: "elect a leader among replicas through a Lease, so that only one acts", want: wantBool},
	{name: "leaderElection.id", env: []string{"PIC_LEADER_ELECTION_ID"}, flag: "leader-election-id", def: "pangolin-ingress-controller", ok: is(isSubdomain),
		usage: "name of the leader-election Lease", want: "want a Lease name: lowercase letters, digits, '-' and '.', at most 253 characters"},
	{name: "leaderElection.namespace", env: []string{"PIC_LEADER_ELECTION_NAMESPACE"}, flag: "leader-election-namespace", def: "", ok: optional(isNamespace),
		usage: `namespace of the leader-election Lease ("": the controller's own namespace)`, want: "want a namespace name (" + wantNamespace + `), or "" for the controller's own namespace`},
	{name: "logLevel", env: []string{"PIC_LOG_LEVEL"}, flag: "log-level", def: "info", allowed: []string{"debug", "info", "warn", "error"},
		usage: "log level: debug, info, warn or error", want: "want debug, info, warn or error"},
	{name: "logFormat", env: []string{"PIC_LOG_FORMAT"}, flag: "log-format", def: "json", allowed: []string{"json", "console"},
		usage: "log format: json or console", want: "want json or console"},
}

// Environment variables and flags that are not settings.
const (
	EnvConfigFile  = "PIC_CONFIG"
	FlagConfigFile = "config"
	FlagPrint      = "print-config"
	// EnvAPIKey holds the Pangolin API key. It has no flag and no file key, so that the
	// key is in neither a process list nor a ConfigMap.
	EnvAPIKey = "PIC_PANGOLIN_API_KEY"
)

// OriginKind is where a value came from.
type OriginKind string

const (
	FromDefault OriginKind = "default"
	FromFile    OriginKind = "file"
	FromEnv     OriginKind = "env"
	FromFlag    OriginKind = "flag"
)

// Origin is where one effective value came from: a variable, a flag or a file (viper
// does not keep the file's lines).
type Origin struct {
	Kind OriginKind
	Name string // PIC_LOG_LEVEL, --log-level or the file's path
}

func (o Origin) String() string {
	return cmp.Or(strings.TrimSpace(string(o.Kind)+" "+o.Name), "unknown")
}

// Origins says, for every file key ("backendScheme", "leaderElection.enabled") and every
// tunnel alias ("tunnels.edge-eu"), where its effective value came from.
type Origins map[string]Origin

// Error is an invalid configuration: every problem found, one per line.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// problems collects messages, to list them in the order of the key table.
type problems []problem
type problem struct{ key, msg string }

// add records a problem of a key ("" for none); the same message twice counts once.
func (ps *problems) add(key, format string, args ...any) {
	if p := (problem{key, fmt.Sprintf(format, args...)}); !slices.Contains(*ps, p) {
		*ps = append(*ps, p)
	}
}

// has reports whether a key, or the group holding it, has a problem already.
func (ps problems) has(key string) bool {
	return slices.ContainsFunc(ps, func(p problem) bool { return p.key != "" && (p.key == key || strings.HasPrefix(key, p.key+".")) })
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b problem) int { return order(a.key) - order(b.key) })
	e := &Error{}
	for _, p := range ps {
		e.Problems = append(e.Problems, p.msg)
	}
	return e
}

// Print writes the configuration as YAML that Load accepts as a file, each value
// followed by where it came from (origins may be nil). The aliases of tunnelClassMapping
// are shown in the tunnels section; the API key only as set or not, and from where.
func Print(w io.Writer, c *Config, origins Origins) error {
	var b strings.Builder
	b.WriteString("# Effective configuration of pangolin-ingress-controller, each value followed by where it\n" +
		"# came from: a flag wins over an environment variable, which wins over the file, then the default.\n")
	line := func(text, key string) {
		if o, ok := origins[key]; ok {
			text = fmt.Sprintf("%-40s  # %s", text, o)
		}
		b.WriteString(text + "\n")
	}
	vals := values(c)
	vals["defaultTunnel"] = asFile(c.Tunnels.Default)
	for i, k := range keys {
		group, name, nested := strings.Cut(k.name, ".")
		if nested && !strings.HasPrefix(keys[i-1].name, group+".") {
			line(group+":", "")
		}
		indent := strings.Repeat("  ", strings.Count(k.name, "."))
		switch name = cmp.Or(name, group); {
		case name == "tunnelClassMapping": // its aliases are printed under tunnels
		case name == "tunnels" && len(c.Tunnels.Aliases) > 0:
			line(name+":", "")
			for _, alias := range slices.Sorted(maps.Keys(c.Tunnels.Aliases)) {
				line("  "+scalarYAML(alias)+": "+scalarYAML(asFile(c.Tunnels.Aliases[alias])), "tunnels."+alias)
			}
		default:
			line(indent+name+": "+scalarYAML(vals[k.name]), k.name)
		}
		if k.name == "pangolin.apiKeyFile" {
			line(indent+"# apiKey ("+EnvAPIKey+" or apiKeyFile): "+apiKeyStatus(c.Pangolin), "")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// asFile is a tunnel as the file writes it: "namespace/name", or a mapping with allowed namespaces.
func asFile(t tunnel.Tunnel) any {
	if t.AllowedNamespaces == nil && !t.ManagedSite {
		return refString(t)
	}
	return tunnelSpec(t)
}

func apiKeyStatus(p Pangolin) string {
	switch {
	case p.APIKey == "":
		return "(not set)"
	case p.APIKeyFile != "":
		return "(set, from file " + p.APIKeyFile + ")"
	}
	return "(set, from env " + EnvAPIKey + ")"
}

var zeroUnitsRE = regexp.MustCompile(`([hm])(0m)?0s$`)

// scalarYAML writes a value as YAML on one line, and a duration as people write it: 5m
// rather than 5m0s.
func scalarYAML(v any) string {
	if d, ok := v.(time.Duration); ok {
		v = zeroUnitsRE.ReplaceAllString(d.String(), "$1")
	}
	out, _ := yaml.Marshal(struct { // the values of a Config always marshal
		V any `yaml:"v,flow"`
	}{v})
	return strings.TrimSuffix(strings.TrimPrefix(string(out), "v: "), "\n")
}

// formatValue shows a value in a message: text and durations quoted, the rest as YAML.
func formatValue(v any) string {
	switch v.(type) {
	case string, time.Duration:
		return fmt.Sprintf("%q", v)
	}
	return scalarYAML(v)
}
