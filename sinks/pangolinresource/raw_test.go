package pangolinresource

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

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

// installedCRD is the PangolinResource CRD of an operator variant ("fork" or
// "original"), as config/crd/operator holds it verbatim.
func installedCRD(t *testing.T, variant string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "operator", variant, "tunnel.pangolin.io_pangolinresources.yaml"))
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(data, &crd))
	return &crd
}

// TestRenderRaw: a TCP or UDP resource is spec.protocol and proxyConfig, no httpConfig
// (its subdomain is required), and one target of the same method, in the variant's shape.
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
			got := render(rawResource(c.protocol, c.port), c.variant)
			assert.Equal(t, c.want, got.Spec)
			assert.Equal(t, map[string]string{pic.AnnotationHost: route.PortKey(c.protocol, c.port)}, got.Annotations, "the port key is the host")
			assert.Equal(t, "Service", got.Labels[pic.LabelOwnerKind])
			require.Len(t, got.OwnerReferences, 1)
			assert.Equal(t, serviceOrigin.UID, got.OwnerReferences[0].UID)
		})
	}
}

// apiServer stores objects as a real API server would for a CRD: pruned of unknown
// fields and defaulted, and refuses what breaks the schema's required fields, bounds,
// minimum lengths and enums. (The API server's own defaulting and validation packages need CEL, which PIC
// does not build with; the CRDs use nothing beyond these.)
type apiServer struct {
	schema *structuralschema.Structural
}

func apiServerFor(t *testing.T, variant string) apiServer {
	t.Helper()
	var internal apiextensions.JSONSchemaProps
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(
		installedCRD(t, variant).Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil))
	s, err := structuralschema.NewStructural(&internal)
	require.NoError(t, err)
	return apiServer{schema: s}
}

// store returns obj as the API server would store it.
func (a apiServer) store(t *testing.T, obj *tunnelv1alpha1.PangolinResource) *tunnelv1alpha1.PangolinResource {
	t.Helper()
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	pruning.Prune(fields, a.schema, true)
	applyDefaults(fields, a.schema)
	spec := a.schema.Properties["spec"]
	require.Empty(t, invalid("spec", fields["spec"], &spec), "the API server refuses it")
	var out tunnelv1alpha1.PangolinResource
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &out))
	return &out
}

// applyDefaults sets every absent field that has a default, as the API server does.
func applyDefaults(x any, s *structuralschema.Structural) {
	switch x := x.(type) {
	case map[string]any:
		for k, prop := range s.Properties {
			if _, found := x[k]; !found && prop.Default.Object != nil {
				x[k] = runtime.DeepCopyJSONValue(prop.Default.Object)
			}
		}
		for k := range x {
			if prop, found := s.Properties[k]; found {
				applyDefaults(x[k], &prop)
			}
		}
	case []any:
		for i := range x {
			applyDefaults(x[i], s.Items)
		}
	}
}

// invalid lists what in x breaks s's required fields, bounds, minimum lengths and enums.
func invalid(path string, x any, s *structuralschema.Structural) []string {
	var out []string
	if v := s.ValueValidation; v != nil {
		if m, ok := x.(map[string]any); ok {
			for _, r := range v.Required {
				if _, found := m[r]; !found {
					out = append(out, path+"."+r+" is required")
				}
			}
		}
		if n, ok := x.(int64); ok {
			if v.Minimum != nil && float64(n) < *v.Minimum || v.Maximum != nil && float64(n) > *v.Maximum {
				out = append(out, fmt.Sprintf("%s %d is out of bounds", path, n))
			}
		}
		if str, ok := x.(string); ok && v.MinLength != nil && int64(len(str)) < *v.MinLength {
			out = append(out, fmt.Sprintf("%s %q is too short", path, str))
		}
		if len(v.Enum) > 0 && !slices.ContainsFunc(v.Enum, func(e structuralschema.JSON) bool { return e.Object == x }) {
			out = append(out, fmt.Sprintf("%s %v is not in the enum", path, x))
		}
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if prop, found := s.Properties[k]; found {
				out = append(out, invalid(path+"."+k, v, &prop)...)
			}
		}
	case []any:
		for i, v := range x {
			out = append(out, invalid(fmt.Sprintf("%s[%d]", path, i), v, s.Items)...)
		}
	}
	return out
}

// TestSimulatedAPIServer: the simulated API server refuses what the real one would:
// otherwise TestParseRawRoundTrip proves nothing about validity.
func TestSimulatedAPIServer(t *testing.T) {
	api := apiServerFor(t, "fork")
	spec := api.schema.Properties["spec"]
	for _, c := range []struct {
		name string
		edit func(*tunnelv1alpha1.PangolinResource)
	}{
		{"proxyConfig without proxyPort", func(o *tunnelv1alpha1.PangolinResource) { o.Spec.ProxyConfig.ProxyPort = 0 }},
		{"a port out of bounds", func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Port = 70000 }},
		{"a method out of the enum", func(o *tunnelv1alpha1.PangolinResource) { o.Spec.Targets[0].Method = "sctp" }},
		{"httpConfig without subdomain", func(o *tunnelv1alpha1.PangolinResource) { o.Spec.HTTPConfig = &tunnelv1alpha1.HTTPConfig{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := render(rawResource(route.ProtocolTCP, 5432), tunnelv1alpha1.ForkCapabilities)
			c.edit(obj)
			fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			require.NoError(t, err)
			assert.NotEmpty(t, invalid("spec", fields["spec"], &spec))
		})
	}
}

// TestParseRawRoundTrip: a raw resource PIC wrote, as the API server stored it (pruned,
// defaulted), reads back as what it was rendered from and not drifted, so that a
// converged object is not written again. HTTP resources are stored the same way, as
// a control: the simulated API server must let a converged one be.
func TestParseRawRoundTrip(t *testing.T) {
	for _, v := range variants {
		api := apiServerFor(t, v.name)
		for _, want := range []engine.Resource{rawResource(route.ProtocolTCP, 5432), rawResource(route.ProtocolUDP, 53), resource(v.caps)} {
			t.Run(v.name+"/"+want.Host, func(t *testing.T) {
				obj := api.store(t, render(want, v.caps))
				got := parse(obj, want.Origin, v.caps)
				assert.False(t, got.Drifted)
				assert.Equal(t, want, got.Resource)
				plan := engine.Calculate(want.Origin, []engine.Resource{want}, []engine.Existing{got}, nil, nil)
				assert.True(t, plan.Empty(), "nothing to write: %+v", plan)
			})
		}
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
			assert.Equal(t, "tcp:5432", got.PublicHostname())
		})
	}
}

// TestApplyRawConverges: the sink creates a raw resource once; read back, it plans
// nothing, so a steady state writes nothing.
func TestApplyRawConverges(t *testing.T) {
	ctx := context.Background()
	for _, v := range variants {
		for _, want := range []engine.Resource{rawResource(route.ProtocolTCP, 5432), rawResource(route.ProtocolUDP, 53)} {
			t.Run(v.name+"/"+want.Host, func(t *testing.T) {
				w := newWorld(t)
				s := New(w.client, w.client, v.caps)
				reconcile := func() engine.Plan {
					existing, err := s.Current(ctx, serviceOrigin)
					require.NoError(t, err)
					plan := engine.Calculate(serviceOrigin, []engine.Resource{want}, existing, nil, nil)
					_, err = s.Apply(ctx, serviceOrigin, plan)
					require.NoError(t, err)
					return plan
				}
				require.Len(t, reconcile().Create, 1)
				assert.Equal(t, map[string]int{"create": 1}, w.writes)
				assert.True(t, reconcile().Empty())
				assert.Equal(t, map[string]int{"create": 1}, w.writes, "no write once converged")
				stored := w.get(t, want.Name)
				require.NotNil(t, stored)
				assert.Equal(t, string(want.Protocol), stored.Spec.Protocol)
				assert.Nil(t, stored.Spec.HTTPConfig)
			})
		}
	}
}
