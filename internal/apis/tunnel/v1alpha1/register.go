package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is the operator's API group and version.
var GroupVersion = schema.GroupVersion{Group: "tunnel.pangolin.io", Version: "v1alpha1"}

// ResourceCRDName is the name of the CustomResourceDefinition that says which variant is installed.
const ResourceCRDName = "pangolinresources.tunnel.pangolin.io"

var (
	schemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme registers PangolinResource and PangolinTunnel.
	AddToScheme = schemeBuilder.AddToScheme
)

func init() {
	schemeBuilder.Register(&PangolinResource{}, &PangolinResourceList{}, &PangolinTunnel{}, &PangolinTunnelList{})
}

// Ready reports whether the operator says the tunnel is usable: status Ready, or a true
// Ready condition.
func (t *PangolinTunnel) Ready() bool {
	if t.Status.Status == StatusReady {
		return true
	}
	for _, c := range t.Status.Conditions {
		if c.Type == ConditionReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
