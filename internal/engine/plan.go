package engine

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Existing is a resource the source object owns, as the sink read it back: a
// PangolinResource it owns, or a Pangolin resource marked as its own (direct mode).
type Existing struct {
	Resource
	// UID is the stored PangolinResource's, so that a delete removes exactly what was
	// read; empty in direct mode.
	UID types.UID
	// Drifted is set by the sink when what it stores is not exactly what writing
	// Resource would store (a hand edit to a field outside the model, a missing label).
	Drifted bool
	// Status is what the sink reports for it.
	Status Status
	// Governed is set by a sink that applies AccessPolicies when it applied one to the
	// resource, and still keeps what it wrote: detached, the policy's grants and
	// secrets must go (Plan.Access).
	Governed bool
}

// Phase is the sink's verdict on a resource, reduced to what users act on: the
// operator's status of a PangolinResource, or in direct mode what PIC reads of the
// resource and its targets in Pangolin.
type Phase string

const (
	PhasePending Phase = "Pending" // not processed yet, or in progress
	PhaseReady   Phase = "Ready"   // served by Pangolin
	PhaseError   Phase = "Error"   // publishing failed (the operator reports it); Message says why
)

// Status is the sink's report on one resource.
type Status struct {
	Phase   Phase
	Message string
	// URL is where Pangolin serves an HTTP resource: the URL the operator reported, when
	// it did, https://<published host> otherwise; empty for a raw resource, reached at the
	// Pangolin server's own address.
	URL string
}

// ReportedHost is the published host as the sink reports it: the host of Status.URL
// when the sink recorded one, PublishedHost otherwise.
func (e Existing) ReportedHost() string {
	if host, ok := strings.CutPrefix(e.Status.URL, "https://"); ok && host != "" {
		return strings.TrimSuffix(host, "/")
	}
	return e.PublishedHost()
}

// Plan is what the sink must do for one source object.
type Plan struct {
	Create []Resource
	Update []Resource
	Delete []Existing
	// Access are desired resources, neither created nor updated, whose access the sink
	// brings to their Policy: to the policy attached, or, once it is detached, back to
	// what the annotations alone ask. The sink compares with what Pangolin holds and
	// writes only the differences, so a converged host costs nothing.
	Access []Resource
	// After says, by the name of a deletion, which arrivals it waits for: the resources
	// of its kind that replace it (a host renamed, a port moved) and do not serve as
	// asked yet, created by this plan, or existing not Ready or short of targets (a
	// create of an earlier pass that fell short: a target refused, say). The sink
	// deletes it only once each of them landed (exists, with its targets, no write of
	// it refused), and keeps it otherwise, with a ReplacementRefused rejection: an
	// object is never left serving fewer resources than it served and than it asks
	// for, on any pass.
	After map[string][]Resource
	// Kept are the rejections of the resources not deleted because what replaces them
	// was refused before the sink was asked (a host PIC refuses, a host or port
	// another object owns, a missing tunnel): each names its resource's Host.
	Kept []route.Rejection
}

// Empty reports whether the plan asks for nothing but access checks.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// Calculate compares the desired resources of one source object (self) with those it
// has. A rejection with Hold keeps what exists for its host (for every host, when it
// names none): the cause may be transient (a Service not created yet, a missing
// tunnel), and an outage is worse than a stale route. A hold never keeps a host that
// owners gives to another object, or the host would be published twice.
//
//	desired | existing             | held | action
//	--------+----------------------+------+--------
//	yes     | no                   | -    | create
//	yes     | equal, not drifted   | -    | none, or access when it has a Policy or the
//	        |                      |      |   existing one is Governed (not when held)
//	yes     | differs or drifted   | no   | update
//	yes     | differs or drifted   | yes  | none
//	no      | yes                  | no   | delete (host removed, rejected, lost, or object no longer managed),
//	        |                      |      |   make before break: see below
//	no      | yes                  | yes  | none
//
// A resource a Revoked rejection names is never held: its host was taken from the
// object (the host policy), and no other refusal of the object may keep it.
//
// Creating is never held: a held host has nothing to protect when nothing exists.
//
// A resource deleted while the object arrives somewhere new of the same kind (an HTTP
// host, a public port) is what it replaces: a host renamed, a port or protocol moved.
// It goes only once what replaces it serves:
//
//	arriving (same kind, not serving as asked) | the resource left
//	-------------------------------------------+----------------------------------------
//	nothing                                    | deleted
//	created by this plan, or existing and not  | deleted after the arrivals landed
//	  Ready or short of its targets            |   (After)
//	refused (a rejection naming it)            | kept as it is, and said so (Kept)
//
// An arrival that exists counts as much as a create: otherwise the pass after a create
// that fell short (Pangolin refused a target) would see it as existing, and delete what
// it was to replace. The price: a host removed while another of the object's hosts is
// short of a target Pangolin refuses stays until that target lands.
//
// A kept resource stays the object's claim; one whose host another object owns, or
// that a Revoked rejection names (a host the object may not publish), is deleted all
// the same, held or kept.
func Calculate(self route.Origin, desired []Resource, existing []Existing, rejections []route.Rejection, owners map[string]route.Origin) Plan {
	// Owners are by published host (ClaimKey), rejections by the host as written.
	// mustGo: another object owns e's host, or the host policy took it from this one;
	// no hold nor refused move keeps it.
	mustGo := func(e Existing) bool {
		if owner, ok := owners[e.ClaimKey()]; ok && owner.UID != self.UID {
			return true
		}
		return slices.ContainsFunc(rejections, func(rj route.Rejection) bool { return rj.Revoked && rj.Host == e.Host })
	}
	holds := func(e Existing) bool {
		return !mustGo(e) && slices.ContainsFunc(rejections, func(rj route.Rejection) bool { return rj.Hold && (rj.Host == "" || rj.Host == e.Host) })
	}
	var plan Plan
	byName := make(map[string]Existing, len(existing))
	for _, e := range existing {
		byName[e.Name] = e
	}
	wanted := make(map[string]bool, len(desired))
	for _, d := range desired {
		wanted[d.Name] = true
		e, ok := byName[d.Name]
		switch {
		case !ok:
			plan.Create = append(plan.Create, d)
		case (e.Drifted || !e.Equal(d)) && !holds(e):
			plan.Update = append(plan.Update, d)
		case (d.Policy != nil || e.Governed) && !holds(e):
			plan.Access = append(plan.Access, d)
		}
	}
	// What a deletion of each kind waits for, the same for every deletion of the kind.
	arriving := map[bool][]Resource{false: arrivals(false, desired, byName), true: arrivals(true, desired, byName)}
	existingHost := make(map[string]bool, len(existing))
	for _, e := range existing {
		existingHost[e.Host] = true
	}
	for _, e := range existing {
		if wanted[e.Name] || holds(e) {
			continue
		}
		if mustGo(e) {
			plan.Delete = append(plan.Delete, e)
			continue
		}
		if refused := refusedArrivals(e.Raw(), rejections, wanted, existingHost, desired); len(refused) > 0 {
			plan.Kept = append(plan.Kept, keptRejection(self, e, refused))
			continue
		}
		plan.Delete = append(plan.Delete, e)
		if waits := arriving[e.Raw()]; len(waits) > 0 {
			if plan.After == nil {
				plan.After = map[string][]Resource{}
			}
			plan.After[e.Name] = waits
		}
	}
	// A stable order makes events and logs reproducible.
	byResourceName := func(a, b Resource) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(plan.Create, byResourceName)
	slices.SortFunc(plan.Update, byResourceName)
	slices.SortFunc(plan.Access, byResourceName)
	slices.SortFunc(plan.Delete, func(a, b Existing) int { return strings.Compare(a.Name, b.Name) })
	return plan
}

// arrivals are the desired resources of a kind (raw or HTTP) that do not serve as asked
// yet: those the object has no resource for, those whose resource is not Ready, and
// those whose resource is short of its targets (a create of an earlier pass that
// landed without a target Pangolin refused). By name, for a stable order.
func arrivals(raw bool, desired []Resource, existing map[string]Existing) []Resource {
	var out []Resource
	for _, d := range desired {
		if d.Raw() != raw {
			continue
		}
		if e, ok := existing[d.Name]; ok && e.Status.Phase == PhaseReady && !short(e.Targets, d.Targets) {
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Resource) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// short reports whether have lacks targets of want and has none want does not ask for:
// a create that landed with some of its targets, the others refused. A resource whose
// targets merely differ (a backend changed) serves as it did, and replaces nothing.
func short(have, want []Target) bool {
	return len(have) < len(want) && !slices.ContainsFunc(have, func(t Target) bool { return !slices.Contains(want, t) })
}

// refusedArrivals are the rejections of hosts (public ports, when raw) the object asks
// for and does not get, which it has no resource for: where its resources of that kind
// are moving to, refused.
func refusedArrivals(raw bool, rejections []route.Rejection, wanted, existingHost map[string]bool, desired []Resource) []route.Rejection {
	var refused []route.Rejection
	for _, rj := range rejections {
		if rj.Host == "" || existingHost[rj.Host] || isPortKey(rj.Host) != raw {
			continue
		}
		if rj.AccessUnsupported {
			// The object asks for protection the sink cannot carry: what it leaves has
			// less, so keeping it would serve the object with weaker access than asked.
			continue
		}
		if slices.ContainsFunc(desired, func(d Resource) bool { return d.Host == rj.Host && wanted[d.Name] }) {
			continue // published all the same (degraded): nothing was refused
		}
		if !slices.ContainsFunc(refused, func(r route.Rejection) bool { return r.Host == rj.Host }) {
			refused = append(refused, rj)
		}
	}
	return refused
}

func isPortKey(host string) bool {
	_, _, ok := route.ParsePortKey(host)
	return ok
}

// keptRejection says that e stays because what replaces it was refused.
func keptRejection(self route.Origin, e Existing, refused []route.Rejection) route.Rejection {
	var what []string
	for _, rj := range refused {
		what = append(what, rj.Host+" ("+rj.Reason+")")
	}
	return route.Rejection{
		Origin: self, Host: e.Host, Reason: pic.ReasonReplacementRefused, Kept: true,
		Message: KeptMessage(describe(e.Resource), strings.Join(what, ", ")),
	}
}

// KeptMessage is the message of a ReplacementRefused rejection: kept names what stays
// published ("host a.example.com"), refused what replaces it and why it was refused.
func KeptMessage(kept, refused string) string {
	return fmt.Sprintf("%s stays published as it is: what replaces it, %s, was refused; it goes once its replacement is published", kept, refused)
}

// describe names what r publishes, in messages.
func describe(r Resource) string {
	if r.Raw() {
		return fmt.Sprintf("public port %d/%s", r.ProxyPort, r.Protocol)
	}
	return "host " + r.PublishedHost()
}
