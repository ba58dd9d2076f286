package config

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kind says how a key's raw value (a YAML value from the file, or a string from the
// environment or a flag) becomes a typed value.
type kind int

const (
	kindString kind = iota
	kindBool
	kindInt
	kindFloat
	kindDuration
	kindList    // comma-separated string or YAML sequence → []string
	kindTunnel  // defaultTunnel: "name", "namespace/name" or (file only) an object
	kindMapping // tunnelClassMapping: alias=tunnel lines
	kindTunnels // tunnels: file-only map of alias → tunnel
)

// key is one setting: its names in every source, its default, and its rules. The table
// below is the single place where defaults live; flags, environment variables, the
// file schema, validation and --print-config are all derived from it.
type key struct {
	name  string   // file key; a dot nests ("leaderElection.enabled")
	env   []string // environment variables, the first one set wins
	flag  string   // flag name without dashes; "" for file-only keys
	kind  kind
	def   any    // typed default: string, bool, int, float64, time.Duration or []string
	usage string // flag help
	want  string // what is accepted, for error messages
	// get and set move the typed value in and out of a Config (nil for the tunnel keys,
	// which are assembled into Config.Tunnels together).
	get func(*Config) any
	set func(*Config, any)
	// check returns "" for a good typed value, otherwise what is wrong and what is wanted.
	check func(any) string
	// secret values are never printed. No key is secret today; a future token or
	// password key must set this.
	secret bool
}

const (
	wantBool         = "want true or false"
	wantPositiveInt  = "want a whole number of at least 1"
	wantNamespace    = "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
	wantAddr         = `want host:port or :port, such as :8080, or "0" to disable`
	wantTunnelRef    = "want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default"
	wantMappingEntry = "want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel"
)

// keys is every setting, in the order --print-config shows them.
var keys = []*key{
	{
		name: "defaultTunnel", env: []string{"PIC_DEFAULT_TUNNEL_NAME", "PANGOLIN_DEFAULT_TUNNEL_NAME"}, flag: "default-tunnel",
		kind: kindTunnel, def: "default",
		usage: `PangolinTunnel for IngressClass "pangolin": name or namespace/name ("" for none)`,
		want:  wantTunnelRef + `, or "" for no default tunnel`,
	},
	{
		name: "tunnelNamespace", env: []string{"PIC_TUNNEL_NAMESPACE"}, flag: "tunnel-namespace",
		kind: kindString, def: "",
		usage: `namespace of tunnels named without one ("": the namespace of each Ingress)`,
		want:  "want a namespace name (" + wantNamespace + `), or "" for the namespace of each Ingress`,
		get:   func(c *Config) any { return c.Tunnels.Namespace },
		set:   func(c *Config, v any) { c.Tunnels.Namespace = v.(string) },
		check: func(v any) string { return optionalNamespace(v, "or \"\" for the namespace of each Ingress") },
	},
	{
		name: "tunnelClassMapping", env: []string{"PIC_TUNNEL_CLASS_MAPPING"}, flag: "tunnel-class-mapping",
		kind: kindMapping, def: "",
		usage: "IngressClass aliases: alias=tunnel entries, one per line or comma-separated (class pangolin-<alias>)",
		want:  "want lines of alias=tunnel (commas also separate entries; blank lines and # comments are ignored)",
	},
	{
		name: "tunnels", kind: kindTunnels,
		want: "want a mapping of alias to a tunnel name, namespace/name, or {name, namespace, allowedNamespaces}",
	},
	{
		name: "backendScheme", env: []string{"PIC_BACKEND_SCHEME"}, flag: "backend-scheme",
		kind: kindString, def: "http",
		usage: "scheme PIC uses to reach backend Services: http or https",
		want:  "want http or https",
		get:   func(c *Config) any { return c.BackendScheme },
		set:   func(c *Config, v any) { c.BackendScheme = v.(string) },
		check: oneOf("want http or https", "http", "https"),
	},
	{
		name: "clusterDomain", env: []string{"PIC_CLUSTER_DOMAIN"}, flag: "cluster-domain",
		kind: kindString, def: "cluster.local",
		usage: "cluster DNS domain, for <service>.<namespace>.svc.<domain>",
		want:  "want a DNS name such as cluster.local",
		get:   func(c *Config) any { return c.ClusterDomain },
		set:   func(c *Config, v any) { c.ClusterDomain = v.(string) },
		check: func(v any) string {
			if !isDNSSubdomain(v.(string)) {
				return "want a DNS name such as cluster.local"
			}
			return ""
		},
	},
	{
		name: "defaultSSO", env: []string{"PIC_DEFAULT_SSO"}, flag: "default-sso",
		kind: kindBool, def: true,
		usage: "require Pangolin SSO on resources whose Ingress does not say",
		want:  wantBool,
		get:   func(c *Config) any { return c.DefaultSSO },
		set:   func(c *Config, v any) { c.DefaultSSO = v.(bool) },
	},
	{
		name: "defaultBlockAccess", env: []string{"PIC_DEFAULT_BLOCK_ACCESS"}, flag: "default-block-access",
		kind: kindBool, def: false,
		usage: "block access to resources whose Ingress does not say",
		want:  wantBool,
		get:   func(c *Config) any { return c.DefaultBlockAccess },
		set:   func(c *Config, v any) { c.DefaultBlockAccess = v.(bool) },
	},
	{
		name: "sources", env: []string{"PIC_SOURCES"}, flag: "sources",
		kind: kindList, def: []string{SourceIngress},
		usage: "kinds of objects to publish, comma-separated: ingress, httproute",
		want:  "want a comma-separated list of ingress and httproute, with at least one",
		get:   func(c *Config) any { return c.Sources },
		set:   func(c *Config, v any) { c.Sources = v.([]string) },
		check: func(v any) string {
			const want = "want a comma-separated list of ingress and httproute, with at least one"
			list := v.([]string)
			if len(list) == 0 {
				return "no source is enabled; " + want
			}
			for _, s := range list {
				if s != SourceIngress && s != SourceHTTPRoute {
					return fmt.Sprintf("unknown source %q%s; %s", s, suggest(s, []string{SourceIngress, SourceHTTPRoute}), want)
				}
			}
			return ""
		},
	},
	{
		name: "watchNamespaces", env: []string{"PIC_WATCH_NAMESPACES"}, flag: "watch-namespaces",
		kind: kindList, def: []string{},
		usage: "namespaces to watch, comma-separated (empty: all namespaces)",
		want:  "want a comma-separated list of namespace names, or nothing for all namespaces",
		get:   func(c *Config) any { return c.WatchNamespaces },
		set:   func(c *Config, v any) { c.WatchNamespaces = v.([]string) },
		check: func(v any) string {
			for _, ns := range v.([]string) {
				if !isDNSLabel(ns) {
					return fmt.Sprintf("%q is not a namespace name; want a comma-separated list of names of %s, or nothing for all namespaces", ns, wantNamespace)
				}
			}
			return ""
		},
	},
	{
		name: "resyncPeriod", env: []string{"PIC_RESYNC_PERIOD"}, flag: "resync-period",
		kind: kindDuration, def: 5 * time.Minute,
		usage: "how often every object is reconciled again even without changes (Go duration)",
		want:  "want a positive Go duration such as 30s, 5m or 1h",
		get:   func(c *Config) any { return c.ResyncPeriod },
		set:   func(c *Config, v any) { c.ResyncPeriod = v.(time.Duration) },
		check: func(v any) string {
			if v.(time.Duration) <= 0 {
				return "want a positive Go duration such as 30s, 5m or 1h"
			}
			return ""
		},
	},
	{
		name: "maxConcurrentReconciles", env: []string{"PIC_MAX_CONCURRENT_RECONCILES"}, flag: "max-concurrent-reconciles",
		kind: kindInt, def: 4,
		usage: "objects reconciled in parallel, per source",
		want:  wantPositiveInt,
		get:   func(c *Config) any { return c.MaxConcurrentReconciles },
		set:   func(c *Config, v any) { c.MaxConcurrentReconciles = v.(int) },
		check: atLeastOne,
	},
	{
		name: "kubeconfig", env: []string{"PIC_KUBECONFIG"}, flag: "kubeconfig",
		kind: kindString, def: "",
		usage: "kubeconfig file (\"\": in-cluster, or client-go's usual KUBECONFIG and ~/.kube/config)",
		want:  "want a file path",
		get:   func(c *Config) any { return c.Kubeconfig },
		set:   func(c *Config, v any) { c.Kubeconfig = v.(string) },
	},
	{
		name: "kubeAPIQPS", env: []string{"PIC_KUBE_API_QPS"}, flag: "kube-api-qps",
		kind: kindFloat, def: 50.0,
		usage: "sustained requests per second to the Kubernetes API",
		want:  "want a number greater than 0, such as 50",
		get:   func(c *Config) any { return float64(c.KubeAPIQPS) },
		set:   func(c *Config, v any) { c.KubeAPIQPS = float32(v.(float64)) },
		check: func(v any) string {
			if f := v.(float64); !(f > 0) || f > math.MaxFloat32 {
				return "want a number greater than 0, such as 50"
			}
			return ""
		},
	},
	{
		name: "kubeAPIBurst", env: []string{"PIC_KUBE_API_BURST"}, flag: "kube-api-burst",
		kind: kindInt, def: 100,
		usage: "burst of requests to the Kubernetes API above the QPS",
		want:  wantPositiveInt,
		get:   func(c *Config) any { return c.KubeAPIBurst },
		set:   func(c *Config, v any) { c.KubeAPIBurst = v.(int) },
		check: atLeastOne,
	},
	{
		name: "metricsBindAddress", env: []string{"PIC_METRICS_BIND_ADDRESS"}, flag: "metrics-bind-address",
		kind: kindString, def: ":8080",
		usage: `address of the Prometheus /metrics endpoint ("0" disables it)`,
		want:  wantAddr,
		get:   func(c *Config) any { return c.MetricsBindAddress },
		set:   func(c *Config, v any) { c.MetricsBindAddress = v.(string) },
		check: checkAddr,
	},
	{
		name: "healthProbeBindAddress", env: []string{"PIC_HEALTH_PROBE_BIND_ADDRESS"}, flag: "health-probe-bind-address",
		kind: kindString, def: ":8081",
		usage: `address of the /healthz and /readyz endpoints ("0" disables them)`,
		want:  wantAddr,
		get:   func(c *Config) any { return c.HealthProbeBindAddress },
		set:   func(c *Config, v any) { c.HealthProbeBindAddress = v.(string) },
		check: checkAddr,
	},
	{
		name: "leaderElection.enabled", env: []string{"PIC_LEADER_ELECT"}, flag: "leader-elect",
		kind: kindBool, def: false,
		usage: "elect a leader among replicas through a Lease, so that only one acts",
		want:  wantBool,
		get:   func(c *Config) any { return c.LeaderElection.Enabled },
		set:   func(c *Config, v any) { c.LeaderElection.Enabled = v.(bool) },
	},
	{
		name: "leaderElection.id", env: []string{"PIC_LEADER_ELECTION_ID"}, flag: "leader-election-id",
		kind: kindString, def: "pangolin-ingress-controller",
		usage: "name of the leader-election Lease",
		want:  "want a Lease name: lowercase letters, digits, '-' and '.', at most 253 characters",
		get:   func(c *Config) any { return c.LeaderElection.ID },
		set:   func(c *Config, v any) { c.LeaderElection.ID = v.(string) },
		check: func(v any) string {
			if !isDNSSubdomain(v.(string)) {
				return "want a Lease name: lowercase letters, digits, '-' and '.', at most 253 characters"
			}
			return ""
		},
	},
	{
		name: "leaderElection.namespace", env: []string{"PIC_LEADER_ELECTION_NAMESPACE"}, flag: "leader-election-namespace",
		kind: kindString, def: "",
		usage: `namespace of the leader-election Lease ("": the controller's own namespace)`,
		want:  "want a namespace name (" + wantNamespace + `), or "" for the controller's own namespace`,
		get:   func(c *Config) any { return c.LeaderElection.Namespace },
		set:   func(c *Config, v any) { c.LeaderElection.Namespace = v.(string) },
		check: func(v any) string { return optionalNamespace(v, `or "" for the controller's own namespace`) },
	},
	{
		name: "logLevel", env: []string{"PIC_LOG_LEVEL"}, flag: "log-level",
		kind: kindString, def: "info",
		usage: "log level: debug, info, warn or error",
		want:  "want debug, info, warn or error",
		get:   func(c *Config) any { return c.LogLevel },
		set:   func(c *Config, v any) { c.LogLevel = v.(string) },
		check: oneOf("want debug, info, warn or error", "debug", "info", "warn", "error"),
	},
	{
		name: "logFormat", env: []string{"PIC_LOG_FORMAT"}, flag: "log-format",
		kind: kindString, def: "json",
		usage: "log format: json or console",
		want:  "want json or console",
		get:   func(c *Config) any { return c.LogFormat },
		set:   func(c *Config, v any) { c.LogFormat = v.(string) },
		check: oneOf("want json or console", "json", "console"),
	},
}

// keyByName finds a key of the table.
func keyByName(name string) *key {
	for _, k := range keys {
		if k.name == name {
			return k
		}
	}
	panic("config: no key " + name)
}

// order places a key's problems in table order.
func order(name string) int {
	for i, k := range keys {
		if k.name == name || strings.HasPrefix(name, k.name+".") {
			return i
		}
	}
	return -1
}

func oneOf(want string, allowed ...string) func(any) string {
	return func(v any) string {
		s := v.(string)
		if slices.Contains(allowed, s) {
			return ""
		}
		return want + suggest(s, allowed)
	}
}

func atLeastOne(v any) string {
	if v.(int) < 1 {
		return wantPositiveInt
	}
	return ""
}

func optionalNamespace(v any, orEmpty string) string {
	if s := v.(string); s != "" && !isDNSLabel(s) {
		return "want a namespace name (" + wantNamespace + "), " + orEmpty
	}
	return ""
}

func checkAddr(v any) string {
	s := v.(string)
	if s == "0" {
		return ""
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return wantAddr
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return wantAddr
	}
	return ""
}

// coerce turns a raw value into the key's type, strictly: a string must parse in full
// ("maybe" is not a bool), and a YAML value must have the right shape.
func coerce(k *key, raw any) (any, bool) {
	switch k.kind {
	case kindString, kindTunnel, kindMapping:
		return scalarString(raw)
	case kindBool:
		switch v := raw.(type) {
		case bool:
			return v, true
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			return b, err == nil
		}
	case kindInt:
		switch v := raw.(type) {
		case int:
			return v, true
		case int64:
			return int(v), int64(int(v)) == v
		case string:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	case kindFloat:
		switch v := raw.(type) {
		case float64:
			return v, !math.IsNaN(v) && !math.IsInf(v, 0)
		case int:
			return float64(v), true
		case int64:
			return float64(v), true
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
		}
	case kindDuration:
		// A bare number (resyncPeriod: 300) has no unit: refuse it rather than guess.
		switch v := raw.(type) {
		case time.Duration: // the default
			return v, true
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(v))
			return d, err == nil
		}
	case kindList:
		switch v := raw.(type) {
		case string:
			return splitList(v), true
		case []string:
			return splitList(strings.Join(v, ",")), true
		case []any:
			items := make([]string, 0, len(v))
			for _, item := range v {
				s, ok := item.(string)
				if !ok {
					return nil, false
				}
				items = append(items, s)
			}
			return splitList(strings.Join(items, ",")), true
		}
	}
	return nil, false
}

// scalarString accepts any YAML scalar for a string key (metricsBindAddress: 0), since
// the key's check then judges the text.
func scalarString(raw any) (any, bool) {
	switch v := raw.(type) {
	case string:
		return strings.TrimSpace(v), true
	case int, int64, uint64, bool:
		return fmt.Sprint(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return nil, false
}

// splitList splits a comma-separated list, trimming blanks and dropping empty and
// repeated items.
func splitList(s string) []string {
	out := []string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" && !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	return out
}
