package ingress

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

var _ plugin.Source = (*Source)(nil)

// Config is what the Ingress source needs from PIC's configuration.
type Config struct {
	Tunnels       tunnel.Resolver
	BackendScheme string // default scheme of targets: http or https
	ClusterDomain string // cluster.local
	// Policies protect the Ingresses' hosts with their AccessPolicies; nil for none.
	Policies *sources.Policies
	// Health derives the backends' health checks.
	Health sources.HealthChecks
}

// Source reads Ingresses, and writes nothing but their status.
type Source struct {
	client client.Client // reads from the manager's cache
	config Config
}

// New returns the Ingress source reading through c.
func New(c client.Client, config Config) *Source { return &Source{client: c, config: config} }

// Name is the source's name in the configuration (sources), logs and metrics.
const Name = "ingress"

// Name implements plugin.Source.
func (s *Source) Name() string { return Name }

// Object implements plugin.Source.
func (s *Source) Object() client.Object { return &networkingv1.Ingress{} }

// Routes implements plugin.Source.
func (s *Source) Routes(ctx context.Context, obj client.Object) (plugin.Result, error) {
	ing := obj.(*networkingv1.Ingress)
	origin := originOf(ing)
	res := plugin.Result{Origin: &origin}
	opts, problems := parseOptions(ing.Annotations, s.config.BackendScheme)
	class, err := s.classify(ctx, ing, opts)
	if err != nil {
		return plugin.Result{}, err
	}
	tunnelName := opts.Tunnel
	if tunnelName == "" {
		tunnelName = class.tunnel
	}
	ref, problem := s.config.Tunnels.Resolve(ing.Namespace, class.alias, tunnelName)
	allowed := problem == nil || !problem.Denied
	reject := func(host, reason string, hold, retry bool, format string, args ...any) {
		res.Rejections = append(res.Rejections, route.Rejection{
			Origin: origin, Host: host, Reason: reason, Message: fmt.Sprintf(format, args...), Hold: hold, Retry: retry,
		})
	}

	res.OwnsStatus = class.ours
	if !class.managed {
		if len(problems) > 0 && opts.Enabled == nil && class.ours {
			// An invalid enabled value on an Ingress of our class: neither publish nor
			// remove until the user says which.
			res.Managed = true
			reject("", pic.ReasonInvalidAnnotation, true, false, "%s", strings.Join(problems, "; "))
		}
		return res, nil
	}
	res.Managed = true
	if notice := tlsIgnored(ing, origin); notice != nil {
		res.Notices = append(res.Notices, *notice)
	}
	if !allowed {
		// The policy wins over a typo: nothing is published or kept in a namespace the
		// tunnel does not allow.
		reject("", problem.Reason, false, false, "%s", problem.Message)
		return res, nil
	}
	if len(problems) > 0 {
		// A typo must not take a live route down, nor publish something half-configured.
		reject("", pic.ReasonInvalidAnnotation, true, false, "%s", strings.Join(problems, "; "))
		return res, nil
	}
	if problem != nil {
		reject("", problem.Reason, true, false, "%s", problem.Message)
		return res, nil
	}

	opts.health = s.config.Health.ForObject()
	hosts, defaultPaths, err := s.collect(ctx, ing, opts, &res, reject)
	if err != nil {
		return plugin.Result{}, err
	}
	for _, h := range hosts {
		if h.unservable {
			continue
		}
		r := route.Route{
			Origin: origin, Host: h.host, Tunnel: ref, Paths: h.paths,
			Access:            route.Access{SSO: opts.SSO, BlockAccess: opts.BlockAccess},
			DomainOverride:    opts.Domain,
			SubdomainOverride: opts.Subdomain,
		}
		// The default backend serves whatever no path of the host matches.
		if defaultPaths != nil && !hasRootPrefix(h.paths) {
			r.Paths = append(r.Paths, defaultPaths...)
		}
		if len(r.Paths) == 0 {
			reject(h.host, pic.ReasonNoBackend, false, false,
				"host %s has no HTTP paths and the Ingress has no default backend: nothing to publish", h.host)
			continue
		}
		res.Routes = append(res.Routes, r)
	}
	target := access.Target{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
	if err := s.config.Policies.Require(ctx, &res, target, opts.RequiredPolicy); err != nil {
		return plugin.Result{}, err
	}
	if err := s.config.Policies.Protect(ctx, &res, target, nil); err != nil {
		return plugin.Result{}, err
	}
	return res, nil
}

func originOf(ing *networkingv1.Ingress) route.Origin {
	return plugin.OriginOf(networkingv1.SchemeGroupVersion.WithKind("Ingress"), ing)
}

// hostRoutes is one host of an Ingress, merged across the rules that name it.
type hostRoutes struct {
	host  string
	paths []route.PathRule
	// unservable: a path cannot be served as written. The host is not published rather
	// than published with that path silently missing.
	unservable bool
}

type rejectFunc func(host, reason string, hold, retry bool, format string, args ...any)

// collect merges rules by host and resolves their backends.
func (s *Source) collect(ctx context.Context, ing *networkingv1.Ingress, opts options, res *plugin.Result, reject rejectFunc) ([]*hostRoutes, []route.PathRule, error) {
	var defaultPaths []route.PathRule
	if b := ing.Spec.DefaultBackend; b != nil {
		backend, ok, err := s.backend(ctx, ing, b, opts, res, "", reject)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			defaultPaths = []route.PathRule{{Path: "/", Match: route.MatchPrefix, Backend: backend, Fallback: true}}
		}
	}
	if len(ing.Spec.Rules) == 0 {
		reject("", pic.ReasonNoRules, false, false,
			"the Ingress has no rules: Pangolin publishes named hosts, so add spec.rules[].host (a default backend alone has no host)")
		return nil, nil, nil
	}

	var hosts []*hostRoutes
	byHost := map[string]*hostRoutes{}
	for i, rule := range ing.Spec.Rules {
		host, problem := hostname.Normalize(rule.Host, s.config.ClusterDomain)
		if problem != nil {
			reason := problem.Reason
			if reason == pic.ReasonEmptyHost {
				reject("", reason, false, false, "rule %d has no host and is skipped: Pangolin publishes named hosts only; set spec.rules[%d].host", i, i)
			} else {
				reject(rule.Host, reason, false, false, "%s", problem.Message)
			}
			continue
		}
		h := byHost[host]
		if h == nil {
			h = &hostRoutes{host: host}
			byHost[host] = h
			hosts = append(hosts, h)
		}
		if rule.HTTP == nil {
			continue // the default backend serves the host
		}
		for _, p := range rule.HTTP.Paths {
			if err := s.addPath(ctx, ing, h, p, opts, res, reject); err != nil {
				return nil, nil, err
			}
		}
	}
	return hosts, defaultPaths, nil
}

func (s *Source) addPath(ctx context.Context, ing *networkingv1.Ingress, h *hostRoutes, p networkingv1.HTTPIngressPath, opts options, res *plugin.Result, reject rejectFunc) error {
	rule := route.PathRule{Path: p.Path, Match: route.MatchPrefix}
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		rule.Match = route.MatchExact
	}
	// ImplementationSpecific is served as Prefix, the way most controllers read it.
	if rule.Path == "" {
		rule.Path = "/"
	}
	backend, ok, err := s.backend(ctx, ing, &p.Backend, opts, res, h.host, reject)
	if err != nil {
		return err
	}
	if !ok {
		h.unservable = true
		return nil
	}
	rule.Backend = backend
	for _, existing := range h.paths {
		if existing.Path == rule.Path && existing.Match == rule.Match {
			if existing.Backend != rule.Backend {
				reject(h.host, pic.ReasonDuplicatePath, false, false,
					"path %s (%s) of host %s is listed twice with different backends: %s is used, %s is ignored",
					rule.Path, rule.Match, h.host, existing.Backend, rule.Backend)
			}
			return nil
		}
	}
	h.paths = append(h.paths, rule)
	return nil
}

// backend resolves an Ingress backend to the address the Newt agent dials, with its
// health check when one is asked (a backend without one is said in res's notices).
// Missing Services and ports may appear later: those hold what exists and retry.
func (s *Source) backend(ctx context.Context, ing *networkingv1.Ingress, b *networkingv1.IngressBackend, opts options, res *plugin.Result, host string, reject rejectFunc) (route.Backend, bool, error) {
	if b.Resource != nil || b.Service == nil {
		reject(host, pic.ReasonResourceBackendUnsupported, false, false,
			"a resource backend (%s) cannot be reached through a Pangolin tunnel; use a Service backend", resourceName(b))
		return route.Backend{}, false, nil
	}
	var svc corev1.Service
	key := types.NamespacedName{Namespace: ing.Namespace, Name: b.Service.Name}
	if err := s.client.Get(ctx, key, &svc); err != nil {
		if apierrors.IsNotFound(err) {
			reject(host, pic.ReasonServiceNotFound, true, true, "Service %s not found; retrying", key)
			return route.Backend{}, false, nil
		}
		return route.Backend{}, false, fmt.Errorf("get Service %s: %w", key, err)
	}
	port, ok := servicePort(&svc, b.Service.Port)
	if !ok {
		reject(host, pic.ReasonServicePortNotFound, true, true, "Service %s has no port %s; retrying", key, portString(b.Service.Port))
		return route.Backend{}, false, nil
	}
	health, why, err := opts.health.Check(ctx, opts.HealthCheck, opts.HealthCheckPath, &svc, port, opts.BackendScheme)
	if err != nil {
		return route.Backend{}, false, err
	}
	if why != "" {
		res.Notices = sources.AddNotice(res.Notices, sources.NoHealthCheck(*res.Origin, &svc, port, why))
	}
	return route.Backend{Host: sources.ServiceAddress(&svc, s.config.ClusterDomain), Port: port.Port, Scheme: opts.BackendScheme, Health: health}, true, nil
}

// servicePort is the Service port the backend names. Traffic goes to the Service's
// address, so it is the Service port, not the target port, that the agent dials.
func servicePort(svc *corev1.Service, p networkingv1.ServiceBackendPort) (corev1.ServicePort, bool) {
	for _, sp := range svc.Spec.Ports {
		if p.Name != "" && sp.Name == p.Name || p.Name == "" && sp.Port == p.Number {
			return sp, true
		}
	}
	// An ExternalName Service needs no ports: a number is dialled as written. The API
	// server refuses Ingress ports outside 1-65535, but should one reach PIC anyway, the
	// CRD would refuse the target and fail every apply: the host is rejected instead
	// (found by FuzzTranslate).
	if svc.Spec.Type == corev1.ServiceTypeExternalName && p.Name == "" && p.Number > 0 && p.Number <= 65535 {
		return corev1.ServicePort{Port: p.Number}, true
	}
	return corev1.ServicePort{}, false
}

func portString(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return fmt.Sprintf("%q", p.Name)
	}
	return fmt.Sprint(p.Number)
}

func resourceName(b *networkingv1.IngressBackend) string {
	if b.Resource == nil {
		return "none"
	}
	return b.Resource.Kind + "/" + b.Resource.Name
}

func hasRootPrefix(paths []route.PathRule) bool {
	return slices.ContainsFunc(paths, func(p route.PathRule) bool {
		return p.Match == route.MatchPrefix && strings.TrimRight(p.Path, "/") == ""
	})
}

// tlsIgnored says that spec.tls is not used, if the Ingress has any: Pangolin
// terminates TLS itself, with the certificates it obtains for its domains, so the
// Secrets are never read. Saying so beats leaving users to wonder which certificate
// serves the host.
func tlsIgnored(ing *networkingv1.Ingress, origin route.Origin) *route.Notice {
	if len(ing.Spec.TLS) == 0 {
		return nil
	}
	var secrets []string
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" && !slices.Contains(secrets, t.SecretName) {
			secrets = append(secrets, t.SecretName)
		}
	}
	what := "its Secrets are not read"
	switch len(secrets) {
	case 0:
	case 1:
		what = "Secret " + secrets[0] + " is not read"
	default:
		what = "Secrets " + strings.Join(secrets, ", ") + " are not read"
	}
	return &route.Notice{Origin: origin, Reason: pic.ReasonTLSIgnored, Message: fmt.Sprintf(
		"spec.tls is not used: Pangolin terminates TLS for the hosts it publishes with its own certificates (those of its domains), so %s", what)}
}

// Factory builds the Ingress source from PIC's configuration.
var Factory = plugin.SourceFactory{
	Indexes: func(cfg *config.Config) []plugin.Index { return append(indexes(cfg), sources.PolicyIndexes()...) },
	// PIC writes an Ingress's status; it only reads IngressClasses and Services.
	Kinds: plugin.Kinds{
		Status:  []client.Object{&networkingv1.Ingress{}},
		Trimmed: []client.Object{&networkingv1.IngressClass{}, &corev1.Service{}},
		Read: []plugin.ReadKind{
			{Object: &networkingv1.Ingress{}}, {Object: &networkingv1.IngressClass{}, ClusterScoped: true}, {Object: &corev1.Service{}},
		},
	}.And(sources.PolicyKinds()),
	New: func(ctx context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
		conf := configOf(deps.Config)
		policies, err := sources.SharedPolicies(ctx, deps)
		if err != nil {
			return nil, err
		}
		conf.Policies = policies
		conf.Health.Pods = sources.PodReader(deps)
		return New(deps.Client, conf), nil
	},
}

func configOf(cfg *config.Config) Config {
	return Config{Tunnels: cfg.Tunnels, BackendScheme: cfg.BackendScheme, ClusterDomain: cfg.ClusterDomain, Health: sources.HealthChecks{Default: cfg.HealthChecks}}
}
