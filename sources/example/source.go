// Package example is the toy source of docs/development.md's walkthrough, whole: a
// ConfigMap with data.host and data.service publishes that host to the Service's port
// 80. No build registers it; the tests that run it through `render` and through the
// manager do, with the one line a source needs, and the walkthrough quotes it.
package example

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// Name is the source's name in the configuration (sources).
const Name = "configmap"

// hostIndex holds the host each ConfigMap claims, for Claimants.
const hostIndex = "example.configmap.host"

// Factory builds the source.
var Factory = plugin.SourceFactory{
	Indexes: func(*config.Config) []plugin.Index {
		return []plugin.Index{{Object: &corev1.ConfigMap{}, Field: hostIndex, Func: hosts}}
	},
	// ConfigMaps are in client-go's scheme, have no status, and the source reads them
	// only: what `manager render` loads from its input is all it declares.
	Kinds: plugin.Kinds{Read: []plugin.ReadKind{{Object: &corev1.ConfigMap{}}}},
	New: func(_ context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
		return &Source{client: deps.Client, config: deps.Config}, nil
	},
}

var _ plugin.Source = (*Source)(nil)

// Source publishes ConfigMaps.
type Source struct {
	client client.Client
	config *config.Config
}

// Name implements plugin.Source.
func (s *Source) Name() string { return Name }

// Object implements plugin.Source.
func (s *Source) Object() client.Object { return &corev1.ConfigMap{} }

// Routes implements plugin.Source.
func (s *Source) Routes(_ context.Context, obj client.Object) (plugin.Result, error) {
	cm := obj.(*corev1.ConfigMap)
	origin := originOf(cm)
	res := plugin.Result{Origin: &origin, Managed: true}
	for _, host := range hosts(cm) {
		backend := route.Backend{Host: cm.Data["service"] + "." + cm.Namespace + ".svc." + s.config.ClusterDomain, Port: 80, Scheme: "http"}
		res.Routes = append(res.Routes, route.Route{
			Origin: origin, Host: host, Tunnel: route.TunnelRef{Namespace: cm.Namespace, Name: s.config.Tunnels.Default.Name},
			Paths: []route.PathRule{{Path: "/", Match: route.MatchPrefix, Backend: backend}},
		})
	}
	return res, nil
}

// WriteStatus implements plugin.Source: a ConfigMap has no status, and Routes never
// claims it (Result.OwnsStatus), so the core never calls it.
func (s *Source) WriteStatus(context.Context, client.Object, plugin.Status) error { return nil }

// Declare implements plugin.Source: who claims a host, from the index.
func (s *Source) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{
		Hosts: func(_ context.Context, obj client.Object) []string { return hosts(obj) },
		Claimants: func(ctx context.Context, host string) ([]engine.Claim, error) {
			var list corev1.ConfigMapList
			if err := s.client.List(ctx, &list, client.MatchingFields{hostIndex: host}); err != nil {
				return nil, fmt.Errorf("list ConfigMaps claiming %s: %w", host, err)
			}
			claims := make([]engine.Claim, len(list.Items))
			for i := range list.Items {
				claims[i] = claimOf(&list.Items[i])
			}
			return claims, nil
		},
		Holder: func(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
			return sources.Holder(ctx, s.client, "ConfigMap", holder, &corev1.ConfigMap{}, claimOf)
		},
	}}
}

func hosts(obj client.Object) []string {
	if host := obj.(*corev1.ConfigMap).Data["host"]; host != "" {
		return []string{host}
	}
	return nil
}

func originOf(cm *corev1.ConfigMap) route.Origin {
	return plugin.OriginOf(corev1.SchemeGroupVersion.WithKind("ConfigMap"), cm)
}

func claimOf(cm *corev1.ConfigMap) engine.Claim {
	return engine.Claim{Origin: originOf(cm), Deleting: cm.DeletionTimestamp != nil}
}
