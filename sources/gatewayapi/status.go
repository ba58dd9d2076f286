package gatewayapi

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// conditions are the source's verdicts on each parent, as the core folds in what the
// engine and the sink refuse (plugin.Result.Parents).
func (rs routeStatus) conditions() []plugin.ParentStatus {
	out := make([]plugin.ParentStatus, 0, len(rs.parents))
	condition := func(t gatewayv1.RouteConditionType, v verdict) plugin.Condition {
		return plugin.Condition{Type: string(t), Status: v.ok, Reason: string(v.reason), Message: v.message}
	}
	for _, p := range rs.parents {
		out = append(out, plugin.ParentStatus{Parent: parentKey(p.ref), Conditions: []plugin.Condition{
			condition(gatewayv1.RouteConditionAccepted, p.accepted),
			condition(gatewayv1.RouteConditionResolvedRefs, p.resolvedRefs),
		}})
	}
	return out
}

// parentKey names a parentRef in plugin.ParentStatus: every field that tells two
// parentRefs apart.
func parentKey(ref gatewayv1.ParentReference) string {
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	port := ""
	if ref.Port != nil {
		port = strconv.Itoa(int(*ref.Port))
	}
	return strings.Join([]string{
		deref((*string)(ref.Group)), deref((*string)(ref.Kind)), deref((*string)(ref.Namespace)),
		string(ref.Name), deref((*string)(ref.SectionName)), port,
	}, "/")
}

// conditionTypes are the condition types PIC decides on a route's parents; one it no
// longer reports (PartiallyInvalid, once every host is published) is removed.
var conditionTypes = []string{
	string(gatewayv1.RouteConditionAccepted), string(gatewayv1.RouteConditionResolvedRefs), string(gatewayv1.RouteConditionPartiallyInvalid),
}

// WriteStatus implements plugin.Source (routeParents).
func (s *Source) WriteStatus(ctx context.Context, obj client.Object, want plugin.Status) error {
	hr := obj.(*gatewayv1.HTTPRoute)
	parents := routeParents(hr.Status.Parents, hr.Spec.ParentRefs, want)
	if equality.Semantic.DeepEqual(parents, hr.Status.Parents) {
		return nil
	}
	hr.Status.Parents = parents
	if err := s.client.Status().Update(ctx, hr); err != nil {
		return fmt.Errorf("update status of HTTPRoute %s: %w", client.ObjectKeyFromObject(hr), err)
	}
	return nil
}

// routeParents is the status.parents of a route with parentRefs refs, once PIC's
// entries are want's: one per parentRef to a Gateway of PIC's, other controllers'
// entries left alone. Every route kind writes it; a converged route gets back what it
// holds, and is not written to.
func routeParents(current []gatewayv1.RouteParentStatus, refs []gatewayv1.ParentReference, want plugin.Status) []gatewayv1.RouteParentStatus {
	parents := make([]gatewayv1.RouteParentStatus, 0, len(current)+len(want.Parents))
	for _, p := range current {
		if p.ControllerName != pic.GatewayControllerName {
			parents = append(parents, p)
		}
	}
	for _, w := range want.Parents {
		i := slices.IndexFunc(refs, func(ref gatewayv1.ParentReference) bool { return parentKey(ref) == w.Parent })
		if i < 0 {
			continue // the route changed since it was read: its next reconcile writes it
		}
		ref := refs[i]
		entry := gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: pic.GatewayControllerName}
		// Start from what was written before, so that unchanged conditions keep their
		// lastTransitionTime.
		for _, p := range current {
			if p.ControllerName == pic.GatewayControllerName && reflect.DeepEqual(p.ParentRef, ref) {
				entry.Conditions = append(entry.Conditions, p.Conditions...)
			}
		}
		for _, t := range conditionTypes {
			if !slices.ContainsFunc(w.Conditions, func(c plugin.Condition) bool { return c.Type == t }) {
				meta.RemoveStatusCondition(&entry.Conditions, t)
			}
		}
		for _, c := range w.Conditions {
			setCondition(&entry.Conditions, c, want.Generation)
		}
		parents = append(parents, entry)
	}
	return parents
}

// writtenByPIC reports whether PIC has entries in a route's status.parents: a route no
// longer attached to PIC's Gateways (its parentRef removed, its Gateway left PIC's
// class) must lose them.
func writtenByPIC(parents []gatewayv1.RouteParentStatus) bool {
	return slices.ContainsFunc(parents, func(p gatewayv1.RouteParentStatus) bool {
		return p.ControllerName == pic.GatewayControllerName
	})
}

func setCondition(conditions *[]metav1.Condition, c plugin.Condition, generation int64) {
	status := metav1.ConditionFalse
	if c.Status {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: c.Type, Status: status, Reason: c.Reason, Message: c.Message, ObservedGeneration: generation,
	})
}
