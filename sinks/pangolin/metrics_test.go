package pangolin

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

func TestMetrics(t *testing.T) {
	w := newWorld(t)
	assert.Equal(t, 1.0, value(t, up), "after a successful read")

	created := value(t, writes.WithLabelValues(pangolinapi.OpCreateResource, "success"))
	listed := value(t, apiRequests.WithLabelValues(pangolinapi.OpListResources, pangolinapi.ResultSuccess))
	shop := ingress("shop", "web")
	w.converge(shop, web(shop, "app.example.com", 8080))
	assert.Equal(t, created+1, value(t, writes.WithLabelValues(pangolinapi.OpCreateResource, "success")))
	assert.Greater(t, value(t, apiRequests.WithLabelValues(pangolinapi.OpListResources, pangolinapi.ResultSuccess)), listed)

	failed := value(t, apiRequests.WithLabelValues(pangolinapi.OpListDomains, pangolinapi.ResultServerError))
	w.fault(simtest.Outage(http.StatusServiceUnavailable))
	require.Error(t, w.sink.Refresh(w.ctx))
	assert.Equal(t, 0.0, value(t, up), "after a failed read")
	assert.Equal(t, failed+1, value(t, apiRequests.WithLabelValues(pangolinapi.OpListDomains, pangolinapi.ResultServerError)))
	w.fault(nil)
	require.NoError(t, w.sink.Refresh(w.ctx))
	assert.Equal(t, 1.0, value(t, up))
}

// value reads a counter or a gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	require.NoError(t, m.Write(&out))
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}
