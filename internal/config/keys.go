package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

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
	wantBool         = "want true or false"
	wantPositiveInt  = "want a whole number of at least 1"
	wantNamespace    = "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
	wantAddr         = `want host:port or :port, such as :8080, or "0" to disable`
	wantOwnerID      = "want 1 to 20 lowercase letters, digits and '-', starting and ending with a letter or digit (it becomes part of the niceId of what PIC creates in Pangolin)"
	wantTunnelRef    = "want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default"
	wantAlias        = "want an alias of lowercase letters, digits and '-' (at most 63 characters), since it names the IngressClass pangolin-<alias>"
	wantAllowed      = `want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`
	wantMappingEntry = "want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel"
)

// keys is every setting, in the order --print-config shows them.
var keys = []*key{
	{name: "defaultTunnel", env: []string{"PIC_DEFAULT_TUNNEL_NAME", "PANGOLIN_DEFAULT_TUNNEL_NAME"}, flag: "default-tunnel", def: "default",
		usage: `PangolinTunnel for IngressClass "pangolin": name or namespace/name ("" for none)`,
		want:  wantTunnelRef + `, or a mapping with name, namespace and allowedNamespaces, or "" for no default tunnel`},
	{name: "tunnelNamespace", env: []string{"PIC_TUNNEL_NAMESPACE"}, flag: "tunnel-namespace", def: "", ok: optional(isNamespace),
		usage: `namespace of tunnels named without one ("": the namespace of each Ingress)`,
		want:  "want a namespace name (" + wantNamespace + `), or "" for the namespace of each Ingress`},
	{name: "tunnelClassMapping", env: []string{"PIC_TUNNEL_CLASS_MAPPING"}, flag: "tunnel-class-mapping", def: "",
		usage: "IngressClass aliases: alias=tunnel entries, one per line or comma-separated (class pangolin-<alias>)",
		want:  "want lines of alias=tunnel (commas also separate entries; blank lines and # comments are ignored); for structured entries use the tunnels section"},
	{name: "tunnels", want: "want a mapping of alias to a tunnel name, namespace/name, or {name, namespace, allowedNamespaces}"},
	{name: "backendScheme", env: []string{"PIC_BACKEND_SCHEME"}, flag: "backend-scheme", def: "http", allowed: []string{"http", "https"},
		usage: "scheme PIC uses to reach backend Services: http or https", want: "want http or https"},
	{name: "clusterDomain", env: []string{"PIC_CLUSTER_DOMAIN"}, flag: "cluster-domain", def: "cluster.local", ok: is(isSubdomain),
		usage: "cluster DNS domain, for <service>.<namespace>.svc.<domain>", want: "want a DNS name such as cluster.local"},
	{name: "defaultSSO", env: []string{"PIC_DEFAULT_SSO"}, flag: "default-sso", def: true,
		usage: "require Pangolin SSO on resources whose Ingress does not say", want: wantBool},
	{name: "defaultBlockAccess", env: []string{"PIC_DEFAULT_BLOCK_ACCESS"}, flag: "default-block-access", def: false,
		usage: "block access to resources whose Ingress does not say", want: wantBool},
	{name: "sources", env: []string{"PIC_SOURCES"}, flag: "sources", def: []string{"ingress"}, plugins: func(p Plugins) []string { return p.Sources },
		usage: "kinds of objects to publish, comma-separated:", want: "want a comma-separated list of at least one of"},
	{name: "sink", env: []string{"PIC_SINK"}, flag: "sink", def: "pangolinresource", plugins: func(p Plugins) []string { return p.Sinks },
		usage: "what applies the desired state:", want: "want one of"},
	{name: "pangolin.url", env: []string{"PIC_PANGOLIN_URL"}, flag: "pangolin-url", def: "", ok: optional(isURL),
		usage: "base URL of Pangolin's Integration API, such as https://pangolin.example.com/v1 (sink pangolin)",
		want:  "want an absolute http or https URL, such as https://pangolin.example.com/v1"},
	{name: "pangolin.org", env: []string{"PIC_PANGOLIN_ORG"}, flag: "pangolin-org", def: "",
		usage: "Pangolin organization id (sink pangolin)", want: "want an organization id"},
	{name: "pangolin.apiKeyFile", env: []string{"PIC_PANGOLIN_API_KEY_FILE"}, flag: "pangolin-api-key-file", def: "",
		usage: "file holding the Pangolin API key, such as a mounted Secret (or set " + EnvAPIKey + ")", want: "want the path of a readable file holding the API key"},
	{name: "pangolin.ownerId", env: []string{"PIC_PANGOLIN_OWNER_ID"}, flag: "pangolin-owner-id", def: "default", ok: is(func(s string) bool { return len(s) <= 20 && isNamespace(s) }),
		usage: "marks what this PIC creates in Pangolin; give each cluster sharing an org its own", want: wantOwnerID},
	{name: "pangolin.caFile", env: []string{"PIC_PANGOLIN_CA_FILE"}, flag: "pangolin-ca-file", def: "",
		usage: `PEM CA bundle to trust for Pangolin's TLS ("": the system's)`, want: "want the path of a readable PEM file holding at least one certificate"},
	{name: "watchNamespaces", env: []string{"PIC_WATCH_NAMESPACES"}, flag: "watch-namespaces", def: []string{}, ok: func(v any) bool {
		return !slices.ContainsFunc(v.([]string), func(s string) bool { return !isNamespace(s) })
	},
		usage: "namespaces to watch, comma-separated (empty: all namespaces)", want: "want a comma-separated list of names of " + wantNamespace + ", or nothing for all namespaces"},
	{name: "resyncPeriod", env: []string{"PIC_RESYNC_PERIOD"}, flag: "resync-period", def: 5 * time.Minute, ok: func(v any) bool { return v.(time.Duration) > 0 },
		usage: "how often every object is reconciled again even without changes (Go duration)", want: "want a positive Go duration such as 30s, 5m or 1h"},
	{name: "maxConcurrentReconciles", env: []string{"PIC_MAX_CONCURRENT_RECONCILES"}, flag: "max-concurrent-reconciles", def: 4, ok: atLeastOne,
		usage: "objects reconciled in parallel, per source", want: wantPositiveInt},
	{name: "kubeconfig", env: []string{"PIC_KUBECONFIG"}, flag: "kubeconfig", def: "", want: "want a file path",
		usage: `kubeconfig file ("": in-cluster, or client-go's usual KUBECONFIG and ~/.kube/config)`},
	{name: "kubeAPIQPS", env: []string{"PIC_KUBE_API_QPS"}, flag: "kube-api-qps", def: float32(50), ok: func(v any) bool { return v.(float32) > 0 && !math.IsInf(float64(v.(float32)), 0) },
		usage: "sustained requests per second to the Kubernetes API", want: "want a number greater than 0, such as 50"},
	{name: "kubeAPIBurst", env: []string{"PIC_KUBE_API_BURST"}, flag: "kube-api-burst", def: 100, ok: atLeastOne,
		usage: "burst of requests to the Kubernetes API above the QPS", want: wantPositiveInt},
	{name: "metricsBindAddress", env: []string{"PIC_METRICS_BIND_ADDRESS"}, flag: "metrics-bind-address", def: ":8080", ok: is(isAddr),
		usage: `address of the Prometheus /metrics endpoint ("0" disables it)`, want: wantAddr},
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

func keyByName(name string) *key { return keys[order(name)] }

// order places a key's problems in table order; problems of no key come first.
func order(name string) int {
	return slices.IndexFunc(keys, func(k *key) bool {
		return k.name == name || strings.HasPrefix(name, k.name+".") || strings.HasPrefix(k.name, name+".")
	})
}

func (k *key) names(p Plugins) []string {
	if k.plugins == nil {
		return nil
	}
	return k.plugins(p)
}

func (k *key) wantText(p Plugins) string {
	return strings.TrimSpace(k.want + " " + strings.Join(k.names(p), ", "))
}

func (k *key) checkValue(v any, p Plugins) string {
	s, isText := v.(string)
	names, _ := v.([]string)
	if isText && s != "" {
		names = []string{s}
	}
	what, known := strings.TrimSuffix(k.name, "s"), k.names(p)
	switch i := slices.IndexFunc(names, func(n string) bool { return !slices.Contains(known, n) }); {
	case k.plugins != nil && len(names) == 0:
		return fmt.Sprintf("no %s is chosen; %s", what, k.wantText(p))
	case k.plugins != nil && i >= 0:
		return fmt.Sprintf("unknown %s %q%s; %s", what, names[i], suggest(names[i], known), k.wantText(p))
	case k.allowed != nil && !slices.Contains(k.allowed, s):
		return k.want + suggest(s, k.allowed)
	case k.ok != nil && !k.ok(v):
		return k.want
	}
	return ""
}

func is(ok func(string) bool) func(any) bool { return func(v any) bool { return ok(v.(string)) } }
func optional(ok func(string) bool) func(any) bool {
	return is(func(s string) bool { return s == "" || ok(s) })
}
func atLeastOne(v any) bool     { return v.(int) >= 1 }
func isNamespace(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }
func isSubdomain(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

func isAddr(s string) bool {
	_, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return s == "0" || err == nil && perr == nil && n >= 0 && n <= 65535
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

var commentRE = regexp.MustCompile(`#.*`)

// text trims the blanks around text, as a ConfigMap often adds a newline. A list may be
// one string, split on commas and newlines with # starting a comment; repeated flags
// add up; empty and repeated items are dropped.
func text(_, to reflect.Type, data any) (any, error) {
	s, isText := data.(string)
	items, isList := data.([]string)
	switch _, isMap := data.(map[string]any); {
	case isMap && to == reflect.TypeFor[[]string]():
		return nil, errors.New("a mapping is not a list") // mapstructure would make it a list of one empty item
	case isText && to != reflect.TypeFor[[]string]():
		return strings.TrimSpace(s), nil
	case isText:
		items, isList = strings.FieldsFunc(commentRE.ReplaceAllString(s, ""), func(r rune) bool { return r == ',' || r == '\n' }), true
	}
	if !isList {
		return data, nil
	}
	out := []string{}
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// strict refuses what mapstructure would quietly convert: a bare number (no unit) to a
// duration, a fraction to a whole number.
func strict(_, to reflect.Type, data any) (any, error) {
	f, isFloat := data.(float64)
	switch _, isText := data.(string); {
	case to == reflect.TypeFor[time.Duration]() && !isText && reflect.TypeOf(data) != to:
		return nil, errors.New("a duration needs a unit")
	case to.Kind() == reflect.Int && isFloat && f != math.Trunc(f):
		return nil, errors.New("not a whole number")
	}
	return data, nil
}

// tunnelSpec is a tunnel as the file writes it: "name", "namespace/name" or a mapping.
// It mirrors tunnel.Tunnel, to convert to and from it, with the file's names.
type tunnelSpec struct {
	Name              string   `mapstructure:"name" yaml:"name"` // default: the alias
	Namespace         string   `mapstructure:"namespace" yaml:"namespace,omitempty"`
	AllowedNamespaces []string `mapstructure:"allowedNamespaces" yaml:"allowedNamespaces"`
}

var tunnelFields = []string{"name", "namespace", "allowedNamespaces"}

func tunnelRef(_, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || to != reflect.TypeFor[tunnelSpec]() {
		return data, nil
	}
	t, ok := parseRef(s)
	if !ok && s != "" {
		return nil, errors.New(wantTunnelRef)
	}
	return tunnelSpec(t), nil
}

// parseRef reads "name" or "namespace/name"; check judges the names.
func parseRef(s string) (tunnel.Tunnel, bool) {
	ns, name, qualified := strings.Cut(s, "/")
	if !qualified {
		ns, name = "", s
	}
	return tunnel.Tunnel{Name: name, Namespace: ns}, name != "" && (!qualified || ns != "") && !strings.Contains(name, "/")
}

func suggest(s string, known []string) string {
	if best := closest(s, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// closest returns the known word nearest to s, if it is near enough to be a typo. Case,
// '-', '_' and a PIC_ prefix are ignored, so that backend-scheme and PIC_BACKEND_SCHEME
// both find backendScheme.
func closest(s string, known []string) string {
	norm := func(w string) string {
		return strings.NewReplacer("-", "", "_", "").Replace(strings.TrimPrefix(strings.ToLower(w), "pic_"))
	}
	target, best := norm(s), ""
	limit := min(max(len(target)/4, 1), 3) // about one typo per four letters, at least one, at most three
	for _, k := range known {
		d := distance(target, norm(k))
		if short, long := min(target, norm(k)), max(target, norm(k)); len(short) >= 3 && strings.HasPrefix(long, short) {
			d = min(d, 1) // warning for warn, httproutes for httproute
		}
		if d <= limit {
			best, limit = k, d-1 // a later word must be nearer
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := range a {
		diag := row[0]
		row[0] = i + 1
		for j := range b {
			sub := diag
			if a[i] != b[j] {
				sub++
			}
			diag, row[j+1] = row[j+1], min(row[j+1]+1, row[j]+1, sub)
		}
	}
	return row[len(b)]
}
