package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

const accessPoliciesValues = `
accessPolicies: {enabled: true}
`

// secretGrants are the rules of rules that reach Secrets.
func secretGrants(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		if slices.Contains(r.APIGroups, "") && (slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "*")) {
			out = append(out, r)
		}
	}
	return out
}

// withAccessPolicies builds an overlay of config/<base> with the component
// config/components/access-policies, as docs/access-control.md tells users to write.
func withAccessPolicies(base string) func(t *testing.T) []*unstructured.Unstructured {
	return func(t *testing.T) []*unstructured.Unstructured {
		dir := t.TempDir()
		baseDir, err := filepath.Abs(repoPath("config", base))
		require.NoError(t, err)
		component, err := filepath.Abs(repoPath("config", "components", "access-policies"))
		require.NoError(t, err)
		// kustomize takes relative paths only.
		baseDir, err = filepath.Rel(dir, baseDir)
		require.NoError(t, err)
		component, err = filepath.Rel(dir, component)
		require.NoError(t, err)
		overlay := "resources: [" + baseDir + "]\ncomponents: [" + component + "]\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644))
		return kustomizeBuild(t, dir)
	}
}

func accessPolicyCRD(objs []*unstructured.Unstructured) *unstructured.Unstructured {
	return named(objs, "CustomResourceDefinition", "", accessv1alpha1.AccessPolicyCRDName)
}

// TestAccessPoliciesAreOptIn: no install grants anything on Secrets or installs the
// AccessPolicy CRD unless it asks for access policies; those that ask get the CRD and
// exactly the rules of config/rbac/access-policies, in both sink modes.
func TestAccessPoliciesAreOptIn(t *testing.T) {
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			// The managed sites' Role, namespaced, writes the Newt agents' Secrets
			// (TestManagedSitesAreOptIn); nothing else may touch Secrets.
			assert.Empty(t, secretGrants(allRules(t, withoutManagedSitesRole(objs))), "a grant on Secrets")
			assert.Nil(t, accessPolicyCRD(objs), "the AccessPolicy CRD")
		})
	}
	roleFile := readClusterRoleFile(t, "access-policies", "role.yaml")
	for _, r := range []rendering{
		{name: "kustomize config/default with the access-policies component", render: withAccessPolicies("default")},
		{name: "kustomize config/direct with the access-policies component", render: withAccessPolicies("direct")},
		{name: "the Helm chart with accessPolicies.enabled", render: charted(accessPoliciesValues)},
		{name: "the Helm chart with accessPolicies.enabled in direct mode", render: charted(directValues + accessPoliciesValues)},
	} {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			require.NotNil(t, accessPolicyCRD(objs), "the AccessPolicy CRD")
			var role *unstructured.Unstructured
			for _, o := range ofKind(objs, "ClusterRole") {
				if strings.HasSuffix(o.GetName(), "-access-policies") {
					role = o
				}
			}
			require.NotNil(t, role, "the access-policies ClusterRole")
			assert.Equal(t, ruleSet(roleFile.Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, role).Rules))
		})
	}
	t.Run("the chart's CRD is config/crd/pic's", func(t *testing.T) {
		want, err := os.ReadFile(repoPath("config", "crd", "pic", "pic.pangolin.io_accesspolicies.yaml"))
		require.NoError(t, err)
		got, err := os.ReadFile(repoPath("charts", "pangolin-ingress-controller", "files", "accesspolicies.yaml"))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "copy config/crd/pic/pic.pangolin.io_accesspolicies.yaml to the chart's files/")
		require.NotNil(t, accessPolicyCRD(charted(accessPoliciesValues)(t)), "the chart installs it")
	})
}

// perNamespaceSecretsValues grants Secrets in two namespaces only.
const perNamespaceSecretsValues = accessPoliciesValues + `
config: {secretNamespaces: [team-a, team-b]}
`

// withSecretsInNamespaces builds the overlay docs/access-control.md shows for Secrets
// granted namespace by namespace: config/default, config/rbac/access-policies/secrets
// once per namespace, the component config/components/access-policies-in-namespaces and
// PIC_SECRET_NAMESPACES on the manager.
func withSecretsInNamespaces(t *testing.T) []*unstructured.Unstructured {
	dir := t.TempDir()
	rel := func(from string, parts ...string) string {
		abs, err := filepath.Abs(repoPath(parts...))
		require.NoError(t, err)
		out, err := filepath.Rel(from, abs)
		require.NoError(t, err)
		return out
	}
	for _, ns := range []string{"team-a", "team-b"} {
		nsDir := filepath.Join(dir, ns)
		require.NoError(t, os.Mkdir(nsDir, 0o755))
		k := "namespace: " + ns + "\nresources: [" + rel(nsDir, "config", "rbac", "access-policies", "secrets") + "]\n"
		require.NoError(t, os.WriteFile(filepath.Join(nsDir, "kustomization.yaml"), []byte(k), 0o644))
	}
	overlay := "resources: [" + rel(dir, "config", "default") + ", team-a, team-b]\n" +
		"components: [" + rel(dir, "config", "components", "access-policies-in-namespaces") + "]\n" +
		`patches:
  - target: {group: apps, version: v1, kind: Deployment, name: pangolin-ingress-controller}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value: {name: PIC_SECRET_NAMESPACES, value: "team-a,team-b"}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644))
	return kustomizeBuild(t, dir)
}

// TestSecretsCanBeGrantedPerNamespace: the chart and kustomize can grant Secrets in
// listed namespaces only: no ClusterRole reaches Secrets, each listed namespace has a
// Role with the Secrets rule of config/rbac/access-policies bound to PIC's
// ServiceAccount, and PIC is configured with the same namespaces (secretNamespaces), so
// that it watches Secrets there only. Cluster-wide stays the default
// (TestAccessPoliciesAreOptIn).
func TestSecretsCanBeGrantedPerNamespace(t *testing.T) {
	clusterFile := readClusterRoleFile(t, "access-policies", "role.yaml")
	var wantSecrets, wantCluster []rbacv1.PolicyRule
	for _, r := range clusterFile.Rules {
		if len(secretGrants([]rbacv1.PolicyRule{r})) > 0 {
			wantSecrets = append(wantSecrets, r)
		} else {
			wantCluster = append(wantCluster, r)
		}
	}
	require.NotEmpty(t, wantSecrets, "config/rbac/access-policies/role.yaml grants Secrets")

	data, err := os.ReadFile(repoPath("config", "rbac", "access-policies", "secrets", "role.yaml"))
	require.NoError(t, err)
	roleFiles, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	assert.Equal(t, ruleSet(wantSecrets), ruleSet(only[rbacv1.Role](t, roleFiles, "Role").Rules),
		"config/rbac/access-policies/secrets/role.yaml grants what the ClusterRole's Secrets rule does")

	for _, r := range []rendering{
		{name: "kustomize config/default with the access-policies-in-namespaces component", render: withSecretsInNamespaces},
		{name: "the Helm chart with config.secretNamespaces", render: charted(perNamespaceSecretsValues)},
	} {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			require.NotNil(t, accessPolicyCRD(objs), "the AccessPolicy CRD")
			assert.Empty(t, secretGrants(clusterRoleRules(t, objs)), "no ClusterRole reaches Secrets")
			for _, o := range ofKind(objs, "ClusterRole") {
				if strings.HasSuffix(o.GetName(), "-access-policies") {
					assert.Equal(t, ruleSet(wantCluster), ruleSet(decodeStrict[rbacv1.ClusterRole](t, o).Rules), "the policies and their status, cluster-wide")
				}
			}
			for _, o := range ofKind(objs, "ClusterRoleBinding") {
				assert.False(t, strings.HasSuffix(o.GetName(), "-access-policy-secrets"), "no cluster-wide binding of Secrets")
			}

			sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
			granted := map[string]bool{}
			for _, o := range ofKind(objs, "Role") {
				role := decodeStrict[rbacv1.Role](t, o)
				if len(secretGrants(role.Rules)) == 0 {
					continue
				}
				assert.Equal(t, ruleSet(wantSecrets), ruleSet(role.Rules), "the Role in %s grants the Secrets rule, nothing else", role.Namespace)
				bound := false
				for _, b := range ofKind(objs, "RoleBinding") {
					binding := decodeStrict[rbacv1.RoleBinding](t, b)
					if binding.Namespace == role.Namespace && binding.RoleRef.Kind == "Role" && binding.RoleRef.Name == role.Name {
						require.Len(t, binding.Subjects, 1)
						assert.Equal(t, rbacv1.Subject{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}, binding.Subjects[0])
						bound = true
					}
				}
				assert.True(t, bound, "the Role in %s is bound", role.Namespace)
				granted[role.Namespace] = true
			}
			assert.Equal(t, map[string]bool{"team-a": true, "team-b": true}, granted, "Secrets granted in the listed namespaces")

			cfg, _ := picConfig(t, objs)
			assert.Equal(t, []string{"team-a", "team-b"}, cfg.SecretNamespaces, "PIC watches Secrets where it may read them")
		})
	}
}
