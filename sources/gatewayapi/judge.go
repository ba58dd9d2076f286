package gatewayapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// What every Gateway API source judges alike, whatever its kind: which parents a route
// attaches to, and the verdicts that follow from its backendRefs and annotations.

// rejectFunc records a rejection of a route: host "" for the route as a whole.
type rejectFunc func(host, reason string, hold, retry bool, format string, args ...any)

// rejecter records the rejections of the route origin into list.
func rejecter(origin route.Origin, list *[]route.Rejection) rejectFunc {
	return func(host, reason string, hold, retry bool, format string, args ...any) {
		*list = append(*list, route.Rejection{Origin: origin, Host: host, Reason: reason, Message: fmt.Sprintf(format, args...), Hold: hold, Retry: retry})
	}
}

// judgedParent is one parentRef of a route to a Gateway of PIC's.
type judgedParent struct {
	status parentStatus
	gw     *gatewayv1.Gateway
	// attachment is how the route attaches to gw's listeners; tunnel is the tunnel gw
	// stands for, when the route is accepted there.
	attachment attachment
	tunnel     route.TunnelRef
}

// accepted reports whether the route attaches to the parent, so far.
func (p judgedParent) accepted() bool { return p.status.accepted.ok }

// gatewayKey names the parent's Gateway.
func (p judgedParent) gatewayKey() gatewayKey {
	return gatewayKey{Namespace: p.gw.Namespace, Name: p.gw.Name}
}

// routeNamespace reads the Namespace of a route, whose labels a listener's
// allowedRoutes selector matches; a Namespace not found has no labels.
func (s *gatewayAPI) routeNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	var ns corev1.Namespace
	if err := s.client.Get(ctx, types.NamespacedName{Name: name}, &ns); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get Namespace %s: %w", name, err)
	}
	return &ns, nil
}

// judgeParents judges each parentRef of a route of kind in namespace that names a
// Gateway of PIC's: whether a listener admits the route, and whether the route may use
// the tunnel the Gateway stands for. Other parentRefs are another controller's.
func (s *gatewayAPI) judgeParents(ctx context.Context, kind routeKind, namespace string, hostnames []gatewayv1.Hostname, refs []gatewayv1.ParentReference, reject rejectFunc) ([]judgedParent, error) {
	ns, err := s.routeNamespace(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []judgedParent
	for _, ref := range refs {
		gw, err := s.ourGateway(ctx, namespace, ref)
		if err != nil {
			return nil, err
		}
		if gw == nil {
			continue
		}
		p := judgedParent{gw: gw, status: parentStatus{ref: ref, accepted: verdict{true, gatewayv1.RouteReasonAccepted, "attached to a Pangolin Gateway"}}}
		p.attachment = attach(kind, namespace, hostnames, ref, gw, ns)
		p.status.listeners = p.attachment.listeners
		if len(p.attachment.listeners) == 0 {
			p.status.accepted = verdict{false, p.attachment.reason, p.attachment.message}
			reject("", string(p.attachment.reason), false, false, "Gateway %s/%s: %s", gw.Namespace, gw.Name, p.attachment.message)
		} else if tunnelRef, problem := s.tunnelOf(gw, namespace); problem != nil {
			p.status.accepted = verdict{false, gatewayv1.RouteReasonNotAllowedByListeners, problem.Message}
			reject("", problem.Reason, false, false, "%s", problem.Message)
		} else {
			p.tunnel = tunnelRef
		}
		out = append(out, p)
	}
	return out, nil
}

// judgedResult is a route's result before its routes: its verdicts on its parents and
// its rejections. A route attached to a Gateway of PIC's is PIC's to publish, and its
// status PIC's to write. One attached to none is not, but if it was (its parentRef was
// removed, its Gateway left PIC's class), PIC's stale status.parents entries (written)
// must go.
func judgedResult(origin route.Origin, rejections []route.Rejection, status routeStatus, written []gatewayv1.RouteParentStatus) plugin.Result {
	res := plugin.Result{Origin: &origin, Rejections: rejections, Parents: status.conditions()}
	if len(status.parents) == 0 {
		res.OwnsStatus = writtenByPIC(written)
		return res
	}
	res.Managed, res.OwnsStatus = true, true
	return res
}

// settle gives every parent the route's ResolvedRefs (refs, nil when every backendRef
// resolved), and refuses, on the parents that accept it, a route whose annotations are
// invalid (problems) or that asks what Pangolin cannot express (unsupported). It
// reports whether the route is served through any parent. A typo or a Service not
// there yet holds what the route published only while a parent accepts it: one that
// no parent admits any more (a listener's allowedRoutes tightened, a tunnel the
// namespace may not use) keeps nothing, whatever else is wrong with it.
func settle(parents []parentStatus, refs *refProblem, problems, unsupported []string, reject rejectFunc) bool {
	admitted := slices.ContainsFunc(parents, func(p parentStatus) bool { return p.accepted.ok })
	resolved := verdict{true, gatewayv1.RouteReasonResolvedRefs, "every backendRef resolved"}
	if refs != nil {
		resolved = verdict{false, refs.reason, refs.message}
		reject("", string(refs.reason), refs.transient && admitted, refs.transient, "%s", refs.message)
	}
	var refused *verdict
	switch {
	case len(problems) > 0:
		// A typo must not take a live route down, nor publish it half-configured.
		refused = &verdict{false, gatewayv1.RouteReasonUnsupportedValue, "invalid annotations: " + strings.Join(problems, "; ")}
		reject("", pic.ReasonInvalidAnnotation, admitted, false, "%s", strings.Join(problems, "; "))
	case len(unsupported) > 0:
		refused = &verdict{false, gatewayv1.RouteReasonUnsupportedValue,
			"Pangolin cannot express " + strings.Join(unsupported, "; ") + ": the route is not published rather than published without them"}
		reject("", string(gatewayv1.RouteReasonUnsupportedValue), false, false, "%s", refused.message)
	}
	for i := range parents {
		p := &parents[i]
		p.resolvedRefs = resolved
		if refused != nil && p.accepted.ok {
			p.accepted = *refused
		}
	}
	return resolved.ok && refused == nil && slices.ContainsFunc(parents, func(p parentStatus) bool { return p.accepted.ok })
}
