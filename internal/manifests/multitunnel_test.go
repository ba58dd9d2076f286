package manifests

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

var multiTunnelFile = repoPath("internal", "config", "testdata", "multi-tunnel.yaml")

// TestMultiTunnelConfiguration checks that the multi-tunnel example that PIC's
// configuration tests load is what the kustomize sample and the Helm chart install.
func TestMultiTunnelConfiguration(t *testing.T) {
	want, err := os.ReadFile(multiTunnelFile)
	require.NoError(t, err)
	fileCfg, _, err := loadPIC(t, []string{"--config=" + multiTunnelFile}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, fileCfg.Tunnels.Aliases, "the example defines tunnel aliases")

	var fileMap map[string]any
	require.NoError(t, yaml.Unmarshal(want, &fileMap))
	// The file as chart values: leaderElection and tunnels are top-level values, every
	// other key goes under config.
	chartValues := map[string]any{"config": map[string]any{}}
	for k, v := range fileMap {
		switch k {
		case "leaderElection", "tunnels":
			chartValues[k] = v
		default:
			chartValues["config"].(map[string]any)[k] = v
		}
	}

	overlay := repoPath("config", "samples", "multi-tunnel")
	cases := []struct {
		name string
		test func(t *testing.T)
	}{
		{"config/samples/multi-tunnel/config.yaml is a byte-for-byte copy of internal/config/testdata/multi-tunnel.yaml", func(t *testing.T) {
			got, err := os.ReadFile(repoPath("config", "samples", "multi-tunnel", "config.yaml"))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "copy internal/config/testdata/multi-tunnel.yaml over config/samples/multi-tunnel/config.yaml")
		}},
		{"the kustomize overlay's ConfigMap holds exactly internal/config/testdata/multi-tunnel.yaml", func(t *testing.T) {
			cm := only[corev1.ConfigMap](t, kustomizeBuild(t, overlay), "ConfigMap")
			assert.Equal(t, map[string]string{"config.yaml": string(want)}, cm.Data)
		}},
		{"the kustomize overlay mounts the ConfigMap at /etc/pic and passes --config /etc/pic/config.yaml", func(t *testing.T) {
			objs := kustomizeBuild(t, overlay)
			cm := only[corev1.ConfigMap](t, objs, "ConfigMap")
			d := only[appsv1.Deployment](t, objs, "Deployment")
			assertMountsConfig(t, d, cm.Name)
		}},
		{"PIC started by the kustomize overlay has the file's configuration, with its Lease in pic-system", func(t *testing.T) {
			got, origins := picConfig(t, kustomizeBuild(t, overlay))
			wantCfg := *fileCfg
			wantCfg.LeaderElection.Namespace = releaseNamespace // the overlay's flag: see its deployment-patch.yaml
			assert.Equal(t, &wantCfg, got)
			assert.Equal(t, config.FromFile, origins["tunnels"].Kind)
		}},
		{"the kustomize overlay creates an IngressClass for every tunnel alias of the file", func(t *testing.T) {
			objs := kustomizeBuild(t, overlay)
			for alias := range fileCfg.Tunnels.Aliases {
				assert.NotNil(t, named(objs, "IngressClass", "", "pangolin-"+alias), "IngressClass pangolin-%s", alias)
			}
		}},
		{"the Helm chart given the file's keys as values writes them into its ConfigMap", func(t *testing.T) {
			objs := renderChart(t, toYAML(t, chartValues))
			cm := only[corev1.ConfigMap](t, objs, "ConfigMap")
			var got map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &got))
			wantMap := map[string]any{}
			for k, v := range fileMap {
				if k != "leaderElection" { // passed as flags, next to its Role
					wantMap[k] = v
				}
			}
			assert.Equal(t, wantMap, got)
			assertMountsConfig(t, only[appsv1.Deployment](t, objs, "Deployment"), cm.Name)
		}},
		{"PIC started by the Helm chart given the file's keys as values has the file's configuration", func(t *testing.T) {
			got, _ := picConfig(t, renderChart(t, toYAML(t, chartValues)))
			assert.Equal(t, fileCfg, got)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, c.test)
	}
}

// assertMountsConfig checks that the container reads config.yaml of the ConfigMap through
// --config (or PIC_CONFIG) at /etc/pic/config.yaml.
func assertMountsConfig(t *testing.T, d *appsv1.Deployment, configMap string) {
	t.Helper()
	c := manager(t, d)
	args := append(slices.Clone(c.Command), c.Args...)
	i := slices.Index(args, "--config")
	passed := slices.Contains(args, "--config=/etc/pic/config.yaml") ||
		(i >= 0 && i+1 < len(args) && args[i+1] == "/etc/pic/config.yaml") ||
		slices.Contains(c.Env, corev1.EnvVar{Name: config.EnvConfigFile, Value: "/etc/pic/config.yaml"})
	assert.True(t, passed, "--config /etc/pic/config.yaml in %v", args)

	m := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/pic" })
	require.GreaterOrEqual(t, m, 0, "a volume mounted at /etc/pic")
	assert.True(t, c.VolumeMounts[m].ReadOnly, "mounted read-only")
	v := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[m].Name })
	require.GreaterOrEqual(t, v, 0)
	vol := d.Spec.Template.Spec.Volumes[v]
	require.NotNil(t, vol.ConfigMap, "the volume at /etc/pic is a ConfigMap")
	assert.Equal(t, configMap, vol.ConfigMap.Name)
}
