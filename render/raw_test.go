package render_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/render"
)

// portManifest is a TCP and a UDP port, and a younger Service on the TCP one: Services
// of type LoadBalancer of PIC's class, as the service source publishes them.
const portManifest = `
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: data, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {type: LoadBalancer, loadBalancerClass: pangolin.io/tunnel, selector: {app: postgres}, ports: [{name: pg, port: 5432, protocol: TCP}]}
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: data, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {type: LoadBalancer, loadBalancerClass: pangolin.io/tunnel, selector: {app: coredns}, ports: [{name: dns, port: 53, protocol: UDP}]}
---
apiVersion: v1
kind: Service
metadata: {name: late-postgres, namespace: data, creationTimestamp: "2025-01-01T00:00:00Z"}
spec: {type: LoadBalancer, loadBalancerClass: pangolin.io/tunnel, selector: {app: replica}, ports: [{name: pg, port: 5432, protocol: TCP}]}
`

// TestRenderRawResources: render writes TCP and UDP ports as PangolinResources for each
// operator CRD variant, a younger claim on a port is refused, and a second pass writes
// nothing. testdata/golden-raw/<variant>.yaml holds what render prints; go test ./render
// -run TestRenderRawResources -update rewrites it.
func TestRenderRawResources(t *testing.T) {
	for _, variant := range []string{"fork", "original"} {
		t.Run(variant, func(t *testing.T) {
			cfg := config.Default()
			cfg.Sources = []string{"service"}
			res, err := render.Run(context.Background(), objects(t, portManifest), render.Options{Config: cfg, CRDVariant: variant, AssumeTunnels: true})
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
