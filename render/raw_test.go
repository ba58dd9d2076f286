package render_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/plugins"
	"github.com/stefb69/pangolin-ingress-controller/render"
)

// portSource publishes, for a ConfigMap with data.protocol, data.port and
// data.service, that public port to the Service's same port: a stand-in for the sources
// of TCP and UDP ports, so that render can be shown raw resources before one exists.
type portSource struct {
	client client.Client
	config *config.Config
}

var portSourceFactory = plugin.SourceFactory{
	New: func(_ context.Context, deps plugin.SourceDeps) (plugin.Source, error) {
		return &portSource{client: deps.Client, config: deps.Config}, nil
	},
}

// portRoute is the ConfigMap's raw route, if its data makes one.
func (s *portSource) portRoute(cm *corev1.ConfigMap) (route.Route, bool) {
	key := cm.Data["protocol"] + ":" + cm.Data["port"]
	protocol, port, ok := route.ParsePortKey(key)
	if !ok {
		return route.Route{}, false
	}
	origin := configMapOrigin(cm)
	backend := route.Backend{Host: cm.Data["service"] + "." + cm.Namespace + ".svc.cluster.local", Port: port, Scheme: string(protocol)}
	return route.Route{
		Origin: origin, Host: key, Protocol: protocol, Port: port,
		Tunnel: route.TunnelRef{Namespace: cm.Namespace, Name: s.config.Tunnels.Default.Name},
		Paths:  []route.PathRule{{Backend: backend}},
	}, true
}

func (s *portSource) Name() string          { return "ports" }
func (s *portSource) Object() client.Object { return &corev1.ConfigMap{} }

func (s *portSource) Routes(ctx context.Context, key types.NamespacedName) (plugin.Result, error) {
	var cm corev1.ConfigMap
	if err := s.client.Get(ctx, key, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return plugin.Result{}, nil
		}
		return plugin.Result{}, fmt.Errorf("get ConfigMap %s: %w", key, err)
	}
	origin := configMapOrigin(&cm)
	res := plugin.Result{Origin: &origin, Managed: true}
	if r, ok := s.portRoute(&cm); ok {
		res.Routes = append(res.Routes, r)
	}
	return res, nil
}

func (s *portSource) WriteStatus(context.Context, types.NamespacedName, plugin.Status) error {
	return nil // a ConfigMap has no status
}

// Declare claims each ConfigMap's port key; a few ConfigMaps need no index.
func (s *portSource) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{
		Hosts: func(_ context.Context, obj client.Object) []string {
			if r, ok := s.portRoute(obj.(*corev1.ConfigMap)); ok {
				return []string{r.Host}
			}
			return nil
		},
		Claimants: func(ctx context.Context, host string) ([]engine.Claim, error) {
			var list corev1.ConfigMapList
			if err := s.client.List(ctx, &list); err != nil {
				return nil, err
			}
			var claims []engine.Claim
			for i := range list.Items {
				if r, ok := s.portRoute(&list.Items[i]); ok && r.Host == host {
					claims = append(claims, engine.Claim{Origin: r.Origin})
				}
			}
			return claims, nil
		},
	}}
}

// portManifest is a TCP and a UDP port, and a younger claim on the TCP one.
const portManifest = `
apiVersion: v1
kind: ConfigMap
metadata: {name: postgres, namespace: data, creationTimestamp: "2024-01-01T00:00:00Z"}
data: {protocol: tcp, port: "5432", service: postgres}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: dns, namespace: data, creationTimestamp: "2024-01-01T00:00:00Z"}
data: {protocol: udp, port: "53", service: coredns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: late-postgres, namespace: data, creationTimestamp: "2025-01-01T00:00:00Z"}
data: {protocol: tcp, port: "5432", service: replica}
`

// TestRenderRawResources: render writes TCP and UDP ports as PangolinResources for each
// operator CRD variant, a younger claim on a port is refused, and a second pass writes
// nothing. testdata/golden-raw/<variant>.yaml holds what render prints; go test ./render
// -run TestRenderRawResources -update rewrites it.
func TestRenderRawResources(t *testing.T) {
	registry := plugin.Registry{Sources: maps.Clone(plugins.Registry.Sources), Sinks: plugins.Registry.Sinks}
	registry.Sources["ports"] = portSourceFactory
	for _, variant := range []string{"fork", "original"} {
		t.Run(variant, func(t *testing.T) {
			cfg := config.Default()
			cfg.Sources = []string{"ports"}
			res, err := render.Run(context.Background(), objects(t, portManifest), render.Options{Config: cfg, CRDVariant: variant, AssumeTunnels: true, Registry: registry})
			require.NoError(t, err)
			var warnings []string
			for _, w := range res.Warnings() {
				warnings = append(warnings, w.Name+" "+w.Reason)
			}
			assert.Equal(t, []string{"late-postgres PortConflict"}, warnings)
			assert.Equal(t, []render.Pass{{Writes: 2}, {}}, res.Passes, "two resources, then nothing")
			protocols := map[string]string{}
			for _, r := range res.Resources {
				protocols[r.Spec.Name] = r.Spec.Protocol + " " + strconv.Itoa(int(r.Spec.ProxyConfig.ProxyPort))
				assert.Nil(t, r.Spec.HTTPConfig, r.Name)
			}
			assert.Equal(t, map[string]string{"tcp:5432": "tcp 5432", "udp:53": "udp 53"}, protocols)

			var out []byte
			for _, doc := range res.Published {
				data, err := yaml.Marshal(doc)
				require.NoError(t, err)
				out = append(append(out, "---\n"...), data...)
			}
			golden(t, string(out), filepath.Join("testdata", "golden-raw", variant+".yaml"))
		})
	}
}
