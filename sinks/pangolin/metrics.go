package pangolin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

var (
	apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pic_pangolin_api_requests_total",
		Help: "Requests sent to Pangolin's Integration API, by operation and result (success, client_error, server_error, transport_error).",
	}, []string{"operation", "result"})
	apiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "pic_pangolin_api_request_duration_seconds",
		Help: "Duration of requests to Pangolin's Integration API, by operation.",
		// Pangolin verifies the key with argon2 on every request: 25-50 ms is normal.
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"operation"})
	up = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pic_pangolin_up",
		Help: "1 when the last read of the Pangolin resources PIC owns succeeded, 0 when it failed.",
	})
	writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pic_pangolin_writes_total",
		Help: "Writes PIC sent to Pangolin, by operation (createResource, updateResource, deleteResource, createTarget, updateTarget, deleteTarget, and the access writes: setResourceRoles, setResourcePassword, createResourceRule...) and result (success, error). A converged PIC sends none.",
	}, []string{"operation", "result"})
)

func init() {
	metrics.Registry.MustRegister(apiRequests, apiDuration, up, writes)
	// Every operation is exported from the start, so that a rate over a series that
	// has not moved yet reads 0 rather than nothing.
	for _, op := range pangolinapi.Operations() {
		apiRequests.WithLabelValues(op, pangolinapi.ResultSuccess)
		apiDuration.WithLabelValues(op)
	}
}

// observe is the client's Observe hook: one call per HTTP request.
func observe(operation, result string, d time.Duration) {
	apiRequests.WithLabelValues(operation, result).Inc()
	apiDuration.WithLabelValues(operation).Observe(d.Seconds())
}

func countWrite(operation string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	writes.WithLabelValues(operation, result).Inc()
}

// Observe is the hook to set as pangolinapi.Config.Observe on a client built outside
// the factory, so that its requests are counted too.
func Observe(operation, result string, d time.Duration) { observe(operation, result, d) }
