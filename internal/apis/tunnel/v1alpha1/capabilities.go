package v1alpha1

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Variant names, as logged and exported in the pic_operator_crd_info metric.
const (
	VariantTarget  = "target"  // original operator: one spec.target
	VariantTargets = "targets" // fork: spec.targets[] with path routing
)

// Capabilities says which optional fields the installed PangolinResource CRD keeps.
// Fields it does not keep must be neither written nor compared: the API server prunes them.
//
// +kubebuilder:object:generate=false
type Capabilities struct {
	Targets         bool // spec.targets[] (path, pathMatchType, priority) instead of spec.target
	AccessControl   bool // spec.httpConfig.sso and blockAccess
	TunnelNamespace bool // spec.tunnelRef.namespace
	RawResources    bool // spec.proxyConfig.proxyPort: TCP and UDP resources
}

// Variant is the short name of the detected operator variant.
func (c Capabilities) Variant() string {
	if c.Targets {
		return VariantTargets
	}
	return VariantTarget
}

// OriginalCapabilities and ForkCapabilities are the two variants seen in the wild. Both
// carry TCP and UDP resources (spec.protocol and spec.proxyConfig).
var (
	OriginalCapabilities = Capabilities{RawResources: true}
	ForkCapabilities     = Capabilities{Targets: true, AccessControl: true, TunnelNamespace: true, RawResources: true}
)

// CapabilitiesFromCRD reads the v1alpha1 schema of the installed PangolinResource CRD.
func CapabilitiesFromCRD(crd *apiextensionsv1.CustomResourceDefinition) (Capabilities, error) {
	for _, v := range crd.Spec.Versions {
		if v.Name != GroupVersion.Version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
		if !ok {
			break
		}
		_, targets := spec.Properties["targets"]
		_, target := spec.Properties["target"]
		if !targets && !target {
			return Capabilities{}, fmt.Errorf("CRD %s has neither spec.target nor spec.targets: unknown pangolin-operator version", crd.Name)
		}
		_, sso := spec.Properties["httpConfig"].Properties["sso"]
		_, blockAccess := spec.Properties["httpConfig"].Properties["blockAccess"]
		_, tunnelNamespace := spec.Properties["tunnelRef"].Properties["namespace"]
		// proxyPort is what a TCP or UDP resource cannot do without: the public port.
		_, proxyPort := spec.Properties["proxyConfig"].Properties["proxyPort"]
		return Capabilities{
			Targets:         targets,
			AccessControl:   sso && blockAccess,
			TunnelNamespace: tunnelNamespace,
			RawResources:    proxyPort,
		}, nil
	}
	return Capabilities{}, fmt.Errorf("CRD %s does not serve %s with a schema", crd.Name, GroupVersion.Version)
}
