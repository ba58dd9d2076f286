// Package tunnel decides which PangolinTunnel serves a source object, from its class or
// annotation and the configured aliases, and whether its namespace may use that tunnel.
// It is pure: whether the tunnel exists is the controller's question.
package tunnel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Tunnel is one configured tunnel.
type Tunnel struct {
	Name string
	// Namespace where the PangolinTunnel lives; empty means the resolver's default.
	Namespace string
	// AllowedNamespaces may publish through this tunnel; empty allows all, "*" too.
	AllowedNamespaces []string
	// ManagedSite asks PIC to create the tunnel's Pangolin site and run its Newt agent
	// (direct mode only).
	ManagedSite bool
}

// Resolver holds the tunnel configuration.
type Resolver struct {
	// Default serves the class "pangolin" and objects without a tunnel choice.
	Default Tunnel
	// Aliases map a class suffix ("edge-eu" in "pangolin-edge-eu") to a tunnel.
	Aliases map[string]Tunnel
	// Namespace is where tunnels named without a namespace live; empty means the
	// namespace of the object that uses them.
	Namespace string
	// OnlyListed refuses a tunnel that is neither Default nor an alias's: named by an
	// annotation or an unmapped class, it would be open to every namespace. On a cluster
	// shared by tenants, or an organization whose sites reach several clusters, an
	// unlisted site is one no namespace was given.
	OnlyListed bool
}

// Problem is a rejection reason and message.
type Problem struct {
	Reason, Message string
	// Denied: the namespace may not use the tunnel. The policy wins over anything else
	// wrong with the object: nothing is published or kept for it.
	Denied bool
}

// Resolve returns the tunnel for an object in namespace, chosen (in that order) by the
// tunnel-name annotation (explicit, "name" or "namespace/name"), a class alias, or the
// default tunnel.
func (r Resolver) Resolve(namespace, alias, explicit string) (route.TunnelRef, *Problem) {
	var t Tunnel
	var listed bool // t is the default tunnel or an alias's
	var how string
	switch {
	case explicit != "":
		ns, name, qualified := strings.Cut(explicit, "/")
		if !qualified {
			ns, name = "", explicit
		}
		if name == "" || qualified && ns == "" || strings.Contains(name, "/") {
			return route.TunnelRef{}, &Problem{Reason: pic.ReasonInvalidAnnotation,
				Message: fmt.Sprintf("%s=%q: want a tunnel name or namespace/name", pic.AnnotationTunnelName, explicit)}
		}
		t, listed = r.byName(ns, name, namespace)
		how = fmt.Sprintf("annotation %s", pic.AnnotationTunnelName)
	case alias != "":
		if t, listed = r.Aliases[alias]; !listed {
			// An unmapped alias names the tunnel itself.
			t, listed = r.byName("", alias, namespace)
		}
		how = fmt.Sprintf("class %s%s", pic.ClassPrefix, alias)
	default:
		t, listed, how = r.Default, true, "the default tunnel"
		if t.Name == "" {
			return route.TunnelRef{}, &Problem{Reason: pic.ReasonTunnelNotFound,
				Message: "no default tunnel is configured (PIC_DEFAULT_TUNNEL_NAME / defaultTunnel): use a pangolin-<alias> class, the " + pic.AnnotationTunnelName + " annotation, or configure a default"}
		}
	}
	ref := route.TunnelRef{Namespace: t.Namespace, Name: t.Name}
	if ref.Namespace == "" {
		ref.Namespace = r.Namespace
	}
	if ref.Namespace == "" {
		ref.Namespace = namespace
	}
	if r.OnlyListed && !listed {
		return route.TunnelRef{}, &Problem{Reason: pic.ReasonTunnelNotAllowed, Denied: true,
			Message: fmt.Sprintf("tunnel %s (chosen by %s) is not one of the tunnels PIC's configuration lists (defaultTunnel, tunnels), and onlyListedTunnels is on: choose a listed tunnel, or ask for this one to be listed", ref, how)}
	}
	if !allowed(t.AllowedNamespaces, namespace) {
		return route.TunnelRef{}, &Problem{Reason: pic.ReasonTunnelNotAllowed, Denied: true,
			Message: fmt.Sprintf("namespace %q may not publish through tunnel %s (chosen by %s); allowed: %s", namespace, ref, how, strings.Join(t.AllowedNamespaces, ", "))}
	}
	return ref, nil
}

// byName finds the configured tunnel of that name, so that its namespace policy applies
// however it was chosen (listed); an unconfigured name is a tunnel open to all, unless
// the resolver takes only listed tunnels.
func (r Resolver) byName(ns, name, objectNamespace string) (t Tunnel, listed bool) {
	candidates := append([]Tunnel{r.Default}, sortedValues(r.Aliases)...)
	for _, t := range candidates {
		if t.Name != "" && t.Name == name && (ns == "" || ns == r.namespaceOf(t, objectNamespace)) {
			if ns != "" {
				t.Namespace = ns
			}
			return t, true
		}
	}
	return Tunnel{Name: name, Namespace: ns}, false
}

func (r Resolver) namespaceOf(t Tunnel, objectNamespace string) string {
	switch {
	case t.Namespace != "":
		return t.Namespace
	case r.Namespace != "":
		return r.Namespace
	}
	return objectNamespace
}

func sortedValues(m map[string]Tunnel) []Tunnel {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Tunnel, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func allowed(list []string, namespace string) bool {
	return len(list) == 0 || slices.Contains(list, "*") || slices.Contains(list, namespace)
}
