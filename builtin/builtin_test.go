package builtin

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// TestRegisteredSources: each source is registered under the name it answers to (the
// kind it reconciles: testdata/footprint.yaml).
func TestRegisteredSources(t *testing.T) {
	for _, name := range SourceNames() {
		t.Run(name, func(t *testing.T) {
			src, err := Registry.Sources[name].New(context.Background(), plugin.SourceDeps{Config: config.Default(), Shared: plugin.NewShared()})
			require.NoError(t, err)
			assert.Equal(t, name, src.Name(), "the name the source answers to")
		})
	}
}

// TestRegisteredSinks: each sink runs in a cluster and in `manager render`, which
// builds it offline.
func TestRegisteredSinks(t *testing.T) {
	for _, name := range SinkNames() {
		t.Run(name, func(t *testing.T) {
			f := Registry.Sinks[name]
			assert.NotNil(t, f.New, "built in a cluster")
			assert.NotNil(t, f.Offline, "built by render")
		})
	}
}
