package builtin

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// startAll builds every registered source as one start of PIC does, with mapper's APIs
// (nil: every API, as in `render`), and returns the controllers the core runs besides
// the sources' own reconcilers, and the number of runnables the sources and the parts
// they share declare.
func startAll(t *testing.T, mapper meta.RESTMapper) ([]plugin.Controller, int) {
	t.Helper()
	cfg := config.Default()
	cfg.Sources = SourceNames()
	shared := plugin.NewShared()
	deps := plugin.SourceDeps{Mapper: mapper, Config: cfg, Shared: shared}
	var srcs []plugin.Source
	runnables := 0
	for _, name := range cfg.Sources {
		src, err := Registry.Sources[name].New(context.Background(), deps)
		require.NoError(t, err, name)
		srcs = append(srcs, src)
		runnables += len(src.Declare().Runnables)
	}
	parts := shared.Declarations()
	for _, part := range parts {
		runnables += len(part.Runnables)
	}
	controllers, err := controller.Deps{Sources: plugin.DeclareAll(srcs...), SharedParts: parts}.Controllers()
	require.NoError(t, err)
	return controllers, runnables
}

// TestSharedPartsAreBuiltOnce: the sources that protect their objects with
// AccessPolicies (Ingress, HTTPRoute, TCPRoute, UDPRoute) share one Policies, and the
// Gateway API sources one status of Gateways, so that PIC runs one controller for each
// status, and one check for the AccessPolicy CRD when it is missing. A part built once
// per source would declare its controller twice, which the core refuses.
func TestSharedPartsAreBuiltOnce(t *testing.T) {
	controllers, _ := startAll(t, nil)
	var names []string
	for _, c := range controllers {
		names = append(names, c.Name)
	}
	assert.ElementsMatch(t, []string{"accesspolicy", "gateway", "gatewayclass"}, names)

	gatewayAPIOnly := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"GatewayClass", "Gateway", "HTTPRoute", "TCPRoute", "UDPRoute", "ReferenceGrant"} {
		gatewayAPIOnly.Add(schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: kind}, meta.RESTScopeNamespace)
	}
	_, runnables := startAll(t, gatewayAPIOnly)
	assert.Equal(t, 1, runnables, "without the AccessPolicy CRD, one check for its arrival")
}
