package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is PIC's own API group and version.
var GroupVersion = schema.GroupVersion{Group: "pic.pangolin.io", Version: "v1alpha1"}

// AccessPolicyCRDName is the name of the CustomResourceDefinition of AccessPolicy.
const AccessPolicyCRDName = "accesspolicies.pic.pangolin.io"

var (
	schemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme registers AccessPolicy.
	AddToScheme = schemeBuilder.AddToScheme
)

func init() {
	schemeBuilder.Register(&AccessPolicy{}, &AccessPolicyList{})
}
