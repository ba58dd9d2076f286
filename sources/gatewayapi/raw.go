package gatewayapi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// Names of the TCPRoute and UDPRoute sources in the configuration (sources), logs and
// metrics.
const (
	TCPRouteName = "tcproute"
	UDPRouteName = "udproute"
)

// TCPRouteFactory and UDPRouteFactory build the TCPRoute and UDPRoute sources. Each is
// unavailable (plugin.ErrUnavailable) while the API server does not serve its kind at
// v1 (Gateway API v1.6 and later, either channel): PIC goes on with its other sources.
var (
	TCPRouteFactory = rawFactory(tcpRoutes)
	UDPRouteFactory = rawFactory(udpRoutes)
)

// listenerPortIndex holds the route.PortKey of every TCP and UDP listener of a Gateway.
const listenerPortIndex = "pic.gateway.listenerport"

func rawFactory(kind routeKind) plugin.SourceFactory {
	return plugin.SourceFactory{
		Indexes: func(*config.Config) []plugin.Index {
			indexes := append(routeIndexes(kind), plugin.Index{Object: &gatewayv1.Gateway{}, Field: listenerPortIndex, Func: indexListenerPorts})
			return append(indexes, sources.PolicyIndexes()...)
		},
		Kinds: routeKinds(kind),
		New: func(ctx context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
			shared, err := newGatewayAPI(ctx, deps, kind)
			if err != nil {
				return nil, err
			}
			return &RawSource{gatewayAPI: shared, kind: kind}, nil
		},
	}
}

var _ plugin.Source = (*RawSource)(nil)

// RawSource reads the TCPRoutes, or the UDPRoutes, attached to PIC's Gateways. Each
// listener of the kind's protocol a route attaches to publishes the listener's port on
// the Pangolin server, forwarded to the route's one backend: a raw route, which claims
// the port key (route.PortKey) as other routes claim a host, so that the oldest claim
// on a port wins whatever its kind.
type RawSource struct {
	*gatewayAPI
	kind routeKind
}

// Name implements plugin.Source.
func (s *RawSource) Name() string { return s.kind.source }

// Object implements plugin.Source.
func (s *RawSource) Object() client.Object { return s.kind.object() }

// rawRoute is what PIC reads of a TCPRoute or a UDPRoute: the two kinds differ by name
// only.
type rawRoute struct {
	client.Object
	parentRefs []gatewayv1.ParentReference
	// backendRefs are those of every rule, in order.
	backendRefs []gatewayv1.BackendRef
	// status is the object's own, for WriteStatus to change.
	status *gatewayv1.RouteStatus
}

// rawRouteOf reads a TCPRoute or a UDPRoute; ok is false for any other object.
func rawRouteOf(obj client.Object) (r rawRoute, ok bool) {
	switch o := obj.(type) {
	case *gatewayv1.TCPRoute:
		r = rawRoute{Object: o, parentRefs: o.Spec.ParentRefs, status: &o.Status.RouteStatus}
		for _, rule := range o.Spec.Rules {
			r.backendRefs = append(r.backendRefs, rule.BackendRefs...)
		}
	case *gatewayv1.UDPRoute:
		r = rawRoute{Object: o, parentRefs: o.Spec.ParentRefs, status: &o.Status.RouteStatus}
		for _, rule := range o.Spec.Rules {
			r.backendRefs = append(r.backendRefs, rule.BackendRefs...)
		}
	default:
		return rawRoute{}, false
	}
	return r, true
}

func (s *RawSource) originOf(r rawRoute) route.Origin {
	return plugin.OriginOf(gatewayKind(s.kind.name), r)
}

// rawEvaluation is a TCPRoute or UDPRoute judged against each of its parents.
type rawEvaluation struct {
	origin  route.Origin
	options sources.Options
	status  routeStatus
	// ports are the port keys the route is published on, each with the Gateway whose
	// listener gives it.
	ports      map[string]gatewayKey
	tunnels    map[gatewayKey]route.TunnelRef
	backend    route.Backend
	served     bool // accepted and resolved: its ports may be published
	rejections []route.Rejection
	notices    []route.Notice
}

// Routes implements plugin.Source: one raw route per port the route is published on.
func (s *RawSource) Routes(ctx context.Context, obj client.Object) (plugin.Result, error) {
	r, _ := rawRouteOf(obj)
	ev, err := s.evaluate(ctx, r)
	if err != nil {
		return plugin.Result{}, err
	}
	res := judgedResult(ev.origin, ev.rejections, ev.status, r.status.Parents)
	res.Notices = ev.notices
	if !res.Managed || !ev.served {
		return res, nil
	}
	for _, portKey := range slices.Sorted(maps.Keys(ev.ports)) {
		_, port, _ := route.ParsePortKey(portKey)
		// Asked for, protection fails closed in the engine: Pangolin applies none to a
		// raw resource, and the port is refused rather than published open.
		res.Routes = append(res.Routes, route.RawRoute(ev.origin, s.kind.protocol, port, ev.tunnels[ev.ports[portKey]], ev.backend,
			route.Access{SSO: ev.options.SSO, BlockAccess: ev.options.BlockAccess}))
	}
	// No AccessPolicy targets a TCPRoute or UDPRoute, but one on its Gateway asks to
	// protect what the Gateway publishes: the port is refused too (fails closed).
	target := access.Target{Kind: s.kind.name, Namespace: r.GetNamespace(), Name: r.GetName()}
	gateways := func(portKey string) []access.Target {
		gw := ev.ports[portKey]
		return []access.Target{{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}}
	}
	// No policy can target a TCPRoute or UDPRoute: one that requires a policy is never
	// published, and is told why.
	if err := s.config.Policies.Require(ctx, &res, target, ev.options.RequiredPolicy); err != nil {
		return plugin.Result{}, err
	}
	if err := s.config.Policies.Protect(ctx, &res, target, gateways); err != nil {
		return plugin.Result{}, err
	}
	return res, nil
}

// evaluate judges a route against each of its parents that is a Gateway of PIC's.
func (s *RawSource) evaluate(ctx context.Context, r rawRoute) (*rawEvaluation, error) {
	ev := &rawEvaluation{
		origin:  s.originOf(r),
		status:  routeStatus{generation: r.GetGeneration()},
		ports:   map[string]gatewayKey{},
		tunnels: map[gatewayKey]route.TunnelRef{},
	}
	reject := rejecter(ev.origin, &ev.rejections)
	var problems []string
	ev.options, problems = sources.ParseOptions(r.GetAnnotations(), s.config.BackendScheme)
	if ev.options.Enabled != nil && !*ev.options.Enabled {
		// Opted out: treated as detached, as an HTTPRoute is.
		return ev, nil
	}
	if ignored := ignoredOnRawRoutes(r.GetAnnotations()); len(ignored) > 0 {
		reject("", pic.ReasonInvalidAnnotation, false, false,
			"%s have no effect on a %s: a port has no host name, its backend is reached over %s, and the tunnel is the one its Gateway stands for (annotate the Gateway instead)",
			strings.Join(ignored, ", "), s.kind.name, strings.ToUpper(string(s.kind.protocol)))
	}

	parents, err := s.judgeParents(ctx, s.kind, r.GetNamespace(), nil, r.parentRefs, reject)
	if err != nil {
		return nil, err
	}
	for _, p := range parents {
		ev.status.parents = append(ev.status.parents, p.status)
		if !p.accepted() {
			continue
		}
		key := p.gatewayKey()
		ev.tunnels[key] = p.tunnel
		for _, l := range p.gw.Spec.Listeners {
			portKey := route.PortKey(s.kind.protocol, l.Port)
			if _, taken := ev.ports[portKey]; !taken && slices.Contains(p.attachment.listeners, string(l.Name)) {
				ev.ports[portKey] = key
			}
		}
	}
	if len(ev.status.parents) == 0 {
		return ev, nil
	}
	var unsupported []string
	var refs *refProblem
	ev.backend, unsupported, refs = rawBackend(r.backendRefs, s.resolver(ctx, s.kind, r.GetNamespace(), string(s.kind.protocol), ev.options, ev.origin, &ev.notices))
	ev.served = settle(ev.status.parents, refs, problems, unsupported, reject)
	return ev, nil
}

// ignoredOnRawRoutes are the annotations set on a TCPRoute or UDPRoute that say
// nothing there: the public name of a host (a port has none), the backend scheme (the
// backend is reached over the route's protocol), and the tunnel (its Gateway's).
func ignoredOnRawRoutes(annotations map[string]string) []string {
	var out []string
	for _, key := range []string{pic.AnnotationDomainName, pic.AnnotationSubdomain, pic.AnnotationBackendScheme, pic.AnnotationTunnelName} {
		if _, ok := annotations[key]; ok {
			out = append(out, key)
		}
	}
	return out
}

// rawBackend is the one backend of a TCPRoute or UDPRoute. The engine gives a raw
// route one target, so exactly one backendRef, in one rule or another, is served:
// several (a weighted split) are refused, never served to one of them alone. Every
// backendRef is resolved, so that ResolvedRefs tells the truth about each.
func rawBackend(refs []gatewayv1.BackendRef, resolve backendResolver) (route.Backend, []string, *refProblem) {
	var (
		backend     route.Backend
		unsupported []string
		problem     *refProblem
	)
	for _, ref := range refs {
		b, p := resolve(ref.BackendObjectReference)
		if p != nil && problem == nil {
			problem = p
		}
		if ref.Weight != nil && *ref.Weight == 0 {
			unsupported = append(unsupported, "a backendRef of weight 0")
		}
		backend = b
	}
	switch {
	case len(refs) == 0:
		unsupported = append(unsupported, "no backendRefs")
	case len(refs) > 1:
		unsupported = append(unsupported, fmt.Sprintf("%d backendRefs (traffic split between backends): a Pangolin port forwards to one backend", len(refs)))
	}
	return backend, unsupported, problem
}

// WriteStatus implements plugin.Source (routeParents).
func (s *RawSource) WriteStatus(ctx context.Context, obj client.Object, want plugin.Status) error {
	r, _ := rawRouteOf(obj)
	parents := routeParents(r.status.Parents, r.parentRefs, want)
	if equality.Semantic.DeepEqual(parents, r.status.Parents) {
		return nil
	}
	r.status.Parents = parents
	if err := s.client.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("update status of %s %s: %w", s.kind.name, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// Declare implements plugin.Source. A route claims the port key of each listener of
// its protocol its parentRefs select, so a Gateway whose listener ports move concerns
// the claimants of those ports, of every kind. Routes come back when what routeWatches
// lists changes, or an AccessPolicy on their Gateways. The status of GatewayClasses and
// Gateways is not written here but by the part every Gateway API source shares
// (sharedGatewayAPI).
func (s *RawSource) Declare() plugin.Declaration {
	return plugin.Declaration{
		Claims: plugin.Claims{
			Hosts:     s.Hosts,
			Claimants: s.Claimants,
			Holder:    s.Holder,
			Movers: []plugin.HostMover{{Object: &gatewayv1.Gateway{}, Hosts: func(obj client.Object) []string {
				return s.kind.portKeys(obj)
			}}},
		},
		Watches: append(s.routeWatches(s.kind, s), s.config.Policies.Watches(s.routesOfPolicyTarget)...),
	}
}

// Hosts are the port keys of the listeners of the route's protocol that its parentRefs
// select, whether or not they admit it (attachment is evaluate's to judge).
func (s *RawSource) Hosts(ctx context.Context, obj client.Object) []string {
	r, ok := rawRouteOf(obj)
	if !ok {
		return nil
	}
	var out []string
	for _, ref := range r.parentRefs {
		key, ok := gatewayOf(r.GetNamespace(), ref)
		if !ok {
			continue
		}
		var gw gatewayv1.Gateway
		if err := s.client.Get(ctx, key, &gw); err != nil {
			continue // no Gateway, no listener: no port claimed through it
		}
		for _, portKey := range s.kind.selectedPortKeys(ref, &gw) {
			if !slices.Contains(out, portKey) {
				out = append(out, portKey)
			}
		}
	}
	return out
}

// Claimants are the routes of the source's kind that claim a port key: those with a
// parentRef that selects a listener of that port, from the Gateways' port index. A host
// is no port key, and claimed by none of them.
func (s *RawSource) Claimants(ctx context.Context, portKey string) ([]engine.Claim, error) {
	routes, err := s.claimantRoutes(ctx, portKey)
	if err != nil {
		return nil, err
	}
	claims := make([]engine.Claim, 0, len(routes))
	for _, r := range routes {
		claims = append(claims, engine.Claim{Origin: s.originOf(r), Deleting: r.GetDeletionTimestamp() != nil})
	}
	return claims, nil
}

// Holder is the claim of the route of the source's kind a sink holds a resource for
// (plugin.Claims).
func (s *RawSource) Holder(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
	return sources.Holder(ctx, s.client, s.kind.name, holder, s.kind.object(), func(obj client.Object) engine.Claim {
		return engine.Claim{Origin: s.originOf(rawRoute{Object: obj}), Deleting: obj.GetDeletionTimestamp() != nil}
	})
}

func (s *RawSource) claimantRoutes(ctx context.Context, portKey string) ([]rawRoute, error) {
	if protocol, _, ok := route.ParsePortKey(portKey); !ok || protocol != s.kind.protocol {
		return nil, nil
	}
	var gateways gatewayv1.GatewayList
	if err := s.client.List(ctx, &gateways, client.MatchingFields{listenerPortIndex: portKey}); err != nil {
		return nil, fmt.Errorf("list Gateways by listener port %s: %w", portKey, err)
	}
	var out []rawRoute
	seen := map[types.UID]bool{}
	for i := range gateways.Items {
		gw := &gateways.Items[i]
		attached, err := s.list(ctx, client.MatchingFields{parentIndex: client.ObjectKeyFromObject(gw).String()})
		if err != nil {
			return nil, err
		}
		for _, r := range attached {
			if !seen[r.GetUID()] && s.claimsThrough(r, gw, portKey) {
				seen[r.GetUID()] = true
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// claimsThrough reports whether a parentRef of r to gw selects a listener of portKey:
// Hosts, for the Gateway in hand.
func (s *RawSource) claimsThrough(r rawRoute, gw *gatewayv1.Gateway, portKey string) bool {
	key := client.ObjectKeyFromObject(gw)
	return slices.ContainsFunc(r.parentRefs, func(ref gatewayv1.ParentReference) bool {
		parent, ok := gatewayOf(r.GetNamespace(), ref)
		return ok && parent == key && slices.Contains(s.kind.selectedPortKeys(ref, gw), portKey)
	})
}

// judgeAttached judges the routes of the source's kind with a parentRef to gw.
func (s *RawSource) judgeAttached(ctx context.Context, gw types.NamespacedName) ([]judgedRoute, error) {
	routes, err := s.list(ctx, client.MatchingFields{parentIndex: gw.String()})
	if err != nil {
		return nil, err
	}
	out := make([]judgedRoute, 0, len(routes))
	for _, r := range routes {
		ev, err := s.evaluate(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, judgedRoute{namespace: r.GetNamespace(), status: ev.status})
	}
	return out, nil
}

// list lists the routes of the source's kind.
func (s *RawSource) list(ctx context.Context, opts ...client.ListOption) ([]rawRoute, error) {
	list := s.kind.newList()
	if err := s.client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("list %ss: %w", s.kind.name, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]rawRoute, 0, len(items))
	for _, item := range items {
		if r, ok := rawRouteOf(item.(client.Object)); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// requestsOfListedRoutes are the routes opts list (routeRequests): raw routes never
// merge into one another, as HTTPRoutes sharing a host do, so no other route's result
// changes with theirs.
func (s *RawSource) requestsOfListedRoutes(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	routes, err := s.list(ctx, opts...)
	if err != nil {
		log.FromContext(ctx).Error(err, "cannot map a related object to its routes", append([]any{"kind", s.kind.name}, listOptionKeys(opts)...)...)
	}
	out := make([]reconcile.Request, len(routes))
	for i, r := range routes {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(r.Object)}
	}
	return out
}

// requestsOfGateway are the routes with a parentRef to gw (routeRequests).
func (s *RawSource) requestsOfGateway(ctx context.Context, gw types.NamespacedName) []reconcile.Request {
	return s.requestsOfListedRoutes(ctx, client.MatchingFields{parentIndex: gw.String()})
}

// routesOfPolicyTarget are the routes an AccessPolicy on a Gateway concerns: no policy
// targets a TCPRoute or UDPRoute itself.
func (s *RawSource) routesOfPolicyTarget(ctx context.Context, t access.Target) []reconcile.Request {
	if t.Kind != "Gateway" {
		return nil
	}
	return s.requestsOfGateway(ctx, types.NamespacedName{Namespace: t.Namespace, Name: t.Name})
}

// portKeys are the port keys of a Gateway's listeners of the kind's protocol.
func (k routeKind) portKeys(obj client.Object) []string {
	gw, ok := obj.(*gatewayv1.Gateway)
	if !ok {
		return nil
	}
	return k.selectedPortKeys(gatewayv1.ParentReference{}, gw)
}

// selectedPortKeys are the port keys of the listeners of gw of the kind's protocol
// that ref selects.
func (k routeKind) selectedPortKeys(ref gatewayv1.ParentReference, gw *gatewayv1.Gateway) []string {
	var out []string
	for _, l := range gw.Spec.Listeners {
		if !k.attachesThrough(l) || !selects(ref, l) {
			continue
		}
		if portKey := route.PortKey(k.protocol, l.Port); !slices.Contains(out, portKey) {
			out = append(out, portKey)
		}
	}
	return out
}

// indexListenerPorts are the port keys of a Gateway's TCP and UDP listeners.
func indexListenerPorts(obj client.Object) []string {
	return append(tcpRoutes.portKeys(obj), udpRoutes.portKeys(obj)...)
}
