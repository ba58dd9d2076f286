package render_test

import (
	"context"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/render"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
	"github.com/stefb69/pangolin-ingress-controller/sources/example"
)

// TestATestOnlySourceRunsThroughRender: the toy source of docs/development.md
// (sources/example), registered by name and nothing else, is read, owns hosts against
// the built-in sources, and is published by both sinks.
func TestATestOnlySourceRunsThroughRender(t *testing.T) {
	registry := plugin.Registry{Sources: maps.Clone(builtin.Registry.Sources), Sinks: builtin.Registry.Sinks}
	registry.Sources[example.Name] = example.Factory // the one registration line

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
	for _, sink := range builtin.SinkNames() {
		t.Run(sink, func(t *testing.T) {
			cfg := config.Default()
			cfg.Sink = sink
			cfg.Sources = []string{example.Name, "ingress"}
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
