package plugins

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPluginNames pins the registered names: they are configuration values users
// write, and tests under internal/ (which may not import adapters) spell them out.
func TestPluginNames(t *testing.T) {
	assert.Equal(t, []string{"httproute", "ingress", "service", "tcproute", "udproute"}, Names().Sources)
	assert.Equal(t, []string{"pangolin", "pangolinresource"}, Names().Sinks)
	for name, src := range Registry.Sources {
		assert.NotNil(t, src, name)
	}
}
