package manifests

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
)

// TestAccessPolicyCRD: config/crd/pic installs the AccessPolicy CRD the Go types
// describe (make generate-check proves it is controller-gen's output), under the names
// the code uses, as a GEP-713 inherited policy with a status subresource.
func TestAccessPolicyCRD(t *testing.T) {
	crd := only[apiextensionsv1.CustomResourceDefinition](t, kustomizeBuild(t, repoPath("config", "crd", "pic")), "CustomResourceDefinition")
	assert.Equal(t, accessv1alpha1.AccessPolicyCRDName, crd.Name)
	assert.Equal(t, accessv1alpha1.GroupVersion.Group, crd.Spec.Group)
	assert.Equal(t, accessv1alpha1.KindPolicy, crd.Spec.Names.Kind)
	assert.Equal(t, accessv1alpha1.ResourcePlural, crd.Spec.Names.Plural)
	assert.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
	assert.Equal(t, "Inherited", crd.Labels["gateway.networking.k8s.io/policy"], "GEP-713 asks policy CRDs to say how they apply")
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]
	assert.Equal(t, accessv1alpha1.GroupVersion.Version, v.Name)
	assert.True(t, v.Served && v.Storage)
	require.NotNil(t, v.Subresources)
	assert.NotNil(t, v.Subresources.Status, "status is written through its subresource")
	targetRefs := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["targetRefs"]
	require.Len(t, targetRefs.XValidations, 1, "the API server refuses targets PIC cannot serve")
	assert.Contains(t, targetRefs.XValidations[0].Rule, "'Ingress'")
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestAccessControlDocExamples: every AccessPolicy in docs/access-control.md decodes
// into the Go types without unknown fields, and is valid (with the Secrets its examples
// define), so that the examples users copy work.
func TestAccessControlDocExamples(t *testing.T) {
	data, err := os.ReadFile(repoPath("docs", "access-control.md"))
	require.NoError(t, err)
	secrets := access.Secrets{"web-auth": {"password": []byte("correct-horse-battery")}}
	found := 0
	for _, block := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
		for doc := range strings.SplitSeq(block[1], "\n---\n") {
			if !strings.Contains(doc, "kind: AccessPolicy") {
				continue
			}
			found++
			var p accessv1alpha1.AccessPolicy
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &p), doc)
			assert.Equal(t, accessv1alpha1.GroupVersion.String(), p.APIVersion)
			assert.NotEmpty(t, p.Spec.TargetRefs, p.Name)
			assert.Empty(t, access.Validate(&p, secrets), p.Name)
		}
	}
	assert.GreaterOrEqual(t, found, 4, "the doc's examples")
}
