package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// routeKind is a kind of Gateway API route PIC serves: the source that serves it, and
// the listener protocols it attaches through.
type routeKind struct {
	name      string // "HTTPRoute"
	source    string // the source's configuration name: "httproute"
	protocols []gatewayv1.ProtocolType
	// since is the first Gateway API release that serves the kind at v1.
	since string
	// protocol is what the kind publishes: HTTP hosts, or a raw TCP or UDP port.
	protocol route.Protocol
}

var (
	// Pangolin terminates TLS itself, so an HTTPS listener is as good as an HTTP one.
	httpRoutes = routeKind{name: kindHTTPRoute, source: Name, protocols: []gatewayv1.ProtocolType{gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType}, since: "v1.5"}
	tcpRoutes  = routeKind{name: kindTCPRoute, source: TCPRouteName, protocols: []gatewayv1.ProtocolType{gatewayv1.TCPProtocolType}, since: "v1.6", protocol: route.ProtocolTCP}
	udpRoutes  = routeKind{name: kindUDPRoute, source: UDPRouteName, protocols: []gatewayv1.ProtocolType{gatewayv1.UDPProtocolType}, since: "v1.6", protocol: route.ProtocolUDP}
	// allRouteKinds are every kind PIC can serve, in the order listeners report them.
	allRouteKinds = []routeKind{httpRoutes, tcpRoutes, udpRoutes}
)

// attachesThrough reports whether the kind attaches through listeners of l's protocol.
func (k routeKind) attachesThrough(l gatewayv1.Listener) bool {
	return slices.Contains(k.protocols, l.Protocol)
}

// protocolNames names the kind's listener protocols for messages: "HTTP or HTTPS".
func (k routeKind) protocolNames() string {
	names := make([]string, len(k.protocols))
	for i, p := range k.protocols {
		names[i] = string(p)
	}
	return strings.Join(names, " or ")
}

// is reports whether a RouteGroupKind of a listener's allowedRoutes names the kind.
func (k routeKind) is(gk gatewayv1.RouteGroupKind) bool {
	return string(gk.Kind) == k.name && (gk.Group == nil || *gk.Group == gatewayv1.GroupName)
}

func (k routeKind) groupKind() gatewayv1.RouteGroupKind {
	return gatewayv1.RouteGroupKind{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: gatewayv1.Kind(k.name)}
}

// admittedBy reports whether a listener's allowedRoutes.kinds admits the kind: unset,
// it admits the kinds of its protocol.
func (k routeKind) admittedBy(l gatewayv1.Listener) bool {
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		return true
	}
	return slices.ContainsFunc(l.AllowedRoutes.Kinds, k.is)
}

// servedKinds are the route kinds PIC serves in this cluster: its configuration asks
// for their source, and the API server serves the kind and what it attaches to (nil
// mapper: `render`, where every API counts as installed). They do not depend on the
// source that asks, so a Gateway's listeners report the same kinds whichever Gateway
// API source is built first (sharedGatewayAPI).
func servedKinds(cfg *config.Config, mapper meta.RESTMapper) ([]routeKind, error) {
	var out []routeKind
	for _, k := range allRouteKinds {
		if !slices.Contains(cfg.Sources, k.source) {
			continue
		}
		if mapper != nil {
			missing, err := missingKinds(mapper, k)
			if err != nil {
				return nil, err
			}
			if len(missing) > 0 {
				continue
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// missingKinds lists the Gateway API kinds a source of kind reads that the API server
// does not serve at v1. An older bundle serving ReferenceGrant only at v1beta1, or
// TCPRoute only at v1alpha2, would leave an informer that never syncs, so it counts as
// missing. Any other discovery error is returned: a passing API server hiccup must not
// switch the source off until the next restart.
func missingKinds(mapper meta.RESTMapper, kind routeKind) ([]string, error) {
	var missing []string
	for _, name := range []string{"GatewayClass", "Gateway", kind.name, "ReferenceGrant"} {
		gk := schema.GroupKind{Group: gatewayv1.GroupName, Kind: name}
		_, err := mapper.RESTMapping(gk, gatewayv1.GroupVersion.Version)
		switch {
		case meta.IsNoMatchError(err):
			missing = append(missing, name)
		case err != nil:
			return nil, fmt.Errorf("look up the Gateway API %s kind: %w", name, err)
		}
	}
	return missing, nil
}

// object is an empty route of the kind.
func (k routeKind) object() client.Object {
	switch k.name {
	case kindTCPRoute:
		return &gatewayv1.TCPRoute{}
	case kindUDPRoute:
		return &gatewayv1.UDPRoute{}
	}
	return &gatewayv1.HTTPRoute{}
}

// newList is an empty list of the kind's routes.
func (k routeKind) newList() client.ObjectList {
	switch k.name {
	case kindTCPRoute:
		return &gatewayv1.TCPRouteList{}
	case kindUDPRoute:
		return &gatewayv1.UDPRouteList{}
	}
	return &gatewayv1.HTTPRouteList{}
}

// parentRefsOf reads the parentRefs of a route of any kind PIC serves; ok is false for
// any other object.
func parentRefsOf(obj client.Object) (refs []gatewayv1.ParentReference, ok bool) {
	switch r := obj.(type) {
	case *gatewayv1.HTTPRoute:
		return r.Spec.ParentRefs, true
	case *gatewayv1.TCPRoute:
		return r.Spec.ParentRefs, true
	case *gatewayv1.UDPRoute:
		return r.Spec.ParentRefs, true
	}
	return nil, false
}

// indexServices are the "namespace/name" of the Services a route of any kind PIC serves
// refers to.
func indexServices(obj client.Object) []string {
	var refs []gatewayv1.BackendRef
	switch r := obj.(type) {
	case *gatewayv1.HTTPRoute:
		for _, rule := range r.Spec.Rules {
			for _, ref := range rule.BackendRefs {
				refs = append(refs, ref.BackendRef)
			}
		}
	case *gatewayv1.TCPRoute, *gatewayv1.UDPRoute:
		raw, _ := rawRouteOf(obj)
		refs = raw.backendRefs
	}
	keys := make([]string, 0, len(refs))
	for _, ref := range refs {
		ns := obj.GetNamespace()
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		keys = append(keys, ns+"/"+string(ref.Name))
	}
	return keys
}

// routeKinds are what a Gateway API source declares of the kinds it reads and writes:
// the status of its routes, and, through the part every Gateway API source shares
// (sharedGatewayAPI), of Gateways and GatewayClasses; it only reads Services and
// ReferenceGrants.
func routeKinds(kind routeKind) plugin.Kinds {
	return plugin.Kinds{
		Scheme:  gatewayv1.Install,
		Status:  []client.Object{kind.object(), &gatewayv1.Gateway{}, &gatewayv1.GatewayClass{}},
		Trimmed: []client.Object{&corev1.Service{}, &gatewayv1.ReferenceGrant{}},
		// Every route kind: the Gateway status every Gateway API source shares counts
		// the routes of each kind attached to a listener.
		Read: []plugin.ReadKind{
			{Object: &gatewayv1.HTTPRoute{}}, {Object: &gatewayv1.TCPRoute{}}, {Object: &gatewayv1.UDPRoute{}},
			{Object: &gatewayv1.Gateway{}}, {Object: &gatewayv1.GatewayClass{}, ClusterScoped: true},
			{Object: &gatewayv1.ReferenceGrant{}}, {Object: &corev1.Service{}},
			// Listeners' allowedRoutes select routes' namespaces by their labels.
			{Object: &corev1.Namespace{}, ClusterScoped: true},
		},
		RBAC: []string{"gateway-api"},
	}.And(sources.PolicyKinds())
}

// gatewayKind is the group, version and kind an origin records for a route of kind:
// Gateway API's group at the version PIC reads.
func gatewayKind(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: gatewayv1.GroupVersion.Version, Kind: kind}
}
