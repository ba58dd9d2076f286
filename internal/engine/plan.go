package engine

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Existing is a PangolinResource that the source object owns, as the sink read it.
type Existing struct {
	Resource
	// UID is the stored object's, so that a delete removes exactly what was read.
	UID types.UID
	// Drifted is set by the sink when the stored object is not exactly what rendering
	// Resource would write (a hand edit to a field outside the model, a missing label).
	Drifted bool
	// Status is what the operator reports for it.
	Status Status
	// Governed is set by a sink that applies AccessPolicies when it applied one to the
	// resource, and still keeps what it wrote: detached, the policy's grants and
	// secrets must go (Plan.Access).
	Governed bool
}

// Phase is the operator's verdict on a resource, reduced to what users act on.
type Phase string

const (
	PhasePending Phase = "Pending" // not processed yet, or in progress
	PhaseReady   Phase = "Ready"   // served by Pangolin
	PhaseError   Phase = "Error"   // the operator failed; Message says why
)

// Status is the operator's report on one resource.
type Status struct {
	Phase   Phase
	Message string
	// URL is where Pangolin serves the resource; the operator does not always record it,
	// so it falls back to https://<public host>.
	URL string
}

// PublicHostname is the host users reach: from the operator's URL when it recorded one.
func (e Existing) PublicHostname() string {
	if host, ok := strings.CutPrefix(e.Status.URL, "https://"); ok && host != "" {
		return strings.TrimSuffix(host, "/")
	}
	return e.PublicHost()
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
//	no      | yes                  | no   | delete (host removed, rejected, lost, or object no longer managed)
//	no      | yes                  | yes  | none
//
// Creating is never held: a held host has nothing to protect when nothing exists.
func Calculate(self route.Origin, desired []Resource, existing []Existing, rejections []route.Rejection, owners map[string]route.Origin) Plan {
	// Owners are by published host (ClaimKey), rejections by the host as written.
	holds := func(e Existing) bool {
		if owner, ok := owners[e.ClaimKey()]; ok && owner.UID != self.UID {
			return false
		}
		return slices.ContainsFunc(rejections, func(rj route.Rejection) bool { return rj.Hold && (rj.Host == "" || rj.Host == e.Host) })
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
	for _, e := range existing {
		if !wanted[e.Name] && !holds(e) {
			plan.Delete = append(plan.Delete, e)
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
