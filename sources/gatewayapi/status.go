package gatewayapi

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// WriteStatus implements plugin.Source: it writes PIC's entries of status.parents, one
// per parentRef to a Gateway of PIC's, and leaves other controllers' entries alone. It
// writes only when something changed, so a converged route is never written to.
func (s *Source) WriteStatus(ctx context.Context, res plugin.Result, _ plugin.Hostnames) error {
	want, ok := res.Status.(routeStatus)
	if !ok || res.Origin == nil {
		return nil
	}
	var hr gatewayv1.HTTPRoute
	if err := s.client.Get(ctx, res.Origin.NamespacedName(), &hr); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get HTTPRoute %s: %w", res.Origin.NamespacedName(), err)
	}
	parents := make([]gatewayv1.RouteParentStatus, 0, len(hr.Status.Parents)+len(want.parents))
	for _, p := range hr.Status.Parents {
		if p.ControllerName != pic.GatewayControllerName {
			parents = append(parents, p)
		}
	}
	for _, w := range want.parents {
		entry := gatewayv1.RouteParentStatus{ParentRef: w.ref, ControllerName: pic.GatewayControllerName}
		// Start from what was written before, so that unchanged conditions keep their
		// lastTransitionTime.
		for _, p := range hr.Status.Parents {
			if p.ControllerName == pic.GatewayControllerName && reflect.DeepEqual(p.ParentRef, w.ref) {
				entry.Conditions = append(entry.Conditions, p.Conditions...)
			}
		}
		setCondition(&entry.Conditions, gatewayv1.RouteConditionAccepted, w.accepted, want.generation)
		setCondition(&entry.Conditions, gatewayv1.RouteConditionResolvedRefs, w.resolvedRefs, want.generation)
		parents = append(parents, entry)
	}
	if equality.Semantic.DeepEqual(parents, hr.Status.Parents) {
		return nil
	}
	hr.Status.Parents = parents
	if err := s.client.Status().Update(ctx, &hr); err != nil {
		return fmt.Errorf("update status of HTTPRoute %s: %w", res.Origin.NamespacedName(), err)
	}
	return nil
}

func setCondition(conditions *[]metav1.Condition, t gatewayv1.RouteConditionType, v verdict, generation int64) {
	status := metav1.ConditionFalse
	if v.ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: string(t), Status: status, Reason: string(v.reason), Message: v.message, ObservedGeneration: generation,
	})
}
