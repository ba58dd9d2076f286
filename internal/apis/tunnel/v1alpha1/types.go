package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Protocol values of spec.protocol. Anything but http is TCP/UDP for the operator and
// needs proxyConfig: PIC writes tcp or udp there, as the target's method.
const ProtocolHTTP = "http"

// Target method values (the backend scheme).
const (
	MethodHTTP  = "http"
	MethodHTTPS = "https"
)

// Path match types of the fork's targets[].pathMatchType.
const (
	PathMatchExact  = "exact"
	PathMatchPrefix = "prefix"
	PathMatchRegex  = "regex"
)

// Values of status.status written by the operator.
const (
	StatusCreating = "Creating"
	StatusReady    = "Ready"
	StatusError    = "Error"
	StatusDeleting = "Deleting"
	StatusWaiting  = "Waiting"
)

// ConditionReady is the one condition type the operator sets.
const ConditionReady = "Ready"

// PangolinResource is one public HTTP, TCP or UDP resource in Pangolin.
// +kubebuilder:object:root=true
type PangolinResource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PangolinResourceSpec   `json:"spec,omitempty"`
	Status PangolinResourceStatus `json:"status,omitempty"`
}

// PangolinResourceSpec carries the union of both variants' fields that PIC uses.
type PangolinResourceSpec struct {
	// Enabled is a pointer so that an object whose API default was applied compares equal.
	Enabled    *bool       `json:"enabled,omitempty"`
	Protocol   string      `json:"protocol,omitempty"`
	TunnelRef  *TunnelRef  `json:"tunnelRef,omitempty"`
	HTTPConfig *HTTPConfig `json:"httpConfig,omitempty"`
	// Target is the original operator's single backend.
	Target *Target `json:"target,omitempty"`
	// Targets is the fork's list of backends with path routing.
	Targets []Target `json:"targets,omitempty"`

	// Name is the resource's name in Pangolin, used by the operator when it creates it.
	Name string `json:"name,omitempty"`

	// ResourceID and SiteRef are never written by PIC. They are read so that a hand
	// edit setting them on an object PIC owns is seen as drift and undone: siteRef, for
	// one, would silently move the resource to another site.
	ResourceID string   `json:"resourceId,omitempty"`
	SiteRef    *SiteRef `json:"siteRef,omitempty"`
	// ProxyConfig is the public port of a TCP or UDP resource, which has no HTTPConfig.
	ProxyConfig *ProxyConfig `json:"proxyConfig,omitempty"`
}

// SiteRef names a Pangolin site directly, bypassing tunnelRef.
type SiteRef struct {
	NiceID string `json:"niceId,omitempty"`
	SiteID *int64 `json:"siteId,omitempty"`
}

// ProxyConfig is the TCP/UDP side of a resource. EnableProxy defaults to true.
type ProxyConfig struct {
	EnableProxy *bool `json:"enableProxy,omitempty"`
	ProxyPort   int32 `json:"proxyPort,omitempty"`
}

// TunnelRef names the PangolinTunnel (site) that serves the resource.
type TunnelRef struct {
	Name string `json:"name"`
	// Namespace exists only in the fork's CRD.
	Namespace string `json:"namespace,omitempty"`
}

// HTTPConfig is the public side of an HTTP resource.
type HTTPConfig struct {
	DomainName string `json:"domainName,omitempty"`
	DomainID   string `json:"domainId,omitempty"` // read only, see PangolinResourceSpec.Name
	Subdomain  string `json:"subdomain"`
	// SSO and BlockAccess exist only in the fork's CRD.
	SSO         *bool `json:"sso,omitempty"`
	BlockAccess *bool `json:"blockAccess,omitempty"`
}

// Target is one backend. Path, PathMatchType and Priority exist only in the fork's CRD.
type Target struct {
	IP            string `json:"ip"`
	Port          int32  `json:"port"`
	Method        string `json:"method,omitempty"`
	Path          string `json:"path,omitempty"`
	PathMatchType string `json:"pathMatchType,omitempty"`
	Priority      *int32 `json:"priority,omitempty"`
}

// PangolinResourceStatus is written by the operator; PIC only reads it.
type PangolinResourceStatus struct {
	Status             string             `json:"status,omitempty"`
	URL                string             `json:"url,omitempty"`
	FullDomain         string             `json:"fullDomain,omitempty"`
	ResourceID         string             `json:"resourceId,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// PangolinResourceList is a list of PangolinResources.
// +kubebuilder:object:root=true
type PangolinResourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PangolinResource `json:"items"`
}

// PangolinTunnel is a Pangolin site reached through a Newt tunnel. PIC only reads it.
// +kubebuilder:object:root=true
type PangolinTunnel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status PangolinTunnelStatus `json:"status,omitempty"`
}

// PangolinTunnelStatus is the part of the tunnel's status that tells whether it is usable.
type PangolinTunnelStatus struct {
	Status     string             `json:"status,omitempty"`
	Online     bool               `json:"online,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PangolinTunnelList is a list of PangolinTunnels.
// +kubebuilder:object:root=true
type PangolinTunnelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PangolinTunnel `json:"items"`
}
