package e2e

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// What a spec knows of PIC's reconciles, it reads here: a "nothing was written" check
// waits for the reconciles its trigger caused, never for time.

// reconciles is how many reconciles of source's objects (ingress, httproute, ...) pic
// has finished. A reconcile is counted once it returned: what it wrote, to the cluster
// or to Pangolin, has been sent.
func (e *env) reconciles(c assert.TestingT, pic PIC, source string) float64 {
	m, err := metrics(e.ctx, pic)
	if !assert.NoError(c, err) {
		return 0
	}
	return finished(m, source)
}

// finished is the count of reconciles of source's objects in PIC's metrics m.
func finished(m testenv.Metrics, source string) float64 {
	return m.Sum("pic_reconcile_total", map[string]string{"source": source})
}

// eventuallyReconciled waits until pic has finished n reconciles of source's objects
// since it had finished before (read before the trigger), and has none of them running
// or queued: a check that follows is about every reconcile the trigger caused, those it
// woke besides its own object's included. A reconcile requeued for later (a retry with
// backoff) is not waited for.
func (e *env) eventuallyReconciled(pic PIC, source string, before float64, n int) {
	e.t.Helper()
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		m, err := metrics(e.ctx, pic)
		if !assert.NoError(c, err) {
			return
		}
		controller := map[string]string{"controller": source}
		// A series that is not there would read as zero: idle, whatever PIC does.
		if !assert.True(c, m.Has("workqueue_depth", controller) && m.Has("controller_runtime_active_workers", controller),
			"the %s controller's queue and workers in PIC's metrics", source) {
			return
		}
		assert.GreaterOrEqual(c, finished(m, source)-before, float64(n), "%s reconciles finished", source)
		assert.Zero(c, m.Sum("workqueue_depth", controller), "%s reconciles queued", source)
		assert.Zero(c, m.Sum("controller_runtime_active_workers", controller), "%s reconciles running", source)
	}, eventually, tick, "%d %s reconciles of %s, finished", n, source, pic.Name())
}
