package pangolinresource

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// render is the object PIC writes for r, with only the fields the installed CRD keeps.
func render(r engine.Resource, caps tunnelv1alpha1.Capabilities) *tunnelv1alpha1.PangolinResource {
	obj := &tunnelv1alpha1.PangolinResource{
		TypeMeta: metav1.TypeMeta{APIVersion: tunnelv1alpha1.GroupVersion.String(), Kind: "PangolinResource"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            r.Name,
			Namespace:       r.Namespace,
			Labels:          ownerLabels(r.Origin),
			Annotations:     map[string]string{pic.AnnotationHost: r.Host},
			OwnerReferences: []metav1.OwnerReference{ownerReference(r.Origin)},
		},
	}
	obj.Spec = renderSpec(r, caps)
	return obj
}

func renderSpec(r engine.Resource, caps tunnelv1alpha1.Capabilities) tunnelv1alpha1.PangolinResourceSpec {
	spec := tunnelv1alpha1.PangolinResourceSpec{
		// The operator sends spec.name to Pangolin when it creates the resource, and
		// Pangolin refuses an empty name: the public host (a raw resource's port key,
		// "tcp:5432") is the name users look for.
		Name:      r.PublishedHost(),
		Enabled:   ptr.To(true),
		TunnelRef: &tunnelv1alpha1.TunnelRef{Name: r.Tunnel.Name},
	}
	if r.Tunnel.Namespace != r.Namespace && caps.TunnelNamespace {
		spec.TunnelRef.Namespace = r.Tunnel.Namespace
	}
	if r.Raw() {
		renderRaw(&spec, r, caps)
		return spec
	}
	spec.Protocol = tunnelv1alpha1.ProtocolHTTP
	spec.HTTPConfig = &tunnelv1alpha1.HTTPConfig{DomainName: r.Domain, Subdomain: r.Subdomain}
	if caps.AccessControl {
		spec.HTTPConfig.SSO = copyBool(r.SSO)
		spec.HTTPConfig.BlockAccess = copyBool(r.BlockAccess)
	}
	if caps.Targets {
		spec.Targets = make([]tunnelv1alpha1.Target, 0, len(r.Targets))
		for _, t := range r.Targets {
			spec.Targets = append(spec.Targets, tunnelv1alpha1.Target{
				IP: t.Backend.Host, Port: t.Backend.Port, Method: t.Backend.Scheme,
				Path: t.Path, PathMatchType: t.Match, Priority: ptr.To(t.Priority),
			})
		}
	} else if len(r.Targets) > 0 {
		t := r.Targets[0].Backend
		spec.Target = &tunnelv1alpha1.Target{IP: t.Host, Port: t.Port, Method: t.Scheme}
	}
	return spec
}

// rawTargetPriority is the CRD's default for targets[].priority (the fork's). A raw
// resource has no path routing, so the value means nothing to Pangolin; see renderRaw.
const rawTargetPriority int32 = 100

// renderRaw fills in a TCP or UDP resource: spec.protocol tcp or udp, the public port in
// proxyConfig, and its one backend as a target of the same method. It has no httpConfig:
// the CRD requires a subdomain within it, and a port has none.
//
// PIC writes the fields the CRD defaults (proxyConfig.enableProxy true, a fork target's
// priority 100) with their default values, as it writes spec.enabled: the API server
// would store those values anyway, so the operator sees the same object either way, and
// what is stored is then exactly what PIC renders. The drift check stays a plain
// comparison that neither flaps on a default nor misses a hand edit away from it.
func renderRaw(spec *tunnelv1alpha1.PangolinResourceSpec, r engine.Resource, caps tunnelv1alpha1.Capabilities) {
	spec.Protocol = string(r.Protocol)
	spec.ProxyConfig = &tunnelv1alpha1.ProxyConfig{EnableProxy: ptr.To(true), ProxyPort: r.ProxyPort}
	targets := make([]tunnelv1alpha1.Target, 0, len(r.Targets))
	for _, t := range r.Targets {
		target := tunnelv1alpha1.Target{IP: t.Backend.Host, Port: t.Backend.Port, Method: t.Backend.Scheme}
		if caps.Targets {
			target.Priority = ptr.To(rawTargetPriority)
		}
		targets = append(targets, target)
	}
	if caps.Targets {
		spec.Targets = targets
	} else if len(targets) > 0 {
		spec.Target = &targets[0]
	}
}

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	return ptr.To(*b)
}

// ownerLabels identify the source object; the uid label is what ownership checks trust.
func ownerLabels(o route.Origin) map[string]string {
	labels := map[string]string{
		pic.LabelOwnerUID:       string(o.UID),
		pic.LabelOwnerName:      labelValue(o.Name),
		pic.LabelOwnerNamespace: o.Namespace,
		pic.LabelManagedBy:      pic.ManagedByValue,
	}
	if o.Kind != "Ingress" {
		labels[pic.LabelOwnerKind] = o.Kind
	}
	return labels
}

// labelValue fits an object name (up to 253 characters) into a label value (up to 63,
// alphanumeric at both ends). The uid label, not this one, identifies the owner.
func labelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	v := name[:63]
	for len(v) > 0 && !isAlphanumeric(v[len(v)-1]) {
		v = v[:len(v)-1]
	}
	return v
}

func isAlphanumeric(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func ownerReference(o route.Origin) metav1.OwnerReference {
	gv := o.Version
	if o.Group != "" {
		gv = o.Group + "/" + o.Version
	}
	return metav1.OwnerReference{
		APIVersion:         gv,
		Kind:               o.Kind,
		Name:               o.Name,
		UID:                o.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// owner returns the UID of the source object that owns obj, if PIC owns it at all: a
// controller owner reference and the uid label must agree. An object with only one of
// the two (a copy, a decoy, another controller's) is not PIC's.
func owner(obj *tunnelv1alpha1.PangolinResource) (types.UID, bool) {
	uid := obj.Labels[pic.LabelOwnerUID]
	ref := metav1.GetControllerOfNoCopy(obj)
	if uid == "" || ref == nil || string(ref.UID) != uid {
		return "", false
	}
	return ref.UID, true
}

// parse reads an owned object back into the engine's model. Drifted is set when the
// object differs from what rendering that model would write, in any field PIC manages.
func parse(obj *tunnelv1alpha1.PangolinResource, origin route.Origin, caps tunnelv1alpha1.Capabilities) engine.Existing {
	r := engine.Resource{
		Name:      obj.Name,
		Namespace: obj.Namespace,
		Origin:    origin,
		Host:      obj.Annotations[pic.AnnotationHost],
	}
	s := obj.Spec
	if s.TunnelRef != nil {
		r.Tunnel = route.TunnelRef{Namespace: obj.Namespace, Name: s.TunnelRef.Name}
		if s.TunnelRef.Namespace != "" {
			r.Tunnel.Namespace = s.TunnelRef.Namespace
		}
	}
	// Anything but http is TCP or UDP for the operator.
	if s.Protocol != tunnelv1alpha1.ProtocolHTTP {
		r.Protocol = route.Protocol(s.Protocol)
		if s.ProxyConfig != nil {
			r.ProxyPort = s.ProxyConfig.ProxyPort
		}
	}
	if s.HTTPConfig != nil {
		r.Subdomain, r.Domain = s.HTTPConfig.Subdomain, s.HTTPConfig.DomainName
		if caps.AccessControl {
			r.SSO, r.BlockAccess = copyBool(s.HTTPConfig.SSO), copyBool(s.HTTPConfig.BlockAccess)
		}
	}
	if caps.Targets {
		for _, t := range s.Targets {
			target := engine.Target{Backend: route.Backend{Host: t.IP, Port: t.Port, Scheme: t.Method}, Path: t.Path, Match: t.PathMatchType}
			// A raw target's priority is not the engine's (see renderRaw): a hand edit
			// of it is drift, caught by comparing with what render writes.
			if !r.Raw() {
				target.Priority = ptr.Deref(t.Priority, 0)
			}
			r.Targets = append(r.Targets, target)
		}
	} else if s.Target != nil {
		r.Targets = []engine.Target{{Backend: route.Backend{Host: s.Target.IP, Port: s.Target.Port, Scheme: s.Target.Method}}}
	}
	want := render(r, caps)
	return engine.Existing{Resource: r, UID: obj.UID, Status: status(obj, r), Drifted: !equality.Semantic.DeepEqual(want.Spec, obj.Spec) || !hasMetadata(obj, want)}
}

// hasMetadata reports whether obj carries every label and annotation PIC writes, with
// PIC's values. Others' labels and annotations are left alone.
func hasMetadata(obj, want *tunnelv1alpha1.PangolinResource) bool {
	for k, v := range want.Labels {
		if obj.Labels[k] != v {
			return false
		}
	}
	for k, v := range want.Annotations {
		if obj.Annotations[k] != v {
			return false
		}
	}
	return true
}

// httpURL is where Pangolin serves an HTTP resource: the operator's URL, or else its
// full domain, or else the host PIC asked for. A raw resource has none: the operator
// records a URL for HTTP resources only, and a port is reached at the Pangolin server's
// own address, which the object does not hold (engine.Existing.ReportedHost then
// gives the port key).
func httpURL(obj *tunnelv1alpha1.PangolinResource, r engine.Resource) string {
	switch {
	case r.Raw():
		return ""
	case obj.Status.URL != "":
		return obj.Status.URL
	case obj.Status.FullDomain != "":
		return "https://" + obj.Status.FullDomain
	case r.Subdomain != "":
		return "https://" + r.PublishedHost()
	}
	return ""
}

// status reads the operator's verdict: status.status, or else the Ready condition. A
// verdict about an older generation of the spec is still Pending.
func status(obj *tunnelv1alpha1.PangolinResource, r engine.Resource) engine.Status {
	st := engine.Status{Phase: engine.PhasePending, URL: httpURL(obj, r)}
	if g := obj.Status.ObservedGeneration; g != 0 && g < obj.Generation {
		return st
	}
	ready := meta.FindStatusCondition(obj.Status.Conditions, tunnelv1alpha1.ConditionReady)
	switch {
	case obj.Status.Status == tunnelv1alpha1.StatusReady, obj.Status.Status == "" && ready != nil && ready.Status == metav1.ConditionTrue:
		st.Phase = engine.PhaseReady
	case obj.Status.Status == tunnelv1alpha1.StatusError, obj.Status.Status == "" && ready != nil && ready.Status == metav1.ConditionFalse:
		st.Phase = engine.PhaseError
		if ready != nil {
			st.Message = ready.Message
		}
		if st.Message == "" {
			st.Message = "the operator reports status Error without a message"
		}
	}
	return st
}
