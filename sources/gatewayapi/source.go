package gatewayapi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

var _ plugin.Source = (*Source)(nil)

// Config is what the HTTPRoute source needs from PIC's configuration.
type Config struct {
	Tunnels       tunnel.Resolver
	BackendScheme string
	ClusterDomain string
	// TunnelCheck says whether the tunnel a Gateway stands for exists: the sink's
	// (SourceDeps.Tunnels).
	TunnelCheck plugin.TunnelChecker
	// Policies protect the routes' hosts with the AccessPolicies of the routes and of
	// their Gateways; nil for none.
	Policies *sources.Policies
	// Health derives the backends' health checks.
	Health sources.HealthChecks
	// HostPolicy is which hosts each namespace may publish. The core refuses the hosts
	// a route publishes itself (HostNotAllowed); a route merged into another's host
	// publishes through that route, so the source keeps it out of the merge here.
	HostPolicy hostpolicy.Policy
}

// Factory builds the HTTPRoute source from PIC's configuration. It is unavailable
// (plugin.ErrUnavailable) while the Gateway API CRDs are not installed: PIC goes on
// serving Ingresses rather than stopping for an optional API.
var Factory = plugin.SourceFactory{
	Indexes: func(cfg *config.Config) []plugin.Index { return append(indexes(cfg), sources.PolicyIndexes()...) },
	Kinds:   routeKinds(httpRoutes),
	New: func(ctx context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
		shared, err := newGatewayAPI(ctx, deps, httpRoutes)
		if err != nil {
			return nil, err
		}
		return &Source{shared}, nil
	},
}

// gatewayAPI is what every Gateway API source shares: the Gateways and classes that
// make a route PIC's, the tunnels Gateways stand for, backendRefs to Services, and the
// status of GatewayClasses and Gateways.
type gatewayAPI struct {
	client client.Client
	config Config
	// kinds are the route kinds PIC serves (servedKinds), which Gateway listeners report
	// and count.
	kinds []routeKind
}

// newGatewayAPI returns what a source of kind shares with the other Gateway API
// sources, built by the first of them. It is unavailable (plugin.ErrUnavailable) while
// the API server does not serve kind and the kinds it attaches to, at v1.
func newGatewayAPI(ctx context.Context, deps plugin.SourceDeps, kind routeKind) (*gatewayAPI, error) {
	if deps.Mapper != nil {
		missing, err := missingKinds(deps.Mapper, kind)
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: Gateway API CRDs are not installed at %s (missing %s); install the Gateway API %s+ standard CRDs and restart PIC",
				plugin.ErrUnavailable, gatewayv1.GroupVersion, strings.Join(missing, ", "), kind.since)
		}
	}
	shared, err := plugin.Share(deps.Shared, gatewayAPIPart, func() (sharedGatewayAPI, error) {
		kinds, err := servedKinds(deps.Config, deps.Mapper)
		if err != nil {
			return sharedGatewayAPI{}, err
		}
		conf := configOf(deps.Config)
		conf.TunnelCheck = deps.Tunnels
		conf.Health.Pods = sources.PodReader(deps)
		if conf.Policies, err = sources.SharedPolicies(ctx, deps); err != nil {
			return sharedGatewayAPI{}, err
		}
		return sharedGatewayAPI{&gatewayAPI{client: deps.Client, config: conf, kinds: kinds}}, nil
	})
	return shared.gatewayAPI, err
}

// gatewayAPIPart names what the Gateway API sources share among the parts of a start
// (plugin.Shared).
const gatewayAPIPart = "Gateway API support"

// sharedGatewayAPI is the gatewayAPI of every Gateway API source of a start: their
// routes attach to the same Gateways, whose status, and their classes', PIC writes
// once for routes of every kind. It wraps *gatewayAPI rather than giving it a Declare:
// every source embeds *gatewayAPI and has its own Declare, which would silently hide
// an embedded one meaning something else.
type sharedGatewayAPI struct{ *gatewayAPI }

var _ plugin.SharedPart = sharedGatewayAPI{}

// Declare implements plugin.SharedPart.
func (s sharedGatewayAPI) Declare() plugin.SharedDeclaration {
	return plugin.SharedDeclaration{Controllers: s.statusControllers()}
}

func configOf(cfg *config.Config) Config {
	return Config{Tunnels: cfg.Tunnels, BackendScheme: cfg.BackendScheme, ClusterDomain: cfg.ClusterDomain, Health: sources.HealthChecks{Default: cfg.HealthChecks},
		HostPolicy: cfg.HostPolicy}
}

// Source reads HTTPRoutes attached to PIC's Gateways.
type Source struct{ *gatewayAPI }

// New returns the HTTPRoute source reading through c, as the only Gateway API source.
func New(c client.Client, config Config) *Source {
	return &Source{&gatewayAPI{client: c, config: config, kinds: []routeKind{httpRoutes}}}
}

// Name is the source's name in the configuration (sources), logs and metrics.
const Name = "httproute"

// Name implements plugin.Source.
func (s *Source) Name() string { return Name }

// Object implements plugin.Source.
func (s *Source) Object() client.Object { return &gatewayv1.HTTPRoute{} }

// parentStatus is PIC's verdict for one parentRef of a route.
type parentStatus struct {
	ref          gatewayv1.ParentReference
	accepted     verdict
	resolvedRefs verdict
	// listeners the route attaches to through this parentRef; they count it in their
	// attachedRoutes only while it is accepted.
	listeners []string
}

// verdict is one condition: true or false, with the Gateway API's reason.
type verdict struct {
	ok      bool
	reason  gatewayv1.RouteConditionReason
	message string
}

// routeStatus is the HTTPRoute status PIC writes: one entry per parentRef to its Gateways.
type routeStatus struct {
	generation int64
	parents    []parentStatus
}

// evaluation is a route judged on its own, before merging with the routes that share its hosts.
type evaluation struct {
	route   *gatewayv1.HTTPRoute
	origin  route.Origin
	options sources.Options
	status  routeStatus
	hosts   map[string]gatewayKey // effective host → the Gateway it is served through
	tunnels map[gatewayKey]route.TunnelRef
	paths   []route.PathRule
	headers []route.Header // set on every request to its hosts
	// policy is the AccessPolicy attached to the route itself ("" for none): a
	// Gateway's policy is the same for every route it merges.
	policy string
	served bool // accepted and resolved: its paths may be published
	// unprotected says why the AccessPolicy the route requires does not protect it
	// ("" when it does, or none is required): its paths are published through no
	// other route's resource, which has its own access.
	unprotected string
	rejections  []route.Rejection
	notices     []route.Notice
}

type gatewayKey = types.NamespacedName

// Routes implements plugin.Source.
func (s *Source) Routes(ctx context.Context, obj client.Object) (plugin.Result, error) {
	hr := obj.(*gatewayv1.HTTPRoute)
	// One reconcile reads a Service's pods once, for this route and for the routes
	// sharing its hosts alike.
	reconcile := *s.gatewayAPI
	reconcile.config.Health = s.config.Health.ForObject()
	s = &Source{&reconcile}
	ev, err := s.evaluate(ctx, hr)
	if err != nil {
		return plugin.Result{}, err
	}
	res := judgedResult(ev.origin, ev.rejections, ev.status, hr.Status.Parents)
	res.Notices = ev.notices
	if !res.Managed || !ev.served {
		return res, nil
	}
	siblings := map[types.UID]*evaluation{ev.origin.UID: ev}
	for _, host := range slices.Sorted(maps.Keys(ev.hosts)) {
		gw := ev.hosts[host]
		paths, owner, err := s.merged(ctx, ev, host, gw, siblings)
		if err != nil {
			return plugin.Result{}, err
		}
		if owner != ev {
			allowed, err := s.mayMerge(ctx, ev, host)
			if err != nil {
				return plugin.Result{}, err
			}
			if !allowed {
				// Published alone, for the core to judge: it refuses the host
				// (HostNotAllowed), or, allowed after all, settles it with the owner.
				owner, paths = ev, ev.paths
			}
		}
		if owner != ev {
			// Published through the oldest route that shares the host. Its access
			// settings are the host's: rules asking for others are not merged, so that
			// a route that relies on SSO is never served through a public host.
			if differ := settingsDiff(owner, ev); len(differ) > 0 {
				res.Rejections = append(res.Rejections, route.Rejection{Origin: ev.origin, Host: host, Reason: pic.ReasonHostSettingsConflict,
					Message: fmt.Sprintf("host %s is published by %s, the oldest route for it on Gateway %s, whose host-wide settings differ from this route's (%s): this route's rules are not served for it",
						host, owner.origin.Key(), gw, strings.Join(differ, ", "))})
			} else {
				res.MergedInto = append(res.MergedInto, host)
			}
			continue
		}
		res.Routes = append(res.Routes, route.Route{
			Origin: ev.origin, Host: host, Tunnel: ev.tunnels[gw], Paths: paths,
			Access:            route.Access{SSO: ev.options.SSO, BlockAccess: ev.options.BlockAccess},
			RequestHeaders:    ev.headers,
			DomainOverride:    ev.options.Domain,
			SubdomainOverride: ev.options.Subdomain,
		})
	}
	target := access.Target{Kind: kindHTTPRoute, Namespace: hr.Namespace, Name: hr.Name}
	gateways := func(host string) []access.Target {
		gw := ev.hosts[host]
		return []access.Target{{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}}
	}
	sources.RefuseUnprotected(&res, target, ev.options.RequiredPolicy, ev.unprotected)
	if err := s.config.Policies.Protect(ctx, &res, target, gateways); err != nil {
		return plugin.Result{}, err
	}
	return res, nil
}

// merged returns the paths published for host: the route's own and those of every
// route served through the same Gateway for the same host with the same settings.
// engine.Decide chooses, among them, the one that publishes the host (the owner,
// returned), so the PangolinResource has one owner. Only the host's claimants are
// evaluated, not every route of the Gateway: merging needs their paths. evaluated holds
// the routes already evaluated in this reconcile, by UID: a route sharing several hosts
// is evaluated once.
func (s *Source) merged(ctx context.Context, ev *evaluation, host string, gw gatewayKey, evaluated map[types.UID]*evaluation) ([]route.PathRule, *evaluation, error) {
	// The routes that publish host as this one does are among those claiming what its
	// overrides make of it; those that merge name host too (sev.hosts below).
	var siblings []gatewayv1.HTTPRoute
	for _, key := range sources.ClaimedHosts(ev.route.Annotations, []string{host}) {
		found, err := s.claimantRoutes(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range found {
			if !slices.ContainsFunc(siblings, func(sib gatewayv1.HTTPRoute) bool { return sib.UID == r.UID }) {
				siblings = append(siblings, r)
			}
		}
	}
	group := map[types.UID]*evaluation{ev.origin.UID: ev}
	claim := func(e *evaluation, deleting bool) engine.Claim {
		return engine.Claim{Origin: e.origin, Deleting: deleting, Group: gw.String(), Settings: settingsKey(e)}
	}
	var others []engine.Claim
	for i := range siblings {
		sib := &siblings[i]
		if sib.UID == ev.route.UID {
			continue
		}
		sev, ok := evaluated[sib.UID]
		if !ok {
			var err error
			if sev, err = s.evaluate(ctx, sib); err != nil {
				return nil, nil, err
			}
			evaluated[sib.UID] = sev
		}
		if !sev.served || sev.unprotected != "" || sev.hosts[host] != gw {
			// Not served, or not without the policy it requires: its own reconcile
			// refuses it (RefuseUnprotected), and its paths are merged into no one's.
			continue
		}
		allowed, err := s.mayMerge(ctx, sev, host)
		if err != nil {
			return nil, nil, err
		}
		if allowed {
			group[sev.origin.UID] = sev
			others = append(others, claim(sev, sib.DeletionTimestamp != nil))
		}
	}
	decision := engine.Decide(claim(ev, false), others)
	if owner := group[decision.Owner.UID]; owner != ev {
		return nil, owner, nil
	}
	var paths []route.PathRule
	for _, member := range decision.Merged {
		paths = merge(paths, group[member.UID].paths)
	}
	return paths, ev, nil
}

// mayMerge reports whether the host policy lets e's namespace publish host, so that e
// may publish through a route of another namespace that shares it: every host e's
// overrides may make of it (hostname.Claimable, whatever the org's domains; without
// overrides, host itself) must be allowed. Routes that merge share their overrides, so
// this is the host their owner publishes, which the core judges for the owner alone.
func (s *gatewayAPI) mayMerge(ctx context.Context, e *evaluation, host string) (bool, error) {
	policy := s.config.HostPolicy
	if !policy.Enabled() {
		return true, nil
	}
	var labels map[string]string
	if policy.NeedsLabels() {
		ns, err := s.routeNamespace(ctx, e.route.Namespace)
		if err != nil {
			return false, err
		}
		labels = ns.Labels
	}
	for _, published := range hostname.Claimable(host, e.options.Domain, e.options.Subdomain) {
		if allowed, _ := policy.Allows(e.route.Namespace, labels, published); !allowed {
			return false, nil
		}
	}
	return true, nil
}

// settingsKey is the host-wide settings of a route, as one comparable value: routes
// merge only when theirs are equal.
func settingsKey(e *evaluation) string {
	o := e.options
	b := func(p *bool) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatBool(*p)
	}
	return strings.Join([]string{b(o.SSO), b(o.BlockAccess), o.Domain, o.Subdomain, fmt.Sprintf("%q", e.headers), e.policy}, "\x00")
}

// settingsDiff names the host-wide settings (access control, AccessPolicy, public name,
// request headers) on which two routes differ. Only routes that differ on none share a
// PangolinResource.
func settingsDiff(x, y *evaluation) []string {
	a, b := x.options, y.options
	sameBool := func(x, y *bool) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	var out []string
	if x.policy != y.policy {
		out = append(out, "AccessPolicy")
	}
	if !slices.Equal(x.headers, y.headers) {
		out = append(out, "RequestHeaderModifier")
	}
	if !sameBool(a.SSO, b.SSO) {
		out = append(out, pic.AnnotationSSO)
	}
	if !sameBool(a.BlockAccess, b.BlockAccess) {
		out = append(out, pic.AnnotationBlockAccess)
	}
	if a.Domain != b.Domain {
		out = append(out, pic.AnnotationDomainName)
	}
	if a.Subdomain != b.Subdomain {
		out = append(out, pic.AnnotationSubdomain)
	}
	return out
}

// evaluate judges a route against each of its parents that is a Gateway of PIC's.
func (s *Source) evaluate(ctx context.Context, hr *gatewayv1.HTTPRoute) (*evaluation, error) {
	ev := &evaluation{
		route:   hr,
		origin:  originOf(hr),
		status:  routeStatus{generation: hr.Generation},
		hosts:   map[string]gatewayKey{},
		tunnels: map[gatewayKey]route.TunnelRef{},
	}
	reject := rejecter(ev.origin, &ev.rejections)
	var problems []string
	ev.options, problems = sources.ParseOptions(hr.Annotations, s.config.BackendScheme)
	policy, err := s.config.Policies.OwnPolicy(ctx, access.Target{Kind: kindHTTPRoute, Namespace: hr.Namespace, Name: hr.Name})
	if err != nil {
		return nil, err
	}
	ev.policy = policy
	if ev.options.Enabled != nil && !*ev.options.Enabled {
		// Opted out: treated as detached, so what PIC published for it goes, and so
		// do PIC's status entries.
		return ev, nil
	}
	if ev.options.Tunnel != "" {
		// Not a guess either way: the Gateway chooses the tunnel, and the user is told.
		reject("", pic.ReasonInvalidAnnotation, false, false,
			"%s has no effect on an HTTPRoute: the tunnel is the one its Gateway stands for (annotate the Gateway instead)", pic.AnnotationTunnelName)
	}

	parents, err := s.judgeParents(ctx, httpRoutes, hr.Namespace, hr.Spec.Hostnames, hr.Spec.ParentRefs, reject)
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
		for _, h := range p.attachment.hosts {
			host, problem := hostname.Normalize(h, s.config.ClusterDomain)
			if problem != nil && h == "" {
				// hostname's message speaks of an Ingress rule's host; say where an
				// HTTPRoute's host comes from.
				problem.Message = fmt.Sprintf("neither the route nor the listeners of Gateway %s it attaches to name a hostname: Pangolin publishes named hosts only; set spec.hostnames or a listener hostname", key)
			}
			if problem != nil {
				reject(h, problem.Reason, false, false, "%s", problem.Message)
				continue
			}
			if _, taken := ev.hosts[host]; !taken {
				ev.hosts[host] = key
			}
		}
	}
	if len(ev.status.parents) == 0 {
		return ev, nil
	}

	t := translate(hr, s.resolver(ctx, httpRoutes, hr.Namespace, ev.options.BackendScheme, ev.options, ev.origin, &ev.notices))
	ev.paths, ev.headers = t.paths, t.headers
	ev.served = settle(ev.status.parents, t.refs, problems, t.unsupported, reject)
	if ev.served {
		target := access.Target{Kind: kindHTTPRoute, Namespace: hr.Namespace, Name: hr.Name}
		if ev.unprotected, err = s.config.Policies.Unmet(ctx, target, ev.options.RequiredPolicy); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// ourGateway returns the Gateway a parentRef of a route in routeNamespace names, if it
// is of a GatewayClass of PIC's.
func (s *gatewayAPI) ourGateway(ctx context.Context, routeNamespace string, ref gatewayv1.ParentReference) (*gatewayv1.Gateway, error) {
	key, ok := gatewayOf(routeNamespace, ref)
	if !ok {
		return nil, nil
	}
	var gw gatewayv1.Gateway
	if err := s.client.Get(ctx, key, &gw); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil // not known to be ours: another controller's status to write
		}
		return nil, fmt.Errorf("get Gateway %s: %w", key, err)
	}
	ours, err := s.ourClass(ctx, string(gw.Spec.GatewayClassName))
	if err != nil || !ours {
		return nil, err
	}
	return &gw, nil
}

func (s *gatewayAPI) ourClass(ctx context.Context, name string) (bool, error) {
	var class gatewayv1.GatewayClass
	if err := s.client.Get(ctx, types.NamespacedName{Name: name}, &class); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get GatewayClass %s: %w", name, err)
	}
	return class.Spec.ControllerName == pic.GatewayControllerName, nil
}

// tunnelOf is the tunnel a Gateway stands for: its tunnel-name annotation, else the
// alias of the Gateway's name in the tunnel configuration, else the default tunnel.
// The namespace policy applies to the route's namespace.
func (s *gatewayAPI) tunnelOf(gw *gatewayv1.Gateway, routeNamespace string) (route.TunnelRef, *tunnel.Problem) {
	return s.tunnels(gw).Resolve(routeNamespace, s.aliasOf(gw), strings.TrimSpace(gw.Annotations[pic.AnnotationTunnelName]))
}

// tunnels is the tunnel configuration seen from a Gateway: unqualified tunnel names
// live beside the Gateway (unless a tunnel namespace is configured), not beside each
// route. Resolving in the route's namespace with it applies the namespace policy to the
// route alone. Resolving in the Gateway's namespace would also apply it to the Gateway,
// refusing every route of a Gateway whose namespace the policy does not list; and an
// annotation qualified with the Gateway's namespace while resolving in the route's
// would no longer match the configured tunnel, silently dropping its policy.
func (s *gatewayAPI) tunnels(gw *gatewayv1.Gateway) tunnel.Resolver {
	r := s.config.Tunnels
	if r.Namespace == "" {
		r.Namespace = gw.Namespace
	}
	return r
}

func (s *gatewayAPI) aliasOf(gw *gatewayv1.Gateway) string {
	if _, ok := s.config.Tunnels.Aliases[gw.Name]; ok {
		return gw.Name
	}
	return ""
}

// gatewayTunnel is the tunnel a Gateway stands for, whoever may use it: the namespace
// policy is about routes, and must not make the Gateway itself look unprogrammed.
func (s *gatewayAPI) gatewayTunnel(gw *gatewayv1.Gateway) (route.TunnelRef, *tunnel.Problem) {
	r := s.tunnels(gw)
	r.Default.AllowedNamespaces = nil
	r.Aliases = make(map[string]tunnel.Tunnel, len(s.config.Tunnels.Aliases))
	for k, t := range s.config.Tunnels.Aliases {
		t.AllowedNamespaces = nil
		r.Aliases[k] = t
	}
	return r.Resolve(gw.Namespace, s.aliasOf(gw), strings.TrimSpace(gw.Annotations[pic.AnnotationTunnelName]))
}

// resolver resolves the backendRefs of a route of kind in namespace to Services,
// honouring ReferenceGrants across namespaces; the backends it gives are reached over
// scheme, with the health checks the route's options ask (a backend without one is
// said in notices).
func (s *gatewayAPI) resolver(ctx context.Context, kind routeKind, namespace, scheme string, opts sources.Options, origin route.Origin, notices *[]route.Notice) backendResolver {
	health := s.config.Health.ForObject()
	return func(ref gatewayv1.BackendObjectReference) (route.Backend, *refProblem) {
		if ref.Group != nil && *ref.Group != "" || ref.Kind != nil && *ref.Kind != "Service" {
			return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonInvalidKind,
				message: fmt.Sprintf("backendRef %s: only Services can be reached through a Pangolin tunnel", describeBackend(ref))}
		}
		ns := namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		if ns != namespace {
			ok, err := s.granted(ctx, kind, namespace, ns, string(ref.Name))
			if err != nil {
				return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonRefNotPermitted, message: err.Error(), transient: true}
			}
			if !ok {
				return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonRefNotPermitted,
					message: fmt.Sprintf("backendRef %s/%s: no ReferenceGrant in namespace %s allows %ss from %s", ns, ref.Name, ns, kind.name, namespace)}
			}
		}
		if ref.Port == nil {
			return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonBackendNotFound, message: fmt.Sprintf("backendRef %s/%s has no port", ns, ref.Name)}
		}
		var svc corev1.Service
		if err := s.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: string(ref.Name)}, &svc); err != nil {
			return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonBackendNotFound, transient: true,
				message: fmt.Sprintf("Service %s/%s not found; retrying", ns, ref.Name)}
		}
		port := corev1.ServicePort{Port: int32(*ref.Port)}
		found := svc.Spec.Type == corev1.ServiceTypeExternalName
		for _, p := range svc.Spec.Ports {
			if p.Port == port.Port {
				port, found = p, true
			}
		}
		if !found {
			return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonBackendNotFound, transient: true,
				message: fmt.Sprintf("Service %s/%s has no port %d; retrying", ns, ref.Name, port.Port)}
		}
		check, why, err := health.Check(ctx, opts.HealthCheck, opts.HealthCheckPath, &svc, port, scheme)
		if err != nil {
			return route.Backend{}, &refProblem{reason: gatewayv1.RouteReasonBackendNotFound, transient: true, message: err.Error()}
		}
		if why != "" {
			*notices = sources.AddNotice(*notices, sources.NoHealthCheck(origin, &svc, port, why))
		}
		return route.Backend{Host: sources.ServiceAddress(&svc, s.config.ClusterDomain), Port: port.Port, Scheme: scheme, Health: check}, nil
	}
}

// granted reports whether a ReferenceGrant in namespace to lets routes of kind in
// namespace from refer to the Service name.
func (s *gatewayAPI) granted(ctx context.Context, kind routeKind, from, to, name string) (bool, error) {
	var grants gatewayv1.ReferenceGrantList
	if err := s.client.List(ctx, &grants, client.InNamespace(to)); err != nil {
		return false, fmt.Errorf("list ReferenceGrants in %s: %w", to, err)
	}
	for _, g := range grants.Items {
		fromOK := slices.ContainsFunc(g.Spec.From, func(f gatewayv1.ReferenceGrantFrom) bool {
			return f.Group == gatewayv1.GroupName && string(f.Kind) == kind.name && string(f.Namespace) == from
		})
		toOK := slices.ContainsFunc(g.Spec.To, func(t gatewayv1.ReferenceGrantTo) bool {
			return t.Group == "" && t.Kind == "Service" && (t.Name == nil || string(*t.Name) == name)
		})
		if fromOK && toOK {
			return true, nil
		}
	}
	return false, nil
}

// describeBackend names a backendRef with its kind, so that an InvalidKind message
// says what was referred to.
func describeBackend(ref gatewayv1.BackendObjectReference) string {
	kind := "Service"
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if ref.Group != nil && *ref.Group != "" {
		kind = string(*ref.Group) + "/" + kind
	}
	return kind + " " + string(ref.Name)
}

func originOf(hr *gatewayv1.HTTPRoute) route.Origin {
	return plugin.OriginOf(gatewayKind(kindHTTPRoute), hr)
}
