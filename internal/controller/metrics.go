package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	reconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pic_reconcile_total",
		Help: "Reconciles of source objects, by source (ingress, httproute) and result (success, error, requeue).",
	}, []string{"source", "result"})
	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pic_reconcile_duration_seconds",
		Help:    "Time to reconcile one source object, by source.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"source"})
	managedResources = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pic_pangolinresource_managed",
		Help: "PangolinResources PIC keeps in place, by tunnel (namespace/name); in direct mode, Pangolin resources by site.",
	}, []string{"tunnel"})
	rejectedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pic_rejected_objects",
		Help: "Source objects with at least one current Warning, by source and reason.",
	}, []string{"source", "reason"})
	eventsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pic_events_dropped_total",
		Help: "Events PIC recorded but did not write, by type (Normal, Warning) and cause (queue_full, write_failed).",
	}, []string{"type", "cause"})
)

func init() {
	metrics.Registry.MustRegister(reconcileTotal, reconcileDuration, managedResources, rejectedObjects, eventsDropped)
}

// apply adds obs to the gauges (sign +1), or takes it away (-1).
func (o *observations) apply(obs observation, sign float64) {
	for _, reason := range obs.reasons {
		rejectedObjects.WithLabelValues(o.source, reason).Add(sign)
	}
	for _, t := range obs.tunnels {
		managedResources.WithLabelValues(t.tunnel).Add(sign * float64(t.n))
	}
}
