package render_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/render"
)

// TestEverySourceRunsOffline: render builds every source the registry has, with no
// cluster to ask which APIs are installed.
func TestEverySourceRunsOffline(t *testing.T) {
	for _, name := range builtin.SourceNames() {
		f := builtin.Registry.Sources[name]
		src, err := f.New(context.Background(), plugin.SourceDeps{Config: config.Default(), Shared: plugin.NewShared()})
		require.NoError(t, err, name)
		assert.Equal(t, name, src.Name())
	}
}

func objects(t *testing.T, manifest string) []client.Object {
	t.Helper()
	scheme := apis.Scheme()
	ms, err := render.Decode("in.yaml", []byte(manifest), scheme, func(gvk schema.GroupVersionKind) (schema.GroupVersionKind, bool, error) {
		return gvk, true, nil
	})
	require.NoError(t, err)
	var out []client.Object
	for _, m := range ms {
		// UIDs are unique across kinds, as in a cluster: a Service and an Ingress of one
		// name are two owners.
		m.Object.SetUID(types.UID("uid-" + m.Object.GetObjectKind().GroupVersionKind().Kind + "-" + m.Object.GetName()))
		out = append(out, m.Object)
	}
	return out
}

// TestRun: a run converges in one pass (the second writes nothing), and reports the
// events in the order they were emitted.
func TestRun(t *testing.T) {
	cfg := config.Default()
	cfg.Sources = builtin.SourceNames()
	opts := render.Options{Config: cfg, CRDVariant: "fork"}

	res, err := render.Run(context.Background(), objects(t, scenario), opts)
	require.NoError(t, err)
	assert.Equal(t, []render.Pass{{}, {}}, res.Passes, "no tunnel, nothing written")
	require.Len(t, res.Warnings(), 2)
	assert.Equal(t, "TunnelNotFound", res.Warnings()[0].Reason)
	assert.Equal(t, "WildcardHost", res.Warnings()[1].Reason)
	assert.Empty(t, res.Resources)

	opts.AssumeTunnels = true
	res, err = render.Run(context.Background(), objects(t, scenario), opts)
	require.NoError(t, err)
	require.Len(t, res.Passes, 2)
	assert.Equal(t, render.Pass{Writes: 1}, res.Passes[0], "the PangolinResource; no address until Pangolin serves it")
	assert.Equal(t, render.Pass{}, res.Passes[1])
	require.Len(t, res.Resources, 1)

	direct := *cfg
	direct.Sink = "pangolin"
	directRes, err := render.Run(context.Background(), objects(t, scenario), render.Options{Config: &direct, AssumeTunnels: true})
	require.NoError(t, err)
	assert.Equal(t, []render.Pass{{Writes: 3}, {StatusWrites: 1}, {}}, directRes.Passes,
		"direct mode: the resource, its update (owner, SSO) and its target; then the address Pangolin serves it at; then nothing")
	var lines []string
	for _, e := range res.Events {
		lines = append(lines, e.String())
	}
	assert.Equal(t, []string{
		"Normal Created Ingress shop/web: Created PangolinResource pic-shop-web-e50de40b59 for host shop.example.com (tunnel shop/default)",
		`Warning WildcardHost Ingress shop/wild: host "*.example.com" is a wildcard: Pangolin resources need one concrete host; list each host explicitly`,
	}, lines)

	cfg.Sources = []string{"nosuch"}
	_, err = render.Run(context.Background(), nil, opts)
	assert.ErrorContains(t, err, "no source named \"nosuch\" in this build")
}
