package engine

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
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

// Hold keeps existing resources as they are. It protects hosts whose rejection may be
// transient, so that a Service being recreated or a tunnel briefly missing never
// deletes a live route.
type Hold struct {
	All   bool            // the whole object (e.g. its tunnel is missing)
	Hosts map[string]bool // source hosts
	// Lost are hosts an older object now publishes: nothing of them is kept, held or
	// not, or the host would be published twice.
	Lost map[string]bool
}

func (h Hold) holds(host string) bool { return (h.All || h.Hosts[host]) && !h.Lost[host] }

// Plan is what the sink must do for one source object.
type Plan struct {
	Create []Resource
	Update []Resource
	Delete []Existing
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// Calculate compares desired with existing resources of one source object.
//
//	desired | existing             | held | action
//	--------+----------------------+------+--------
//	yes     | no                   | -    | create
//	yes     | equal, not drifted   | -    | none
//	yes     | differs or drifted   | no   | update
//	yes     | differs or drifted   | yes  | none
//	no      | yes                  | no   | delete (host removed, rejected, or object no longer managed)
//	no      | yes                  | yes  | none
//
// Creating is never held: a held host has nothing to protect when nothing exists.
func Calculate(desired []Resource, existing []Existing, hold Hold) Plan {
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
		case (e.Drifted || !e.Equal(d)) && !hold.holds(e.Host):
			plan.Update = append(plan.Update, d)
		}
	}
	for _, e := range existing {
		if !wanted[e.Name] && !hold.holds(e.Host) {
			plan.Delete = append(plan.Delete, e)
		}
	}
	// A stable order makes events and logs reproducible.
	byResourceName := func(a, b Resource) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(plan.Create, byResourceName)
	slices.SortFunc(plan.Update, byResourceName)
	slices.SortFunc(plan.Delete, func(a, b Existing) int { return strings.Compare(a.Name, b.Name) })
	return plan
}
