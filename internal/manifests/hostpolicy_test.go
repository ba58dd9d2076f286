package manifests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// hostPolicyRoleNameSuffix turns the name of PIC's main ClusterRole into the name of
// the host policy's ClusterRole (read on namespaces), in config/rbac and in the chart.
const hostPolicyRoleNameSuffix = "-host-policy"

// hostPolicySelectorValues sets a hostPolicy whose second rule selects namespaces by
// labels.
const hostPolicySelectorValues = `
config:
  hostPolicy:
    - namespaces: [team-a]
      hosts: ["*.team-a.example.com"]
    - namespaceSelector: tenant=shop
      hosts: [shop.example.com]
`

// namespacesGrants lists what the rules grant on namespaces and their subresources.
func namespacesGrants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, corev1.GroupName) {
			continue
		}
		for _, res := range r.Resources {
			if res == "namespaces" || strings.HasPrefix(res, "namespaces/") {
				out = append(out, fmt.Sprintf("%s %v", res, r.Verbs))
			}
		}
	}
	return out
}

// TestHostPolicyNamespacesAreOptIn checks that only an installation that selects
// namespaces by labels in its hostPolicy (or runs a Gateway API source, whose own
// ClusterRole reads them) may read namespaces, and that those that do grant exactly
// config/rbac/host-policy: get, list and watch, what the cache's informer and the
// start-up check do, and nothing more.
func TestHostPolicyNamespacesAreOptIn(t *testing.T) {
	roleFile := readClusterRoleFile(t, "host-policy", "role.yaml")
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			base := only[appsv1.Deployment](t, objs, "Deployment").Name
			role := named(objs, "ClusterRole", "", base+hostPolicyRoleNameSuffix)
			binding := named(objs, "ClusterRoleBinding", "", base+hostPolicyRoleNameSuffix)
			if !r.readNamespaces {
				assert.False(t, cfg.HostPolicy.NeedsLabels(), "a namespaceSelector in an installation that does not grant namespaces")
				assert.Nil(t, role, "the host policy's ClusterRole is in an installation that does not opt in")
				assert.Nil(t, binding, "the host policy's ClusterRoleBinding is in an installation that does not opt in")
				if !r.gatewayAPI {
					assert.Empty(t, namespacesGrants(allRules(t, objs)), "an installation that reads no namespace grants something on namespaces")
				}
				return
			}
			require.NotNil(t, role, "ClusterRole %s%s", base, hostPolicyRoleNameSuffix)
			require.NotNil(t, binding, "ClusterRoleBinding %s%s", base, hostPolicyRoleNameSuffix)
			assert.Equal(t, ruleSet(roleFile.Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, role).Rules))
			assert.Equal(t, []string{"namespaces [get list watch]"}, namespacesGrants(allRules(t, objs)), "what the installation grants on namespaces")
			crb := decodeStrict[rbacv1.ClusterRoleBinding](t, binding)
			assert.Equal(t, base+hostPolicyRoleNameSuffix, crb.RoleRef.Name)
		})
	}
	t.Run("config/rbac/host-policy grants read on namespaces, and nothing else", func(t *testing.T) {
		assert.Equal(t, map[string][]string{"core namespaces": {"get", "list", "watch"}}, ruleSet(roleFile.Rules))
	})
	t.Run("the check would catch the host policy's ClusterRole leaking into config/default", func(t *testing.T) {
		objs := kustomizeBuild(t, repoPath("config", "default"))
		require.Empty(t, namespacesGrants(allRules(t, objs)))
		leaked := append(slices.Clone(objs), kustomizeBuild(t, repoPath("config", "rbac", "host-policy"))...)
		assert.NotEmpty(t, namespacesGrants(allRules(t, leaked)))
	})
	t.Run("a namespaceSelector without the permission is caught", func(t *testing.T) {
		objs := renderChart(t, hostPolicySelectorValues)
		stripped := objs[:0:0]
		for _, o := range objs {
			if !strings.HasSuffix(o.GetName(), hostPolicyRoleNameSuffix) {
				stripped = append(stripped, o)
			}
		}
		cfg, _ := picConfig(t, stripped)
		require.True(t, cfg.HostPolicy.NeedsLabels())
		fullname := releaseName + "-pangolin-ingress-controller"
		assert.Contains(t, clusterRoleProblems(t, stripped), "ClusterRole "+fullname+hostPolicyRoleNameSuffix+" is not rendered")
	})
}

// TestHelmChartHostPolicy checks when the chart grants read on namespaces for the host
// policy: exactly when a rule of the hostPolicy PIC loads has a namespaceSelector.
func TestHelmChartHostPolicy(t *testing.T) {
	fullname := releaseName + "-pangolin-ingress-controller"
	cases := []struct {
		name, values string
		role         bool
	}{
		{"the default values read no namespace", "", false},
		{"a hostPolicy of names only reads no namespace", "config: {hostPolicy: [{namespaces: [team-a], hosts: ['*.team-a.example.com']}]}", false},
		{"a hostPolicy of names for every namespace reads no namespace", "config: {hostPolicy: [{namespaces: ['*'], hosts: ['*.sandbox.example.com']}]}", false},
		{"a blank namespaceSelector selects none and reads no namespace", "config: {hostPolicy: [{namespaces: [team-a], namespaceSelector: ' ', hosts: [a.example.com]}]}", false},
		{"a rule with a namespaceSelector grants it", hostPolicySelectorValues, true},
		{"a rule with both names and a namespaceSelector grants it", "config: {hostPolicy: [{namespaces: [team-a], namespaceSelector: 'tier in (web)', hosts: [a.example.com]}]}", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := renderChart(t, c.values)
			cfg, _ := picConfig(t, objs)
			require.Equal(t, c.role, cfg.HostPolicy.NeedsLabels(), "PIC's hostPolicy selects namespaces by labels")
			assert.Empty(t, clusterRoleProblems(t, objs))
			assert.Equal(t, c.role, named(objs, "ClusterRole", "", fullname+hostPolicyRoleNameSuffix) != nil, "the host policy's ClusterRole")
			assert.Equal(t, c.role, named(objs, "ClusterRoleBinding", "", fullname+hostPolicyRoleNameSuffix) != nil, "the host policy's ClusterRoleBinding")
			assert.Equal(t, c.role, len(namespacesGrants(allRules(t, objs))) > 0, "rules on namespaces")
		})
	}
	t.Run("with a Gateway API source, the host policy's ClusterRole is rendered beside the Gateway API one", func(t *testing.T) {
		objs := renderChart(t, strings.TrimSpace(hostPolicySelectorValues)+"\n  sources: [ingress, httproute]")
		assert.Empty(t, clusterRoleProblems(t, objs))
		assert.NotNil(t, named(objs, "ClusterRole", "", fullname+hostPolicyRoleNameSuffix))
		assert.NotNil(t, named(objs, "ClusterRole", "", fullname+gatewayRoleNameSuffix))
	})
	t.Run("rbac.create=false renders no ClusterRole of the host policy", func(t *testing.T) {
		objs := renderChart(t, hostPolicySelectorValues+"rbac: {create: false}")
		assert.Empty(t, ofKind(objs, "ClusterRole"))
		assert.Empty(t, ofKind(objs, "ClusterRoleBinding"))
	})
	t.Run("serviceAccount.create=false binds the host policy's ClusterRole to serviceAccount.name", func(t *testing.T) {
		objs := renderChart(t, hostPolicySelectorValues+"serviceAccount: {create: false, name: existing}")
		o := named(objs, "ClusterRoleBinding", "", fullname+hostPolicyRoleNameSuffix)
		require.NotNil(t, o)
		crb := decodeStrict[rbacv1.ClusterRoleBinding](t, o)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "existing", Namespace: releaseNamespace}}, crb.Subjects)
	})
}
