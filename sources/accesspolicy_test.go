package sources

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
)

// TestPICStopsWhenTheAccessPolicyCRDAppears: with access policies off, PIC goes on
// while the CRD is missing, and stops, to be restarted, once it is served.
func TestPICStopsWhenTheAccessPolicyCRDAppears(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	w := crdWatch{mapper: mapper, period: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()

	select {
	case err := <-done:
		require.Failf(t, "stopped while the CRD is missing", "%v", err)
	case <-time.After(100 * time.Millisecond):
	}
	mapper.Add(accessv1alpha1.GroupVersion.WithKind(accessv1alpha1.KindPolicy), meta.RESTScopeNamespace)
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "installed after PIC started")
	case <-time.After(5 * time.Second):
		require.Fail(t, "did not stop once the CRD was served")
	}
	cancel()

	stopped := crdWatch{mapper: meta.NewDefaultRESTMapper(nil), period: time.Hour}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, stopped.Start(ctx), "a manager that stops stops it, with no error")
}

func TestRunnablesOnlyWhilePoliciesAreOff(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	assert.Len(t, (&Policies{enabled: false, mapper: mapper}).runnables(), 1)
	assert.Empty(t, (&Policies{enabled: true, mapper: mapper}).runnables(), "on: nothing to wait for")
	assert.Empty(t, (&Policies{enabled: false}).runnables(), "render: no cluster")
	var none *Policies
	assert.Empty(t, none.runnables())
}
