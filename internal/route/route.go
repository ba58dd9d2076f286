package route

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Origin identifies the source object a route came from, and is the owner of what is
// written for it.
type Origin struct {
	Group      string // "networking.k8s.io", "gateway.networking.k8s.io"
	Version    string // "v1"
	Kind       string // "Ingress", "HTTPRoute"
	Namespace  string
	Name       string
	UID        types.UID
	Generation int64
	// Created decides host conflicts: the oldest claim wins.
	Created time.Time
}

// Key is "Kind namespace/name", for logs and messages.
func (o Origin) Key() string { return fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name) }

// NamespacedName is the source object's key.
func (o Origin) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
}

// Older reports whether o's claim precedes other's: creation time, then namespace/name,
// then kind, so that every replica settles a conflict the same way.
func (o Origin) Older(other Origin) bool {
	if !o.Created.Equal(other.Created) {
		return o.Created.Before(other.Created)
	}
	if o.Namespace != other.Namespace {
		return o.Namespace < other.Namespace
	}
	if o.Name != other.Name {
		return o.Name < other.Name
	}
	return o.Kind < other.Kind
}

// TunnelRef is a resolved PangolinTunnel.
type TunnelRef struct {
	Namespace string
	Name      string
}

func (t TunnelRef) String() string { return t.Namespace + "/" + t.Name }

// MatchType is how a path matches, with the Kubernetes meaning.
type MatchType string

const (
	// MatchExact matches the path exactly.
	MatchExact MatchType = "Exact"
	// MatchPrefix matches whole path elements: /foo matches /foo and /foo/bar, not /foobar.
	MatchPrefix MatchType = "Prefix"
	// MatchRegex matches a regular expression (Gateway API RegularExpression).
	MatchRegex MatchType = "RegularExpression"
)

// Backend is a resolved upstream: the address the Newt agent dials.
type Backend struct {
	Host   string // "my-app.prod.svc.cluster.local", or an ExternalName
	Port   int32
	Scheme string // "http" or "https"; "tcp" or "udp" for a raw route
	// Health is how the site's agent checks the backend before sending it traffic (a
	// pod's readiness probe, or the user's annotations); the zero value checks nothing.
	Health HealthCheck
}

// HealthCheck is a target health check in Pangolin's terms (its hc* fields), probing
// Backend.Host. It is a value, so that backends compare with ==.
type HealthCheck struct {
	// Mode is "http" (a request must answer 2xx) or "tcp" (a connection must open);
	// "" is no health check.
	Mode   string
	Scheme string // "http" or "https", for Mode http
	Path   string // the request path, for Mode http
	Port   int32  // the port probed: the Service port that reaches the probed container port
	// IntervalSeconds, TimeoutSeconds, HealthyThreshold and UnhealthyThreshold are the
	// probe's periodSeconds, timeoutSeconds, successThreshold and failureThreshold.
	IntervalSeconds    int32
	TimeoutSeconds     int32
	HealthyThreshold   int32
	UnhealthyThreshold int32
}

// Enabled reports whether the backend is checked.
func (h HealthCheck) Enabled() bool { return h.Mode != "" }

func (h HealthCheck) String() string {
	if h.Mode == "tcp" {
		return fmt.Sprintf("tcp port %d", h.Port)
	}
	return fmt.Sprintf("%s GET %s on port %d", h.Scheme, h.Path, h.Port)
}

func (b Backend) String() string { return fmt.Sprintf("%s://%s:%d", b.Scheme, b.Host, b.Port) }

// PathRule sends requests matching Path to Backend.
type PathRule struct {
	Path    string
	Match   MatchType
	Backend Backend
	// Fallback marks the catch-all (Ingress defaultBackend): it matches what nothing else does.
	Fallback bool
	// Rewrite, when set, changes the path of a request before it reaches Backend.
	Rewrite *PathRewrite
}

// RewriteType is how a path rewrite replaces the path, with the Gateway API meaning.
type RewriteType string

const (
	// RewriteFullPath replaces the whole path with the rewrite's value.
	RewriteFullPath RewriteType = "ReplaceFullPath"
	// RewritePrefixMatch replaces the matched prefix (whole path elements) with the
	// rewrite's value and keeps the rest: only for a Prefix match.
	RewritePrefixMatch RewriteType = "ReplacePrefixMatch"
)

// PathRewrite changes the path of the requests a PathRule matches (Gateway API
// URLRewrite with a path modifier).
type PathRewrite struct {
	Type  RewriteType
	Value string
}

func (r PathRewrite) String() string { return fmt.Sprintf("%s %q", r.Type, r.Value) }

// Header is one HTTP header.
type Header struct {
	Name  string
	Value string
}

// Access is the access control the user asked for. Nil means "not asked": the
// configured default applies.
type Access struct {
	// SSO and BlockAccess are the annotations', merged with the attached policy's when
	// there is one (the stricter wins; see internal/access).
	SSO         *bool
	BlockAccess *bool
	// Policy is the rest of an attached AccessPolicy. Nil: no policy is attached, and
	// PIC leaves the host's roles, users, secrets, whitelist and rules in Pangolin as
	// they are.
	Policy *AccessPolicy
}

// Protocol is what a route publishes: an HTTP host, or one raw TCP or UDP port.
type Protocol string

const (
	// ProtocolHTTP is a host served by Pangolin's HTTP router (the zero value).
	ProtocolHTTP Protocol = ""
	// ProtocolTCP and ProtocolUDP are raw resources: one public port of the Pangolin
	// server, forwarded to one backend, with no host, path or access control.
	ProtocolTCP Protocol = "tcp"
	ProtocolUDP Protocol = "udp"
)

// PortKey is what a raw route claims in place of a host: "tcp:5432". Two routes that
// ask for one protocol and public port claim the same key, so the rule that settles
// host conflicts (the oldest claim wins) settles port conflicts too; no DNS host
// contains a ':', so a port key never meets a host.
func PortKey(p Protocol, port int32) string { return string(p) + ":" + strconv.Itoa(int(port)) }

// ParsePortKey reads a PortKey back; ok is false for a host.
func ParsePortKey(key string) (p Protocol, port int32, ok bool) {
	proto, number, found := strings.Cut(key, ":")
	if !found || (Protocol(proto) != ProtocolTCP && Protocol(proto) != ProtocolUDP) {
		return "", 0, false
	}
	n, err := strconv.Atoi(number)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != number {
		return "", 0, false
	}
	return Protocol(proto), int32(n), true
}

// Route is one public host, or one public port, of one source object.
type Route struct {
	Origin Origin
	// Host is the public host as written by the user, validated, lower-case, punycode.
	// For a raw route (Protocol tcp or udp, made by RawRoute) it holds the port key,
	// PortKey(Protocol, Port), so that code keyed by host (claims, resource names,
	// rejections) keys ports alike; read it as such with the PortKey method.
	Host string
	// Protocol and Port: a raw route publishes Port of the Pangolin server over
	// Protocol, to the one Backend of its only PathRule (whose Path is empty).
	Protocol Protocol
	Port     int32
	Tunnel   TunnelRef
	Paths    []PathRule
	Access   Access
	// RequestHeaders are set on every request to the host, whatever its path (Gateway
	// API RequestHeaderModifier set), sorted by name. Pangolin sets headers per host,
	// so a source gives them only when every rule of the host asks for the same.
	RequestHeaders []Header
	// DomainOverride and SubdomainOverride replace the public-suffix split.
	DomainOverride    string
	SubdomainOverride string
}

// RawRoute is the route of public port port over protocol p (tcp or udp) to backend,
// its only one. Its Host is the port's key (PortKey), so that a port is claimed as a host
// is; sources make raw routes here, which keeps the key and the port the same.
func RawRoute(origin Origin, p Protocol, port int32, tunnel TunnelRef, backend Backend, acc Access) Route {
	return Route{
		Origin:   origin,
		Host:     PortKey(p, port),
		Protocol: p,
		Port:     port,
		Tunnel:   tunnel,
		Paths:    []PathRule{{Backend: backend}},
		Access:   acc,
	}
}

// Raw reports whether the route publishes a TCP or UDP port rather than an HTTP host.
func (r Route) Raw() bool { return r.Protocol != ProtocolHTTP }

// PortKey is the key a raw route claims its public port by ("tcp:5432"), which Host
// holds; "" for an HTTP route, whose Host is a host.
func (r Route) PortKey() string {
	if !r.Raw() {
		return ""
	}
	return r.Host
}

// Rejection is a user's mistake: it becomes a Warning event with a stable reason and a
// log line, never a Go error.
type Rejection struct {
	Origin Origin
	Host   string // empty when the rejection concerns the whole object
	// Path, when set, is the one path of Host refused: the host is published without it.
	Path    string
	Reason  string
	Message string
	// Hold keeps what already exists for Host (or for the whole object when Host is
	// empty) instead of deleting it: the cause may be transient (a Service not created
	// yet, a missing tunnel), and an outage is worse than a stale route.
	Hold bool
	// Retry asks for a requeue with backoff, for causes that may fix themselves.
	Retry bool
	// AccessUnsupported marks the refusal of access control the sink cannot apply: the
	// host or port is not published rather than published open, and nothing it
	// replaces stands in for it, since what it leaves has less protection than asked.
	AccessUnsupported bool
	// Kept marks a refusal that keeps something published: what would replace it was
	// refused (make before break), so it stays as it is. It leaves nothing unpublished:
	// the refusal of the replacement says what is not.
	Kept bool
	// Revoked marks the refusal of a host the object may not publish at all (the host
	// policy): what it published there goes, whatever else holds or keeps the object's
	// resources, so that a namespace never keeps a host taken from it.
	Revoked bool
}

func (r Rejection) String() string {
	if r.Host == "" {
		return r.Reason + ": " + r.Message
	}
	return fmt.Sprintf("%s (%s): %s", r.Reason, r.Host, r.Message)
}

// Notice is something users should know about an object that stops nothing from being
// published: a Normal event with a stable reason, once per change.
type Notice struct {
	Origin  Origin
	Reason  string
	Message string
	// Protects is the host the notice says an AccessPolicy protects, empty for any
	// other notice: the object's status repeats the notice.
	Protects string
}
