package manifests

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// rendering is one way of installing PIC.
type rendering struct {
	name   string
	render func(t *testing.T) []*unstructured.Unstructured
	// gatewayAPI: PIC runs the httproute source, with the Gateway API ClusterRole and
	// the GatewayClass pangolin. Every other rendering must grant nothing of it.
	gatewayAPI bool
	// direct: PIC runs the direct sink (sink: pangolin), with its API key mounted from
	// a Secret and none of the pangolinresource sink's rules. Every other rendering runs
	// the pangolinresource sink, with them.
	direct bool
	// services: PIC runs the service source, with its ClusterRole (and, with the
	// pangolinresource sink, that sink's rule on Services). Every other rendering must
	// grant nothing on Services but reading them.
	services bool
	// readPods: the installation grants list on pods (config/rbac/health-checks), for
	// health checks that follow readiness probes: PIC derives them for every object
	// (healthChecks), or objects may ask with the annotation (the chart's rbac.readPods,
	// or config/rbac/health-checks as a resource). Every other rendering must grant
	// nothing on pods.
	readPods bool
	// managedSites: PIC creates sites and runs their Newt agents, with the Role of
	// config/rbac/managed-sites in its namespace. Every other rendering must grant
	// nothing on Deployments or Secrets.
	managedSites bool
	// readNamespaces: the installation grants read on namespaces for hostPolicy rules
	// with a namespaceSelector (config/rbac/host-policy). Every other rendering without
	// a Gateway API source must grant nothing on namespaces.
	readNamespaces bool
}

// sources are the sources PIC must load from the rendering, in the order the
// installations give them: ingress always, then httproute, then service.
func (r rendering) sources() []string {
	out := []string{"ingress"}
	if r.gatewayAPI {
		out = append(out, "httproute")
	}
	if r.services {
		out = append(out, "service")
	}
	return out
}

// everythingValues sets a value for every configuration key, tunnels, extra classes and a
// ServiceMonitor: the chart's most complete rendering.
const everythingValues = `
leaderElection: {enabled: true, id: pic-lease, namespace: pic-leases}
config:
  defaultTunnel: pangolin-system/main
  tunnelNamespace: pangolin-system
  tunnelClassMapping: edge-us=network-us/edge-us-tunnel
  backendScheme: https
  clusterDomain: cluster.example
  defaultSSO: false
  defaultBlockAccess: true
  sources: [ingress]
  watchNamespaces: [shop, blog]
  resyncPeriod: 90s
  maxConcurrentReconciles: 8
  kubeconfig: ""
  kubeAPIQPS: 25.5
  kubeAPIBurst: 200
  metricsBindAddress: ":9090"
  healthProbeBindAddress: ":9091"
  pprofBindAddress: "127.0.0.1:6060"
  logLevel: debug
  logFormat: console
tunnels:
  edge-eu: {name: edge-eu-tunnel}
  staging: {name: staging-tunnel, allowedNamespaces: [staging, qa]}
ingressClasses: [pangolin, pangolin-edge-eu, pangolin-edge-us, pangolin-staging]
serviceMonitor: {enabled: true}
`

// gatewayAPIValues enables the Gateway API source in the chart.
const gatewayAPIValues = `
config:
  sources: [ingress, httproute]
`

// servicesValues enables the service source in the chart; gatewayAPIServicesValues both
// opt-in sources.
const (
	servicesValues = `
config:
  sources: [ingress, service]
`
	gatewayAPIServicesValues = `
config:
  sources: [ingress, httproute, service]
`
)

// directValues runs the direct sink in the chart, its API key from the Secret
// pangolin-api-key of testSecrets, as docs/direct-mode.md tells; directGatewayAPIValues
// adds the httproute source.
const (
	directValues = `
config:
  sink: pangolin
` + directConnectionValues
	directGatewayAPIValues = `
config:
  sink: pangolin
  sources: [ingress, httproute]
` + directConnectionValues
	directServicesValues = `
config:
  sink: pangolin
  sources: [ingress, service]
` + directConnectionValues
	directHealthChecksValues = `
config:
  sink: pangolin
  healthChecks: true
` + directConnectionValues
	directManagedSiteValues = `
config:
  sink: pangolin
tunnels:
  edge:
    managedSite: true
` + directConnectionValues
	directReadPodsValues = `
config:
  sink: pangolin
rbac:
  readPods: true
` + directConnectionValues
	directConnectionValues = `
pangolin:
  url: https://pangolin.example.com/v1
  org: my-org
  ownerId: my-cluster
  apiKeySecret: {name: pangolin-api-key}
`
)

// kustomized renders the kustomization config/<dir>.
func kustomized(dir ...string) func(t *testing.T) []*unstructured.Unstructured {
	return func(t *testing.T) []*unstructured.Unstructured {
		return kustomizeBuild(t, repoPath(append([]string{"config"}, dir...)...))
	}
}

// kustomizedOverlay renders an overlay of the repository's kustomizations, written to a
// temporary directory: what a user's own kustomization combining them renders.
func kustomizedOverlay(resources []string, components ...string) func(t *testing.T) []*unstructured.Unstructured {
	return func(t *testing.T) []*unstructured.Unstructured {
		t.Helper()
		dir := t.TempDir()
		// kustomize refuses absolute paths to other kustomizations: relative ones, from dir.
		rel := func(paths []string) []string {
			out := make([]string, len(paths))
			for i, p := range paths {
				abs, err := filepath.Abs(repoPath(p))
				require.NoError(t, err)
				out[i], err = filepath.Rel(dir, abs)
				require.NoError(t, err)
			}
			return out
		}
		k := toYAML(t, map[string]any{
			"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
			"resources": rel(resources), "components": rel(components),
		})
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644))
		return kustomizeBuild(t, dir)
	}
}

// charted renders the chart with values.
func charted(values string) func(t *testing.T) []*unstructured.Unstructured {
	return func(t *testing.T) []*unstructured.Unstructured { return renderChart(t, values) }
}

var renderings = []rendering{
	{name: "kustomize config/default", render: kustomized("default")},
	{name: "kustomize config/samples/multi-tunnel", render: kustomized("samples", "multi-tunnel")},
	{name: "the Helm chart with its default values", render: charted("")},
	{name: "the Helm chart with every key, tunnels, extra IngressClasses and a ServiceMonitor", render: charted(everythingValues)},
	{name: "kustomize config/gateway-api", render: kustomized("gateway-api"), gatewayAPI: true},
	{name: "the Helm chart with config.sources [ingress, httproute]", render: charted(gatewayAPIValues), gatewayAPI: true},
	{name: "kustomize config/direct", render: kustomized("direct"), direct: true},
	{name: "the Helm chart with config.sink pangolin", render: charted(directValues), direct: true},
	{name: "kustomize config/direct-gateway-api", render: kustomized("direct-gateway-api"), gatewayAPI: true, direct: true},
	{name: "the Helm chart with config.sink pangolin and config.sources [ingress, httproute]", render: charted(directGatewayAPIValues), gatewayAPI: true, direct: true},
	{name: "kustomize config/services", render: kustomized("services"), services: true},
	{name: "the Helm chart with config.sources [ingress, service]", render: charted(servicesValues), services: true},
	{name: "kustomize config/direct-services", render: kustomized("direct-services"), direct: true, services: true},
	{name: "the Helm chart with config.sink pangolin and config.sources [ingress, service]", render: charted(directServicesValues), direct: true, services: true},
	// The combinations docs/services.md and config/components/services document: both
	// opt-in sources' --sources flags add up.
	{name: "kustomize config/gateway-api with the services component", render: kustomizedOverlay(
		[]string{"config/gateway-api", "config/rbac/pangolinresource/services"}, "config/components/services"), gatewayAPI: true, services: true},
	{name: "kustomize config/direct-gateway-api with the services component", render: kustomizedOverlay(
		[]string{"config/direct-gateway-api"}, "config/components/services"), gatewayAPI: true, direct: true, services: true},
	{name: "the Helm chart with config.sources [ingress, httproute, service]", render: charted(gatewayAPIServicesValues), gatewayAPI: true, services: true},
	// Health checks (docs/health-checks.md#permissions): the component on the direct
	// installs, where they apply, and on config/default, where PIC loads it and warns;
	// the RBAC alone for objects that ask with the annotation; the chart's two values.
	{name: "kustomize config/direct with the health-checks component", render: kustomizedOverlay(
		[]string{"config/direct"}, "config/components/health-checks"), direct: true, readPods: true},
	{name: "kustomize config/direct-services with the health-checks component", render: kustomizedOverlay(
		[]string{"config/direct-services"}, "config/components/health-checks"), direct: true, services: true, readPods: true},
	{name: "kustomize config/default with the health-checks component", render: kustomizedOverlay(
		[]string{"config/default"}, "config/components/health-checks"), readPods: true},
	{name: "kustomize config/direct with config/rbac/health-checks", render: kustomizedOverlay(
		[]string{"config/direct", "config/rbac/health-checks"}), direct: true, readPods: true},
	{name: "the Helm chart with config.sink pangolin and config.healthChecks", render: charted(directHealthChecksValues), direct: true, readPods: true},
	{name: "the Helm chart with config.sink pangolin and rbac.readPods", render: charted(directReadPodsValues), direct: true, readPods: true},
	// Managed sites (docs/direct-mode.md#managed-sites): the component on config/direct,
	// and a managed tunnel in the chart's values.
	{name: "kustomize config/direct with the managed-site component", render: kustomizedOverlay(
		[]string{"config/direct"}, "config/components/managed-site"), direct: true, managedSites: true},
	{name: "the Helm chart with config.sink pangolin and a managed tunnel", render: charted(directManagedSiteValues), direct: true, managedSites: true},
	// A hostPolicy that selects namespaces by labels (docs/multi-tenancy.md#rbac): the
	// component on config/direct, and a rule with a namespaceSelector in the chart.
	{name: "kustomize config/direct with the host-policy component", render: kustomizedOverlay(
		[]string{"config/direct"}, "config/components/host-policy"), direct: true, readNamespaces: true},
	{name: "the Helm chart with a hostPolicy namespaceSelector", render: charted(hostPolicySelectorValues), readNamespaces: true},
}

// TestInstallations checks what must hold in every way of installing PIC.
func TestInstallations(t *testing.T) {
	roleFile := readRoleFile(t)
	checks := []struct {
		name  string
		check func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{"the ClusterRoles are exactly the files of config/rbac for PIC's sink and sources, each with exactly its rules", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, clusterRoleProblems(t, objs))
		}},
		{"the pangolinresource sink's rules are rendered if and only if PIC runs that sink", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			grants := pangolinResourceGrants(allRules(t, objs))
			assert.Equal(t, cfg.Sink == pangolinResourceSink, len(grants) > 0, "sink %s, pangolinresource rules %v", cfg.Sink, grants)
		}},
		{"the leader-election Role grants exactly the rules of config/rbac/role.yaml", func(t *testing.T, objs []*unstructured.Unstructured) {
			r := leaderElectionRole[rbacv1.Role](t, objs, "Role")
			assert.Equal(t, ruleSet(roleFile.role), ruleSet(r.Rules))
		}},
		{"the direct sink, and it alone, may keep its access record: get and update on the ConfigMaps of its parts, get and delete on the one of earlier releases, create on ConfigMaps, in PIC's namespace", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			var roles, bindings []*unstructured.Unstructured
			for _, o := range ofKind(objs, "Role") {
				if strings.HasSuffix(o.GetName(), accessRecordSuffix) {
					roles = append(roles, o)
				}
			}
			for _, o := range ofKind(objs, "RoleBinding") {
				if strings.HasSuffix(o.GetName(), accessRecordSuffix) {
					bindings = append(bindings, o)
				}
			}
			if cfg.Sink != directSink {
				assert.Empty(t, roles)
				assert.Empty(t, bindings)
				return
			}
			require.Len(t, roles, 1)
			require.Len(t, bindings, 1)
			r := decodeStrict[rbacv1.Role](t, roles[0])
			rb := decodeStrict[rbacv1.RoleBinding](t, bindings[0])
			assert.Equal(t, d.Namespace, r.Namespace)
			assert.Equal(t, d.Namespace, rb.Namespace)
			assert.Equal(t, ruleSet([]rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: recordParts(cfg.Pangolin.OwnerID), Verbs: []string{"get", "update"}},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"pic-access-" + cfg.Pangolin.OwnerID}, Verbs: []string{"get", "delete"}},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
			}), ruleSet(r.Rules))
			assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name}, rb.RoleRef)
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: d.Namespace}}, rb.Subjects)
		}},
		{"no rule has a wildcard", func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, rule := range allRules(t, objs) {
				for _, field := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames, rule.NonResourceURLs} {
					for _, v := range field {
						assert.NotContains(t, v, "*", "rule %+v", rule)
					}
				}
			}
		}},
		{"no rule mentions secrets, but the managed sites' Role (TestManagedSitesAreOptIn)", func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, rule := range allRules(t, withoutManagedSitesRole(objs)) {
				for _, r := range rule.Resources {
					assert.False(t, r == "secrets" || strings.HasPrefix(r, "secrets/"), "rule %+v grants %s", rule, r)
				}
			}
		}},
		{"no object is a Secret", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "Secret"))
		}},
		{"every object decodes strictly into its Kubernetes type", func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, o := range objs {
				switch o.GetKind() {
				case "Namespace":
					decodeStrict[corev1.Namespace](t, o)
				case "ServiceAccount":
					decodeStrict[corev1.ServiceAccount](t, o)
				case "ConfigMap":
					decodeStrict[corev1.ConfigMap](t, o)
				case "Service":
					decodeStrict[corev1.Service](t, o)
				case "Deployment":
					decodeStrict[appsv1.Deployment](t, o)
				case "ClusterRole":
					decodeStrict[rbacv1.ClusterRole](t, o)
				case "ClusterRoleBinding":
					decodeStrict[rbacv1.ClusterRoleBinding](t, o)
				case "Role":
					decodeStrict[rbacv1.Role](t, o)
				case "RoleBinding":
					decodeStrict[rbacv1.RoleBinding](t, o)
				case "IngressClass":
					decodeStrict[networkingv1.IngressClass](t, o)
				case "GatewayClass":
					decodeStrict[gatewayv1.GatewayClass](t, o)
				case "ServiceMonitor":
				default:
					t.Errorf("unexpected %s %s", o.GetKind(), o.GetName())
				}
			}
		}},
		{"the direct sink's API key is the user's Secret, mounted read-only as a file, and in no variable", func(t *testing.T, objs []*unstructured.Unstructured) {
			d := only[appsv1.Deployment](t, objs, "Deployment")
			c := manager(t, d)
			for _, e := range c.Env {
				assert.NotEqual(t, config.EnvAPIKey, e.Name, "the API key in a variable: mount it from a Secret and set pangolin.apiKeyFile")
				assert.NotContains(t, e.Value, testAPIKey)
			}
			cfg, _ := picConfig(t, objs)
			if cfg.Sink != directSink {
				return
			}
			assert.NotEmpty(t, cfg.Pangolin.APIKeyFile, "pangolin.apiKeyFile")
			assert.Equal(t, testAPIKey, string(cfg.Pangolin.APIKey), "PIC reads its API key from the Secret the Deployment mounts")
			secretMounts := 0
			for _, m := range c.VolumeMounts {
				i := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
				if i >= 0 && d.Spec.Template.Spec.Volumes[i].Secret != nil {
					secretMounts++
					assert.True(t, m.ReadOnly, "the Secret volume %s is mounted read-only", m.Name)
				}
			}
			assert.Positive(t, secretMounts, "a Secret volume is mounted")
		}},
		{"Go's memory limit follows the container's memory limit", func(t *testing.T, objs []*unstructured.Unstructured) {
			d := only[appsv1.Deployment](t, objs, "Deployment")
			for _, c := range d.Spec.Template.Spec.Containers {
				_, limited := c.Resources.Limits[corev1.ResourceMemory]
				require.True(t, limited, "container %s has a memory limit", c.Name)
				i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
				if assert.GreaterOrEqual(t, i, 0, "container %s sets GOMEMLIMIT", c.Name) && assert.NotNil(t, c.Env[i].ValueFrom) {
					ref := c.Env[i].ValueFrom.ResourceFieldRef
					if assert.NotNil(t, ref, "GOMEMLIMIT from a resourceFieldRef") {
						assert.Equal(t, "limits.memory", ref.Resource)
						assert.True(t, ref.Divisor.IsZero() || ref.Divisor.Value() == 1, "in bytes: Go reads a bare number as bytes")
					}
				}
			}
		}},
		{"the pod and its container run as non-root, on a read-only root filesystem, without capabilities", func(t *testing.T, objs []*unstructured.Unstructured) {
			d := only[appsv1.Deployment](t, objs, "Deployment")
			pod := d.Spec.Template.Spec
			psc := pod.SecurityContext
			require.NotNil(t, psc, "pod securityContext")
			assert.Equal(t, new(true), psc.RunAsNonRoot, "pod runAsNonRoot")
			require.NotNil(t, psc.RunAsUser, "pod runAsUser")
			assert.NotZero(t, *psc.RunAsUser, "pod runAsUser")
			assert.False(t, pod.HostNetwork || pod.HostPID || pod.HostIPC, "host namespaces")
			assert.Equal(t, new(true), pod.AutomountServiceAccountToken, "PIC needs its ServiceAccount token")
			require.NotEmpty(t, pod.Containers)
			for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
				sc := c.SecurityContext
				require.NotNil(t, sc, "container %s securityContext", c.Name)
				nonRoot, user := sc.RunAsNonRoot, sc.RunAsUser
				if nonRoot == nil {
					nonRoot = psc.RunAsNonRoot
				}
				if user == nil {
					user = psc.RunAsUser
				}
				assert.Equal(t, new(true), nonRoot, "container %s runAsNonRoot", c.Name)
				if assert.NotNil(t, user, "container %s runAsUser", c.Name) {
					assert.NotZero(t, *user, "container %s runAsUser", c.Name)
				}
				assert.Equal(t, new(true), sc.ReadOnlyRootFilesystem, "container %s readOnlyRootFilesystem", c.Name)
				assert.Equal(t, new(false), sc.AllowPrivilegeEscalation, "container %s allowPrivilegeEscalation", c.Name)
				assert.NotEqual(t, new(true), sc.Privileged, "container %s privileged", c.Name)
				if assert.NotNil(t, sc.Capabilities, "container %s capabilities", c.Name) {
					assert.Contains(t, sc.Capabilities.Drop, corev1.Capability("ALL"), "container %s drops", c.Name)
					assert.Empty(t, sc.Capabilities.Add, "container %s adds", c.Name)
				}
				seccomp := sc.SeccompProfile
				if seccomp == nil {
					seccomp = psc.SeccompProfile
				}
				if assert.NotNil(t, seccomp, "container %s seccompProfile", c.Name) {
					assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, seccomp.Type)
				}
			}
		}},
		{"PIC loads the rendered configuration without error", func(t *testing.T, objs []*unstructured.Unstructured) {
			picConfig(t, objs)
		}},
		{"the probes ask /healthz and /readyz on PIC's health probe port", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			c := manager(t, d)
			want := addrPort(t, cfg.HealthProbeBindAddress)
			for _, p := range []struct {
				probe *corev1.Probe
				path  string
			}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
				require.NotNil(t, p.probe, "probe for %s", p.path)
				require.NotNil(t, p.probe.HTTPGet, "probe for %s", p.path)
				assert.Equal(t, p.path, p.probe.HTTPGet.Path)
				assert.Equal(t, want, containerPort(t, c, p.probe.HTTPGet.Port), "port of the %s probe", p.path)
			}
		}},
		{"the metrics Service reaches PIC's metrics port", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			c := manager(t, d)
			svc := only[corev1.Service](t, objs, "Service")
			assert.Equal(t, d.Namespace, svc.Namespace)
			for k, v := range svc.Spec.Selector {
				assert.Equal(t, v, d.Spec.Template.Labels[k], "the Service selects pod label %s", k)
			}
			require.Len(t, svc.Spec.Ports, 1)
			assert.Equal(t, "metrics", svc.Spec.Ports[0].Name)
			assert.Equal(t, addrPort(t, cfg.MetricsBindAddress), containerPort(t, c, svc.Spec.Ports[0].TargetPort))
		}},
		{"the IngressClass pangolin is served by pangolin.io/ingress-controller and is not the default", func(t *testing.T, objs []*unstructured.Unstructured) {
			o := named(objs, "IngressClass", "", "pangolin")
			require.NotNil(t, o, "IngressClass pangolin")
			ic := decodeStrict[networkingv1.IngressClass](t, o)
			assert.Equal(t, ingressController, ic.Spec.Controller)
			assert.NotEqual(t, "true", ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass])
			for _, o := range ofKind(objs, "IngressClass") {
				assert.Equal(t, ingressController, decodeStrict[networkingv1.IngressClass](t, o).Spec.Controller, o.GetName())
			}
		}},
		{"every tunnel alias PIC loads has its IngressClass pangolin-<alias>, and no class is rendered twice", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			classes := names(ofKind(objs, "IngressClass"))
			for alias := range cfg.Tunnels.Aliases {
				assert.Contains(t, classes, pic.ClassPrefix+alias, "the alias %s has no IngressClass: its Ingresses would be ignored", alias)
			}
			seen := map[string]bool{}
			for _, name := range classes {
				assert.False(t, seen[name], "IngressClass %s is rendered twice", name)
				seen[name] = true
			}
		}},
		{"each ClusterRole is bound, once, to the ServiceAccount the pod runs as, and nothing else is bound", func(t *testing.T, objs []*unstructured.Unstructured) {
			d := only[appsv1.Deployment](t, objs, "Deployment")
			sa := d.Spec.Template.Spec.ServiceAccountName
			require.NotEmpty(t, sa)
			if o := ofKind(objs, "ServiceAccount"); assert.Len(t, o, 1) {
				assert.Equal(t, []string{d.Namespace, sa}, []string{o[0].GetNamespace(), o[0].GetName()})
			}
			roles := names(ofKind(objs, "ClusterRole"))
			var bound []string
			for _, o := range ofKind(objs, "ClusterRoleBinding") {
				crb := decodeStrict[rbacv1.ClusterRoleBinding](t, o)
				assert.Contains(t, roles, crb.RoleRef.Name, "ClusterRoleBinding %s binds a ClusterRole that is not rendered", crb.Name)
				assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: crb.RoleRef.Name}, crb.RoleRef, crb.Name)
				assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: d.Namespace}}, crb.Subjects, crb.Name)
				bound = append(bound, crb.RoleRef.Name)
			}
			assert.ElementsMatch(t, roles, bound, "every ClusterRole bound exactly once")
		}},
		{"cluster-scoped objects have no namespace", func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, o := range objs {
				switch o.GetKind() {
				case "Namespace", "ClusterRole", "ClusterRoleBinding", "IngressClass", "GatewayClass":
					assert.Empty(t, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
				}
			}
		}},
		{"the Gateway API rules and GatewayClass are rendered if and only if PIC runs a Gateway API source", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			gatewayAPI := runsGatewayAPI(cfg.Sources)
			assert.Equal(t, gatewayAPI, len(renderedGatewayAPIGrants(t, objs)) > 0, "Gateway API rules %v, sources %v", renderedGatewayAPIGrants(t, objs), cfg.Sources)
			classes := ofKind(objs, "GatewayClass")
			if !gatewayAPI {
				assert.Empty(t, classes)
				return
			}
			for _, o := range classes {
				assert.Equal(t, pic.GatewayControllerName, string(decodeStrict[gatewayv1.GatewayClass](t, o).Spec.ControllerName), o.GetName())
			}
		}},
		{"the service source's rules are rendered if and only if PIC runs the service source", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			grants := servicesGrants(allRules(t, objs))
			assert.Equal(t, needsRole(cfg.Sources, servicesRole), len(grants) > 0, "rules on Services beyond reading them %v, sources %v", grants, cfg.Sources)
		}},
		{"the leader-election Lease is in the namespace where the Role grants it", func(t *testing.T, objs []*unstructured.Unstructured) {
			cfg, _ := picConfig(t, objs)
			require.True(t, cfg.LeaderElection.Enabled, "leader election is on in every installation")
			d := only[appsv1.Deployment](t, objs, "Deployment")
			ns := cfg.LeaderElection.Namespace
			if ns == "" {
				ns = d.Namespace
			}
			r := leaderElectionRole[rbacv1.Role](t, objs, "Role")
			rb := leaderElectionRole[rbacv1.RoleBinding](t, objs, "RoleBinding")
			assert.Equal(t, ns, r.Namespace, "the Role's namespace")
			assert.Equal(t, ns, rb.Namespace, "the RoleBinding's namespace")
			assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name}, rb.RoleRef)
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: d.Namespace}}, rb.Subjects)
		}},
	}
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) { c.check(t, objs) })
			}
		})
	}
}

// TestRuleComparisonCatchesChanges makes sure the rule comparison above would fail if a
// rendering granted one verb or one resource more.
func TestRuleComparisonCatchesChanges(t *testing.T) {
	// Every rule of the PangolinResource install: the CRD rule has resource names.
	base := slices.Concat(readRoleFile(t).clusterRole, readClusterRoleFile(t, "pangolinresource", "role.yaml").Rules)
	cases := []struct {
		name   string
		change func([]rbacv1.PolicyRule) []rbacv1.PolicyRule
	}{
		{"an added verb is a difference", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			r[0].Verbs = append(r[0].Verbs, "delete")
			return r
		}},
		{"an added resource is a difference", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			r[1].Resources = append(r[1].Resources, "endpoints")
			return r
		}},
		{"an added rule is a difference", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			return append(r, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}})
		}},
		{"a dropped resource name is a difference", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			for i := range r {
				r[i].ResourceNames = nil
			}
			return r
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changed := make([]rbacv1.PolicyRule, len(base))
			for i := range base {
				changed[i] = *base[i].DeepCopy()
			}
			assert.NotEqual(t, ruleSet(base), ruleSet(c.change(changed)))
		})
	}
}

type roleFile struct {
	clusterRoleName   string
	clusterRole, role []rbacv1.PolicyRule
}

// gatewayRoleNameSuffix turns the name of PIC's main ClusterRole into the name of its
// Gateway API ClusterRole, in config/rbac and in the chart.
const gatewayRoleNameSuffix = "-gateway-api"

// pangolinResourceSink is the name of the default sink, the one that writes
// PangolinResources and needs the rules of config/rbac/pangolinresource.
const pangolinResourceSink = "pangolinresource"

// clusterRoleFile is one of PIC's ClusterRoles, one file of config/rbac.
type clusterRoleFile struct {
	suffix string
	path   []string // under config/rbac
	// in says whether an installation whose PIC runs with cfg must render the
	// ClusterRole.
	in func(cfg *config.Config) bool
	// optIn: an installation may also render the ClusterRole when cfg does not need it,
	// because the user granted it ahead (list on pods for objects that ask for health
	// checks by annotation, while healthChecks stays off). PIC's configuration cannot
	// tell such an opt-in from a leak: TestHealthChecksAreOptIn checks each rendering
	// against what it says it opts into.
	optIn bool
}

// clusterRoleFiles are PIC's ClusterRoles, one file of config/rbac each: the rules every
// installation needs, those the sink and the sources need on top (adapterRoleFiles, as
// the adapters declare them), and those of settings of the core. In config/rbac and in
// the chart, each is named like the main ClusterRole (that is, like the Deployment)
// followed by its suffix.
var clusterRoleFiles = slices.Concat(
	[]clusterRoleFile{{"", []string{"role.yaml"}, func(*config.Config) bool { return true }, false}},
	adapterRoleFiles(),
	[]clusterRoleFile{
		{healthChecksRoleNameSuffix, []string{"health-checks", "role.yaml"}, func(cfg *config.Config) bool { return cfg.HealthChecks }, true},
		// A kustomize install's configuration file is the user's: the component grants
		// ahead of the hostPolicy it will hold.
		{hostPolicyRoleNameSuffix, []string{"host-policy", "role.yaml"}, func(cfg *config.Config) bool { return cfg.HostPolicy.NeedsLabels() }, true},
	},
)

// wantClusterRoles are the ClusterRoles an installation must render, by name, with their
// rules: those of clusterRoleFiles for the configuration PIC loads from the rendered
// Deployment. may are those it may render besides, the opt-in ones.
func wantClusterRoles(t *testing.T, objs []*unstructured.Unstructured) (want, may map[string][]rbacv1.PolicyRule) {
	t.Helper()
	cfg, _ := picConfig(t, objs)
	base := only[appsv1.Deployment](t, objs, "Deployment").Name
	mainName := readRoleFile(t).clusterRoleName
	want, may = map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	for _, f := range clusterRoleFiles {
		cr := readClusterRoleFile(t, f.path...)
		require.Equal(t, mainName+f.suffix, cr.Name, "the name of config/rbac/%s's ClusterRole", filepath.Join(f.path...))
		switch {
		case f.in(cfg):
			want[base+f.suffix] = cr.Rules
		case f.optIn:
			may[base+f.suffix] = cr.Rules
		}
	}
	return want, may
}

// clusterRoleProblems compares the rendered ClusterRoles with wantClusterRoles: a
// ClusterRole missing, unexpected, rendered twice, aggregated, or whose rules differ
// from its file's.
func clusterRoleProblems(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	want, may := wantClusterRoles(t, objs)
	var problems []string
	seen := map[string]bool{}
	for _, o := range ofKind(objs, "ClusterRole") {
		cr := decodeStrict[rbacv1.ClusterRole](t, o)
		if cr.AggregationRule != nil {
			problems = append(problems, fmt.Sprintf("ClusterRole %s is aggregated: it would gather rules from elsewhere", cr.Name))
		}
		rules, ok := want[cr.Name]
		if !ok {
			rules, ok = may[cr.Name]
		}
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("unexpected ClusterRole %s (want %v)", cr.Name, slices.Sorted(maps.Keys(want))))
			continue
		case seen[cr.Name]:
			problems = append(problems, fmt.Sprintf("ClusterRole %s twice", cr.Name))
		}
		seen[cr.Name] = true
		if got, w := ruleSet(cr.Rules), ruleSet(rules); !reflect.DeepEqual(got, w) {
			problems = append(problems, fmt.Sprintf("ClusterRole %s grants %v, want %v", cr.Name, got, w))
		}
	}
	for name := range want {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("ClusterRole %s is not rendered", name))
		}
	}
	return problems
}

// accessRecordSuffix ends the name of the direct sink's Role on its access record.
const accessRecordSuffix = "-access-record"

// leaderElectionRole is the one Role, or RoleBinding, of kind that is not the direct
// sink's access record.
func leaderElectionRole[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range ofKind(objs, kind) {
		if !strings.HasSuffix(o.GetName(), accessRecordSuffix) && !strings.HasSuffix(o.GetName(), managedSitesRoleSuffix) {
			found = append(found, o)
		}
	}
	require.Len(t, found, 1, "leader-election objects of kind %s", kind)
	return decodeStrict[T](t, found[0])
}

// readRoleFile reads config/rbac/role.yaml, the reference of the permissions every
// installation grants.
func readRoleFile(t *testing.T) roleFile {
	t.Helper()
	data, err := os.ReadFile(repoPath("config", "rbac", "role.yaml"))
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	cr := only[rbacv1.ClusterRole](t, objs, "ClusterRole")
	return roleFile{
		clusterRoleName: cr.Name,
		clusterRole:     cr.Rules,
		role:            only[rbacv1.Role](t, objs, "Role").Rules,
	}
}

// readClusterRoleFile reads the ClusterRole of a file under config/rbac. Besides
// role.yaml, which also holds the leader-election Role, each file holds its ClusterRole
// only.
func readClusterRoleFile(t *testing.T, path ...string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(repoPath(append([]string{"config", "rbac"}, path...)...))
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	if !slices.Equal(path, []string{"role.yaml"}) {
		require.Len(t, objs, 1, "config/rbac/%s holds the ClusterRole only", filepath.Join(path...))
	}
	return only[rbacv1.ClusterRole](t, objs, "ClusterRole")
}

// readGatewayRoleFile reads config/rbac/gateway-api/role.yaml, the reference of what the
// httproute source needs on top of role.yaml.
func readGatewayRoleFile(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	return readClusterRoleFile(t, "gateway-api", "role.yaml")
}

// ruleSet flattens rules into "group resource [names]" → sorted verbs, so that two rule
// lists compare equal when they grant the same, however they are grouped.
// recordParts are the ConfigMaps of the direct sink's access record
// (pangolin.AccessRecordPartName), whose names the RBAC lists.
func recordParts(ownerID string) []string {
	var out []string
	for n := range 16 {
		out = append(out, fmt.Sprintf("pic-access-%s.%d", ownerID, n))
	}
	return out
}

func ruleSet(rules []rbacv1.PolicyRule) map[string][]string {
	out := map[string][]string{}
	add := func(key string, verbs []string) {
		for _, v := range verbs {
			if !slices.Contains(out[key], v) {
				out[key] = append(out[key], v)
			}
		}
		slices.Sort(out[key])
	}
	for _, r := range rules {
		names := ""
		if len(r.ResourceNames) > 0 {
			n := slices.Clone(r.ResourceNames)
			slices.Sort(n)
			names = " names=" + strings.Join(n, ",")
		}
		for _, g := range r.APIGroups {
			if g == "" {
				g = "core"
			}
			for _, res := range r.Resources {
				add(fmt.Sprintf("%s %s%s", g, res, names), r.Verbs)
			}
		}
		for _, u := range r.NonResourceURLs {
			add("url "+u, r.Verbs)
		}
	}
	return out
}

// clusterRoleRules are the rules of every rendered ClusterRole.
func clusterRoleRules(t *testing.T, objs []*unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	var rules []rbacv1.PolicyRule
	for _, o := range ofKind(objs, "ClusterRole") {
		rules = append(rules, decodeStrict[rbacv1.ClusterRole](t, o).Rules...)
	}
	return rules
}

// allRules is every rule of every Role and ClusterRole.
func allRules(t *testing.T, objs []*unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	rules := clusterRoleRules(t, objs)
	for _, o := range ofKind(objs, "Role") {
		rules = append(rules, decodeStrict[rbacv1.Role](t, o).Rules...)
	}
	require.NotEmpty(t, rules)
	return rules
}

// addrPort is the port of a bind address such as ":8081".
func addrPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err, "address %q", addr)
	n, err := strconv.ParseInt(port, 10, 32)
	require.NoError(t, err)
	return int32(n)
}

// containerPort resolves a port number or name of the container.
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	require.Failf(t, "no such port", "container %s has no port named %s", c.Name, p.StrVal)
	return 0
}
