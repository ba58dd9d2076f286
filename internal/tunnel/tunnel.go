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
		t, how = r.byName(ns, name, namespace), fmt.Sprintf("annotation %s", pic.AnnotationTunnelName)
	case alias != "":
		var ok bool
		if t, ok = r.Aliases[alias]; !ok {
			// An unmapped alias names the tunnel itself.
			t = r.byName("", alias, namespace)
		}
		how = fmt.Sprintf("class %s%s", pic.ClassPrefix, alias)
	default:
		t, how = r.Default, "the default tunnel"
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
	if !allowed(t.AllowedNamespaces, namespace) {
		return route.TunnelRef{}, &Problem{Reason: pic.ReasonTunnelNotAllowed, Denied: true,
			Message: fmt.Sprintf("namespace %q may not publish through tunnel %s (chosen by %s); allowed: %s", namespace, ref, how, strings.Join(t.AllowedNamespaces, ", "))}
	}
	return ref, nil
}

// byName finds the configured tunnel of that name, so that its namespace policy applies
// however it was chosen; an unconfigured name is a tunnel open to all.
func (r Resolver) byName(ns, name, objectNamespace string) Tunnel {
	candidates := append([]Tunnel{r.Default}, sortedValues(r.Aliases)...)
	for _, t := range candidates {
		if t.Name == name && (ns == "" || ns == r.namespaceOf(t, objectNamespace)) {
			if ns != "" {
				t.Namespace = ns
			}
			return t
		}
	}
	return Tunnel{Name: name, Namespace: ns}
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
