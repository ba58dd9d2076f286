package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var (
	reconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pic_reconcile_total",
		Help: "Reconciles of source objects, by source (ingress, httproute) and result (success, error, requeue).",
	}, []string{"source", "result"})
	reconcileOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pic_reconcile_outcome_total",
		Help: "Reconciles of source objects, by source and outcome: up_to_date (nothing to create, update or delete), wrote, failed.",
	}, []string{"source", "outcome"})
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
	metrics.Registry.MustRegister(reconcileTotal, reconcileOutcomes, reconcileDuration, managedResources, rejectedObjects, eventsDropped)
}

// Ending is how a reconcile of a source object ended: the outcome label of
// pic_reconcile_outcome_total, and what Deps.OnReconciled is told.
type Ending string

const (
	// UpToDate: what the sink keeps matched the object; nothing was created, updated or
	// deleted. Its status, when PIC owns it, was written: a check that nothing changes
	// waits for one.
	UpToDate Ending = "up_to_date"
	// Wrote: the reconcile had the sink create, update or delete what it keeps (the
	// sink may have refused part of it, with a Warning).
	Wrote Ending = "wrote"
	// Failed: the reconcile failed, and is retried with backoff.
	Failed Ending = "failed"
)

func ending(wrote bool, err error) Ending {
	switch {
	case err != nil:
		return Failed
	case wrote:
		return Wrote
	default:
		return UpToDate
	}
}

// observeReconcile counts a reconcile of source's, by result and by outcome, and how
// long it took.
func observeReconcile(source string, took time.Duration, result reconcile.Result, err error, ended Ending) {
	reconcileDuration.WithLabelValues(source).Observe(took.Seconds())
	outcome := "success"
	switch {
	case err != nil:
		outcome = "error"
	case result.RequeueAfter > 0:
		outcome = "requeue"
	}
	reconcileTotal.WithLabelValues(source, outcome).Inc()
	reconcileOutcomes.WithLabelValues(source, string(ended)).Inc()
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
