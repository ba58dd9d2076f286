package pangolinresource

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
)

// TestWatchEventsTellTheSinksOwnWrites: the sink declares PangolinResources as kept for
// their owner, serving their host, and tells an event that is the echo of the owner's
// own write (the core then brings back neither the owner nor, for that host, itself)
// from one that is not.
func TestWatchEventsTellTheSinksOwnWrites(t *testing.T) {
	ctx := context.Background()
	caps := tunnelv1alpha1.ForkCapabilities
	r := resource(caps)
	updated := resource(caps)
	updated.Targets[1].Backend.Port = 9090

	for _, tc := range []struct {
		name string
		// stored is in the API server first; plan is what PIC applies then.
		stored *tunnelv1alpha1.PangolinResource
		plan   engine.Plan
		// deliver sends the watch event, given the object as the API server has it
		// after the plan (nil: deleted) and before it.
		deliver func(h eventHandler, after, before *tunnelv1alpha1.PangolinResource)
		// want is, for each event delivered, whether it is PIC's own write.
		want []bool
	}{
		{
			name: "PIC's own create", plan: engine.Plan{Create: []engine.Resource{r}},
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.create(after) },
			want:    []bool{true},
		},
		{
			name: "a create PIC did not make", stored: stored(r, caps, "uid-1"),
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.create(after) },
			want:    []bool{false},
		},
		{
			name: "the initial list, at start: each owner and claimant is reconciled anyway", stored: stored(r, caps, "uid-1"),
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.listed(after) },
			want:    []bool{false},
		},
		{
			name: "the same create delivered to the controller of each source: each sees the echo", plan: engine.Plan{Create: []engine.Resource{r}},
			deliver: func(h eventHandler, after, _ *tunnelv1alpha1.PangolinResource) { h.create(after); h.create(after) },
			want:    []bool{true, true},
		},
		{
			name: "PIC's own update", stored: stored(r, caps, "uid-1"),
			plan:    engine.Plan{Update: []engine.Resource{updated}},
			deliver: func(h eventHandler, after, before *tunnelv1alpha1.PangolinResource) { h.update(before, after) },
			want:    []bool{true},
		},
		{
			name: "a later write by someone else (the operator's status)", stored: stored(r, caps, "uid-1"),
			plan: engine.Plan{Update: []engine.Resource{updated}},
			deliver: func(h eventHandler, after, before *tunnelv1alpha1.PangolinResource) {
				status := after.DeepCopy()
				status.ResourceVersion += "1"
				h.update(before, status)
			},
			want: []bool{false},
		},
		{
			name: "a resync", stored: stored(r, caps, "uid-1"),
			deliver: func(h eventHandler, _, before *tunnelv1alpha1.PangolinResource) { h.update(before, before) },
			want:    []bool{false},
		},
		{
			name: "PIC's own delete", stored: stored(r, caps, "uid-1"),
			plan:    engine.Plan{Delete: []engine.Existing{{Resource: r, UID: "uid-1"}}},
			deliver: func(h eventHandler, _, before *tunnelv1alpha1.PangolinResource) { h.delete(before) },
			want:    []bool{true},
		},
		{
			name: "the delete of a same-named successor", stored: stored(r, caps, "uid-1"),
			plan: engine.Plan{Delete: []engine.Existing{{Resource: r, UID: "uid-1"}}},
			deliver: func(h eventHandler, _, before *tunnelv1alpha1.PangolinResource) {
				successor := before.DeepCopy()
				successor.UID = "uid-2"
				h.delete(successor)
			},
			want: []bool{false},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objects []client.Object
			if tc.stored != nil {
				objects = append(objects, tc.stored)
			}
			w := newWorld(t, objects...)
			s := New(w.client, w.client, caps)
			before := w.get(t, r.Name)
			_, err := s.Apply(ctx, ingressOrigin, tc.plan)
			require.NoError(t, err)

			var got []bool
			tc.deliver(eventHandler{sink: s, echoes: &got}, w.get(t, r.Name), before)
			assert.Equal(t, tc.want, got)
		})
	}
}

// eventHandler delivers watch events to what the sink declares, as the core's handler
// would, and records whether each is the sink's own write.
type eventHandler struct {
	sink   *Sink
	echoes *[]bool
}

func (h eventHandler) written(obj *tunnelv1alpha1.PangolinResource, deleted bool) {
	watch := h.sink.Declare().Resources[0]
	uid, echo := watch.WrittenBy(obj, deleted)
	if echo && uid != ingressOrigin.UID {
		panic("an echo of another owner's write")
	}
	*h.echoes = append(*h.echoes, echo)
}

func (h eventHandler) create(obj *tunnelv1alpha1.PangolinResource) { h.written(obj, false) }

func (h eventHandler) listed(obj *tunnelv1alpha1.PangolinResource) { h.written(obj, false) }

func (h eventHandler) update(_, obj *tunnelv1alpha1.PangolinResource) { h.written(obj, false) }

func (h eventHandler) delete(obj *tunnelv1alpha1.PangolinResource) { h.written(obj, true) }

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

// specSchema is the CRD's schema of spec, to edit for a CRD that lacks a field.
func specSchema(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	require.Len(t, crd.Spec.Versions, 1)
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

func setSpecSchema(crd *apiextensionsv1.CustomResourceDefinition, spec apiextensionsv1.JSONSchemaProps) {
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
}

// TestDetectRawResources: the sink offers raw resources to the engine when the
// installed CRD has spec.proxyConfig.proxyPort, as both known variants do; without it
// the engine refuses TCP and UDP ports (RawResourceUnsupported) and nothing is written.
func TestDetectRawResources(t *testing.T) {
	withoutProxyConfig := func(crd *apiextensionsv1.CustomResourceDefinition) {
		spec := specSchema(t, crd)
		delete(spec.Properties, "proxyConfig")
		setSpecSchema(crd, spec)
	}
	withoutProxyPort := func(crd *apiextensionsv1.CustomResourceDefinition) {
		spec := specSchema(t, crd)
		proxyConfig := spec.Properties["proxyConfig"]
		delete(proxyConfig.Properties, "proxyPort")
		proxyConfig.Required = nil
		spec.Properties["proxyConfig"] = proxyConfig
		setSpecSchema(crd, spec)
	}
	for _, c := range []struct {
		name    string
		variant string
		edit    func(*apiextensionsv1.CustomResourceDefinition)
		want    tunnelv1alpha1.Capabilities
	}{
		{"the fork's CRD", "fork", nil, tunnelv1alpha1.ForkCapabilities},
		{"the original CRD", "original", nil, tunnelv1alpha1.OriginalCapabilities},
		{"the fork's CRD without proxyConfig", "fork", withoutProxyConfig,
			tunnelv1alpha1.Capabilities{Targets: true, AccessControl: true, TunnelNamespace: true}},
		{"the original CRD without proxyConfig", "original", withoutProxyConfig, tunnelv1alpha1.Capabilities{}},
		{"a proxyConfig without proxyPort", "original", withoutProxyPort, tunnelv1alpha1.Capabilities{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			crd := installedCRD(t, c.variant)
			if c.edit != nil {
				c.edit(crd)
			}
			reader := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(crd).Build()
			caps, err := DetectCapabilities(context.Background(), reader)
			require.NoError(t, err)
			assert.Equal(t, c.want, caps)
			assert.Equal(t, c.want.RawResources, New(nil, nil, caps).Features().RawResources)
		})
	}
}
