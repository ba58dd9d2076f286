package access

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Input is what Resolve needs for one host.
type Input struct {
	// Route is the host, with the sso/block-access annotations in Route.Access.
	Route route.Route
	// Attachment is Attach's answer for the object Route comes from.
	Attachment Attachment
	// Secrets has the data of the Secrets the policy references (see Secrets).
	Secrets Secrets
}

// Resolve returns the host's effective access: the annotations merged with the attached
// policy, the rest of the policy in Access.Policy, and the notices its object should
// get (which policy protects it, which value won a disagreement, rules that need
// GeoIP).
//
// A policy that cannot be applied as written gives one rejection and a zero Access,
// which must not be used: the rejection holds (Hold) what Pangolin has for the host, so
// a host not yet published is not published and one already published is neither
// changed nor opened up; a missing Secret or key is also retried (Retry).
//
//	policy                                 | sso, blockAccess                    | Access.Policy
//	---------------------------------------+-------------------------------------+--------------
//	none attached                          | the annotations                     | nil
//	valid                                  | each: true if the annotation or the | the policy
//	                                       | policy says true, else what is said |
//	with roles, users or autoLoginIdp      | sso true (they act only through SSO)| the policy
//	  and sso unset                        |                                     |
//	a Gateway's, in mode Override, leaving | an annotation's false is ignored    | the policy
//	  sso or blockAccess unset             |   (the default applies); true wins  |
//	invalid, or a Secret or key missing    | rejected, Hold                      | -
//	any, on a TCP or UDP port              | the annotations                     | the policy's name
//	  (valid or not)                       |                                     |   alone
//
// A TCP or UDP port gets no access control in Pangolin, so the engine refuses a port
// that asks for any (AccessControlUnsupported), which unpublishes it. Whether the
// policy is valid does not matter there: were an invalid one held like a host's, a
// typo in the policy would keep a published port open.
func Resolve(in Input) (route.Access, []route.Rejection, []route.Notice) {
	p := in.Attachment.Policy
	if p == nil {
		return in.Route.Access, nil, nil
	}
	r := in.Route
	if r.Raw() {
		asked := r.Access
		asked.Policy = &route.AccessPolicy{Name: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
		return asked, nil, nil
	}
	c := compile(p, in.Secrets)
	if len(c.problems) > 0 {
		reason, retry := pic.ReasonAccessPolicySecretNotFound, true
		msgs := make([]string, 0, len(c.problems))
		for _, pr := range c.problems {
			if pr.Reason != pic.ReasonAccessPolicySecretNotFound {
				reason, retry = pic.ReasonAccessPolicyInvalid, false
			}
			msgs = append(msgs, pr.String())
		}
		return route.Access{}, []route.Rejection{{
			Origin: r.Origin, Host: r.Host, Reason: reason, Hold: true, Retry: retry,
			Message: fmt.Sprintf("AccessPolicy %s/%s cannot be applied: %s; the host is not published, or keeps what Pangolin holds for it",
				p.Namespace, p.Name, strings.Join(msgs, "; ")),
		}}, nil
	}

	name := p.Namespace + "/" + p.Name
	attached := fmt.Sprintf("host %s is protected by AccessPolicy %s", r.Host, name)
	if in.Attachment.Via.Kind != r.Origin.Kind || in.Attachment.Via.Name != r.Origin.Name || in.Attachment.Via.Namespace != r.Origin.Namespace {
		attached += " on " + in.Attachment.Via.String()
	}
	if own := in.Attachment.Superseded; own != nil {
		attached += fmt.Sprintf(", whose mode %s replaces AccessPolicy %s of the %s", accessv1alpha1.ModeOverride, own, r.Origin.Kind)
	}
	for _, o := range in.Attachment.Overridden {
		attached += fmt.Sprintf("; it overrides AccessPolicy %s on a Gateway", o)
	}
	notices := []route.Notice{{Origin: r.Origin, Reason: pic.ReasonAccessPolicyAttached, Message: attached, Protects: r.Host}}

	asked := r.Access
	if overrides(p) && in.Attachment.Via.Kind == accessv1alpha1.KindGateway {
		var ignored []route.Notice
		asked.SSO, ignored = notWeaker(pic.AnnotationSSO, "sso", asked.SSO, c.sso, in.Attachment.Via, name, r.Origin, ignored)
		asked.BlockAccess, ignored = notWeaker(pic.AnnotationBlockAccess, "blockAccess", asked.BlockAccess, c.block, in.Attachment.Via, name, r.Origin, ignored)
		notices = append(notices, ignored...)
	}
	access := route.Access{Policy: c.policy}
	var note string
	access.SSO, note = stricter(pic.AnnotationSSO, "sso", asked.SSO, c.sso, name)
	if note != "" {
		notices = append(notices, route.Notice{Origin: r.Origin, Reason: pic.ReasonAccessPolicyAnnotationConflict, Message: note})
	}
	access.BlockAccess, note = stricter(pic.AnnotationBlockAccess, "blockAccess", asked.BlockAccess, c.block, name)
	if note != "" {
		notices = append(notices, route.Notice{Origin: r.Origin, Reason: pic.ReasonAccessPolicyAnnotationConflict, Message: note})
	}
	if len(c.geoRules) > 0 {
		notices = append(notices, route.Notice{Origin: r.Origin, Reason: pic.ReasonAccessRuleNeedsGeoIP, Message: fmt.Sprintf(
			"AccessPolicy %s: %s match on GeoIP data, which Pangolin has only with MaxMind databases configured (server.maxmind_db_path, and server.maxmind_asn_path for ASN): without them Country, Region and ASN rules match no client and CountryIsNot matches every client",
			name, strings.Join(c.geoRules, ", "))})
	}
	return access, nil, notices
}

// notWeaker is a route's annotation as a Gateway's override (mode Override) lets it
// apply: the route's owner writes it, and the override speaks for the platform team, so
// it may make the host stricter, never weaker. A "false" where the override leaves the
// field unset would beat PIC's default (sso on, unless configured otherwise): it is
// dropped, with a notice, and the default applies. A "true", or a "false" the override
// says too, stays.
func notWeaker(annotation, field string, fromAnnotation, fromPolicy *bool, via Target, policy string, origin route.Origin, notices []route.Notice) (*bool, []route.Notice) {
	if fromAnnotation == nil || *fromAnnotation || fromPolicy != nil {
		return fromAnnotation, notices
	}
	return nil, append(notices, route.Notice{Origin: origin, Reason: pic.ReasonAccessPolicyAnnotationConflict, Message: fmt.Sprintf(
		"the annotation %s is \"false\" and is ignored: AccessPolicy %s on %s has mode %s and leaves %s unset, so PIC's default applies; under an override an annotation can only make the host stricter",
		annotation, policy, via, accessv1alpha1.ModeOverride, field)})
}

// stricter merges an annotation with the policy's field of the same meaning, where true
// is the stricter (SSO on, access blocked): true from either wins, then false from
// either, else neither says. When both say and disagree, note is the text of the event.
func stricter(annotation, field string, fromAnnotation, fromPolicy *bool, policy string) (*bool, string) {
	switch {
	case fromAnnotation == nil:
		return fromPolicy, ""
	case fromPolicy == nil:
		return fromAnnotation, ""
	case *fromAnnotation == *fromPolicy:
		return fromPolicy, ""
	}
	on := true
	winner := "the annotation"
	if *fromPolicy {
		winner = "the policy"
	}
	return &on, fmt.Sprintf("the annotation %s is %q and AccessPolicy %s has %s %t: %s %t applies, from %s, because where the two disagree the stricter wins",
		annotation, strconv.FormatBool(*fromAnnotation), policy, field, *fromPolicy, field, true, winner)
}

// DirectOnly lists what p asks that only the direct mode can carry: everything but sso
// and blockAccess, which the fork's PangolinResource has. Empty lists, and a policy
// that sets none of them, ask nothing more.
func DirectOnly(p *route.AccessPolicy) []string {
	if p == nil {
		return nil
	}
	var out []string
	add := func(set bool, field string) {
		if set {
			out = append(out, field)
		}
	}
	add(len(p.Roles) > 0, "roles")
	add(len(p.Users) > 0, "users")
	add(!p.AutoLoginIdP.IsZero(), "autoLoginIdp")
	add(len(p.EmailWhitelist) > 0, "emailWhitelist")
	add(p.Password != nil, "password")
	add(p.PinCode != nil, "pinCode")
	add(p.HeaderAuth != nil, "headerAuth")
	add(len(p.Rules) > 0, "rules")
	return out
}

// Unsupported is the rejection of a host, for a sink that carries only sso and
// blockAccess (PangolinResource), whose policy asks for more; nil when it does not.
// The host is not published, and what exists for it is removed: kept, it would serve
// with less protection than asked, and it may have been published a moment before the
// policy reached PIC's cache (informers of different kinds are not ordered).
func Unsupported(r route.Route) *route.Rejection {
	fields := DirectOnly(r.Access.Policy)
	if len(fields) == 0 {
		return nil
	}
	return &route.Rejection{
		Origin: r.Origin, Host: r.Host, Reason: pic.ReasonAccessPolicyUnsupported, AccessUnsupported: true,
		Message: fmt.Sprintf("AccessPolicy %s sets %s, which only the direct mode (sink: pangolin) can apply: the PangolinResource sink carries sso and blockAccess alone, so the host is not published rather than published with less protection",
			r.Access.Policy.Name, strings.Join(fields, ", ")),
	}
}
