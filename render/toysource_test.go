package render_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/plugins"
	"github.com/stefb69/pangolin-ingress-controller/render"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// configMapSource is the walkthrough of docs/development.md ("Adding a source"), whole:
// a ConfigMap with data.host and data.service publishes that host to the Service's
// port 80. It is a source because it implements plugin.Source and is registered by
// name; nothing else in PIC knows it.
type configMapSource struct {
	client client.Client
	config *config.Config
}

const configMapHostIndex = "toy.configmap.host"

var configMapFactory = plugin.SourceFactory{
	Indexes: func(*config.Config) []plugin.Index {
		return []plugin.Index{{Object: &corev1.ConfigMap{}, Field: configMapHostIndex, Func: configMapHosts}}
	},
	New: func(_ context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
		return &configMapSource{client: deps.Client, config: deps.Config}, nil
	},
}

func configMapHosts(obj client.Object) []string {
	if host := obj.(*corev1.ConfigMap).Data["host"]; host != "" {
		return []string{host}
	}
	return nil
}

func configMapOrigin(cm *corev1.ConfigMap) route.Origin {
	return route.Origin{Version: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: cm.UID, Created: cm.CreationTimestamp.Time}
}

func (s *configMapSource) Name() string          { return "configmap" }
func (s *configMapSource) Object() client.Object { return &corev1.ConfigMap{} }

func (s *configMapSource) Routes(ctx context.Context, key types.NamespacedName) (plugin.Result, error) {
	var cm corev1.ConfigMap
	if err := s.client.Get(ctx, key, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return plugin.Result{}, nil
		}
		return plugin.Result{}, fmt.Errorf("get ConfigMap %s: %w", key, err)
	}
	origin := configMapOrigin(&cm)
	res := plugin.Result{Origin: &origin, Managed: true}
	for _, host := range configMapHosts(&cm) {
		backend := route.Backend{Host: cm.Data["service"] + "." + cm.Namespace + ".svc.cluster.local", Port: 80, Scheme: "http"}
		res.Routes = append(res.Routes, route.Route{
			Origin: origin, Host: host, Tunnel: route.TunnelRef{Namespace: cm.Namespace, Name: s.config.Tunnels.Default.Name},
			Paths: []route.PathRule{{Path: "/", Match: route.MatchPrefix, Backend: backend}},
		})
	}
	return res, nil
}

func (s *configMapSource) WriteStatus(context.Context, types.NamespacedName, plugin.Status) error {
	return nil // a ConfigMap has no status
}

func (s *configMapSource) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{
		Hosts: func(_ context.Context, obj client.Object) []string { return configMapHosts(obj) },
		Claimants: func(ctx context.Context, host string) ([]engine.Claim, error) {
			var list corev1.ConfigMapList
			if err := s.client.List(ctx, &list, client.MatchingFields{configMapHostIndex: host}); err != nil {
				return nil, err
			}
			claims := make([]engine.Claim, len(list.Items))
			for i := range list.Items {
				claims[i] = engine.Claim{Origin: configMapOrigin(&list.Items[i])}
			}
			return claims, nil
		},
		Holder: func(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
			return sources.Holder(ctx, s.client, "ConfigMap", holder, &corev1.ConfigMap{}, func(cm *corev1.ConfigMap) engine.Claim {
				return engine.Claim{Origin: configMapOrigin(cm)}
			})
		},
	}}
}

// TestATestOnlySourceRunsThroughRender: a source registered by name, and nothing else,
// is read, owns hosts against the built-in sources, and is published by both sinks.
func TestATestOnlySourceRunsThroughRender(t *testing.T) {
	registry := plugin.Registry{Sources: maps.Clone(plugins.Registry.Sources), Sinks: plugins.Registry.Sinks}
	registry.Sources["configmap"] = configMapFactory // the one registration line

	manifest := `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shop, namespace: shop, creationTimestamp: "2024-01-01T00:00:00Z"}
data: {host: shop.example.com, service: web}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: late, namespace: shop, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  ingressClassName: pangolin
  rules:
  - host: shop.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`
	for _, sink := range plugins.SinkNames() {
		t.Run(sink, func(t *testing.T) {
			cfg := config.Default()
			cfg.Sink = sink
			cfg.Sources = []string{"configmap", "ingress"}
			res, err := render.Run(context.Background(), objects(t, manifest), render.Options{Config: cfg, AssumeTunnels: true, Registry: registry})
			require.NoError(t, err)
			var warnings []string
			for _, w := range res.Warnings() {
				warnings = append(warnings, w.Kind+" "+w.Name+" "+w.Reason)
			}
			assert.Equal(t, []string{"Ingress late HostConflict"}, warnings, "the older ConfigMap owns the host")
			switch sink {
			case "pangolin":
				require.Len(t, res.Published, 1)
				assert.Equal(t, "shop.example.com", res.Published[0].(pangolin.PublishedResource).FullDomain)
			default:
				require.Len(t, res.Resources, 1)
				assert.Equal(t, "ConfigMap", res.Resources[0].OwnerReferences[0].Kind)
			}
		})
	}
}
