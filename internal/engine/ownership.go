package engine

import (
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Claim is what is known of one object that names a host, or that the sink holds a
// resource on it for (whatever it names now: a refused move, a hold): facts read from
// indexes (who names the host, what the sink keeps), never by translating the object
// again.
type Claim struct {
	Origin route.Origin
	// Deleting: the object's deletion has begun, so it claims nothing any more.
	Deleting bool
	// Keeps: the sink keeps a resource of this object's for the host, so the object
	// published it, or held it, when it was last reconciled.
	Keeps bool
	// Group and Settings are set for routes that share a host through one Gateway:
	// within a Group, the oldest route owns the host, and the routes whose host-wide
	// Settings (access control, public name) equal its own are merged into it.
	Group    string
	Settings string
}

// Decision is who publishes a host, as one claimant sees it.
type Decision struct {
	Owner route.Origin
	// Merged are the claims published through the owner's resource, the owner
	// included: the routes of its Group with its Settings. Empty outside a Group.
	Merged []route.Origin
}

// Owns reports whether the decision leaves the host to origin.
func (d Decision) Owns(origin route.Origin) bool { return d.Owner.UID == origin.UID }

// Decide settles who publishes a host that self claims and others claim too. It is the
// one rule of host ownership, for every kind of source:
//
//	other claim                                            | owner
//	-------------------------------------------------------+---------------------------------------
//	none                                                   | self
//	being deleted                                          | ignored: it claims nothing
//	older, keeps a resource for the host                   | the other (the oldest such claim)
//	older, keeps nothing for the host                      | self: a claim that cannot publish
//	                                                       | (no tunnel, a refused host, a typo
//	                                                       | since before it published) takes nothing
//	younger, keeps a resource for the host                 | self: the younger steps back
//	in self's Group (same Gateway), older                  | the other, kept or not; merged with
//	                                                       | self when their Settings are equal
//
// "Older" is route.Origin.Older: creation time, then namespace/name, then kind, so
// every replica settles the same way. When two claimants publish before seeing each
// other, each sees the other's resource on its next reconcile, and the younger lets go.
func Decide(self Claim, others []Claim) Decision {
	owner := self
	for _, c := range others {
		if c.Deleting || c.Origin.UID == self.Origin.UID {
			continue
		}
		sameGroup := self.Group != "" && c.Group == self.Group
		if (c.Keeps || sameGroup) && c.Origin.Older(owner.Origin) {
			owner = c
		}
	}
	d := Decision{Owner: owner.Origin}
	if owner.Group == "" {
		return d
	}
	for _, c := range append([]Claim{self}, others...) {
		if !c.Deleting && c.Group == owner.Group && c.Settings == owner.Settings &&
			!slices.ContainsFunc(d.Merged, func(o route.Origin) bool { return o.UID == c.Origin.UID }) {
			d.Merged = append(d.Merged, c.Origin)
		}
	}
	slices.SortStableFunc(d.Merged, func(a, b route.Origin) int {
		if a.Older(b) {
			return -1
		}
		return 1
	})
	return d
}
