package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Written by hand rather than generated: the types are few and small, and a code
// generator would be one more pinned tool for four structs.

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

func copyConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// DeepCopyInto copies the target into out.
func (in *Target) DeepCopyInto(out *Target) {
	*out = *in
	if in.Priority != nil {
		p := *in.Priority
		out.Priority = &p
	}
}

// DeepCopyInto copies the spec into out.
func (in *PangolinResourceSpec) DeepCopyInto(out *PangolinResourceSpec) {
	*out = *in
	out.Enabled = copyBool(in.Enabled)
	if in.TunnelRef != nil {
		t := *in.TunnelRef
		out.TunnelRef = &t
	}
	if in.HTTPConfig != nil {
		h := *in.HTTPConfig
		h.SSO = copyBool(in.HTTPConfig.SSO)
		h.BlockAccess = copyBool(in.HTTPConfig.BlockAccess)
		out.HTTPConfig = &h
	}
	if in.Target != nil {
		t := new(Target)
		in.Target.DeepCopyInto(t)
		out.Target = t
	}
	if in.SiteRef != nil {
		s := *in.SiteRef
		if in.SiteRef.SiteID != nil {
			id := *in.SiteRef.SiteID
			s.SiteID = &id
		}
		out.SiteRef = &s
	}
	if in.ProxyConfig != nil {
		p := *in.ProxyConfig
		p.EnableProxy = copyBool(in.ProxyConfig.EnableProxy)
		out.ProxyConfig = &p
	}
	if in.Targets != nil {
		out.Targets = make([]Target, len(in.Targets))
		for i := range in.Targets {
			in.Targets[i].DeepCopyInto(&out.Targets[i])
		}
	}
}

// DeepCopyInto copies the status into out.
func (in *PangolinResourceStatus) DeepCopyInto(out *PangolinResourceStatus) {
	*out = *in
	out.Conditions = copyConditions(in.Conditions)
}

// DeepCopyInto copies the resource into out.
func (in *PangolinResource) DeepCopyInto(out *PangolinResource) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of the resource.
func (in *PangolinResource) DeepCopy() *PangolinResource {
	if in == nil {
		return nil
	}
	out := new(PangolinResource)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *PangolinResource) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *PangolinResourceList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(PangolinResourceList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]PangolinResource, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// DeepCopyInto copies the tunnel into out.
func (in *PangolinTunnel) DeepCopyInto(out *PangolinTunnel) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = copyConditions(in.Status.Conditions)
}

// DeepCopy returns a copy of the tunnel.
func (in *PangolinTunnel) DeepCopy() *PangolinTunnel {
	if in == nil {
		return nil
	}
	out := new(PangolinTunnel)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *PangolinTunnel) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *PangolinTunnelList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(PangolinTunnelList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]PangolinTunnel, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
