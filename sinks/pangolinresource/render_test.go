package pangolinresource

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var variants = []struct {
	name string
	caps tunnelv1alpha1.Capabilities
}{
	{"fork", tunnelv1alpha1.ForkCapabilities},
	{"original", tunnelv1alpha1.OriginalCapabilities},
}

var ingressOrigin = route.Origin{
	Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Namespace: "prod", Name: "web", UID: "uid-web",
	Generation: 3, Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
}

// resource is a desired resource with two targets, access control and a tunnel in
// another namespace, as the engine gives it for caps: with what the CRD cannot carry
// left out.
func resource(caps tunnelv1alpha1.Capabilities) engine.Resource {
	r := engine.Resource{
		Name: "pic-prod-web-0123456789", Namespace: "prod", Origin: ingressOrigin,
		Host: "app.example.com", Subdomain: "app", Domain: "example.com",
		Tunnel: route.TunnelRef{Namespace: "pangolin-system", Name: "main"},
		Targets: []engine.Target{
			{Backend: route.Backend{Host: "api.prod.svc.cluster.local", Port: 8081, Scheme: "http"}, Path: "/api", Match: "prefix", Priority: 104},
			{Backend: route.Backend{Host: "web.prod.svc.cluster.local", Port: 8080, Scheme: "https"}, Path: "/", Match: "prefix", Priority: 101},
		},
	}
	if caps.AccessControl {
		r.SSO, r.BlockAccess = ptr.To(true), ptr.To(false)
	}
	if !caps.TunnelNamespace {
		r.Tunnel.Namespace = r.Namespace // the engine refuses a tunnel elsewhere
	}
	if !caps.Targets {
		r.Targets = r.Targets[1:]
		r.Targets[0].Path, r.Targets[0].Match, r.Targets[0].Priority = "", "", 0
	}
	return r
}

// TestRender: the object PIC writes, per CRD variant, holds only the fields the CRD keeps.
func TestRender(t *testing.T) {
	wantMeta := metav1.ObjectMeta{
		Name: "pic-prod-web-0123456789", Namespace: "prod",
		Labels: map[string]string{
			pic.LabelOwnerUID: "uid-web", pic.LabelOwnerName: "web", pic.LabelOwnerNamespace: "prod",
			pic.LabelManagedBy: pic.ManagedByValue,
		},
		Annotations: map[string]string{pic.AnnotationHost: "app.example.com"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "web", UID: "uid-web",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
	for _, c := range []struct {
		variant tunnelv1alpha1.Capabilities
		spec    tunnelv1alpha1.PangolinResourceSpec
	}{
		{tunnelv1alpha1.ForkCapabilities, tunnelv1alpha1.PangolinResourceSpec{
			Name: "app.example.com", Enabled: ptr.To(true), Protocol: "http",
			TunnelRef:  &tunnelv1alpha1.TunnelRef{Name: "main", Namespace: "pangolin-system"},
			HTTPConfig: &tunnelv1alpha1.HTTPConfig{DomainName: "example.com", Subdomain: "app", SSO: ptr.To(true), BlockAccess: ptr.To(false)},
			Targets: []tunnelv1alpha1.Target{
				{IP: "api.prod.svc.cluster.local", Port: 8081, Method: "http", Path: "/api", PathMatchType: "prefix", Priority: ptr.To[int32](104)},
				{IP: "web.prod.svc.cluster.local", Port: 8080, Method: "https", Path: "/", PathMatchType: "prefix", Priority: ptr.To[int32](101)},
			},
		}},
		{tunnelv1alpha1.OriginalCapabilities, tunnelv1alpha1.PangolinResourceSpec{
			Name: "app.example.com", Enabled: ptr.To(true), Protocol: "http",
			TunnelRef:  &tunnelv1alpha1.TunnelRef{Name: "main"},
			HTTPConfig: &tunnelv1alpha1.HTTPConfig{DomainName: "example.com", Subdomain: "app"},
			Target:     &tunnelv1alpha1.Target{IP: "web.prod.svc.cluster.local", Port: 8080, Method: "https"},
		}},
	} {
		t.Run(c.variant.Variant(), func(t *testing.T) {
			got := render(resource(c.variant), c.variant)
			assert.Equal(t, metav1.TypeMeta{APIVersion: "tunnel.pangolin.io/v1alpha1", Kind: "PangolinResource"}, got.TypeMeta)
			assert.Equal(t, wantMeta, got.ObjectMeta)
			assert.Equal(t, c.spec, got.Spec)
		})
	}
}

// TestRenderMetadata: how the source object is named in labels and the owner reference.
func TestRenderMetadata(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b" + strings.Repeat("c", 100)
	for _, c := range []struct {
		name       string
		origin     route.Origin
		labels     map[string]string
		apiVersion string
	}{
		{"an Ingress has no kind label", ingressOrigin,
			map[string]string{pic.LabelOwnerName: "web"}, "networking.k8s.io/v1"},
		{"another kind is labelled with it", route.Origin{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute", Namespace: "prod", Name: "web", UID: "u"},
			map[string]string{pic.LabelOwnerKind: "HTTPRoute", pic.LabelOwnerName: "web"}, "gateway.networking.k8s.io/v1"},
		{"a core kind's apiVersion is its version alone", route.Origin{Version: "v1", Kind: "Service", Namespace: "prod", Name: "web", UID: "u"},
			map[string]string{pic.LabelOwnerKind: "Service"}, "v1"},
		{"a long name is cut to a label value, ending alphanumeric", route.Origin{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Namespace: "prod", Name: long, UID: "u"},
			map[string]string{pic.LabelOwnerName: strings.Repeat("a", 62)}, "networking.k8s.io/v1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := resource(tunnelv1alpha1.ForkCapabilities)
			r.Origin = c.origin
			got := render(r, tunnelv1alpha1.ForkCapabilities)
			for k, v := range c.labels {
				assert.Equal(t, v, got.Labels[k], k)
			}
			if c.origin.Kind == "Ingress" {
				assert.NotContains(t, got.Labels, pic.LabelOwnerKind)
			}
			assert.Equal(t, string(c.origin.UID), got.Labels[pic.LabelOwnerUID])
			require.Len(t, got.OwnerReferences, 1)
			ref := got.OwnerReferences[0]
			assert.Equal(t, c.apiVersion, ref.APIVersion)
			assert.Equal(t, c.origin.Name, ref.Name, "the owner reference has the whole name")
			assert.Equal(t, c.origin.UID, ref.UID)
		})
	}
}

// TestRenderTunnelNamespace: tunnelRef.namespace is written only when the tunnel lives
// elsewhere and the CRD can say so.
func TestRenderTunnelNamespace(t *testing.T) {
	r := resource(tunnelv1alpha1.ForkCapabilities)
	r.Tunnel.Namespace = r.Namespace
	assert.Empty(t, render(r, tunnelv1alpha1.ForkCapabilities).Spec.TunnelRef.Namespace, "the resource's own namespace")
	r.Tunnel.Namespace = "other"
	assert.Equal(t, "other", render(r, tunnelv1alpha1.ForkCapabilities).Spec.TunnelRef.Namespace)
	assert.Empty(t, render(r, tunnelv1alpha1.OriginalCapabilities).Spec.TunnelRef.Namespace, "the original CRD cannot")
}

// TestRenderApex: an apex host is its domain, with an empty subdomain; no targets is an
// empty list with the fork's CRD and no target with the original's.
func TestRenderApex(t *testing.T) {
	r := resource(tunnelv1alpha1.ForkCapabilities)
	r.Subdomain, r.Targets = "", nil
	fork := render(r, tunnelv1alpha1.ForkCapabilities)
	assert.Equal(t, "example.com", fork.Spec.Name)
	assert.Empty(t, fork.Spec.HTTPConfig.Subdomain)
	assert.NotNil(t, fork.Spec.Targets)
	assert.Empty(t, fork.Spec.Targets)
	assert.Nil(t, render(r, tunnelv1alpha1.OriginalCapabilities).Spec.Target)
}

// TestParseRoundTrip: what PIC wrote reads back as what it was rendered from, not drifted.
func TestParseRoundTrip(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			want := resource(v.caps)
			obj := render(want, v.caps)
			obj.UID = "object-uid"
			got := parse(obj, ingressOrigin, v.caps)
			assert.False(t, got.Drifted)
			assert.Equal(t, want, got.Resource)
			assert.True(t, want.Equal(got.Resource))
			assert.Equal(t, "object-uid", string(got.UID))
		})
	}
}

// TestParseEdits: after an edit of any field PIC owns, the object reads back as
// another resource, or as drifted when the model cannot say how (spec.name, labels):
// either way the next plan updates it. An edit of anything else changes nothing.
func TestParseEdits(t *testing.T) {
	type edit = func(*tunnelv1alpha1.PangolinResource)
	for _, c := range []struct {
		name    string
		variant tunnelv1alpha1.Capabilities
		edit    edit
		update  bool
	}{
		{"spec.name", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Name = "other" }, true},
		{"spec.enabled false", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Enabled = ptr.To(false) }, true},
		{"spec.enabled removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Enabled = nil }, true},
		{"spec.protocol", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Protocol = "tcp" }, true},
		{"spec.tunnelRef.name", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.TunnelRef.Name = "other" }, true},
		{"spec.tunnelRef.namespace", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.TunnelRef.Namespace = "other" }, true},
		{"spec.tunnelRef removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.TunnelRef = nil }, true},
		{"spec.httpConfig.domainName", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig.DomainName = "example.org" }, true},
		{"spec.httpConfig.subdomain", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig.Subdomain = "www" }, true},
		{"spec.httpConfig.sso", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig.SSO = ptr.To(false) }, true},
		{"spec.httpConfig.sso removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig.SSO = nil }, true},
		{"spec.httpConfig.blockAccess", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig.BlockAccess = ptr.To(true) }, true},
		{"spec.httpConfig removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig = nil }, true},
		{"spec.targets[].ip", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[1].IP = "10.0.0.1" }, true},
		{"spec.targets[].port", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Port = 1 }, true},
		{"spec.targets[].method", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Method = "https" }, true},
		{"spec.targets[].path", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Path = "/v2" }, true},
		{"spec.targets[].pathMatchType", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].PathMatchType = "exact" }, true},
		{"spec.targets[].priority", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Priority = ptr.To[int32](1) }, true},
		{"spec.targets reordered", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) {
			o.Spec.Targets[0], o.Spec.Targets[1] = o.Spec.Targets[1], o.Spec.Targets[0]
		}, true},
		{"a target added", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) {
			o.Spec.Targets = append(o.Spec.Targets, tunnelv1alpha1.Target{IP: "x", Port: 1})
		}, true},
		{"a target removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets = o.Spec.Targets[:1] }, true},
		{"spec.target set where targets are used", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) {
			o.Spec.Target = &tunnelv1alpha1.Target{IP: "x", Port: 1}
		}, true},
		{"spec.target.ip", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Target.IP = "10.0.0.1" }, true},
		{"spec.target.port", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Target.Port = 1 }, true},
		{"spec.target.method", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Target.Method = "http" }, true},
		{"spec.target removed", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Target = nil }, true},
		{"spec.resourceId, the operator's", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.ResourceID = "42" }, true},
		{"the uid label", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Labels[pic.LabelOwnerUID] = "other" }, true},
		{"the name label", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Labels[pic.LabelOwnerName] = "other" }, true},
		{"the namespace label removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { delete(o.Labels, pic.LabelOwnerNamespace) }, true},
		{"the managed-by label", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Labels[pic.LabelManagedBy] = "helm" }, true},
		{"the host annotation", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Annotations[pic.AnnotationHost] = "other.example.com" }, true},
		{"the host annotation removed", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { delete(o.Annotations, pic.AnnotationHost) }, true},
		{"another label", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Labels["team"] = "shop" }, false},
		{"another annotation", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Annotations["note"] = "hi" }, false},
		{"a finalizer", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Finalizers = []string{"tunnel.pangolin.io/finalizer"} }, false},
		{"the status", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Status.Status, o.Status.URL = "Ready", "https://x" }, false},
		{"the status, original", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Status.Status = "Error" }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := resource(c.variant)
			obj := render(want, c.variant)
			require.False(t, parse(obj, ingressOrigin, c.variant).Drifted, "as written")
			c.edit(obj)
			got := parse(obj, ingressOrigin, c.variant)
			assert.Equal(t, c.update, got.Drifted || !got.Equal(want))
			plan := engine.Calculate(ingressOrigin, []engine.Resource{want}, []engine.Existing{got}, nil, nil)
			assert.Equal(t, c.update, len(plan.Update) == 1, "the plan updates it")
		})
	}
}

// TestStatus: the operator's verdict, read from status.status or else the Ready
// condition; a verdict about an older generation is Pending; the URL falls back to the
// full domain, then to the host.
func TestStatus(t *testing.T) {
	ready := func(s metav1.ConditionStatus, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: tunnelv1alpha1.ConditionReady, Status: s, Reason: "R", Message: msg}}
	}
	for _, c := range []struct {
		name       string
		generation int64
		status     tunnelv1alpha1.PangolinResourceStatus
		apex       bool
		want       engine.Status
	}{
		{"no status yet is Pending, with the host's URL", 1, tunnelv1alpha1.PangolinResourceStatus{},
			false, engine.Status{Phase: engine.PhasePending, URL: "https://app.example.com"}},
		{"an apex host without a status has no URL yet", 1, tunnelv1alpha1.PangolinResourceStatus{},
			true, engine.Status{Phase: engine.PhasePending}},
		{"status Ready", 1, tunnelv1alpha1.PangolinResourceStatus{Status: "Ready", URL: "https://app.example.com/"},
			false, engine.Status{Phase: engine.PhaseReady, URL: "https://app.example.com/"}},
		{"the full domain when there is no URL", 1, tunnelv1alpha1.PangolinResourceStatus{Status: "Ready", FullDomain: "apex.example.com"},
			true, engine.Status{Phase: engine.PhaseReady, URL: "https://apex.example.com"}},
		{"status Error, with the Ready condition's message", 1, tunnelv1alpha1.PangolinResourceStatus{Status: "Error", Conditions: ready(metav1.ConditionFalse, "domain not found")},
			false, engine.Status{Phase: engine.PhaseError, URL: "https://app.example.com", Message: "domain not found"}},
		{"status Error without a message", 1, tunnelv1alpha1.PangolinResourceStatus{Status: "Error"},
			false, engine.Status{Phase: engine.PhaseError, URL: "https://app.example.com", Message: "the operator reports status Error without a message"}},
		{"the Ready condition True, without status.status", 1, tunnelv1alpha1.PangolinResourceStatus{Conditions: ready(metav1.ConditionTrue, "")},
			false, engine.Status{Phase: engine.PhaseReady, URL: "https://app.example.com"}},
		{"the Ready condition False, without status.status", 1, tunnelv1alpha1.PangolinResourceStatus{Conditions: ready(metav1.ConditionFalse, "no site")},
			false, engine.Status{Phase: engine.PhaseError, URL: "https://app.example.com", Message: "no site"}},
		{"status.status wins over the condition", 1, tunnelv1alpha1.PangolinResourceStatus{Status: "Creating", Conditions: ready(metav1.ConditionTrue, "")},
			false, engine.Status{Phase: engine.PhasePending, URL: "https://app.example.com"}},
		{"a verdict about an older generation is Pending", 3, tunnelv1alpha1.PangolinResourceStatus{Status: "Ready", ObservedGeneration: 2},
			false, engine.Status{Phase: engine.PhasePending, URL: "https://app.example.com"}},
		{"an Error about an older generation is Pending", 3, tunnelv1alpha1.PangolinResourceStatus{Status: "Error", ObservedGeneration: 2},
			false, engine.Status{Phase: engine.PhasePending, URL: "https://app.example.com"}},
		{"a verdict about this generation counts", 3, tunnelv1alpha1.PangolinResourceStatus{Status: "Ready", ObservedGeneration: 3},
			false, engine.Status{Phase: engine.PhaseReady, URL: "https://app.example.com"}},
		{"an operator that does not report observedGeneration is believed", 3, tunnelv1alpha1.PangolinResourceStatus{Status: "Ready"},
			false, engine.Status{Phase: engine.PhaseReady, URL: "https://app.example.com"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := resource(tunnelv1alpha1.ForkCapabilities)
			if c.apex {
				r.Subdomain = ""
			}
			obj := render(r, tunnelv1alpha1.ForkCapabilities)
			obj.Generation, obj.Status = c.generation, c.status
			assert.Equal(t, c.want, parse(obj, ingressOrigin, tunnelv1alpha1.ForkCapabilities).Status)
		})
	}
}

// TestOwnership: PIC owns an object only when a controller owner reference and the uid
// label name the same UID; the owner index holds only those.
func TestOwnership(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*tunnelv1alpha1.PangolinResource)
		owned bool
	}{
		{"as PIC writes it", func(*tunnelv1alpha1.PangolinResource) {}, true},
		{"the uid label alone (a copy)", func(o *tunnelv1alpha1.PangolinResource) { o.OwnerReferences = nil }, false},
		{"the owner reference alone", func(o *tunnelv1alpha1.PangolinResource) { delete(o.Labels, pic.LabelOwnerUID) }, false},
		{"an empty uid label", func(o *tunnelv1alpha1.PangolinResource) { o.Labels[pic.LabelOwnerUID] = "" }, false},
		{"the two disagree (a decoy)", func(o *tunnelv1alpha1.PangolinResource) { o.Labels[pic.LabelOwnerUID] = "other" }, false},
		{"an owner reference that is not the controller", func(o *tunnelv1alpha1.PangolinResource) { o.OwnerReferences[0].Controller = nil }, false},
		{"another controller, with PIC's label", func(o *tunnelv1alpha1.PangolinResource) {
			o.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "other", Controller: ptr.To(true)}}
		}, false},
		{"other owners besides", func(o *tunnelv1alpha1.PangolinResource) {
			o.OwnerReferences = append(o.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "other"})
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := render(resource(tunnelv1alpha1.ForkCapabilities), tunnelv1alpha1.ForkCapabilities)
			c.edit(obj)
			uid, owned := owner(obj)
			assert.Equal(t, c.owned, owned)
			if c.owned {
				assert.Equal(t, "uid-web", string(uid))
				assert.Equal(t, []string{"uid-web"}, IndexOwner(obj))
			} else {
				assert.Empty(t, uid)
				assert.Empty(t, IndexOwner(obj))
			}
		})
	}
	assert.Empty(t, IndexOwner(&corev1.ConfigMap{}), "not a PangolinResource")
}
