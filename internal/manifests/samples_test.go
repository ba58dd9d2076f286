package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// readSample decodes one file of config/samples.
func readSample(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(repoPath("config", "samples", name))
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	return objs
}

// TestSamplesMatchTheDefaults checks the first install a user makes: the sample tunnel
// and Ingress, applied to the namespace of an application, are published by PIC as every
// default rendering configures it. A sample tunnel PIC would not find gives each Ingress
// a TunnelNotFound.
func TestSamplesMatchTheDefaults(t *testing.T) {
	tunnel := only[unstructured.Unstructured](t, readSample(t, "pangolintunnel.yaml"), "PangolinTunnel")
	require.Empty(t, tunnel.GetNamespace(), "the sample tunnel is applied beside the Ingresses (kubectl apply -n)")
	ing := only[networkingv1.Ingress](t, readSample(t, "ingress.yaml"), "Ingress")
	require.Empty(t, ing.Namespace, "the sample Ingress is applied in the application's namespace")
	require.NotNil(t, ing.Spec.IngressClassName)
	require.Equal(t, pic.DefaultClassName, *ing.Spec.IngressClassName, "the sample Ingress uses the default tunnel's class")

	const appNamespace = "shop"
	// The renderings a user gets without choosing a tunnel (the others configure one).
	defaults := []string{"kustomize config/default", "the Helm chart with its default values",
		"kustomize config/gateway-api", "the Helm chart with config.sources [ingress, httproute]",
		"kustomize config/services", "the Helm chart with config.sources [ingress, service]"}
	seen := 0
	t.Cleanup(func() { assert.Equal(t, len(defaults), seen, "renderings %v exist", defaults) })
	for _, r := range renderings {
		if !slices.Contains(defaults, r.name) {
			continue
		}
		seen++
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			ref, problem := cfg.Tunnels.Resolve(appNamespace, "", "")
			require.Nil(t, problem)
			assert.Equal(t, route.TunnelRef{Namespace: appNamespace, Name: tunnel.GetName()}, ref,
				"an Ingress of class pangolin in %s uses the sample tunnel applied there", appNamespace)
			assert.NotNil(t, named(objs, "IngressClass", "", *ing.Spec.IngressClassName), "the sample Ingress's class is installed")
		})
	}
}

// TestServiceSample checks config/samples/service.yaml: a Service of type LoadBalancer
// of the class every installation with the service source publishes, applied beside the
// sample tunnel (TestSamplesMatchTheDefaults checks that tunnel for those installations),
// with a TCP and a UDP port, each a port Pangolin can publish.
func TestServiceSample(t *testing.T) {
	svc := only[corev1.Service](t, readSample(t, "service.yaml"), "Service")
	require.Empty(t, svc.Namespace, "the sample Service is applied in the application's namespace")
	assert.Equal(t, corev1.ServiceTypeLoadBalancer, svc.Spec.Type)
	require.NotNil(t, svc.Spec.LoadBalancerClass, "spec.loadBalancerClass")
	protocols := map[corev1.Protocol]int{}
	for _, p := range svc.Spec.Ports {
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP // as the API server defaults it
		}
		protocols[protocol]++
		assert.True(t, p.Port >= 1 && p.Port <= 65535, "port %s: %d", p.Name, p.Port)
	}
	assert.Equal(t, map[corev1.Protocol]int{corev1.ProtocolTCP: 1, corev1.ProtocolUDP: 1}, protocols, "one TCP and one UDP port")
	seen := 0
	for _, r := range renderings {
		if !r.services {
			continue
		}
		seen++
		t.Run(r.name, func(t *testing.T) {
			cfg, _ := picConfig(t, r.render(t))
			assert.Equal(t, cfg.LoadBalancerClass, *svc.Spec.LoadBalancerClass, "PIC publishes the sample Service's class")
		})
	}
	assert.Positive(t, seen, "renderings with the service source")
}

// TestSamplesFitBothOperatorCRDs checks the sample objects of the operator's kinds
// against both variants' CRD schemas: no unknown field, every required one set.
func TestSamplesFitBothOperatorCRDs(t *testing.T) {
	obj := only[unstructured.Unstructured](t, readSample(t, "pangolintunnel.yaml"), "PangolinTunnel")
	for _, variant := range []string{"original", "fork"} {
		t.Run(variant, func(t *testing.T) {
			crdObjs := kustomizeLessDecode(t, repoPath("config", "crd", "operator", variant, "tunnel.pangolin.io_pangolintunnels.yaml"))
			crd := only[apiextensionsv1.CustomResourceDefinition](t, crdObjs, "CustomResourceDefinition")
			i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
				return obj.GetAPIVersion() == crd.Spec.Group+"/"+v.Name
			})
			require.GreaterOrEqual(t, i, 0, "the CRD serves %s", obj.GetAPIVersion())
			schema := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
			spec, ok := obj.Object["spec"]
			require.True(t, ok)
			assert.Empty(t, schemaProblems("spec", spec, &schema))
		})
	}
	t.Run("the check finds an unknown and a missing field", func(t *testing.T) {
		schema := &apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"a"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}}}
		assert.Len(t, schemaProblems("spec", map[string]any{"b": "x"}, schema), 2)
	})
}

func kustomizeLessDecode(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	return objs
}

// schemaProblems returns the fields of v its schema does not know and the required
// fields it lacks. The API server would prune the first silently and refuse the second.
func schemaProblems(path string, v any, schema *apiextensionsv1.JSONSchemaProps) []string {
	m, ok := v.(map[string]any)
	if !ok || schema.Type != "object" || schema.XPreserveUnknownFields != nil && *schema.XPreserveUnknownFields {
		return nil
	}
	var out []string
	for _, r := range schema.Required {
		if _, ok := m[r]; !ok {
			out = append(out, fmt.Sprintf("%s.%s is required", path, r))
		}
	}
	for k, child := range m {
		s, ok := schema.Properties[k]
		if !ok {
			if len(schema.Properties) > 0 || schema.AdditionalProperties == nil {
				out = append(out, fmt.Sprintf("%s.%s is not in the schema", path, k))
			}
			continue
		}
		out = append(out, schemaProblems(path+"."+k, child, &s)...)
	}
	return out
}

// TestSamplesSayTheirOperatorVariant: each sample says which pangolin-operator variant it
// needs, since some work with the fork only. config.yaml is a byte-for-byte copy of a
// configuration test file; its overlay's kustomization.yaml says it.
func TestSamplesSayTheirOperatorVariant(t *testing.T) {
	root := repoPath("config", "samples")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || filepath.Base(path) == "config.yaml" ||
			filepath.Base(path) == "deployment-patch.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		assert.Contains(t, string(data), "Operator variant: ", "%s does not say which pangolin-operator variant it needs", path)
		return nil
	})
	require.NoError(t, err)
}
