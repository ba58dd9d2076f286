package pangolinresource

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// writes counts every write PIC sends for PangolinResources. A converged controller
// sends none: the benchmarks and the restart tests read this counter.
var writes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "pic_pangolinresource_writes_total",
	Help: "PangolinResource writes sent to the API server, by operation (create, update, delete) and result (success, error).",
}, []string{"operation", "result"})

var operatorCRD = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "pic_operator_crd_info",
	Help: "The pangolin-operator PangolinResource CRD variant detected at start-up (target: original, targets: fork); always 1.",
}, []string{"variant"})

func init() { metrics.Registry.MustRegister(writes, operatorCRD) }

// recordCRDVariant exports which operator CRD variant PIC writes for.
func recordCRDVariant(variant string) { operatorCRD.WithLabelValues(variant).Set(1) }

func countWrite(operation string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	writes.WithLabelValues(operation, result).Inc()
}
