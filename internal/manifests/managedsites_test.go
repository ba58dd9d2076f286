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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managedSitesRoleSuffix turns the name of PIC's Deployment into the name of the managed
// sites' Role, in config/rbac/managed-sites and in the chart.
const managedSitesRoleSuffix = "-managed-sites"

// withoutManagedSitesRole is objs without the managed sites' Role, the one Role that may
// grant something on Secrets (TestManagedSitesAreOptIn says when).
func withoutManagedSitesRole(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Role" && strings.HasSuffix(o.GetName(), managedSitesRoleSuffix)
	})
}

// agentGrants lists what the rules grant on Deployments and Secrets: only an
// installation with managed sites may write them.
func agentGrants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, res := range r.Resources {
			if res == "secrets" || res == "deployments" || strings.HasPrefix(res, "secrets/") || strings.HasPrefix(res, "deployments/") {
				out = append(out, fmt.Sprintf("%v %s %v", r.APIGroups, res, r.Verbs))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestManagedSitesAreOptIn checks that no installation may touch Deployments or Secrets
// unless it manages a site, and that those that do grant exactly the Role of
// config/rbac/managed-sites, in PIC's own namespace, bound to PIC's ServiceAccount; and
// that the agents' owner is PIC's own Deployment.
func TestManagedSitesAreOptIn(t *testing.T) {
	fileObjs := kustomizeBuild(t, repoPath("config", "rbac", "managed-sites"))
	fileRole := decodeStrict[rbacv1.Role](t, only[unstructured.Unstructured](t, fileObjs, "Role"))
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			role := named(objs, "Role", d.Namespace, d.Name+managedSitesRoleSuffix)
			binding := named(objs, "RoleBinding", d.Namespace, d.Name+managedSitesRoleSuffix)
			grants := agentGrants(allRules(t, objs))
			if !r.managedSites {
				assert.Empty(t, cfg.ManagedSites(), "a managed site in an installation that may not run its agent")
				assert.Nil(t, role, "the managed sites' Role is in an installation that does not opt in")
				assert.Nil(t, binding, "the managed sites' RoleBinding is in an installation that does not opt in")
				assert.Empty(t, grants, "an installation without managed sites grants something on Deployments or Secrets")
				return
			}
			assert.NotEmpty(t, cfg.ManagedSites(), "the installation manages a site")
			require.NotNil(t, role, "Role %s%s in %s", d.Name, managedSitesRoleSuffix, d.Namespace)
			require.NotNil(t, binding, "RoleBinding %s%s in %s", d.Name, managedSitesRoleSuffix, d.Namespace)
			assert.Equal(t, ruleSet(fileRole.Rules), ruleSet(decodeStrict[rbacv1.Role](t, role).Rules))
			assert.Equal(t, agentGrants(fileRole.Rules), grants, "nothing else grants anything on Deployments or Secrets")
			rb := decodeStrict[rbacv1.RoleBinding](t, binding)
			assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.GetName()}, rb.RoleRef)
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: d.Namespace}}, rb.Subjects)
			assert.Equal(t, d.Name, cfg.Pangolin.NewtOwner, "the agents are owned by PIC's own Deployment, so that uninstalling removes them")
		})
	}
	t.Run("the chart renders the Role exactly when a tunnel of its values is managed", func(t *testing.T) {
		cases := []struct {
			values string
			want   []string
		}{
			{"config: {sink: pangolin, defaultTunnel: {name: edge, managedSite: true}}", []string{"edge"}},
			{"config: {sink: pangolin, defaultTunnel: {name: edge, managedSite: false}}", nil},
			{"config: {sink: pangolin}\ntunnels: {lab: {managedSite: true}, edge: edge}", []string{"lab"}},
			{"config: {sink: pangolin}\ntunnels: {lab: {allowedNamespaces: [a]}}", nil},
		}
		for _, tc := range cases {
			objs := renderChart(t, tc.values+directConnectionValues)
			cfg, _ := picConfig(t, objs)
			assert.Equal(t, tc.want, cfg.ManagedSites(), tc.values)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			role := named(objs, "Role", d.Namespace, d.Name+managedSitesRoleSuffix)
			assert.Equal(t, tc.want != nil, role != nil, "the Role with %s", tc.values)
		}
	})
	t.Run("config/rbac/managed-sites grants get, create, update and delete on Deployments and Secrets, and nothing else", func(t *testing.T) {
		// sinks/pangolin/newt reads by name past the cache (no list, no watch), and
		// deletes the agent of a site PIC no longer manages.
		assert.Equal(t, map[string][]string{
			"apps deployments": {"create", "delete", "get", "update"},
			"core secrets":     {"create", "delete", "get", "update"},
		}, ruleSet(fileRole.Rules))
		assert.Len(t, ofKind(fileObjs, "ClusterRole"), 0, "nothing cluster-wide")
	})
	t.Run("the check would catch the managed sites' Role leaking into config/direct", func(t *testing.T) {
		objs := kustomizeBuild(t, repoPath("config", "direct"))
		require.Empty(t, agentGrants(allRules(t, objs)))
		leaked := append(slices.Clone(objs), fileObjs...)
		assert.NotEmpty(t, agentGrants(allRules(t, leaked)))
	})
}
