package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
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
