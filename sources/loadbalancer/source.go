package loadbalancer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

var _ plugin.Source = (*Source)(nil)

// Name is the source's name in the configuration (sources), logs and metrics.
const Name = "service"

// Config is what the Service source needs from PIC's configuration.
type Config struct {
	Tunnels       tunnel.Resolver
	ClusterDomain string
	// Class is the spec.loadBalancerClass of the Services PIC publishes.
	Class string
	// Address is where users reach the published ports, for the Services' status; ""
	// leaves the status without an address.
	Address string
	// Health derives the ports' health checks.
	Health sources.HealthChecks
}

// Source reads Services, and writes nothing but their status.
type Source struct {
	client client.Client // reads from the manager's cache
	config Config
}

// New returns the Service source reading through c.
func New(c client.Client, config Config) *Source { return &Source{client: c, config: config} }

// Name implements plugin.Source.
func (s *Source) Name() string { return Name }

// Object implements plugin.Source.
func (s *Source) Object() client.Object { return &corev1.Service{} }

// ours reports whether PIC is the Service's load balancer.
func ours(svc *corev1.Service, class string) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass != nil && *svc.Spec.LoadBalancerClass == class
}

// Routes implements plugin.Source: one raw route per TCP or UDP port.
//
//	Service                                      | result
//	---------------------------------------------+-----------------------------------------------
//	another type, or another loadBalancerClass   | not managed: what PIC published for it goes
//	enabled annotation "false"                   | not managed
//	an invalid annotation                        | InvalidAnnotation; what exists is kept
//	tunnel missing or not allowed                | as for Ingresses
//	an SCTP port                                 | PortProtocolUnsupported; the other ports publish
//	a TCP or UDP port                            | published on its public port: its own, or
//	                                             | the public-ports annotation's
func (s *Source) Routes(ctx context.Context, obj client.Object) (plugin.Result, error) {
	svc := obj.(*corev1.Service)
	origin := originOf(svc)
	res := plugin.Result{Origin: &origin}
	if !ours(svc, s.config.Class) {
		return res, nil
	}
	res.OwnsStatus = true
	reject := func(host, reason string, hold bool, format string, args ...any) {
		res.Rejections = append(res.Rejections, route.Rejection{Origin: origin, Host: host, Reason: reason, Message: fmt.Sprintf(format, args...), Hold: hold})
	}
	// The scheme is meaningless for a TCP or UDP port; the options are the Ingress's.
	opts, problems := sources.ParseOptions(svc.Annotations, "http")
	if opts.RequiredPolicy != "" {
		// No AccessPolicy can target a Service: the requirement can never be met.
		problems = append(problems, fmt.Sprintf("%s: no AccessPolicy can target a Service, so it would never be published", pic.AnnotationRequireAccessPolicy))
	}
	if opts.Enabled != nil && !*opts.Enabled {
		return res, nil
	}
	res.Managed = true
	publicPorts, portProblems := parsePublicPorts(svc.Annotations[pic.AnnotationPublicPorts], svc.Spec.Ports)
	problems = append(problems, portProblems...)
	ref, problem := s.config.Tunnels.Resolve(svc.Namespace, "", opts.Tunnel)
	switch {
	case problem != nil && problem.Denied:
		// The policy wins over a typo: nothing is published or kept in a namespace the
		// tunnel does not allow.
		reject("", problem.Reason, false, "%s", problem.Message)
		return res, nil
	case len(problems) > 0:
		// A typo must not take a live port down, nor publish something half-configured.
		reject("", pic.ReasonInvalidAnnotation, true, "%s", strings.Join(problems, "; "))
		return res, nil
	case problem != nil:
		reject("", problem.Reason, true, "%s", problem.Message)
		return res, nil
	}
	address := sources.ServiceAddress(svc, s.config.ClusterDomain)
	health := s.config.Health.ForObject()
	for _, port := range svc.Spec.Ports {
		protocol, ok := protocolOf(port.Protocol)
		if !ok {
			reject("", pic.ReasonPortProtocolUnsupported, false,
				"port %s is %s, which Pangolin cannot publish (TCP and UDP only): the Service's other ports are published", sources.ServicePortName(port), port.Protocol)
			continue
		}
		public := publicPorts.of(port)
		check, why, err := health.Check(ctx, opts.HealthCheck, opts.HealthCheckPath, svc, port, "http")
		if err != nil {
			return plugin.Result{}, err
		}
		if why != "" {
			res.Notices = sources.AddNotice(res.Notices, sources.NoHealthCheck(origin, svc, port, why))
		}
		backend := route.Backend{Host: address, Port: port.Port, Scheme: string(protocol), Health: check}
		res.Routes = append(res.Routes, route.RawRoute(origin, protocol, public, ref, backend,
			route.Access{SSO: opts.SSO, BlockAccess: opts.BlockAccess}))
	}
	return res, nil
}

func originOf(svc *corev1.Service) route.Origin {
	return plugin.OriginOf(corev1.SchemeGroupVersion.WithKind(sources.KindService), svc)
}

// protocolOf is the raw protocol of a Service port; an empty protocol is TCP, as the API
// server defaults it.
func protocolOf(p corev1.Protocol) (route.Protocol, bool) {
	switch p {
	case corev1.ProtocolTCP, "":
		return route.ProtocolTCP, true
	case corev1.ProtocolUDP:
		return route.ProtocolUDP, true
	}
	return "", false
}

// publicPorts maps a Service port, by name or number, to the public port it asks for.
type publicPorts map[string]int32

// of is the public port of a Service port: the annotation's, or its own.
func (m publicPorts) of(p corev1.ServicePort) int32 {
	if public, ok := m[p.Name]; ok && p.Name != "" {
		return public
	}
	if public, ok := m[strconv.Itoa(int(p.Port))]; ok {
		return public
	}
	return p.Port
}

// parsePublicPorts reads "<port name or number>=<public port>, ...". Every entry must
// name a port of the Service, once: a typo would otherwise publish the port on its own
// number, where the user did not ask for it.
func parsePublicPorts(value string, ports []corev1.ServicePort) (publicPorts, []string) {
	out := publicPorts{}
	if strings.TrimSpace(value) == "" {
		return out, nil
	}
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s=%q: ", pic.AnnotationPublicPorts, value)+fmt.Sprintf(format, args...))
	}
	for _, entry := range strings.Split(value, ",") {
		name, number, ok := strings.Cut(strings.TrimSpace(entry), "=")
		name, number = strings.TrimSpace(name), strings.TrimSpace(number)
		public, err := strconv.Atoi(number)
		switch {
		case !ok || name == "":
			bad("want entries of <port name or number>=<public port>, such as postgres=15432")
			continue
		case err != nil || public < 1 || public > 65535:
			bad("public port %q of %s: want a number from 1 to 65535", number, name)
			continue
		case !slices.ContainsFunc(ports, func(p corev1.ServicePort) bool { return p.Name == name || strconv.Itoa(int(p.Port)) == name }):
			bad("the Service has no port %s", name)
			continue
		}
		if _, twice := out[name]; twice {
			bad("port %s is given twice", name)
			continue
		}
		out[name] = int32(public)
	}
	// Two ports on one public port and protocol would refuse each other, taking both
	// down: the mapping is refused instead, and what is published stays.
	byKey := map[string]string{}
	for _, p := range ports {
		protocol, ok := protocolOf(p.Protocol)
		if !ok {
			continue
		}
		key := route.PortKey(protocol, out.of(p))
		if other, taken := byKey[key]; taken {
			bad("ports %s and %s would both be published on %s", other, sources.ServicePortName(p), key)
			continue
		}
		byKey[key] = sources.ServicePortName(p)
	}
	return out, problems
}

// Factory builds the Service source from PIC's configuration.
var Factory = plugin.SourceFactory{
	Indexes: func(cfg *config.Config) []plugin.Index { return indexes(cfg.LoadBalancerClass) },
	// PIC writes a Service's status by patch alone: its metadata may be trimmed.
	Kinds: plugin.Kinds{
		Status: []client.Object{&corev1.Service{}}, Trimmed: []client.Object{&corev1.Service{}},
		Read: []plugin.ReadKind{{Object: &corev1.Service{}}},
		RBAC: []string{"services"},
	},
	New: func(_ context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
		return New(deps.Client, Config{
			Tunnels:       deps.Config.Tunnels,
			ClusterDomain: deps.Config.ClusterDomain,
			Class:         deps.Config.LoadBalancerClass,
			Address:       deps.Config.PublicAddress(),
			Health:        sources.HealthChecks{Pods: sources.PodReader(deps), Default: deps.Config.HealthChecks},
		}), nil
	},
}

// portIndex holds the port keys ("tcp:5432") each Service of PIC's class claims.
const portIndex = "pic.service.port"

func indexes(class string) []plugin.Index {
	return []plugin.Index{{Object: &corev1.Service{}, Field: portIndex, Func: func(obj client.Object) []string { return portKeys(obj, class) }}}
}

// portKeys are the ports a Service claims, whether or not they can be published.
func portKeys(obj client.Object, class string) []string {
	svc, ok := obj.(*corev1.Service)
	if !ok || !ours(svc, class) {
		return nil
	}
	publicPorts, _ := parsePublicPorts(svc.Annotations[pic.AnnotationPublicPorts], svc.Spec.Ports)
	var keys []string
	for _, p := range svc.Spec.Ports {
		if protocol, ok := protocolOf(p.Protocol); ok {
			keys = append(keys, route.PortKey(protocol, publicPorts.of(p)))
		}
	}
	return keys
}

// Declare implements plugin.Source: a Service claims its public ports. Nothing else
// brings a Service back: it names no other object.
func (s *Source) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{Hosts: s.Hosts, Claimants: s.Claimants, Holder: s.Holder}}
}

// Hosts are the port keys a Service claims.
func (s *Source) Hosts(_ context.Context, obj client.Object) []string {
	return portKeys(obj, s.config.Class)
}

// Holder is the claim of the Service a sink holds a resource for (plugin.Claims).
func (s *Source) Holder(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
	return sources.Holder(ctx, s.client, "Service", holder, &corev1.Service{}, func(svc *corev1.Service) engine.Claim {
		return engine.Claim{Origin: originOf(svc), Deleting: svc.DeletionTimestamp != nil}
	})
}

// Claimants are the Services that claim a port key, from the index.
func (s *Source) Claimants(ctx context.Context, key string) ([]engine.Claim, error) {
	var list corev1.ServiceList
	// Only names, UIDs and deletion stamps are read: the cache's objects are not copied.
	if err := s.client.List(ctx, &list, client.MatchingFields{portIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list Services by %s=%s: %w", portIndex, key, err)
	}
	claims := make([]engine.Claim, len(list.Items))
	for i := range list.Items {
		claims[i] = engine.Claim{Origin: originOf(&list.Items[i]), Deleting: list.Items[i].DeletionTimestamp != nil}
	}
	return claims, nil
}
