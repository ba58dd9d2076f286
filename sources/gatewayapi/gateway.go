package gatewayapi

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// statusControllers make PIC the implementation of its GatewayClass: GatewayClasses get
// Accepted, Gateways get Accepted, Programmed (the tunnel they stand for exists, as the
// sink says) and listener status with attachedRoutes. `render` runs them in this order,
// after the routes: a Gateway counts the routes attached to it.
func (s *Source) statusControllers() []plugin.Controller {
	return []plugin.Controller{
		{Name: "gatewayclass", Object: &gatewayv1.GatewayClass{}, Reconciler: reconcile.Func(s.ReconcileGatewayClass)},
		{
			Name: "gateway", Object: &gatewayv1.Gateway{}, Reconciler: reconcile.Func(s.ReconcileGateway),
			// Status writes (PIC's own: route parents, Gateway listeners, class
			// conditions) change no Gateway's status: counting attached routes reads
			// their specs.
			IgnoreStatus: true,
			Watches: []plugin.Watch{
				{Object: &gatewayv1.HTTPRoute{}, IgnoreStatus: true, Requests: func(_ context.Context, o client.Object) []reconcile.Request {
					var out []reconcile.Request
					for _, key := range indexParents(o) {
						ns, name, _ := strings.Cut(key, "/")
						out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
					}
					return out
				}},
				{Object: &gatewayv1.GatewayClass{}, IgnoreStatus: true, Requests: s.allGateways},
				{Object: &corev1.Namespace{}, Requests: s.allGateways},
			},
			// Which Gateway stands for which tunnel depends on its annotations and the
			// configuration: a tunnel's change looks at every Gateway, which are few.
			Tunnels: func(ctx context.Context, _ route.TunnelRef) []reconcile.Request { return s.allGateways(ctx, nil) },
		},
	}
}

func (s *Source) allGateways(ctx context.Context, _ client.Object) []reconcile.Request {
	var list gatewayv1.GatewayList
	if err := s.client.List(ctx, &list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, len(list.Items))
	for i, gw := range list.Items {
		out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}}
	}
	return out
}

// ReconcileGatewayClass writes the status of a GatewayClass of PIC's.
func (s *Source) ReconcileGatewayClass(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var class gatewayv1.GatewayClass
	if err := s.client.Get(ctx, req.NamespacedName, &class); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if class.Spec.ControllerName != pic.GatewayControllerName {
		return reconcile.Result{}, nil
	}
	conditions := append([]metav1.Condition(nil), class.Status.Conditions...)
	meta.SetStatusCondition(&conditions, metav1.Condition{
		Type: string(gatewayv1.GatewayClassConditionStatusAccepted), Status: metav1.ConditionTrue,
		Reason: string(gatewayv1.GatewayClassReasonAccepted), Message: "handled by the Pangolin Ingress Controller",
		ObservedGeneration: class.Generation,
	})
	if equality.Semantic.DeepEqual(conditions, class.Status.Conditions) {
		return reconcile.Result{}, nil
	}
	class.Status.Conditions = conditions
	return reconcile.Result{}, s.client.Status().Update(ctx, &class)
}

// ReconcileGateway writes the status of a Gateway of a GatewayClass of PIC's.
func (s *Source) ReconcileGateway(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var gw gatewayv1.Gateway
	if err := s.client.Get(ctx, req.NamespacedName, &gw); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ours, err := s.ourClass(ctx, string(gw.Spec.GatewayClassName))
	if err != nil || !ours {
		return reconcile.Result{}, err
	}
	attached, err := s.attachedCounts(ctx, &gw)
	if err != nil {
		return reconcile.Result{}, err
	}
	programmed, message, err := s.tunnelState(ctx, &gw)
	if err != nil {
		return reconcile.Result{}, err
	}

	status := gw.Status.DeepCopy()
	set := func(conditions *[]metav1.Condition, t string, ok bool, reason, message string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: gw.Generation})
	}
	set(&status.Conditions, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), "handled by the Pangolin Ingress Controller")
	programmedReason := string(gatewayv1.GatewayReasonProgrammed)
	if !programmed {
		programmedReason = string(gatewayv1.GatewayReasonInvalid)
	}
	set(&status.Conditions, string(gatewayv1.GatewayConditionProgrammed), programmed, programmedReason, message)

	listeners := make([]gatewayv1.ListenerStatus, 0, len(gw.Spec.Listeners))
	for _, l := range gw.Spec.Listeners {
		ls := gatewayv1.ListenerStatus{Name: l.Name, AttachedRoutes: attached[string(l.Name)], SupportedKinds: []gatewayv1.RouteGroupKind{}}
		for _, old := range gw.Status.Listeners {
			if old.Name == l.Name {
				ls.Conditions = append(ls.Conditions, old.Conditions...)
			}
		}
		resolved, resolvedReason, resolvedMessage := true, string(gatewayv1.ListenerReasonResolvedRefs), ""
		if servesHTTP(l) {
			var invalid []string
			ls.SupportedKinds, invalid = routeKinds(l)
			if len(invalid) > 0 {
				// The Gateway API requires the kinds PIC cannot serve to be left out of
				// supportedKinds and reported as InvalidRouteKinds.
				resolved, resolvedReason = false, string(gatewayv1.ListenerReasonInvalidRouteKinds)
				resolvedMessage = fmt.Sprintf("route kinds %s are not supported: PIC serves HTTPRoutes only", strings.Join(invalid, ", "))
			}
			set(&ls.Conditions, string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "")
			set(&ls.Conditions, string(gatewayv1.ListenerConditionProgrammed), programmed, programmedReason, message)
		} else {
			msg := fmt.Sprintf("protocol %s: Pangolin publishes HTTP and HTTPS listeners only", l.Protocol)
			set(&ls.Conditions, string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedProtocol), msg)
			set(&ls.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), msg)
		}
		set(&ls.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), resolved, resolvedReason, resolvedMessage)
		set(&ls.Conditions, string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "")
		listeners = append(listeners, ls)
	}
	status.Listeners = listeners
	if equality.Semantic.DeepEqual(*status, gw.Status) {
		return reconcile.Result{}, nil
	}
	gw.Status = *status
	return reconcile.Result{}, s.client.Status().Update(ctx, &gw)
}

// attachedCounts counts, per listener, the routes that attach to it.
func (s *Source) attachedCounts(ctx context.Context, gw *gatewayv1.Gateway) (map[string]int32, error) {
	routes, err := s.attachedTo(ctx, types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name})
	if err != nil {
		return nil, err
	}
	counts := map[string]int32{}
	for i := range routes {
		hr := &routes[i]
		// The Gateway API counts only routes whose Accepted condition is True: a route
		// refused for an unsupported match, an invalid annotation or the tunnel policy
		// attaches to the listener but does not count.
		ev, err := s.evaluate(ctx, hr)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, p := range ev.status.parents {
			if key, ok := gatewayOf(hr, p.ref); !p.accepted.ok || !ok || key != client.ObjectKeyFromObject(gw) {
				continue
			}
			for _, l := range p.listeners {
				if !seen[l] {
					seen[l] = true
					counts[l]++
				}
			}
		}
	}
	return counts, nil
}

// routeKinds returns the kinds an HTTP or HTTPS listener supports (HTTPRoute, unless
// allowedRoutes.kinds leaves it out) and the kinds it names that PIC cannot serve.
func routeKinds(l gatewayv1.Listener) ([]gatewayv1.RouteGroupKind, []string) {
	httpRoute := gatewayv1.RouteGroupKind{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: kindHTTPRoute}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		return []gatewayv1.RouteGroupKind{httpRoute}, nil
	}
	supported := []gatewayv1.RouteGroupKind{}
	var invalid []string
	for _, k := range l.AllowedRoutes.Kinds {
		switch {
		case k.Kind == kindHTTPRoute && (k.Group == nil || *k.Group == gatewayv1.GroupName):
			if len(supported) == 0 {
				supported = append(supported, httpRoute)
			}
		case k.Group == nil || *k.Group == "":
			invalid = append(invalid, string(k.Kind))
		default:
			invalid = append(invalid, string(*k.Group)+"/"+string(k.Kind))
		}
	}
	return supported, invalid
}

// tunnelState reports whether the tunnel the Gateway stands for exists.
func (s *Source) tunnelState(ctx context.Context, gw *gatewayv1.Gateway) (bool, string, error) {
	ref, problem := s.gatewayTunnel(gw)
	if problem != nil {
		return false, problem.Message, nil
	}
	if s.config.TunnelCheck == nil {
		return false, "", fmt.Errorf("check tunnel %s: the source was not registered with the sink's tunnel check", ref)
	}
	check, err := s.config.TunnelCheck.Tunnel(ctx, ref)
	switch {
	case err != nil:
		return false, "", err
	case check.State == plugin.TunnelNotFound:
		return false, check.Message, nil
	}
	return true, fmt.Sprintf("published through tunnel %s", ref), nil
}
