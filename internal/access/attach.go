package access

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// Target is an object a policy can protect: an Ingress, an HTTPRoute or a Gateway.
type Target struct {
	Kind      string // accessv1alpha1.KindIngress, KindHTTPRoute or KindGateway
	Namespace string
	Name      string
}

func (t Target) String() string { return fmt.Sprintf("%s %s/%s", t.Kind, t.Namespace, t.Name) }

// group is the API group of the kinds PIC serves, "" for any other kind.
func (t Target) group() string {
	switch t.Kind {
	case accessv1alpha1.KindIngress:
		return accessv1alpha1.GroupIngress
	case accessv1alpha1.KindHTTPRoute, accessv1alpha1.KindGateway:
		return accessv1alpha1.GroupGateway
	}
	return ""
}

// targetOf is the object ref names in namespace, and whether it is a kind PIC serves.
func targetOf(namespace string, ref gatewayv1.LocalPolicyTargetReference) (Target, bool) {
	t := Target{Kind: string(ref.Kind), Namespace: namespace, Name: string(ref.Name)}
	return t, t.group() != "" && string(ref.Group) == t.group()
}

// targets reports whether p targets t.
func targets(p *accessv1alpha1.AccessPolicy, t Target) bool {
	if p.Namespace != t.Namespace {
		return false
	}
	for _, ref := range p.Spec.TargetRefs {
		if got, ok := targetOf(p.Namespace, ref); ok && got == t {
			return true
		}
	}
	return false
}

// older reports whether a settles a conflict over b: creation time, then namespace and
// name, so that every replica decides alike.
func older(a, b *accessv1alpha1.AccessPolicy) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// winner is the oldest live policy of policies that targets t, nil if none does. A
// policy being deleted no longer applies.
func winner(policies []accessv1alpha1.AccessPolicy, t Target) *accessv1alpha1.AccessPolicy {
	var win *accessv1alpha1.AccessPolicy
	for i := range policies {
		p := &policies[i]
		if p.DeletionTimestamp != nil || !targets(p, t) {
			continue
		}
		if win == nil || older(p, win) {
			win = p
		}
	}
	return win
}

// Attachment is the policy that protects an object, and through what.
type Attachment struct {
	// Policy is nil when no policy applies: the annotations alone decide, and PIC
	// leaves the rest of the host's access in Pangolin as it is.
	Policy *accessv1alpha1.AccessPolicy
	// Via is the object Policy targets: the protected object itself, or its Gateway.
	Via Target
	// Overridden are the policies on the object's Gateways that do not apply to it: it
	// has its own, or an older one on another of its Gateways applies.
	Overridden []types.NamespacedName
	// Superseded is the object's own policy when a Gateway's override applies instead
	// (mode Override), nil otherwise.
	Superseded *types.NamespacedName
}

// overrides reports whether p's settings override those of the routes under the
// Gateways it targets (GEP-713).
func overrides(p *accessv1alpha1.AccessPolicy) bool {
	return p.Spec.Mode == accessv1alpha1.ModeOverride
}

// Override returns the policy, of the Gateways a route is published through, that
// overrides the route's own, and the Gateway it is on: of the Gateways whose winning
// policy is in mode Override, the oldest such policy. nil when none is.
func Override(policies []accessv1alpha1.AccessPolicy, gateways []Target) (*accessv1alpha1.AccessPolicy, Target) {
	var (
		out *accessv1alpha1.AccessPolicy
		via Target
	)
	for _, gw := range gateways {
		if p := winner(policies, gw); p != nil && overrides(p) && (out == nil || older(p, out)) {
			out, via = p, gw
		}
	}
	return out, via
}

// Attach returns the policy that protects object (an Ingress or an HTTPRoute), given
// the policies of its namespace and of its Gateways' namespaces (others are ignored),
// and for an HTTPRoute the Gateways it is published through by PIC.
//
//	policies                                    | applies
//	--------------------------------------------+---------------------------------------
//	one on the object                           | it
//	several on the object                       | the oldest (creation time, then name)
//	one on the object, one on its Gateway       | the object's
//	one on the object, an override (mode        | the Gateway's: the object's is Superseded
//	  Override) on its Gateway                  |
//	none on the object, one on a Gateway        | the Gateway's
//	none on the object, on several Gateways     | the oldest of the Gateways' winners
//	overrides among the Gateways' winners       | the oldest of the overrides, older
//	                                            |   defaults on other Gateways included
//	a policy being deleted                      | as if it were gone
//	none                                        | none: Attachment.Policy is nil
//
// Only the winner of a Gateway (its oldest policy) can override: a younger policy in
// mode Override on the same Gateway is Conflicted there, and applies nowhere.
func Attach(policies []accessv1alpha1.AccessPolicy, object Target, gateways []Target) Attachment {
	var (
		out  Attachment
		gwin []*accessv1alpha1.AccessPolicy
		via  []Target
	)
	own := winner(policies, object)
	if own != nil {
		out = Attachment{Policy: own, Via: object}
	}
	for _, gw := range gateways {
		if p := winner(policies, gw); p != nil {
			gwin, via = append(gwin, p), append(via, gw)
		}
	}
	if p, gw := Override(policies, gateways); p != nil {
		out = Attachment{Policy: p, Via: gw}
		if own != nil && own != p {
			out.Superseded = &types.NamespacedName{Namespace: own.Namespace, Name: own.Name}
		}
	}
	for i, p := range gwin {
		if out.Policy == nil || (out.Via != object && !overrides(out.Policy) && older(p, out.Policy)) {
			out.Policy, out.Via = p, via[i]
		}
	}
	for _, p := range gwin {
		name := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		if p != out.Policy && !containsName(out.Overridden, name) {
			out.Overridden = append(out.Overridden, name)
		}
	}
	return out
}

func containsName(names []types.NamespacedName, n types.NamespacedName) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

// Ancestors is the status.ancestors that p reports: one entry per target (the
// ancestorRef is the target itself), with two conditions.
//
//	target                                        | Accepted                 | ResolvedRefs
//	----------------------------------------------+--------------------------+------------------------------
//	a kind PIC does not serve                     | False, Invalid           | as below
//	absent, or not served by PIC (exists false)   | False, TargetNotFound    | as below
//	an older policy targets it too                | False, Conflicted        | as below
//	an HTTPRoute under a Gateway whose policy is  | False, Overridden        | as below
//	  an override (override(target) not p)        |                          |
//	p invalid (a Problem other than a Secret's)   | False, Invalid           | as below
//	otherwise                                     | True, Accepted           | as below
//	a referenced Secret or key missing            |                          | False, AccessPolicySecretNotFound
//	every Secret and key found                    |                          | True, ResolvedRefs
//
// exists reports whether the target exists and PIC serves it (an Ingress of PIC's
// class, an HTTPRoute or Gateway of PIC's GatewayClass); override is the policy that
// overrides a target's own (Override, over the Gateways of an HTTPRoute), nil for none;
// problems is Validate's verdict on p. The conditions carry p's generation and no
// transition time: meta.SetStatusCondition sets it when a condition changes.
func Ancestors(p *accessv1alpha1.AccessPolicy, all []accessv1alpha1.AccessPolicy, exists func(Target) bool, override func(Target) *accessv1alpha1.AccessPolicy, problems []Problem) []gatewayv1.PolicyAncestorStatus {
	var invalid, unresolved []string
	for _, pr := range problems {
		if pr.Reason == pic.ReasonAccessPolicySecretNotFound {
			unresolved = append(unresolved, pr.String())
		} else {
			invalid = append(invalid, pr.String())
		}
	}
	resolved := metav1.Condition{Type: pic.ConditionResolvedRefs, Status: metav1.ConditionTrue,
		Reason: pic.PolicyReasonResolvedRefs, Message: "every Secret and key the policy references exists"}
	if len(unresolved) > 0 {
		resolved.Status, resolved.Reason, resolved.Message = metav1.ConditionFalse, pic.ReasonAccessPolicySecretNotFound,
			strings.Join(unresolved, "; ")+": the hosts it protects are not published, or keep what Pangolin holds"
	}
	resolved.ObservedGeneration = p.Generation

	out := make([]gatewayv1.PolicyAncestorStatus, 0, len(p.Spec.TargetRefs))
	for _, ref := range p.Spec.TargetRefs {
		t, served := targetOf(p.Namespace, ref)
		accepted := metav1.Condition{Type: pic.ConditionAccepted, ObservedGeneration: p.Generation}
		over := overriddenBy(override, p, t)
		switch win := winner(all, t); {
		case !served:
			accepted.Status, accepted.Reason = metav1.ConditionFalse, string(gatewayv1.PolicyReasonInvalid)
			accepted.Message = fmt.Sprintf("%s %s of group %q: an AccessPolicy can target an Ingress (%s), an HTTPRoute or a Gateway (%s)",
				ref.Kind, ref.Name, ref.Group, accessv1alpha1.GroupIngress, accessv1alpha1.GroupGateway)
		case !exists(t):
			accepted.Status, accepted.Reason = metav1.ConditionFalse, string(gatewayv1.PolicyReasonTargetNotFound)
			accepted.Message = fmt.Sprintf("%s does not exist, or is not served by PIC", t)
		case win != nil && (win.Namespace != p.Namespace || win.Name != p.Name):
			accepted.Status, accepted.Reason = metav1.ConditionFalse, string(gatewayv1.PolicyReasonConflicted)
			accepted.Message = fmt.Sprintf("AccessPolicy %s/%s, older, also targets %s and applies there: the oldest policy on an object wins", win.Namespace, win.Name, t)
		case over != nil:
			accepted.Status, accepted.Reason = metav1.ConditionFalse, pic.PolicyReasonOverridden
			accepted.Message = fmt.Sprintf("AccessPolicy %s/%s on a Gateway of %s has mode %s: it applies to the route instead of this policy", over.Namespace, over.Name, t, accessv1alpha1.ModeOverride)
		case len(invalid) > 0:
			accepted.Status, accepted.Reason = metav1.ConditionFalse, string(gatewayv1.PolicyReasonInvalid)
			accepted.Message = strings.Join(invalid, "; ") + ": the hosts it protects are not published, or keep what Pangolin holds"
		default:
			accepted.Status, accepted.Reason = metav1.ConditionTrue, string(gatewayv1.PolicyReasonAccepted)
			accepted.Message = fmt.Sprintf("the policy applies to %s", t)
		}
		group, kind, ns := ref.Group, ref.Kind, gatewayv1.Namespace(p.Namespace)
		out = append(out, gatewayv1.PolicyAncestorStatus{
			AncestorRef:    gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: ref.Name},
			ControllerName: gatewayv1.GatewayController(pic.ControllerName),
			Conditions:     []metav1.Condition{accepted, resolved},
		})
	}
	return out
}

// overriddenBy is the policy that overrides p on target t, nil when none does or p is
// that policy (it may target the route and its Gateway both).
func overriddenBy(override func(Target) *accessv1alpha1.AccessPolicy, p *accessv1alpha1.AccessPolicy, t Target) *accessv1alpha1.AccessPolicy {
	if override == nil || t.Kind != accessv1alpha1.KindHTTPRoute {
		return nil
	}
	o := override(t)
	if o == nil || (o.Namespace == p.Namespace && o.Name == p.Name) {
		return nil
	}
	return o
}
