package pangolinresource

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var serviceOrigin = route.Origin{Version: "v1", Kind: "Service", Namespace: "prod", Name: "db", UID: "uid-db"}

// rawResource is a desired TCP or UDP resource as the engine gives it: one target, no
// domain, no access settings.
func rawResource(p route.Protocol, port int32) engine.Resource {
	return engine.Resource{
		Name: "pic-prod-db-0123456789", Namespace: "prod", Origin: serviceOrigin,
		Host: route.PortKey(p, port), Protocol: p, ProxyPort: port,
		Tunnel:  route.TunnelRef{Namespace: "prod", Name: "main"},
		Targets: []engine.Target{{Backend: route.Backend{Host: "db.prod.svc.cluster.local", Port: 5432, Scheme: string(p)}}},
	}
}

// TestRenderRaw: a TCP or UDP resource is spec.protocol and proxyConfig, no httpConfig
// (its subdomain is required), and one target of the same method, in the variant's shape;
// parse reads it back as the resource it was rendered from, not drifted. That the API
// server stores it unchanged, so that a converged resource is not written again, is
// integration.TestRawResourcesStoredAsRendered, on a real API server.
func TestRenderRaw(t *testing.T) {
	for _, c := range []struct {
		variant  tunnelv1alpha1.Capabilities
		protocol route.Protocol
		port     int32
		want     tunnelv1alpha1.PangolinResourceSpec
	}{
		{tunnelv1alpha1.ForkCapabilities, route.ProtocolTCP, 5432, tunnelv1alpha1.PangolinResourceSpec{
			Name: "tcp:5432", Enabled: ptr.To(true), Protocol: "tcp",
			TunnelRef:   &tunnelv1alpha1.TunnelRef{Name: "main"},
			ProxyConfig: &tunnelv1alpha1.ProxyConfig{EnableProxy: ptr.To(true), ProxyPort: 5432},
			Targets:     []tunnelv1alpha1.Target{{IP: "db.prod.svc.cluster.local", Port: 5432, Method: "tcp", Priority: ptr.To[int32](100)}},
		}},
		{tunnelv1alpha1.ForkCapabilities, route.ProtocolUDP, 53, tunnelv1alpha1.PangolinResourceSpec{
			Name: "udp:53", Enabled: ptr.To(true), Protocol: "udp",
			TunnelRef:   &tunnelv1alpha1.TunnelRef{Name: "main"},
			ProxyConfig: &tunnelv1alpha1.ProxyConfig{EnableProxy: ptr.To(true), ProxyPort: 53},
			Targets:     []tunnelv1alpha1.Target{{IP: "db.prod.svc.cluster.local", Port: 5432, Method: "udp", Priority: ptr.To[int32](100)}},
		}},
		{tunnelv1alpha1.OriginalCapabilities, route.ProtocolTCP, 5432, tunnelv1alpha1.PangolinResourceSpec{
			Name: "tcp:5432", Enabled: ptr.To(true), Protocol: "tcp",
			TunnelRef:   &tunnelv1alpha1.TunnelRef{Name: "main"},
			ProxyConfig: &tunnelv1alpha1.ProxyConfig{EnableProxy: ptr.To(true), ProxyPort: 5432},
			Target:      &tunnelv1alpha1.Target{IP: "db.prod.svc.cluster.local", Port: 5432, Method: "tcp"},
		}},
		{tunnelv1alpha1.OriginalCapabilities, route.ProtocolUDP, 53, tunnelv1alpha1.PangolinResourceSpec{
			Name: "udp:53", Enabled: ptr.To(true), Protocol: "udp",
			TunnelRef:   &tunnelv1alpha1.TunnelRef{Name: "main"},
			ProxyConfig: &tunnelv1alpha1.ProxyConfig{EnableProxy: ptr.To(true), ProxyPort: 53},
			Target:      &tunnelv1alpha1.Target{IP: "db.prod.svc.cluster.local", Port: 5432, Method: "udp"},
		}},
	} {
		t.Run(c.variant.Variant()+"/"+string(c.protocol), func(t *testing.T) {
			r := rawResource(c.protocol, c.port)
			got := render(r, c.variant)
			assert.Equal(t, c.want, got.Spec)
			assert.Equal(t, map[string]string{pic.AnnotationHost: route.PortKey(c.protocol, c.port)}, got.Annotations, "the port key is the host")
			assert.Equal(t, "Service", got.Labels[pic.LabelOwnerKind])
			require.Len(t, got.OwnerReferences, 1)
			assert.Equal(t, serviceOrigin.UID, got.OwnerReferences[0].UID)
			back := parse(got, serviceOrigin, c.variant)
			assert.Equal(t, r, back.Resource, "read back")
			assert.False(t, back.Drifted)
		})
	}
}

// TestParseRawEdits: an edit of any field of a raw resource that PIC owns makes the next
// plan update it; the defaults PIC writes are compared like any other field.
func TestParseRawEdits(t *testing.T) {
	type edit = func(*tunnelv1alpha1.PangolinResource)
	for _, c := range []struct {
		name    string
		variant tunnelv1alpha1.Capabilities
		edit    edit
		update  bool
	}{
		{"spec.protocol udp", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Protocol = "udp" }, true},
		{"spec.protocol http", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Protocol = "http" }, true},
		{"spec.proxyConfig.proxyPort", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.ProxyConfig.ProxyPort = 5433 }, true},
		{"spec.proxyConfig.enableProxy false", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.ProxyConfig.EnableProxy = ptr.To(false) }, true},
		{"spec.proxyConfig removed", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.ProxyConfig = nil }, true},
		{"spec.httpConfig added", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) {
			o.Spec.HTTPConfig = &tunnelv1alpha1.HTTPConfig{Subdomain: "db", DomainName: "example.com"}
		}, true},
		{"spec.targets[].ip", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].IP = "10.0.0.1" }, true},
		{"spec.targets[].method", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Method = "udp" }, true},
		{"spec.targets[].priority", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Priority = ptr.To[int32](7) }, true},
		{"spec.targets[].path", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Path = "/" }, true},
		{"spec.target.port", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Target.Port = 5433 }, true},
		{"the host annotation", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Annotations[pic.AnnotationHost] = "tcp:5433" }, true},
		{"the status", tunnelv1alpha1.ForkCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Status.Status = "Ready" }, false},
		{"another label", tunnelv1alpha1.OriginalCapabilities, func(o *tunnelv1alpha1.PangolinResource) { o.Labels["team"] = "data" }, false},
	} {
		t.Run(c.variant.Variant()+"/"+c.name, func(t *testing.T) {
			want := rawResource(route.ProtocolTCP, 5432)
			obj := render(want, c.variant)
			require.False(t, parse(obj, serviceOrigin, c.variant).Drifted, "as written")
			c.edit(obj)
			got := parse(obj, serviceOrigin, c.variant)
			plan := engine.Calculate(serviceOrigin, []engine.Resource{want}, []engine.Existing{got}, nil, nil)
			assert.Equal(t, c.update, len(plan.Update) == 1, "the plan updates it")
		})
	}
}

// TestStatusRaw: the operator records no URL for a raw resource; the resource is known
// by its port key, whatever its phase.
func TestStatusRaw(t *testing.T) {
	for _, c := range []struct {
		name   string
		status tunnelv1alpha1.PangolinResourceStatus
		phase  engine.Phase
	}{
		{"not processed yet", tunnelv1alpha1.PangolinResourceStatus{}, engine.PhasePending},
		{"Ready", tunnelv1alpha1.PangolinResourceStatus{Status: "Ready"}, engine.PhaseReady},
		{"Ready, with a URL that is no https one", tunnelv1alpha1.PangolinResourceStatus{Status: "Ready", URL: "https://"}, engine.PhaseReady},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := render(rawResource(route.ProtocolTCP, 5432), tunnelv1alpha1.ForkCapabilities)
			obj.Status = c.status
			got := parse(obj, serviceOrigin, tunnelv1alpha1.ForkCapabilities)
			assert.Equal(t, engine.Status{Phase: c.phase}, got.Status)
			assert.Equal(t, "tcp:5432", got.ReportedHost())
		})
	}
}
