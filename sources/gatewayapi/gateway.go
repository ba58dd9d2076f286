package gatewayapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// The Gateway API sources share them (sharedGatewayAPI): one of each for the routes of
// every kind PIC serves (servedKinds).
func (s *gatewayAPI) statusControllers() []plugin.Controller {
	// A route's change, of any kind PIC serves, changes what its Gateways count.
	routeWatches := make([]plugin.Watch, 0, len(s.kinds))
	for _, k := range s.kinds {
		routeWatches = append(routeWatches, plugin.Watch{Object: k.object(), IgnoreStatus: true, Requests: func(_ context.Context, o client.Object) []reconcile.Request {
			var out []reconcile.Request
			for _, key := range indexParents(o) {
				ns, name, _ := strings.Cut(key, "/")
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
			}
			return out
		}})
	}
	return []plugin.Controller{
		{Name: "gatewayclass", Object: &gatewayv1.GatewayClass{}, Reconciler: reconcile.Func(s.ReconcileGatewayClass)},
		{
			Name: "gateway", Object: &gatewayv1.Gateway{}, Reconciler: reconcile.Func(s.ReconcileGateway),
			// Status writes (PIC's own: route parents, Gateway listeners, class
			// conditions) change no Gateway's status: counting attached routes reads
			// their specs.
			IgnoreStatus: true,
			Watches: append(routeWatches,
				plugin.Watch{Object: &gatewayv1.GatewayClass{}, IgnoreStatus: true, Requests: s.allGateways},
				plugin.Watch{Object: &corev1.Namespace{}, Requests: s.allGateways},
			),
			// Which Gateway stands for which tunnel depends on its annotations and the
			// configuration: a tunnel's change looks at every Gateway, which are few.
			Tunnels: func(ctx context.Context, _ route.TunnelRef) []reconcile.Request { return s.allGateways(ctx, nil) },
		},
	}
}

func (s *gatewayAPI) allGateways(ctx context.Context, _ client.Object) []reconcile.Request {
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
func (s *gatewayAPI) ReconcileGatewayClass(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
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
func (s *gatewayAPI) ReconcileGateway(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
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
		kinds := listenerKinds(l, s.kinds)
		if len(kinds.served) > 0 {
			ls.SupportedKinds = kinds.supported
			if len(kinds.invalid) > 0 {
				// The Gateway API requires the kinds PIC cannot serve to be left out of
				// supportedKinds and reported as InvalidRouteKinds.
				resolved, resolvedReason = false, string(gatewayv1.ListenerReasonInvalidRouteKinds)
				resolvedMessage = fmt.Sprintf("route kinds %s are not supported on listener %s (%s): PIC serves %s there",
					strings.Join(kinds.invalid, ", "), l.Name, l.Protocol, kindNames(kinds.served))
			}
			set(&ls.Conditions, string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "")
			set(&ls.Conditions, string(gatewayv1.ListenerConditionProgrammed), programmed, programmedReason, message)
		} else {
			// No route kind PIC serves attaches through the protocol: the listener is
			// not accepted, and none of its route kinds resolves.
			msg := fmt.Sprintf("protocol %s: PIC serves %s", l.Protocol, servedProtocols(s.kinds))
			for _, k := range allRouteKinds {
				if k.attachesThrough(l) {
					msg += fmt.Sprintf("; %ss need the %s source (sources) and the Gateway API %s+ CRDs", k.name, k.source, k.since)
				}
			}
			set(&ls.Conditions, string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedProtocol), msg)
			set(&ls.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), msg)
			resolved, resolvedReason, resolvedMessage = false, string(gatewayv1.ListenerReasonInvalidRouteKinds), msg
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

// attachedCounts counts, per listener, the routes of every kind PIC serves that attach
// to it.
func (s *gatewayAPI) attachedCounts(ctx context.Context, gw *gatewayv1.Gateway) (map[string]int32, error) {
	key := client.ObjectKeyFromObject(gw)
	counts := map[string]int32{}
	for _, kind := range s.kinds {
		routes, err := s.judgeAttached(ctx, kind, key)
		if err != nil {
			return nil, err
		}
		for _, r := range routes {
			// The Gateway API counts only routes whose Accepted condition is True: a
			// route refused for an unsupported match, an invalid annotation or the
			// tunnel policy attaches to the listener but does not count.
			seen := map[string]bool{}
			for _, p := range r.status.parents {
				if parent, ok := gatewayOf(r.namespace, p.ref); !p.accepted.ok || !ok || parent != key {
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
	}
	return counts, nil
}

// judgedRoute is a route's verdict on each of its parents, as the source of its kind
// judges it.
type judgedRoute struct {
	namespace string
	status    routeStatus
}

// judgeAttached judges the routes of kind with a parentRef to gw. What a Gateway's
// status counts is each route's verdict on its parents, which no health check changes:
// the routes are judged without reading their backends' pods, so that the status of a
// Gateway costs no API request per attached route.
func (s *gatewayAPI) judgeAttached(ctx context.Context, kind routeKind, gw types.NamespacedName) ([]judgedRoute, error) {
	judge := *s
	judge.config.Health = s.config.Health.Unread()
	if kind.name == kindHTTPRoute {
		return (&Source{&judge}).judgeAttached(ctx, gw)
	}
	return (&RawSource{gatewayAPI: &judge, kind: kind}).judgeAttached(ctx, gw)
}

// listenerRouteKinds are the route kinds of a listener.
type listenerRouteKinds struct {
	// served are the kinds PIC serves that attach through the listener's protocol.
	served []routeKind
	// supported are those of served its allowedRoutes.kinds admits: its supportedKinds.
	supported []gatewayv1.RouteGroupKind
	// invalid are the kinds its allowedRoutes.kinds names that are not among served.
	invalid []string
}

// listenerKinds sorts the route kinds of a listener, given the kinds PIC serves.
func listenerKinds(l gatewayv1.Listener, served []routeKind) listenerRouteKinds {
	var out listenerRouteKinds
	for _, k := range served {
		if k.attachesThrough(l) {
			out.served = append(out.served, k)
		}
	}
	out.supported = []gatewayv1.RouteGroupKind{}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		for _, k := range out.served {
			out.supported = append(out.supported, k.groupKind())
		}
		return out
	}
	for _, gk := range l.AllowedRoutes.Kinds {
		i := slices.IndexFunc(out.served, func(k routeKind) bool { return k.is(gk) })
		switch {
		case i >= 0:
			if !slices.ContainsFunc(out.supported, out.served[i].is) {
				out.supported = append(out.supported, out.served[i].groupKind())
			}
		case gk.Group == nil || *gk.Group == "":
			out.invalid = append(out.invalid, string(gk.Kind))
		default:
			out.invalid = append(out.invalid, string(*gk.Group)+"/"+string(gk.Kind))
		}
	}
	return out
}

// kindNames names route kinds for messages: "HTTPRoutes", "TCPRoutes and UDPRoutes".
func kindNames(kinds []routeKind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name + "s"
	}
	return strings.Join(names, " and ")
}

// servedProtocols says which listener protocols PIC serves, and through which kinds:
// "HTTPRoutes on HTTP or HTTPS listeners, TCPRoutes on TCP listeners".
func servedProtocols(kinds []routeKind) string {
	if len(kinds) == 0 {
		return "no route kind (no Gateway API source runs)"
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%ss on %s listeners", k.name, k.protocolNames())
	}
	return strings.Join(parts, ", ")
}

// tunnelState reports whether the tunnel the Gateway stands for exists.
func (s *gatewayAPI) tunnelState(ctx context.Context, gw *gatewayv1.Gateway) (bool, string, error) {
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
