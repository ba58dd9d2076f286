package ingress

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// Cache indexes on Ingresses, so that a change to a related object reaches the Ingresses
// it concerns without listing them all.
const (
	serviceIndex = "pic.ingress.service" // "namespace/name" of every backend Service
	classIndex   = "pic.ingress.class"   // the class name, "" for none
	hostIndex    = "pic.ingress.host"    // every host it may publish, after its overrides (sources.ClaimedHosts)
)

// indexes are the source's cache indexes.
func indexes(cfg *config.Config) []plugin.Index {
	clusterDomain := cfg.ClusterDomain
	return []plugin.Index{
		{Object: &networkingv1.Ingress{}, Field: serviceIndex, Func: indexServices},
		{Object: &networkingv1.Ingress{}, Field: classIndex, Func: indexClass},
		{Object: &networkingv1.Ingress{}, Field: hostIndex, Func: func(obj client.Object) []string { return hostsOf(obj, clusterDomain) }},
	}
}

// Declare implements plugin.Source: an Ingress claims the hosts of its rules; Services
// and IngressClasses bring their Ingresses back, found through cache indexes rather
// than by listing every Ingress.
func (s *Source) Declare() plugin.Declaration {
	return plugin.Declaration{
		Claims: plugin.Claims{Hosts: s.Hosts, Claimants: s.Claimants, Holder: s.Holder},
		Watches: append([]plugin.Watch{
			{Object: &corev1.Service{}, Requests: s.ingressesOfService},
			{Object: &networkingv1.IngressClass{}, Requests: s.ingressesOfClass},
		}, s.config.Policies.Watches(ingressOfPolicyTarget)...),
	}
}

// ingressOfPolicyTarget is the Ingress an AccessPolicy's target names, if it names one.
func ingressOfPolicyTarget(_ context.Context, t access.Target) []reconcile.Request {
	if t.Kind != "Ingress" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}}}
}

// Claimants are the Ingresses that claim host, from the host index.
func (s *Source) Claimants(ctx context.Context, host string) ([]engine.Claim, error) {
	list, err := s.byIndex(ctx, hostIndex, host)
	if err != nil {
		return nil, err
	}
	claims := make([]engine.Claim, len(list))
	for i := range list {
		claims[i] = engine.Claim{Origin: originOf(&list[i]), Deleting: list[i].DeletionTimestamp != nil}
	}
	return claims, nil
}

// Holder is the claim of the Ingress a sink holds a resource for (plugin.Claims).
func (s *Source) Holder(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
	return sources.Holder(ctx, s.client, "Ingress", holder, &networkingv1.Ingress{}, func(ing *networkingv1.Ingress) engine.Claim {
		return engine.Claim{Origin: originOf(ing), Deleting: ing.DeletionTimestamp != nil}
	})
}

func indexServices(obj client.Object) []string {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	var keys []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil {
			keys = append(keys, ing.Namespace+"/"+b.Service.Name)
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for i := range rule.HTTP.Paths {
			add(&rule.HTTP.Paths[i].Backend)
		}
	}
	return keys
}

func indexClass(obj client.Object) []string {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	if ing.Spec.IngressClassName != nil {
		return []string{*ing.Spec.IngressClassName}
	}
	return []string{ing.Annotations[pic.LegacyClassAnnotation]}
}

// Hosts are the hosts an Ingress claims: those of its rules, normalized, after its
// domain-name and subdomain overrides.
func (s *Source) Hosts(_ context.Context, obj client.Object) []string {
	return hostsOf(obj, s.config.ClusterDomain)
}

func hostsOf(obj client.Object, clusterDomain string) []string {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	var hosts []string
	for _, rule := range ing.Spec.Rules {
		if h, problem := hostname.Normalize(rule.Host, clusterDomain); problem == nil {
			hosts = append(hosts, h)
		}
	}
	return sources.ClaimedHosts(ing.Annotations, hosts)
}

func (s *Source) ingressesOfService(ctx context.Context, obj client.Object) []reconcile.Request {
	return s.requests(ctx, serviceIndex, obj.GetNamespace()+"/"+obj.GetName())
}

// ingressesOfClass requeues the Ingresses of a class that changed; a class that is or
// was the default also concerns every Ingress without a class.
func (s *Source) ingressesOfClass(ctx context.Context, obj client.Object) []reconcile.Request {
	requests := s.requests(ctx, classIndex, obj.GetName())
	return append(requests, s.requests(ctx, classIndex, "")...)
}

func (s *Source) requests(ctx context.Context, index, value string) []reconcile.Request {
	list, err := s.byIndex(ctx, index, value)
	if err != nil {
		log.FromContext(ctx).Error(err, "cannot map a related object to its Ingresses", "index", index, "value", value)
		return nil
	}
	requests := make([]reconcile.Request, len(list))
	for i := range list {
		requests[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list[i].Namespace, Name: list[i].Name}}
	}
	return requests
}

func (s *Source) byIndex(ctx context.Context, index, value string) ([]networkingv1.Ingress, error) {
	var list networkingv1.IngressList
	// The callers only read names, UIDs and deletion stamps: the cache's objects are not
	// copied for them.
	if err := s.client.List(ctx, &list, client.MatchingFields{index: value}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list Ingresses by %s=%s: %w", index, value, err)
	}
	return list.Items, nil
}
