package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// startAll builds every registered source as one start of PIC does, with mapper's APIs
// (nil: every API, as in `render`), and returns what the sources and the parts they
// share declare.
func startAll(t *testing.T, mapper meta.RESTMapper) ([]plugin.Controller, int) {
	t.Helper()
	cfg := config.Default()
	cfg.Sources = SourceNames()
	shared := plugin.NewShared()
	deps := plugin.SourceDeps{Mapper: mapper, Config: cfg, Shared: shared}
	var controllers []plugin.Controller
	runnables := 0
	for _, name := range cfg.Sources {
		src, err := Registry.Sources[name].New(context.Background(), deps)
		require.NoError(t, err, name)
		controllers = append(controllers, src.Declare().Controllers...)
		runnables += len(src.Declare().Runnables)
	}
	for _, part := range shared.Declarations() {
		controllers = append(controllers, part.Controllers...)
		runnables += len(part.Runnables)
	}
	return controllers, runnables
}

// TestAccessPoliciesAreOnePartForEverySource: the sources that protect their objects
// with AccessPolicies (Ingress, HTTPRoute, TCPRoute, UDPRoute) share one Policies, so
// that PIC runs one controller for the policies' status, and one check for their CRD
// when it is missing.
func TestAccessPoliciesAreOnePartForEverySource(t *testing.T) {
	controllers, _ := startAll(t, nil)
	var policyControllers int
	for _, c := range controllers {
		if c.Name == "accesspolicy" {
			policyControllers++
		}
	}
	assert.Equal(t, 1, policyControllers, "one status controller for AccessPolicies")

	gatewayAPIOnly := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"GatewayClass", "Gateway", "HTTPRoute", "TCPRoute", "UDPRoute", "ReferenceGrant"} {
		gatewayAPIOnly.Add(schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: kind}, meta.RESTScopeNamespace)
	}
	_, runnables := startAll(t, gatewayAPIOnly)
	assert.Equal(t, 1, runnables, "without the AccessPolicy CRD, one check for its arrival")
}
