package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Resource is the sink-neutral desired state of one Pangolin resource: one published
// host, or one public port, of one source object. The pangolinresource sink writes it as
// a PangolinResource, the direct sink as a resource of Pangolin's API.
type Resource struct {
	Name      string // deterministic, see ResourceName
	Namespace string // always the source object's namespace: owner references cannot cross namespaces
	Origin    route.Origin
	Host      string // the source host, before overrides; route.PortKey for a raw resource
	Subdomain string
	Domain    string
	// Protocol and ProxyPort are set for a raw (TCP or UDP) resource, which has no
	// domain, one target and no access control (Features.RawResources).
	Protocol  route.Protocol
	ProxyPort int32
	Tunnel    route.TunnelRef
	// Targets are ordered as Pangolin should match them: highest priority first.
	Targets []Target
	// SSO and BlockAccess are nil when the installed CRD cannot carry them.
	SSO         *bool
	BlockAccess *bool
	// Policy is the AccessPolicy that governs the host, for a sink that applies one
	// whole (Features.AccessPolicies); nil when none is attached. It is not part of
	// Equal: the sink compares it with what Pangolin holds (Plan.Access).
	Policy *route.AccessPolicy
	// Headers are set on every request to the host (Features.RequestHeaders), sorted
	// by name.
	Headers []route.Header
}

// PublishedHost is the host users reach, the one Pangolin serves: subdomain.domain, or
// the domain itself (hostname.Published gives it for a source host); the port key
// ("tcp:5432", route.PortKey) of a raw resource.
func (r Resource) PublishedHost() string {
	if r.Raw() {
		return route.PortKey(r.Protocol, r.ProxyPort)
	}
	return hostname.Join(r.Subdomain, r.Domain)
}

// ClaimKey is what the resource holds for ownership: its published host, or its port
// key; the host as written when the sink no longer knows the domain it was published
// under. It is the key engine.ClaimKey gives the route the resource was made from.
func (r Resource) ClaimKey() string {
	if r.Raw() || r.Domain == "" {
		return r.Host
	}
	return r.PublishedHost()
}

// ShownHost is the host messages name the resource by: its published host, or the
// host as written when the sink no longer knows the domain it was published under (a
// resource deleted after its domain went).
func (r Resource) ShownHost() string {
	if r.Domain == "" {
		return r.Host
	}
	return r.PublishedHost()
}

// Raw reports whether the resource is a TCP or UDP one.
func (r Resource) Raw() bool { return r.Protocol != route.ProtocolHTTP }

// Target is one backend in Pangolin's vocabulary. Path, Match and Priority are empty for
// the original operator variant, which routes a whole host to one backend.
type Target struct {
	Backend  route.Backend
	Path     string
	Match    string // "exact", "prefix" or "regex"
	Priority int32
	// Rewrite and RewriteType are Pangolin's rewritePath and rewritePathType
	// (Features.Rewrites): Traefik replaces what the Path regex matches with Rewrite, a
	// Go regexp replacement ($1 is the first group, $$ a dollar sign). Both "" for none.
	Rewrite     string
	RewriteType string // "exact" or "regex"
}

// Equal reports whether two resources would be written identically.
func (r Resource) Equal(o Resource) bool {
	return r.Name == o.Name && r.Namespace == o.Namespace &&
		r.Origin.UID == o.Origin.UID && r.Origin.Name == o.Origin.Name && r.Origin.Kind == o.Origin.Kind &&
		r.Host == o.Host && r.Subdomain == o.Subdomain && r.Domain == o.Domain && r.Tunnel == o.Tunnel &&
		r.Protocol == o.Protocol && r.ProxyPort == o.ProxyPort &&
		slices.Equal(r.Targets, o.Targets) && equalBool(r.SSO, o.SSO) && equalBool(r.BlockAccess, o.BlockAccess) &&
		slices.Equal(r.Headers, o.Headers)
}

func equalBool(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

const (
	maxNameLength = 63
	hashLength    = 10
)

// ResourceName is "pic-<namespace>-<name>-<hash>": a DNS label of at most 63 characters.
// The hash covers namespace/name/host (and the kind, for kinds other than Ingress), so
// every host of every object gets its own name; when the readable part is too long it is
// truncated, never the hash.
func ResourceName(origin route.Origin, host string) string {
	key := origin.Namespace + "/" + origin.Name + "/" + host
	if origin.Kind != "" && origin.Kind != "Ingress" {
		key = origin.Kind + "/" + key
	}
	sum := sha256.Sum256([]byte(key))
	hash := hex.EncodeToString(sum[:])[:hashLength]

	readable := dnsLabelChars("pic-" + origin.Namespace + "-" + origin.Name)
	if limit := maxNameLength - hashLength - 1; len(readable) > limit {
		readable = readable[:limit]
	}
	return strings.TrimRight(readable, "-") + "-" + hash
}

// dnsLabelChars keeps a-z, 0-9 and '-', turning anything else (the dots an object name
// may contain) into '-'.
func dnsLabelChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
}
