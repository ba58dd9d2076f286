package manager

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientfeatures "k8s.io/client-go/features"
)

func TestClientGates(t *testing.T) {
	defaults := clientfeatures.FeatureGates()
	gates := clientGates{defaults}
	for _, tc := range []struct {
		name     string
		env      *string
		streamed bool
	}{
		{name: "paged lists by default", streamed: false},
		{name: "streamed when the user turns them on", env: ptr("true"), streamed: true},
		{name: "paged when the user turns them off", env: ptr("false"), streamed: false},
		{name: "paged when the value is not a boolean", env: ptr("sometimes"), streamed: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(streamedListsVariable, "") // restored after the test
			if tc.env != nil {
				t.Setenv(streamedListsVariable, *tc.env)
			} else {
				require.NoError(t, os.Unsetenv(streamedListsVariable))
			}
			assert.Equal(t, tc.streamed, gates.Enabled(clientfeatures.WatchListClient))
		})
	}
	t.Run("every other gate as client-go has it", func(t *testing.T) {
		for _, f := range []clientfeatures.Feature{clientfeatures.InformerResourceVersion, clientfeatures.ClientsAllowCBOR} {
			assert.Equal(t, defaults.Enabled(f), gates.Enabled(f), f)
		}
	})
}

func ptr(s string) *string { return &s }
