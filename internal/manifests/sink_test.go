package manifests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
)

// directSink is the name of the sink that talks to Pangolin's API (config/direct).
const directSink = "pangolin"

// pangolinResourceGrants lists what the rules grant that only the pangolinresource sink
// needs: anything on tunnel.pangolin.io (PangolinResources, PangolinTunnels) or on
// CustomResourceDefinitions, and the finalizers of source objects (owner references
// with blockOwnerDeletion).
func pangolinResourceGrants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == tunnelv1alpha1.GroupVersion.Group || g == apiextensionsv1.GroupName || strings.HasSuffix(res, "/finalizers") {
					out = append(out, fmt.Sprintf("%s %s %v", g, res, r.Verbs))
				}
			}
		}
	}
	return out
}

// withRule is a copy of objs in which the ClusterRole name grants rule too.
func withRule(t *testing.T, objs []*unstructured.Unstructured, name string, rule rbacv1.PolicyRule) []*unstructured.Unstructured {
	t.Helper()
	out := make([]*unstructured.Unstructured, len(objs))
	found := false
	for i, o := range objs {
		out[i] = o.DeepCopy()
		if o.GetKind() != "ClusterRole" || o.GetName() != name {
			continue
		}
		cr := decodeStrict[rbacv1.ClusterRole](t, o)
		cr.Rules = append(cr.Rules, rule)
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cr)
		require.NoError(t, err)
		out[i] = &unstructured.Unstructured{Object: m}
		found = true
	}
	require.True(t, found, "ClusterRole %s", name)
	return out
}

// TestSinkRules checks that each installation runs the sink it is meant for, and that
// only the installations of the pangolinresource sink grant its rules: a direct-mode
// installation grants exactly config/rbac/role.yaml (and config/rbac/gateway-api with
// the httproute source, config/rbac/services with the service source,
// config/rbac/health-checks when it opts into health checks, config/rbac/host-policy
// when its hostPolicy selects namespaces by labels), nothing on
// Pangolin's CRDs and nothing on Secrets.
func TestSinkRules(t *testing.T) {
	core := readRoleFile(t).clusterRole
	pangolinResourceRole := readClusterRoleFile(t, "pangolinresource", "role.yaml")
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			base := only[appsv1.Deployment](t, objs, "Deployment").Name
			sinkRole := named(objs, "ClusterRole", "", base+"-"+pangolinResourceSink)
			grants := pangolinResourceGrants(allRules(t, objs))
			if !r.direct {
				assert.Equal(t, pangolinResourceSink, cfg.Sink)
				require.NotNil(t, sinkRole, "ClusterRole %s-%s", base, pangolinResourceSink)
				assert.Equal(t, ruleSet(pangolinResourceRole.Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, sinkRole).Rules))
				assert.NotEmpty(t, grants)
				return
			}
			assert.Equal(t, directSink, cfg.Sink)
			assert.Nil(t, sinkRole, "the pangolinresource sink's ClusterRole is in a direct-mode installation")
			assert.Empty(t, grants, "a direct-mode installation grants the pangolinresource sink's rules")
			want := slices.Clone(core)
			if r.gatewayAPI {
				want = append(want, readGatewayRoleFile(t).Rules...)
			}
			if r.services {
				want = append(want, readClusterRoleFile(t, "services", "role.yaml").Rules...)
			}
			if r.readPods {
				want = append(want, readClusterRoleFile(t, "health-checks", "role.yaml").Rules...)
			}
			if r.readNamespaces {
				want = append(want, readClusterRoleFile(t, "host-policy", "role.yaml").Rules...)
			}
			assert.Equal(t, ruleSet(want), ruleSet(clusterRoleRules(t, objs)), "the ClusterRoles of a direct-mode installation")
		})
	}

	// The checks above and TestInstallations' must fail when a direct-mode installation
	// grants what only the other sink needs, or the other installation lacks it.
	leaks := []struct {
		name string
		leak func(t *testing.T, objs []*unstructured.Unstructured, mainRole string) []*unstructured.Unstructured
	}{
		{"a pangolinresources rule added to the main ClusterRole", func(t *testing.T, objs []*unstructured.Unstructured, mainRole string) []*unstructured.Unstructured {
			return withRule(t, objs, mainRole, rbacv1.PolicyRule{APIGroups: []string{tunnelv1alpha1.GroupVersion.Group}, Resources: []string{"pangolinresources"}, Verbs: []string{"get"}})
		}},
		{"a pangolintunnels rule added to the main ClusterRole", func(t *testing.T, objs []*unstructured.Unstructured, mainRole string) []*unstructured.Unstructured {
			return withRule(t, objs, mainRole, rbacv1.PolicyRule{APIGroups: []string{tunnelv1alpha1.GroupVersion.Group}, Resources: []string{"pangolintunnels"}, Verbs: []string{"list"}})
		}},
		{"config/rbac/pangolinresource added", func(t *testing.T, objs []*unstructured.Unstructured, _ string) []*unstructured.Unstructured {
			return append(slices.Clone(objs), kustomizeBuild(t, repoPath("config", "rbac", "pangolinresource"))...)
		}},
	}
	for _, r := range renderings {
		if !r.direct || r.gatewayAPI {
			continue
		}
		t.Run("the checks would catch leaks into "+r.name, func(t *testing.T) {
			objs := r.render(t)
			require.Empty(t, clusterRoleProblems(t, objs))
			require.Empty(t, pangolinResourceGrants(allRules(t, objs)))
			mainRole := only[appsv1.Deployment](t, objs, "Deployment").Name
			for _, c := range leaks {
				leaked := c.leak(t, objs, mainRole)
				assert.NotEmpty(t, clusterRoleProblems(t, leaked), c.name)
				assert.NotEmpty(t, pangolinResourceGrants(allRules(t, leaked)), c.name)
			}
			secrets := withRule(t, objs, mainRole, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}})
			assert.NotEmpty(t, clusterRoleProblems(t, secrets), "a Secrets rule added to the main ClusterRole")
		})
	}
	mainRole := readRoleFile(t).clusterRoleName
	t.Run("the checks would catch config/default without the pangolinresource sink's ClusterRole", func(t *testing.T) {
		objs := slices.DeleteFunc(kustomizeBuild(t, repoPath("config", "default")), func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "ClusterRole" && o.GetName() == mainRole+"-"+pangolinResourceSink
		})
		assert.NotEmpty(t, clusterRoleProblems(t, objs))
	})
	t.Run("the check would catch any pangolinresource sink rule moved to config/rbac/role.yaml", func(t *testing.T) {
		rules := slices.Concat(pangolinResourceRole.Rules, readClusterRoleFile(t, "pangolinresource", "gateway-api", "role.yaml").Rules,
			readClusterRoleFile(t, "pangolinresource", "services", "role.yaml").Rules)
		require.NotEmpty(t, rules)
		for _, rule := range rules {
			assert.NotEmpty(t, pangolinResourceGrants(append(slices.Clone(core), rule)), "rule %+v", rule)
		}
	})
	t.Run("the files of config/rbac grant nothing twice", func(t *testing.T) {
		// Read on namespaces is needed by the Gateway API sources and by a host policy
		// with a namespaceSelector, each without the other: both files grant it.
		shared := map[string][]string{"core namespaces": {"gateway-api/role.yaml", "host-policy/role.yaml"}}
		granted := map[string]string{}
		for _, f := range clusterRoleFiles {
			path := strings.Join(f.path, "/")
			for key := range ruleSet(readClusterRoleFile(t, f.path...).Rules) {
				if other, twice := granted[key]; twice && !(slices.Contains(shared[key], other) && slices.Contains(shared[key], path)) {
					t.Errorf("%s is granted by config/rbac/%s and config/rbac/%s", key, other, path)
				}
				granted[key] = path
			}
		}
	})
}

// TestHelmChartSink checks when the chart renders the pangolinresource sink's
// ClusterRoles: exactly when the configuration PIC loads runs that sink, however the sink
// is chosen.
func TestHelmChartSink(t *testing.T) {
	fullname := releaseName + "-pangolin-ingress-controller"
	cases := []struct {
		name, values string
		want         bool // the pangolinresource sink
	}{
		{"the default values run the pangolinresource sink", "", true},
		{"config.sink pangolinresource", "config: {sink: pangolinresource}", true},
		{"config.sink pangolin", directValues, false},
		{"--sink=pangolin in extraArgs", directConnectionValues + "extraArgs: [--sink=pangolin]", false},
		{"--sink pangolin in extraArgs", directConnectionValues + "extraArgs: [--sink, pangolin]", false},
		{"the last --sink in extraArgs wins", directConnectionValues + "extraArgs: [--sink=pangolinresource, --sink=pangolin]", false},
		{"PIC_SINK in extraEnv", directConnectionValues + "extraEnv: [{name: PIC_SINK, value: pangolin}]", false},
		{"--sink in extraArgs beats config.sink", directValues + "extraArgs: [--sink=pangolinresource]", true},
		{"PIC_SINK in extraEnv beats config.sink", directValues + "extraEnv: [{name: PIC_SINK, value: pangolinresource}]", true},
		{"an empty PIC_SINK is unset", directValues + "extraEnv: [{name: PIC_SINK, value: ''}]", false},
		{"config.sink pangolin with httproute", directGatewayAPIValues, false},
		{"--sink=pangolinresource with httproute", directGatewayAPIValues + "extraArgs: [--sink=pangolinresource]", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := renderChart(t, c.values)
			cfg, _ := picConfig(t, objs)
			require.Equal(t, c.want, cfg.Sink == pangolinResourceSink, "PIC's sink %s", cfg.Sink)
			assert.Empty(t, clusterRoleProblems(t, objs))
			assert.Equal(t, c.want, named(objs, "ClusterRole", "", fullname+"-"+pangolinResourceSink) != nil, "the pangolinresource sink's ClusterRole")
			assert.Equal(t, c.want, named(objs, "ClusterRoleBinding", "", fullname+"-"+pangolinResourceSink) != nil, "the pangolinresource sink's ClusterRoleBinding")
			assert.Equal(t, c.want, len(pangolinResourceGrants(allRules(t, objs))) > 0, "the pangolinresource sink's rules")
		})
	}
}
