package manifests

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

// TestHelmLint runs `helm lint` through Helm's Go API and accepts nothing above INFO.
func TestHelmLint(t *testing.T) {
	cases := []struct{ name, values string }{
		{"the chart lints clean with its default values", ""},
		{"the chart lints clean with every key, tunnels, extra IngressClasses and a ServiceMonitor", everythingValues},
		{"the chart lints clean with config.sources [ingress, httproute]", gatewayAPIValues},
		{"the chart lints clean with config.sink pangolin", directValues},
		{"the chart lints clean with config.sink pangolin and config.sources [ingress, httproute]", directGatewayAPIValues},
		{"the chart lints clean with config.sources [ingress, service]", servicesValues},
		{"the chart lints clean with config.sink pangolin and config.sources [ingress, service]", directServicesValues},
		{"the chart lints clean with config.sink pangolin and config.healthChecks", directHealthChecksValues},
		{"the chart lints clean with config.sink pangolin and rbac.readPods", directReadPodsValues},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(c.values))
			require.NoError(t, err)
			linter := lint.All(chartDir, vals.AsMap(), releaseNamespace, false)
			for _, m := range linter.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m)
				} else {
					t.Logf("helm lint: %s", m)
				}
			}
		})
	}
}

// TestHelmChartValues checks what each group of values renders.
func TestHelmChartValues(t *testing.T) {
	fullname := releaseName + "-pangolin-ingress-controller"
	cases := []struct {
		name   string
		values string
		check  func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{"the default values create the IngressClass pangolin and no other", "", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Equal(t, []string{"pangolin"}, names(ofKind(objs, "IngressClass")))
		}},
		{"ingressClasses creates each extra class, given by name or with options", `
ingressClasses:
  - pangolin
  - pangolin-edge-eu
  - {name: pangolin-staging, tunnel: pangolin-system/staging-tunnel, annotations: {example.com/team: qa}}
  - {name: pangolin-public, default: true}
`, func(t *testing.T, objs []*unstructured.Unstructured) {
			classes := ofKind(objs, "IngressClass")
			assert.ElementsMatch(t, []string{"pangolin", "pangolin-edge-eu", "pangolin-staging", "pangolin-public"}, names(classes))
			for _, o := range classes {
				ic := decodeStrict[networkingv1.IngressClass](t, o)
				assert.Equal(t, ingressController, ic.Spec.Controller, ic.Name)
				switch ic.Name {
				case "pangolin-staging":
					assert.Equal(t, map[string]string{"pangolin.ingress.k8s.io/tunnel-name": "pangolin-system/staging-tunnel", "example.com/team": "qa"}, ic.Annotations)
				case "pangolin-public":
					assert.Equal(t, map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}, ic.Annotations)
				default:
					assert.Empty(t, ic.Annotations, ic.Name)
				}
			}
		}},
		{"an empty ingressClasses creates no IngressClass", "ingressClasses: []", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "IngressClass"))
		}},
		{"the default values render no ServiceMonitor", "", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "ServiceMonitor"))
		}},
		{"serviceMonitor.enabled renders a ServiceMonitor that scrapes the metrics Service", `
serviceMonitor: {enabled: true, labels: {release: prometheus}, interval: 15s, scrapeTimeout: 10s}
`, func(t *testing.T, objs []*unstructured.Unstructured) {
			sms := ofKind(objs, "ServiceMonitor")
			require.Len(t, sms, 1)
			sm := sms[0]
			assert.Equal(t, "monitoring.coreos.com/v1", sm.GetAPIVersion())
			assert.Equal(t, releaseNamespace, sm.GetNamespace())
			assert.Equal(t, "prometheus", sm.GetLabels()["release"])
			svc := only[corev1.Service](t, objs, "Service")
			selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			require.NotEmpty(t, selector)
			for k, v := range selector {
				assert.Equal(t, v, svc.Labels[k], "the ServiceMonitor selects Service label %s", k)
			}
			nsNames, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
			assert.Equal(t, []string{releaseNamespace}, nsNames)
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			require.Len(t, endpoints, 1)
			assert.Equal(t, map[string]any{"port": "metrics", "path": "/metrics", "interval": "15s", "scrapeTimeout": "10s"}, endpoints[0])
		}},
		{"rbac.create=false renders no ClusterRole, Role or binding", "rbac: {create: false}", func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
				assert.Empty(t, ofKind(objs, kind), kind)
			}
		}},
		{"serviceAccount.create=false runs as serviceAccount.name and binds it", "serviceAccount: {create: false, name: existing}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "ServiceAccount"))
			d := only[appsv1.Deployment](t, objs, "Deployment")
			assert.Equal(t, "existing", d.Spec.Template.Spec.ServiceAccountName)
			for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
				subjects, _, _ := unstructured.NestedSlice(ofKind(objs, kind)[0].Object, "subjects")
				assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": "existing", "namespace": releaseNamespace}}, subjects, kind)
			}
		}},
		{"serviceAccount.name names the created ServiceAccount", "serviceAccount: {name: pic}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Equal(t, []string{"pic"}, names(ofKind(objs, "ServiceAccount")))
			assert.Equal(t, "pic", only[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.ServiceAccountName)
		}},
		{"leaderElection.enabled=false passes --leader-elect=false and grants no Lease", "leaderElection: {enabled: false}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "Role"))
			assert.Empty(t, ofKind(objs, "RoleBinding"))
			cfg, _ := picConfig(t, objs)
			assert.False(t, cfg.LeaderElection.Enabled)
		}},
		{"leaderElection.namespace moves the Lease and its Role", "leaderElection: {namespace: pic-leases}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Equal(t, "pic-leases", ofKind(objs, "Role")[0].GetNamespace())
			assert.Equal(t, "pic-leases", ofKind(objs, "RoleBinding")[0].GetNamespace())
			cfg, _ := picConfig(t, objs)
			assert.Equal(t, "pic-leases", cfg.LeaderElection.Namespace)
		}},
		{"the default values write no ConfigMap and pass no --config", "", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "ConfigMap"))
			d := only[appsv1.Deployment](t, objs, "Deployment")
			assert.Equal(t, []string{"--leader-elect=true"}, manager(t, d).Args)
			assert.Empty(t, d.Spec.Template.Spec.Volumes)
			_, origins := picConfig(t, objs)
			for key, o := range origins {
				if key != "leaderElection.enabled" {
					assert.Equal(t, config.FromDefault, o.Kind, "%s comes from %s", key, o)
				}
			}
		}},
		{"config writes a ConfigMap, mounted and passed with --config", "config: {logLevel: debug}", func(t *testing.T, objs []*unstructured.Unstructured) {
			cm := only[corev1.ConfigMap](t, objs, "ConfigMap")
			assert.Equal(t, fullname+"-config", cm.Name)
			assert.Equal(t, "logLevel: debug\n", strings.TrimLeft(cm.Data["config.yaml"], "\n"))
			assertMountsConfig(t, only[appsv1.Deployment](t, objs, "Deployment"), cm.Name)
		}},
		{"tunnels alone write a ConfigMap, mounted and passed with --config", "tunnels: {edge-eu: edge-eu-tunnel}", func(t *testing.T, objs []*unstructured.Unstructured) {
			cm := only[corev1.ConfigMap](t, objs, "ConfigMap")
			assertMountsConfig(t, only[appsv1.Deployment](t, objs, "Deployment"), cm.Name)
			cfg, _ := picConfig(t, objs)
			assert.Equal(t, "edge-eu-tunnel", cfg.Tunnels.Aliases["edge-eu"].Name)
		}},
		{"config.metricsBindAddress \"0\" drops the metrics port and Service", `config: {metricsBindAddress: "0"}`, func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "Service"))
			c := manager(t, only[appsv1.Deployment](t, objs, "Deployment"))
			assert.Equal(t, []string{"health"}, portNames(c))
		}},
		{"config.healthProbeBindAddress \"0\" drops the probes", `config: {healthProbeBindAddress: "0"}`, func(t *testing.T, objs []*unstructured.Unstructured) {
			c := manager(t, only[appsv1.Deployment](t, objs, "Deployment"))
			assert.Nil(t, c.LivenessProbe)
			assert.Nil(t, c.ReadinessProbe)
			assert.Equal(t, []string{"metrics"}, portNames(c))
		}},
		{"metricsService.enabled=false drops the metrics Service only", "metricsService: {enabled: false}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "Service"))
			assert.Equal(t, []string{"metrics", "health"}, portNames(manager(t, only[appsv1.Deployment](t, objs, "Deployment"))))
		}},
		{"the image tag defaults to the chart's appVersion", "", func(t *testing.T, objs []*unstructured.Unstructured) {
			c := manager(t, only[appsv1.Deployment](t, objs, "Deployment"))
			assert.Equal(t, "ghcr.io/stefb69/pangolin-ingress-controller:"+readVersion(t), c.Image)
			assert.Equal(t, corev1.PullIfNotPresent, c.ImagePullPolicy)
		}},
		{"image, replicas, resources and scheduling values reach the pod", `
image: {repository: ghcr.io/stefb69/pangolin-ingress-controller, tag: v1.2.3, pullPolicy: Always}
imagePullSecrets: [{name: registry}]
replicas: 2
resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 512Mi}}
nodeSelector: {node-role.kubernetes.io/infra: ""}
tolerations: [{key: infra, operator: Exists, effect: NoSchedule}]
affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/name: pangolin-ingress-controller}}}}]}}
priorityClassName: system-cluster-critical
podAnnotations: {example.com/scrape: "false"}
podLabels: {team: platform}
`, func(t *testing.T, objs []*unstructured.Unstructured) {
			d := only[appsv1.Deployment](t, objs, "Deployment")
			pod := d.Spec.Template.Spec
			c := manager(t, d)
			assert.Equal(t, "ghcr.io/stefb69/pangolin-ingress-controller:v1.2.3", c.Image)
			assert.Equal(t, corev1.PullAlways, c.ImagePullPolicy)
			assert.Equal(t, []corev1.LocalObjectReference{{Name: "registry"}}, pod.ImagePullSecrets)
			assert.Equal(t, new(int32(2)), d.Spec.Replicas)
			assert.Equal(t, corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			}, c.Resources, "resources merge with the defaults, as Helm merges maps")
			assert.Equal(t, map[string]string{"kubernetes.io/os": "linux", "node-role.kubernetes.io/infra": ""}, pod.NodeSelector)
			assert.Equal(t, []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, pod.Tolerations)
			require.NotNil(t, pod.Affinity)
			assert.NotNil(t, pod.Affinity.PodAntiAffinity)
			assert.Equal(t, "system-cluster-critical", pod.PriorityClassName)
			assert.Equal(t, "false", d.Spec.Template.Annotations["example.com/scrape"])
			assert.Equal(t, "platform", d.Spec.Template.Labels["team"])
			assert.NotContains(t, d.Spec.Selector.MatchLabels, "team", "pod labels stay out of the immutable selector")
		}},
		{"pangolin.apiKeySecret and pangolin.caSecret are mounted read-only and named by apiKeyFile and caFile", directValues + `
  caSecret: {name: pangolin-ca}
`, func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			assert.Equal(t, testAPIKey, string(cfg.Pangolin.APIKey))
			ca, err := os.ReadFile(cfg.Pangolin.CAFile)
			require.NoError(t, err)
			assert.Equal(t, testSecrets["pangolin-ca"]["ca.crt"], string(ca))
			d := only[appsv1.Deployment](t, objs, "Deployment")
			c := manager(t, d)
			want := map[string]string{"pangolin-api-key": "/etc/pic-pangolin", "pangolin-ca": "/etc/pic-pangolin-ca"}
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Secret == nil {
					continue
				}
				i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name })
				require.GreaterOrEqual(t, i, 0, "volume %s is mounted", v.Name)
				assert.Equal(t, want[v.Secret.SecretName], c.VolumeMounts[i].MountPath, v.Secret.SecretName)
				assert.True(t, c.VolumeMounts[i].ReadOnly, v.Secret.SecretName)
				delete(want, v.Secret.SecretName)
			}
			assert.Empty(t, want, "Secrets not mounted")
			file := only[corev1.ConfigMap](t, objs, "ConfigMap").Data["config.yaml"]
			assert.Contains(t, file, "apiKeyFile: /etc/pic-pangolin/apiKey")
			assert.Contains(t, file, "caFile: /etc/pic-pangolin-ca/ca.crt")
		}},
		{"extraArgs and extraEnv reach the container and beat the file", `
config: {logLevel: info, logFormat: json}
extraArgs: [--log-level=debug]
extraEnv: [{name: PIC_LOG_FORMAT, value: console}]
`, func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, origins := picConfig(t, objs)
			assert.Equal(t, "debug", cfg.LogLevel)
			assert.Equal(t, config.FromFlag, origins["logLevel"].Kind)
			assert.Equal(t, "console", cfg.LogFormat)
			assert.Equal(t, config.FromEnv, origins["logFormat"].Kind)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, renderChart(t, c.values)) })
	}
}

// TestHelmChartConfigChangeRollsThePods checks the checksum annotation that restarts PIC
// when its configuration file changes (PIC reads it once, at start-up).
func TestHelmChartConfigChangeRollsThePods(t *testing.T) {
	checksum := func(values string) string {
		d := only[appsv1.Deployment](t, renderChart(t, values), "Deployment")
		return d.Spec.Template.Annotations["checksum/config"]
	}
	cases := []struct {
		name, before, after string
		rolls               bool
	}{
		{"a changed config value rolls the pods", "config: {logLevel: info}", "config: {logLevel: debug}", true},
		{"a changed tunnel rolls the pods", "tunnels: {edge-eu: a}", "tunnels: {edge-eu: b}", true},
		{"an unchanged configuration keeps the pods", "config: {logLevel: debug}", "config: {logLevel: debug}", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, after := checksum(c.before), checksum(c.after)
			require.NotEmpty(t, before)
			assert.Equal(t, c.rolls, before != after)
		})
	}
}

// TestHelmChartRejectsBadValues checks the values the chart refuses to render.
func TestHelmChartRejectsBadValues(t *testing.T) {
	cases := []struct{ name, values, want string }{
		{"an unknown config key is refused", "config: {defaultTunel: main}", "config.defaultTunel is not a PIC setting"},
		{"tunnels under config is refused", "config: {tunnels: {edge-eu: a}}", "config.tunnels: set tunnels at the top level"},
		{"leaderElection under config is refused", "config: {leaderElection: {enabled: true}}", "config.leaderElection: set leaderElection at the top level"},
		{"a ServiceMonitor without metrics is refused", `{serviceMonitor: {enabled: true}, config: {metricsBindAddress: "0"}}`, "serviceMonitor.enabled needs metrics"},
		{"a ServiceMonitor without the metrics Service is refused", `{serviceMonitor: {enabled: true}, metricsService: {enabled: false}}`, "serviceMonitor.enabled needs the metrics Service"},
		{"serviceAccount.create=false without a name is refused", "serviceAccount: {create: false}", "serviceAccount.name is required"},
		{"an IngressClass without a name is refused", "ingressClasses: [{default: true}]", "ingressClasses[0].name is required"},
		{"a metrics address without a port is refused", "config: {metricsBindAddress: localhost}", "want host:port or :port"},
		{"the API key itself in the values is refused", "pangolin: {apiKey: keyid.secret}", "pangolin.apiKey is not a PIC setting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tryRenderChart(c.values)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestHelmChartNotes checks that NOTES.txt renders and names what was installed.
func TestHelmChartNotes(t *testing.T) {
	cases := []struct {
		name, values  string
		want, notWant []string
	}{
		{"the notes name the namespace, the class and the default tunnel", "", []string{"namespace pic-system", "  - pangolin\n", `"default" for class pangolin`}, nil},
		{"the notes name every class and tunnel alias", everythingValues, []string{"  - pangolin-edge-eu\n", `"pangolin-system/main" for class pangolin, and edge-eu, staging`, "--print-config --config=/etc/pic/config.yaml"}, nil},
		{"the notes warn when no class is created", "ingressClasses: []", []string{"No IngressClass was created"}, nil},
		{"the notes name the GatewayClass when httproute is enabled", gatewayAPIValues, []string{"Gateway API routes are published too", "controllerName pangolin.io/gateway-controller): pangolin;"}, nil},
		{"the notes warn when httproute is enabled without a GatewayClass", gatewayAPIValues + "gatewayClass: {create: false}", []string{"No GatewayClass was created"}, nil},
		{"the notes say when the service source runs", servicesValues, []string{"Services of type LoadBalancer of PIC's loadBalancerClass"}, []string{"Gateway API"}},
		{"the notes do not mention Services of type LoadBalancer by default", "", nil, []string{"LoadBalancer"}},
		{"the notes of direct mode name Pangolin, the site and the API key Secret", directValues, []string{
			"without\npangolin-operator: https://pangolin.example.com/v1, organization my-org.", `Pangolin site, named by its niceId: "default" for class pangolin.`,
			"the Secret pangolin-api-key of namespace pic-system", "Pangolin resource per host",
		}, []string{"PangolinTunnel", "PangolinResource"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, err := renderChartFiles(c.values)
			require.NoError(t, err)
			notes := files["pangolin-ingress-controller/templates/NOTES.txt"]
			for _, w := range c.want {
				assert.Contains(t, notes, w)
			}
			for _, w := range c.notWant {
				assert.NotContains(t, notes, w)
			}
		})
	}
}

// keyValues holds, for every key of PIC's configuration (the key table in
// internal/config/config.go), a valid value other than the chart's default. A new key
// fails TestEveryConfigurationKeyCanBeSetThroughValues until the chart and this table know it.
var keyValues = map[string]any{
	"defaultTunnel":               "pangolin-system/main",
	"tunnelNamespace":             "tunnels",
	"onlyListedTunnels":           true,
	"tunnelClassMapping":          "edge-eu=edge-eu-tunnel,edge-us=network-us/edge-us-tunnel",
	"tunnels":                     map[string]any{"staging": map[string]any{"name": "staging-tunnel", "allowedNamespaces": []any{"staging", "qa"}}},
	"backendScheme":               "https",
	"clusterDomain":               "cluster.example",
	"defaultSSO":                  false,
	"defaultBlockAccess":          true,
	"loadBalancerClass":           "example.com/pangolin",
	"loadBalancerAddress":         "203.0.113.7",
	"healthChecks":                true,
	"sources":                     []any{"ingress", "httproute"},
	"hostPolicy":                  []any{map[string]any{"namespaces": []any{"shop"}, "hosts": []any{"*.shop.example.com"}}},
	"watchNamespaces":             []any{"shop", "blog"},
	"secretNamespaces":            []any{"shop"},
	"resyncPeriod":                "90s",
	"maxConcurrentReconciles":     8,
	"kubeconfig":                  "/etc/pic/kubeconfig",
	"kubeAPIQPS":                  25.5,
	"kubeAPIBurst":                200,
	"metricsBindAddress":          ":9090",
	"healthProbeBindAddress":      ":9091",
	"pprofBindAddress":            "127.0.0.1:6060",
	"leaderElection.enabled":      false,
	"leaderElection.id":           "pic-lease",
	"leaderElection.namespace":    "pic-leases",
	"logLevel":                    "debug",
	"logFormat":                   "console",
	"sink":                        "pangolin",
	"pangolin.url":                "https://pangolin.example.com/v1",
	"pangolin.org":                "example",
	"pangolin.ownerId":            "cluster-a",
	"pangolin.driftPeriod":        "30m",
	"pangolin.maxConcurrentReads": 2,
	"pangolin.newtImage":          "registry.example/newt:1.15.0",
	"pangolin.newtReplicas":       2,
	"pangolin.newtCPURequest":     "20m",
	"pangolin.newtMemoryRequest":  "48Mi",
	"pangolin.newtCPULimit":       "1",
	"pangolin.newtMemoryLimit":    "256Mi",
	"pangolin.newtEndpoint":       "https://dashboard.example.com",
	"pangolin.newtOwner":          "pic-owner",
	"pangolin.caFile":             "", // set by withPangolinFiles
	"pangolin.apiKeyFile":         "", // set by withPangolinFiles
}

// withPangolinFiles points the pangolin.*File keys at files that exist (the loader reads
// them): a CA bundle and an API key.
func withPangolinFiles(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	server := httptest.NewTLSServer(http.NotFoundHandler())
	defer server.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	require.NoError(t, os.WriteFile(dir+"/ca.pem", ca, 0o600))
	require.NoError(t, os.WriteFile(dir+"/api-key", []byte("keyid0123456789.secret\n"), 0o600))
	keyValues["pangolin.caFile"], keyValues["pangolin.apiKeyFile"] = dir+"/ca.pem", dir+"/api-key"
}

// configKeys is every key of PIC's configuration, from internal/config itself: Load
// reports where each key's value came from.
func configKeys(t *testing.T) []string {
	t.Helper()
	_, origins, err := loadPIC(t, nil, nil)
	require.NoError(t, err)
	keys := make([]string, 0, len(origins))
	for k := range origins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.Contains(t, keys, "defaultTunnel")
	return keys
}

// valuesFor places a configuration key in the chart's values: tunnels and
// leaderElection are top-level values, every other key is under config.
func valuesFor(key string, v any) map[string]any {
	if key == "tunnels" {
		return map[string]any{"tunnels": v}
	}
	if child, ok := strings.CutPrefix(key, "pangolin."); ok {
		return map[string]any{"pangolin": map[string]any{child: v}}
	}
	if key == "sink" && v == "pangolin" {
		// The direct sink needs its connection settings to load at all.
		return map[string]any{"config": map[string]any{"sink": v}, "pangolin": pangolinValues()}
	}
	if child, ok := strings.CutPrefix(key, "leaderElection."); ok {
		return map[string]any{"leaderElection": map[string]any{child: v}}
	}
	return map[string]any{"config": map[string]any{key: v}}
}

// TestEveryConfigurationKeyCanBeSetThroughValues sets each key of internal/config through
// the chart's values, starts PIC's configuration loader on the rendered Deployment, and
// compares with the same value given in a configuration file.
func TestEveryConfigurationKeyCanBeSetThroughValues(t *testing.T) {
	withPangolinFiles(t)
	keys := configKeys(t)
	var tested []string
	for k := range keyValues {
		tested = append(tested, k)
	}
	sort.Strings(tested)
	require.Equal(t, keys, tested, "keyValues must hold a value for every key of internal/config/config.go (and the chart must accept it)")
	chartDefaults, _ := picConfig(t, renderChart(t, ""))

	for _, key := range keys {
		t.Run(key+" is set through values", func(t *testing.T) {
			v := keyValues[key]
			got, origins := picConfig(t, renderChart(t, toYAML(t, valuesFor(key, v))))
			assert.NotEqual(t, config.FromDefault, origins[key].Kind, "%s keeps its default", key)

			// The same value in a file, with the chart's leader election (on by default).
			file := map[string]any{"leaderElection": map[string]any{"enabled": true}}
			if child, ok := strings.CutPrefix(key, "leaderElection."); ok {
				file["leaderElection"].(map[string]any)[child] = v
			} else if child, ok := strings.CutPrefix(key, "pangolin."); ok {
				file["pangolin"] = map[string]any{child: v}
			} else {
				file[key] = v
			}
			if key == "sink" && v == "pangolin" {
				file["pangolin"] = pangolinValues()
			}
			path := t.TempDir() + "/config.yaml"
			require.NoError(t, os.WriteFile(path, []byte(toYAML(t, file)), 0o644))
			want, _, err := loadPIC(t, []string{"--config=" + path}, nil)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.NotEqual(t, chartDefaults, got, "the test value of %s is the chart's default", key)
		})
	}
	t.Run("every key is set at once", func(t *testing.T) {
		values := map[string]any{}
		for key, v := range keyValues {
			for top, sub := range valuesFor(key, v) {
				if m, ok := sub.(map[string]any); ok && top != "tunnels" {
					if values[top] == nil {
						values[top] = map[string]any{}
					}
					for k, x := range m {
						values[top].(map[string]any)[k] = x
					}
				} else {
					values[top] = sub
				}
			}
		}
		_, origins := picConfig(t, renderChart(t, toYAML(t, values)))
		for _, key := range keys {
			assert.NotEqual(t, config.FromDefault, origins[key].Kind, key)
		}
	})
}

// pangolinValues are the direct sink's connection settings from keyValues.
func pangolinValues() map[string]any {
	out := map[string]any{}
	for _, k := range []string{"url", "org", "apiKeyFile"} {
		out[k] = keyValues["pangolin."+k]
	}
	return out
}

// TestChartDocumentsEveryKey checks that values.yaml lists every configuration key and
// that the chart's list of accepted keys (templates/_helpers.tpl) is the same.
func TestChartDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(chartDir + "/values.yaml")
	require.NoError(t, err)
	var values struct {
		Config         map[string]any `json:"config"`
		Tunnels        map[string]any `json:"tunnels"`
		LeaderElection map[string]any `json:"leaderElection"`
		Pangolin       map[string]any `json:"pangolin"`
	}
	require.NoError(t, yaml.Unmarshal(data, &values))
	var configSection []string
	for k := range values.Config {
		configSection = append(configSection, k)
	}
	sort.Strings(configSection)

	helpers, err := os.ReadFile(chartDir + "/templates/_helpers.tpl")
	require.NoError(t, err)
	m := regexp.MustCompile(`define "pic.configKeys" -}}\n(.*)\n`).FindSubmatch(helpers)
	require.NotNil(t, m, "pic.configKeys in _helpers.tpl")
	accepted := strings.Fields(string(m[1]))
	sort.Strings(accepted)

	cases := []struct {
		name string
		test func(t *testing.T)
	}{
		{"values.yaml has a line for every configuration key", func(t *testing.T) {
			documented := slices.Clone(configSection)
			if values.Tunnels != nil {
				documented = append(documented, "tunnels")
			}
			for k := range values.LeaderElection {
				documented = append(documented, "leaderElection."+k)
			}
			for k := range values.Pangolin {
				if k != "apiKeySecret" && k != "caSecret" { // the ways to fill pangolin.apiKeyFile and caFile from Secrets
					documented = append(documented, "pangolin."+k)
				}
			}
			sort.Strings(documented)
			assert.Equal(t, configKeys(t), documented)
		}},
		{"the chart accepts exactly the config keys values.yaml lists", func(t *testing.T) {
			assert.Equal(t, configSection, accepted)
		}},
		{"values.yaml leaves every config key to PIC's built-in default", func(t *testing.T) {
			for k, v := range values.Config {
				assert.Nil(t, v, "config.%s: ~ keeps PIC's default; write the default in the comment", k)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, c.test)
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func portNames(c *corev1.Container) []string {
	var out []string
	for _, p := range c.Ports {
		out = append(out, p.Name)
	}
	return out
}
