package plugin

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// SpecOrMetadataChanged lets through what can change what PIC makes of an object (its
// spec, annotations, labels, deletion) and periodic resyncs, but not status-only
// updates: PIC writes the status of Ingresses, HTTPRoutes, Gateways and GatewayClasses,
// and must not be woken by its own writes.
func SpecOrMetadataChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() || // resync
			ChangedBeyondStatus(e.ObjectOld, e.ObjectNew)
	}}
}

// ChangedBeyondStatus reports whether an update changed more than the object's status.
// It relies on the generation, so it suits kinds with a status subresource. A kind whose
// objects keep generation 0 (a Service: the API server does not count its spec changes)
// cannot tell a spec edit from a status write, so every update of one counts: PIC's own
// status write then costs one reconcile that finds nothing to do.
func ChangedBeyondStatus(o, n client.Object) bool {
	if o.GetGeneration() == 0 && n.GetGeneration() == 0 {
		return true
	}
	return o.GetGeneration() != n.GetGeneration() ||
		!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
		!maps.Equal(o.GetLabels(), n.GetLabels()) ||
		(o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
}
