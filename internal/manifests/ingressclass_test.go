package manifests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHelmTunnelIngressClasses checks that the chart creates the IngressClass of each
// tunnel alias, so that a user who adds a tunnel to the values does not also have to add
// its class to a second list.
func TestHelmTunnelIngressClasses(t *testing.T) {
	cases := []struct {
		name   string
		values string
		want   []string
		check  func(t *testing.T, classes []*unstructured.Unstructured)
	}{
		{"each alias of tunnels gets its IngressClass beside pangolin", `
tunnels: {edge-eu: edge-eu-tunnel, staging: {name: staging-tunnel, allowedNamespaces: [staging]}}
`, []string{"pangolin", "pangolin-edge-eu", "pangolin-staging"}, nil},
		{"each alias of config.tunnelClassMapping gets its IngressClass too", `
config: {tunnelClassMapping: "edge-us=network-us/edge-us-tunnel\n lab = lab-tunnel ,"}
`, []string{"pangolin", "pangolin-edge-us", "pangolin-lab"}, nil},
		{"a class ingressClasses lists keeps its options and is not created twice", `
ingressClasses: [pangolin, {name: pangolin-edge-eu, tunnel: pangolin-system/edge-eu-tunnel}]
tunnels: {edge-eu: edge-eu-tunnel, edge-us: edge-us-tunnel}
`, []string{"pangolin", "pangolin-edge-eu", "pangolin-edge-us"}, func(t *testing.T, classes []*unstructured.Unstructured) {
			for _, o := range classes {
				ic := decodeStrict[networkingv1.IngressClass](t, o)
				assert.Equal(t, ingressController, ic.Spec.Controller, ic.Name)
				if ic.Name == "pangolin-edge-eu" {
					assert.Equal(t, map[string]string{"pangolin.ingress.k8s.io/tunnel-name": "pangolin-system/edge-eu-tunnel"}, ic.Annotations)
				} else {
					assert.Empty(t, ic.Annotations, ic.Name)
				}
			}
		}},
		{"tunnelIngressClasses=false creates only the classes of ingressClasses", `
tunnelIngressClasses: false
tunnels: {edge-eu: edge-eu-tunnel}
`, []string{"pangolin"}, nil},
		{"an empty ingressClasses still gets the aliases' classes", `
ingressClasses: []
tunnels: {edge-eu: edge-eu-tunnel}
`, []string{"pangolin-edge-eu"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			classes := ofKind(renderChart(t, c.values), "IngressClass")
			assert.Equal(t, c.want, names(classes))
			if c.check != nil {
				c.check(t, classes)
			}
		})
	}
}

// TestHelmNotesListTunnelClasses checks that NOTES.txt names the classes the chart made.
func TestHelmNotesListTunnelClasses(t *testing.T) {
	files, err := renderChartFiles("tunnels: {edge-eu: edge-eu-tunnel}\n")
	require.NoError(t, err)
	var notes string
	for name, text := range files {
		if strings.HasSuffix(name, "/NOTES.txt") {
			notes = text
		}
	}
	require.NotEmpty(t, notes)
	assert.Contains(t, notes, "  - pangolin\n")
	assert.Contains(t, notes, "  - pangolin-edge-eu\n")
}
