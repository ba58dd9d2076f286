package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const (
	kindHTTPRoute = "HTTPRoute"
	kindTCPRoute  = "TCPRoute"
	kindUDPRoute  = "UDPRoute"
)

// attachment is how one parentRef of a route attaches to one of PIC's Gateways.
type attachment struct {
	listeners []string // names of the listeners the route attaches to
	hosts     []string // effective hostnames: the intersection of route and listener hostnames
	// reason and message say why the route is not accepted by this parent, when listeners is empty.
	reason  gatewayv1.RouteConditionReason
	message string
}

// attach applies the Gateway API's attachment rules to a route of kind in namespace:
// sectionName and port select listeners; each listener must be of a protocol of the
// kind, and its allowedRoutes (namespaces and kinds) must admit the route; and the
// route's hostnames must intersect the listener's (a TCPRoute or UDPRoute has none,
// which matches every listener).
func attach(kind routeKind, namespace string, hostnames []gatewayv1.Hostname, ref gatewayv1.ParentReference, gw *gatewayv1.Gateway, routeNamespace *corev1.Namespace) attachment {
	var a attachment
	selected, allowed := 0, 0
	var refused []string // why each selected listener does not admit the route
	for _, l := range gw.Spec.Listeners {
		if !selects(ref, l) {
			continue
		}
		selected++
		switch {
		case !kind.attachesThrough(l):
			refused = append(refused, fmt.Sprintf("listener %s is %s, not %s", l.Name, l.Protocol, kind.protocolNames()))
			continue
		case !admitsNamespace(l, gw.Namespace, namespace, routeNamespace):
			refused = append(refused, fmt.Sprintf("listener %s does not admit routes from namespace %s (allowedRoutes.namespaces)", l.Name, namespace))
			continue
		case !kind.admittedBy(l):
			refused = append(refused, fmt.Sprintf("listener %s does not admit %ss (allowedRoutes.kinds)", l.Name, kind.name))
			continue
		}
		allowed++
		hosts := intersect(hostnames, l.Hostname)
		if len(hosts) == 0 {
			continue
		}
		a.listeners = append(a.listeners, string(l.Name))
		for _, h := range hosts {
			if !slices.Contains(a.hosts, h) {
				a.hosts = append(a.hosts, h)
			}
		}
	}
	switch {
	case len(a.listeners) > 0:
	case selected == 0:
		a.reason, a.message = gatewayv1.RouteReasonNoMatchingParent, fmt.Sprintf("Gateway %s/%s has no listener matching %s", gw.Namespace, gw.Name, describeRef(ref))
	case allowed == 0:
		// Say which rule refused it: protocol, namespaces and kinds need different fixes.
		a.reason, a.message = gatewayv1.RouteReasonNotAllowedByListeners, fmt.Sprintf("no listener of Gateway %s/%s admits the route: %s", gw.Namespace, gw.Name, strings.Join(refused, "; "))
	default:
		a.reason, a.message = gatewayv1.RouteReasonNoMatchingListenerHostname, fmt.Sprintf("no hostname of the route matches a listener hostname of Gateway %s/%s", gw.Namespace, gw.Name)
	}
	return a
}

// selects reports whether a parentRef selects a listener: by sectionName and port,
// each matching any listener when unset.
func selects(ref gatewayv1.ParentReference, l gatewayv1.Listener) bool {
	return (ref.SectionName == nil || l.Name == *ref.SectionName) && (ref.Port == nil || l.Port == *ref.Port)
}

func describeRef(ref gatewayv1.ParentReference) string {
	var parts []string
	if ref.SectionName != nil {
		parts = append(parts, "sectionName "+string(*ref.SectionName))
	}
	if ref.Port != nil {
		parts = append(parts, fmt.Sprintf("port %d", *ref.Port))
	}
	if len(parts) == 0 {
		return "the route"
	}
	return strings.Join(parts, " and ")
}

func admitsNamespace(l gatewayv1.Listener, gatewayNamespace, routeNamespace string, ns *corev1.Namespace) bool {
	from := gatewayv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	if l.AllowedRoutes != nil && l.AllowedRoutes.Namespaces != nil {
		if l.AllowedRoutes.Namespaces.From != nil {
			from = *l.AllowedRoutes.Namespaces.From
		}
		selector = l.AllowedRoutes.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSame:
		return gatewayNamespace == routeNamespace
	case gatewayv1.NamespacesFromSelector:
		if selector == nil || ns == nil {
			return false
		}
		s, err := metav1.LabelSelectorAsSelector(selector)
		return err == nil && s.Matches(labels.Set(ns.Labels))
	}
	return false
}

// intersect returns the hostnames a route serves on a listener. An empty list on either
// side matches everything; a wildcard matches the names below it. Of two matching names
// the more specific is kept. The result may hold wildcards, which Pangolin cannot publish.
func intersect(routeHosts []gatewayv1.Hostname, listenerHost *gatewayv1.Hostname) []string {
	l := ""
	if listenerHost != nil {
		l = strings.ToLower(string(*listenerHost))
	}
	if len(routeHosts) == 0 {
		if l == "" {
			return []string{""} // any host: nothing Pangolin can name
		}
		return []string{l}
	}
	var out []string
	for _, rh := range routeHosts {
		r := strings.ToLower(string(rh))
		switch {
		case l == "":
			out = append(out, r)
		case matches(r, l):
			out = append(out, moreSpecific(r, l))
		}
	}
	return out
}

// matches reports whether two hostnames, either of which may be a wildcard, overlap.
func matches(a, b string) bool {
	wa, wb := strings.HasPrefix(a, "*."), strings.HasPrefix(b, "*.")
	switch {
	case !wa && !wb:
		return a == b
	case wa && !wb:
		return strings.HasSuffix(b, a[1:])
	case !wa && wb:
		return strings.HasSuffix(a, b[1:])
	}
	return strings.HasSuffix(a, b[1:]) || strings.HasSuffix(b, a[1:])
}

func moreSpecific(a, b string) string {
	switch {
	case !strings.HasPrefix(a, "*."):
		return a
	case !strings.HasPrefix(b, "*."):
		return b
	case len(a) >= len(b):
		return a
	}
	return b
}
