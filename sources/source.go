// Package sources defines what a source of routes is: a kind of Kubernetes object
// (Ingress, HTTPRoute) that users write, read and normalized into the route model.
// A source reads; it never writes the objects PIC creates.
package sources

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Result is what a source makes of one of its objects.
type Result struct {
	// Origin is nil when the object does not exist (any more).
	Origin *route.Origin
	// Deleting is true once the object's deletion has begun (a finalizer, or foreground
	// deletion, keeps it a while): what it owns is the garbage collector's to remove or
	// orphan, as the deletion asks, and it claims no host any more.
	Deleting bool
	// Managed is false when PIC must not publish the object: another class, opted out.
	// Whatever PIC created for it is then removed.
	Managed bool
	// OwnsStatus is true when PIC is the object's controller (its class is PIC's), so
	// that writing its status fights no other controller.
	OwnsStatus bool
	// Routes are the hosts that can be published; Rejections say what cannot, and why.
	Routes     []route.Route
	Rejections []route.Rejection
	// Notices are facts users should know that stop nothing (spec.tls is not used):
	// Normal events, once per change.
	Notices []route.Notice
	// Held are the hosts the object keeps while a problem that holds what exists lasts
	// (a missing Service, an invalid annotation): still its claims, so that no younger
	// object publishes them beside what it keeps. Only hosts it could publish: none of
	// a route its Gateway refuses, or of an object the tunnel policy does not allow.
	Held []string
	// Status is what the source wants to write on the object besides the hostnames
	// (an HTTPRoute's parent conditions), in its own terms.
	Status any
}

// Source is one kind of object that PIC turns into routes.
type Source interface {
	// Name is the source's configuration name: "ingress", "httproute".
	Name() string
	// Object is an empty object of the kind the source reconciles.
	Object() client.Object
	// Routes reads the object with key. The error is for infrastructure failures only
	// (the cache, the API server): a user's mistake is a Rejection.
	Routes(ctx context.Context, key types.NamespacedName) (Result, error)
	// Indexes are the cache indexes the source reads through; they are registered
	// before the cache starts.
	Indexes() []Index
	// Watch adds the watches on related objects (classes, Services, ...) that must
	// bring an object back to reconciliation.
	Watch(b *builder.Builder)
	// Hosts returns the hosts an object of the source's kind claims, normalized, whether
	// or not they are valid to publish: those it names, or for an HTTPRoute without
	// hostnames, those of the listeners it attaches to.
	Hosts(ctx context.Context, obj client.Object) []string
	// Claimants returns the keys of the source's objects that name host, from an index:
	// used to settle host conflicts and to hand a released host to the next claimant.
	Claimants(ctx context.Context, host string) ([]route.Origin, error)
	// WriteStatus records on the object the hostnames Pangolin serves and res.Status,
	// if they differ from what it records. Only called when res.OwnsStatus.
	WriteStatus(ctx context.Context, res Result, hostnames Hostnames) error
}

// Hostnames are the public hostnames of what an object publishes.
type Hostnames struct {
	// Served are confirmed: Pangolin serves them.
	Served []string
	// Pending are written and not confirmed yet, most often a new version of a host
	// Pangolin already serves: an address already shown for one stays, so that an edit
	// does not make the object look unpublished (Argo CD's Progressing) while Pangolin
	// keeps serving it. A host the sink reports an error for is in neither list.
	Pending []string
}

// HostsFromRelated is implemented by a source whose objects may take their hosts from
// other objects: an HTTPRoute without hostnames is served under its Gateway's listener
// hostnames. Other sources' controllers watch those objects, so that a host one of
// them moves reaches its other claimants at once.
type HostsFromRelated interface {
	RelatedHosts() []RelatedHosts
}

// RelatedHosts is a kind of object from which a source's objects take hosts, and the
// hosts one such object gives.
type RelatedHosts struct {
	Object client.Object
	Hosts  func(client.Object) []string
}

// Index is a cache index on one kind of object.
type Index struct {
	Object client.Object
	Field  string
	Func   client.IndexerFunc
}
