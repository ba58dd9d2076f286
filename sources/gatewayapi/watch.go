package gatewayapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// Cache indexes, so that a change to a related object reaches the routes it concerns
// without listing them all.
const (
	// Routes of every kind PIC serves (routeIndexes).
	parentIndex  = "pic.route.parent"  // "namespace/name" of every parent Gateway
	serviceIndex = "pic.route.service" // "namespace/name" of every backend Service

	hostIndex         = "pic.httproute.host"       // every host it claims (indexHosts)
	listenerHostIndex = "pic.gateway.listenerhost" // every listener hostname of a Gateway
	noHostnames       = ""                         // the hostIndex key of routes without hostnames
)

// routeIndexes are the indexes of routes of kind that every Gateway API source reads
// through (routeWatches).
func routeIndexes(kind routeKind) []plugin.Index {
	return []plugin.Index{
		{Object: kind.object(), Field: parentIndex, Func: indexParents},
		{Object: kind.object(), Field: serviceIndex, Func: indexServices},
	}
}

// indexes are the source's cache indexes.
func indexes(cfg *config.Config) []plugin.Index {
	clusterDomain := cfg.ClusterDomain
	return append(routeIndexes(httpRoutes),
		plugin.Index{Object: &gatewayv1.HTTPRoute{}, Field: hostIndex, Func: func(obj client.Object) []string { return indexHosts(obj, clusterDomain) }},
		plugin.Index{Object: &gatewayv1.Gateway{}, Field: listenerHostIndex, Func: indexListenerHosts},
	)
}

// Declare implements plugin.Source. A route claims its hostnames, and those it is
// served under through its Gateways' listeners, so a Gateway whose listener hostnames
// move concerns the claimants of those hosts, of every kind. Routes come back when
// what routeWatches lists changes, or an AccessPolicy on them or their Gateways. The
// status of GatewayClasses and Gateways is not written here but by the part every
// Gateway API source shares (sharedGatewayAPI).
func (s *Source) Declare() plugin.Declaration {
	return plugin.Declaration{
		Claims: plugin.Claims{
			Hosts:     s.Hosts,
			Claimants: s.Claimants,
			Holder:    s.Holder,
			Movers:    []plugin.HostMover{{Object: &gatewayv1.Gateway{}, Hosts: indexListenerHosts}},
		},
		Watches: append(s.routeWatches(httpRoutes, s), s.config.Policies.Watches(s.routesOfPolicyTarget)...),
	}
}

// requestsOfGateway are the routes with a parentRef to gw (routeRequests).
func (s *Source) requestsOfGateway(ctx context.Context, gw types.NamespacedName) []reconcile.Request {
	return toRequests(s.routesBy(ctx, client.MatchingFields{parentIndex: gw.String()}))
}

// requestsOfListedRoutes are the routes opts list and those sharing one of their
// hosts (routeRequests, withSiblings).
func (s *Source) requestsOfListedRoutes(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	return s.withSiblings(ctx, s.routesBy(ctx, opts...))
}

// routesOfPolicyTarget are the routes an AccessPolicy's target protects: the HTTPRoute
// it names, or every route attached to the Gateway it names.
func (s *Source) routesOfPolicyTarget(ctx context.Context, t access.Target) []reconcile.Request {
	switch t.Kind {
	case kindHTTPRoute:
		// The route, and the routes sharing its hosts: the owner of a host it merges
		// into, or that merges into it, decides again whether they still merge.
		var hr gatewayv1.HTTPRoute
		if err := s.client.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: t.Name}, &hr); err != nil {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}}}
		}
		return s.withSiblings(ctx, []gatewayv1.HTTPRoute{hr})
	case "Gateway":
		return s.requestsOfGateway(ctx, types.NamespacedName{Namespace: t.Namespace, Name: t.Name})
	}
	return nil
}

// Hosts are the route's hostnames, and the hostnames it is
// served under through listeners that name one, when it names none or a wildcard.
func (s *Source) Hosts(ctx context.Context, obj client.Object) []string {
	hr, ok := obj.(*gatewayv1.HTTPRoute)
	if !ok {
		return nil
	}
	var out []string
	add := func(hosts []string) {
		for _, h := range hosts {
			if h != noHostnames && !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	add(sources.ClaimedHosts(hr.Annotations, namedHosts(hr, s.config.ClusterDomain)))
	if !takesListenerHosts(hr) {
		return out // exact names only: what a listener adds is among them
	}
	for _, ref := range hr.Spec.ParentRefs {
		key, ok := gatewayOf(hr.Namespace, ref)
		if !ok {
			continue
		}
		var gw gatewayv1.Gateway
		if err := s.client.Get(ctx, key, &gw); err != nil {
			continue // no Gateway, no listener hostname: nothing claimed through it
		}
		add(sources.ClaimedHosts(hr.Annotations, listenerHosts(hr, ref, &gw)))
	}
	return out
}

// Claimants are the routes that claim host (claimantRoutes).
func (s *Source) Claimants(ctx context.Context, host string) ([]engine.Claim, error) {
	routes, err := s.claimantRoutes(ctx, host)
	if err != nil {
		return nil, err
	}
	claims := make([]engine.Claim, 0, len(routes))
	for i := range routes {
		claims = append(claims, engine.Claim{Origin: originOf(&routes[i]), Deleting: routes[i].DeletionTimestamp != nil})
	}
	return claims, nil
}

// Holder is the claim of the route a sink holds a resource for (plugin.Claims).
func (s *Source) Holder(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
	return sources.Holder(ctx, s.client, kindHTTPRoute, holder, &gatewayv1.HTTPRoute{}, func(hr *gatewayv1.HTTPRoute) engine.Claim {
		return engine.Claim{Origin: originOf(hr), Deleting: hr.DeletionTimestamp != nil}
	})
}

// claimantRoutes returns the routes that may be published on host, from the indexes:
// those naming it (after their overrides), those taking it from a listener that names
// it, and those whose override turns a listener's hostname into it. Looking at these
// alone keeps a reconcile's cost independent of how many routes share the Gateway.
func (s *Source) claimantRoutes(ctx context.Context, host string) ([]gatewayv1.HTTPRoute, error) {
	routes, err := s.list(ctx, client.MatchingFields{hostIndex: host})
	if err != nil {
		return nil, err
	}
	known := make(map[types.UID]bool, len(routes))
	for _, r := range routes {
		known[r.UID] = true
	}
	// A route with one override alone, taking a listener's hostname, is indexed by its
	// override (listenerOverrideKeys): the host depends on the listener, which the
	// route's index cannot see, so each candidate is confirmed with its Gateways.
	for _, key := range overrideKeysOf(host) {
		candidates, err := s.list(ctx, client.MatchingFields{hostIndex: key})
		if err != nil {
			return nil, err
		}
		for i := range candidates {
			if r := &candidates[i]; !known[r.UID] && slices.Contains(s.Hosts(ctx, r), host) {
				known[r.UID] = true
				routes = append(routes, *r)
			}
		}
	}
	var gateways gatewayv1.GatewayList
	if err := s.client.List(ctx, &gateways, client.MatchingFields{listenerHostIndex: host}); err != nil {
		return nil, fmt.Errorf("list Gateways by listener hostname %s: %w", host, err)
	}
	for _, gw := range gateways.Items {
		attached, err := s.attachedTo(ctx, types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name})
		if err != nil {
			return nil, err
		}
		for _, r := range attached {
			// A route that overrides the listener's hostname is published elsewhere.
			if !known[r.UID] && takesListenerHosts(&r) && servedUnder(&r, &gw, host) &&
				slices.Contains(sources.ClaimedHosts(r.Annotations, []string{host}), host) {
				known[r.UID] = true
				routes = append(routes, r)
			}
		}
	}
	return routes, nil
}

// judgeAttached judges the HTTPRoutes with a parentRef to gw.
func (s *Source) judgeAttached(ctx context.Context, gw types.NamespacedName) ([]judgedRoute, error) {
	routes, err := s.attachedTo(ctx, gw)
	if err != nil {
		return nil, err
	}
	out := make([]judgedRoute, 0, len(routes))
	for i := range routes {
		ev, err := s.evaluate(ctx, &routes[i])
		if err != nil {
			return nil, err
		}
		out = append(out, judgedRoute{namespace: routes[i].Namespace, status: ev.status})
	}
	return out, nil
}

// attachedTo returns the routes with a parentRef to the Gateway.
func (s *Source) attachedTo(ctx context.Context, gw types.NamespacedName) ([]gatewayv1.HTTPRoute, error) {
	return s.list(ctx, client.MatchingFields{parentIndex: gw.String()})
}

func (s *Source) list(ctx context.Context, opts ...client.ListOption) ([]gatewayv1.HTTPRoute, error) {
	var list gatewayv1.HTTPRouteList
	if err := s.client.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list HTTPRoutes: %w", err)
	}
	return list.Items, nil
}

// routesBy lists the routes opts list, for a watch's map function.
func (s *Source) routesBy(ctx context.Context, opts ...client.ListOption) []gatewayv1.HTTPRoute {
	routes, err := s.list(ctx, opts...)
	if err != nil {
		log.FromContext(ctx).Error(err, "cannot map a related object to its HTTPRoutes", listOptionKeys(opts)...)
	}
	return routes
}

// listOptionKeys are the log keys and values of what opts list routes by: a
// namespace, and index=value (a Gateway's or a Service's "namespace/name"), so that a
// map that failed says which related object it was mapping.
func listOptionKeys(opts []client.ListOption) []any {
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	var kv []any
	if lo.Namespace != "" {
		kv = append(kv, "namespace", lo.Namespace)
	}
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		kv = append(kv, "fields", lo.FieldSelector.String())
	}
	return kv
}

// withSiblings is the requests for routes and for the routes sharing one of their
// hosts: a related object (a Service, a ReferenceGrant, a Namespace's labels) that
// changes whether a route is served changes what the owner of a shared host merges,
// with no change to the owner itself. (A Gateway's change brings all its routes back,
// and only routes of the same Gateway merge.)
func (s *Source) withSiblings(ctx context.Context, routes []gatewayv1.HTTPRoute) []reconcile.Request {
	out := toRequests(routes)
	seen := map[string]bool{}
	for i := range routes {
		for _, host := range s.Hosts(ctx, &routes[i]) {
			if seen[host] {
				continue
			}
			seen[host] = true
			siblings, err := s.claimantRoutes(ctx, host)
			if err != nil {
				log.FromContext(ctx).Error(err, "cannot find the HTTPRoutes sharing a host", "host", host)
				continue
			}
			out = append(out, toRequests(siblings)...)
		}
	}
	return out
}

// routeRequests are how a Gateway API source maps related objects to its routes, for
// routeWatches.
type routeRequests interface {
	// requestsOfGateway are the routes with a parentRef to gw: all that a change to
	// the Gateway can concern.
	requestsOfGateway(ctx context.Context, gw types.NamespacedName) []reconcile.Request
	// requestsOfListedRoutes are the routes opts list, and those whose result a
	// change to them changes (HTTPRoutes sharing a host).
	requestsOfListedRoutes(ctx context.Context, opts ...client.ListOption) []reconcile.Request
}

// routeWatches are what brings a Gateway API source's routes, of kind, back: their
// Gateways and GatewayClasses, the ReferenceGrants that let them refer to a Service of
// another namespace, their Services (routeIndexes), and Namespaces (for allowedRoutes
// selectors). PIC writes the status of Gateways and GatewayClasses: a status write
// changes nothing for their routes, and would bring every one of them back.
func (s *gatewayAPI) routeWatches(kind routeKind, routes routeRequests) []plugin.Watch {
	return []plugin.Watch{
		{Object: &gatewayv1.Gateway{}, IgnoreStatus: true, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
			return routes.requestsOfGateway(ctx, client.ObjectKeyFromObject(o))
		}},
		{Object: &gatewayv1.GatewayClass{}, IgnoreStatus: true, Requests: func(ctx context.Context, class client.Object) []reconcile.Request {
			var gateways gatewayv1.GatewayList
			if err := s.client.List(ctx, &gateways); err != nil {
				log.FromContext(ctx).Error(err, "cannot list Gateways")
				return nil
			}
			var out []reconcile.Request
			for _, gw := range gateways.Items {
				if string(gw.Spec.GatewayClassName) == class.GetName() {
					out = append(out, routes.requestsOfGateway(ctx, client.ObjectKeyFromObject(&gw))...)
				}
			}
			return out
		}},
		{Object: &gatewayv1.ReferenceGrant{}, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
			grant, ok := o.(*gatewayv1.ReferenceGrant)
			if !ok {
				return nil
			}
			var out []reconcile.Request
			for _, f := range grant.Spec.From {
				if string(f.Kind) == kind.name {
					out = append(out, routes.requestsOfListedRoutes(ctx, client.InNamespace(string(f.Namespace)))...)
				}
			}
			return out
		}},
		{Object: &corev1.Service{}, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
			return routes.requestsOfListedRoutes(ctx, client.MatchingFields{serviceIndex: o.GetNamespace() + "/" + o.GetName()})
		}},
		{Object: &corev1.Namespace{}, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
			return routes.requestsOfListedRoutes(ctx, client.InNamespace(o.GetName()))
		}},
	}
}

func toRequests(routes []gatewayv1.HTTPRoute) []reconcile.Request {
	out := make([]reconcile.Request, len(routes))
	for i := range routes {
		out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: routes[i].Namespace, Name: routes[i].Name}}
	}
	return out
}

// indexParents are the "namespace/name" of the Gateways a route of any kind names.
func indexParents(obj client.Object) []string {
	refs, _ := parentRefsOf(obj)
	var keys []string
	for _, ref := range refs {
		if key, ok := gatewayOf(obj.GetNamespace(), ref); ok {
			keys = append(keys, key.String())
		}
	}
	return keys
}

// gatewayOf is the Gateway a parentRef of a route in routeNamespace names, if it names
// one.
func gatewayOf(routeNamespace string, ref gatewayv1.ParentReference) (types.NamespacedName, bool) {
	if ref.Group != nil && *ref.Group != gatewayv1.GroupName || ref.Kind != nil && *ref.Kind != "Gateway" {
		return types.NamespacedName{}, false
	}
	key := types.NamespacedName{Namespace: routeNamespace, Name: string(ref.Name)}
	if ref.Namespace != nil {
		key.Namespace = string(*ref.Namespace)
	}
	return key, true
}

// takesListenerHosts reports whether a route may be served under a host it does not
// name: it names none, or a wildcard that a listener's hostname narrows.
func takesListenerHosts(hr *gatewayv1.HTTPRoute) bool {
	return len(hr.Spec.Hostnames) == 0 || slices.ContainsFunc(hr.Spec.Hostnames, func(h gatewayv1.Hostname) bool {
		return strings.HasPrefix(string(h), "*.")
	})
}

// servedUnder reports whether a route attaches to gw through a listener that gives it
// host.
func servedUnder(hr *gatewayv1.HTTPRoute, gw *gatewayv1.Gateway, host string) bool {
	return slices.ContainsFunc(hr.Spec.ParentRefs, func(ref gatewayv1.ParentReference) bool {
		key, ok := gatewayOf(hr.Namespace, ref)
		return ok && key == client.ObjectKeyFromObject(gw) &&
			slices.Contains(listenerHosts(hr, ref, gw), host)
	})
}

// listenerHosts are the hosts, normalized, a route is served under through the
// listeners of gw that ref selects and that name a hostname (whether or not they admit
// the route: attachment is evaluate's to judge).
func listenerHosts(hr *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference, gw *gatewayv1.Gateway) []string {
	var hosts []string
	for _, l := range gw.Spec.Listeners {
		if l.Hostname == nil || !selects(ref, l) {
			continue
		}
		for _, h := range intersect(hr.Spec.Hostnames, l.Hostname) {
			if n, problem := hostname.Normalize(h, ""); problem == nil && !slices.Contains(hosts, n) {
				hosts = append(hosts, n)
			}
		}
	}
	return hosts
}

// indexHosts are the hostIndex keys of a route: the hosts it claims by name, after its
// overrides (noHostnames for a route that names none), and, for a route that takes its
// hosts from listeners, what its overrides make of them (listenerOverrideKeys).
func indexHosts(obj client.Object, clusterDomain string) []string {
	hr, ok := obj.(*gatewayv1.HTTPRoute)
	if !ok {
		return nil
	}
	named := namedHosts(hr, clusterDomain)
	keys := named
	if !slices.Equal(named, []string{noHostnames}) {
		keys = sources.ClaimedHosts(hr.Annotations, named)
	}
	if takesListenerHosts(hr) {
		keys = append(keys, listenerOverrideKeys(hr.Annotations)...)
	}
	return keys
}

// Index keys of the routes that take a listener's hostname with one override alone:
// "subdomain=app" publishes app under the listener host's domain, "domain=example.org"
// the listener host's subdomain under example.org. A key with '=' is never a host.
const (
	subdomainKeyPrefix = "subdomain="
	domainKeyPrefix    = "domain="
)

// listenerOverrideKeys are the hostIndex keys of a route taking listener hostnames with
// overrides: both give one host whatever the listener; one alone gives a key that
// overrideKeysOf finds from the published host.
func listenerOverrideKeys(annotations map[string]string) []string {
	opts, _ := sources.ParseOptions(annotations, "")
	switch {
	case opts.Domain != "" && opts.Subdomain != "":
		return []string{hostname.Join(opts.Subdomain, opts.Domain)}
	case opts.Subdomain != "":
		return []string{subdomainKeyPrefix + opts.Subdomain}
	case opts.Domain != "":
		return []string{domainKeyPrefix + opts.Domain}
	}
	return nil
}

// overrideKeysOf are the listenerOverrideKeys of the routes that may publish host with
// one override: each leading part of host as a subdomain, each trailing part (host
// included, the apex of an org domain) as a domain.
func overrideKeysOf(host string) []string {
	labels := strings.Split(host, ".")
	keys := []string{domainKeyPrefix + host}
	for i := 1; i < len(labels); i++ {
		keys = append(keys, subdomainKeyPrefix+strings.Join(labels[:i], "."), domainKeyPrefix+strings.Join(labels[i:], "."))
	}
	return keys
}

// namedHosts are a route's spec.hostnames, normalized; noHostnames for a route that
// names none.
func namedHosts(hr *gatewayv1.HTTPRoute, clusterDomain string) []string {
	if len(hr.Spec.Hostnames) == 0 {
		return []string{noHostnames}
	}
	var hosts []string
	for _, h := range hr.Spec.Hostnames {
		if n, problem := hostname.Normalize(string(h), clusterDomain); problem == nil {
			hosts = append(hosts, n)
		}
	}
	return hosts
}

func indexListenerHosts(obj client.Object) []string {
	gw, ok := obj.(*gatewayv1.Gateway)
	if !ok {
		return nil
	}
	var hosts []string
	for _, l := range gw.Spec.Listeners {
		if l.Hostname == nil {
			continue
		}
		if n, problem := hostname.Normalize(string(*l.Hostname), ""); problem == nil {
			hosts = append(hosts, n)
		}
	}
	return hosts
}
