package plugin

import (
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
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
// It relies on the generation, which counts spec changes. A kind whose objects keep
// generation 0 (a Service: the API server does not count its spec changes) has its Spec
// compared instead; one without a Spec field counts every update.
func ChangedBeyondStatus(o, n client.Object) bool {
	if o.GetGeneration() == 0 && n.GetGeneration() == 0 {
		oldSpec, newSpec := specOf(o), specOf(n)
		if !oldSpec.IsValid() || !newSpec.IsValid() || !equality.Semantic.DeepEqual(oldSpec.Interface(), newSpec.Interface()) {
			return true
		}
	} else if o.GetGeneration() != n.GetGeneration() {
		return true
	}
	return !maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
		!maps.Equal(o.GetLabels(), n.GetLabels()) ||
		(o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
}

// specOf is the Spec field of a typed object, or the zero Value.
func specOf(obj client.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Spec")
}
