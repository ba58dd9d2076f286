package controller

import (
	"slices"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// stage is the part of a reconcile that refused something. The stages run in the
// order of their values.
type stage int

const (
	// stageSource is the source's judgement of the object (plugin.Result.Rejections).
	stageSource stage = iota
	// stageHostPolicy is the hostPolicy of PIC's configuration (allowedClaims).
	stageHostPolicy
	// stageTunnel is the check that each route's tunnel exists (checkTunnels).
	stageTunnel
	// stageEngine is engine.Desired.
	stageEngine
	// stageConfirm is the source's confirmation of a host before its first write
	// (plugin.Result.Confirm).
	stageConfirm
	// stagePlan is engine.Calculate: a resource kept because what replaces it was refused.
	stagePlan
	// stageSink is the sink's Apply.
	stageSink
)

// statusOrder is the order in which a status names the refusals that leave something
// unpublished: the first one gives the condition its reason.
var statusOrder = []stage{stageTunnel, stageHostPolicy, stageConfirm, stageSource, stageEngine, stageSink}

// refusal is one refusal of a stage.
type refusal struct {
	route.Rejection
	stage stage
	// drops are the hosts a refusal of a tunnel (which names no host) leaves
	// unpublished: its event is about the tunnel, the status names each host.
	drops []string
}

// outcome is what one reconcile of a source object found, stage by stage: what each
// stage refused or noticed. It is the one place that decides what follows from that:
//
//	question              | answer      | from
//	----------------------+-------------+--------------------------------------------------
//	what to tell          | warnings,   | every refusal: a Warning each (a missing tunnel
//	                      |   notices   |   once, not once per host); every notice, a tunnel
//	                      |             |   not Ready among them: a Normal event each
//	what status to write  | status      | the refusals that leave a host, or the object, not
//	                      |             |   published (unpublished); the protections noticed
//	what to hold          | held        | the refusals made before the plan, for
//	                      |             |   engine.Calculate: their Hold, and the hosts they
//	                      |             |   refuse the object's resources are moving to
//	when to retry         | requeue     | a refusal that may fix itself (Retry): backoff; a
//	                      |             |   tunnel not Ready: within TunnelNotReadyRecheck
//
// What a refusal leaves unpublished depends on its stage:
//
//	stage       | leaves unpublished
//	------------+---------------------------------------------------------------------
//	source      | its host, when the engine did not publish it all the same; a refusal
//	            |   of the whole object is already in the source's parent conditions
//	host policy | its host
//	tunnel      | every host the tunnel's routes publish (drops)
//	engine      | its host, when not published all the same (degraded), or the object
//	confirm     | its host: its first write waits
//	plan        | nothing: what is replaced stays published
//	sink        | its host, or the object, but for a resource kept for a refused
//	            |   replacement (Kept), which stays published
type outcome struct {
	source plugin.Result
	// refusals are in the order the stages made them.
	refusals []refusal
	// notReady are the notices of tunnels that exist but are not Ready yet.
	notReady []route.Notice
	// desired are the resources the engine decided, less those whose first write
	// waits: a refusal of a host among them refuses nothing.
	desired []engine.Resource
}

func newOutcome(res plugin.Result) *outcome {
	o := &outcome{source: res}
	o.refuse(stageSource, res.Rejections...)
	return o
}

// refuse records the refusals of a stage.
func (o *outcome) refuse(s stage, rejections ...route.Rejection) {
	for _, rj := range rejections {
		o.refusals = append(o.refusals, refusal{Rejection: rj, stage: s})
	}
}

// tunnelMissing records the refusal of a missing tunnel, which names no host, and the
// hosts it drops.
func (o *outcome) tunnelMissing(rj route.Rejection, drops []string) {
	o.refusals = append(o.refusals, refusal{Rejection: rj, stage: stageTunnel, drops: drops})
}

// tunnelNotReady records a tunnel that exists and is not Ready yet: the routes through
// it are written, and the object is looked at again soon.
func (o *outcome) tunnelNotReady(n route.Notice) { o.notReady = append(o.notReady, n) }

// decided records the resources the object gets, once its first writes are confirmed.
func (o *outcome) decided(desired []engine.Resource) { o.desired = desired }

// held are the refusals the plan is calculated with.
func (o *outcome) held() []route.Rejection {
	var out []route.Rejection
	for _, rf := range o.refusals {
		if rf.stage < stagePlan {
			out = append(out, rf.Rejection)
		}
	}
	return out
}

// warnings are the refusals to tell, one Warning event each.
func (o *outcome) warnings() []route.Rejection {
	out := make([]route.Rejection, 0, len(o.refusals))
	for _, rf := range o.refusals {
		out = append(out, rf.Rejection)
	}
	return out
}

// notices are the facts to tell that stop nothing, one Normal event each.
func (o *outcome) notices() []route.Notice {
	return slices.Concat(o.source.Notices, o.notReady)
}

// unpublished are the refusals that leave a host (Host set) or the object (Host empty)
// not published, in statusOrder.
func (o *outcome) unpublished() []route.Rejection {
	published := func(host string) bool {
		return slices.ContainsFunc(o.desired, func(d engine.Resource) bool { return d.Host == host })
	}
	var out []route.Rejection
	for _, s := range statusOrder {
		for _, rf := range o.refusals {
			if rf.stage != s {
				continue
			}
			switch {
			case s == stageTunnel:
				for _, host := range rf.drops {
					dropped := rf.Rejection
					dropped.Host = host
					out = append(out, dropped)
				}
			case s == stageSource && (rf.Host == "" || published(rf.Host)),
				s == stageEngine && rf.Host != "" && published(rf.Host),
				s == stageHostPolicy && !o.asked(rf.Host),
				rf.Kept:
				// Said by the source's parent conditions already; published all the
				// same (degraded); a host the object no longer asks for, taken back by
				// the host policy (its event says so); or kept published for a refused
				// replacement.
			default:
				out = append(out, rf.Rejection)
			}
		}
	}
	return out
}

// asked reports whether the source asks for host (as written, or a port key): a host
// the object no longer names is not its status's business.
func (o *outcome) asked(host string) bool {
	return slices.ContainsFunc(o.source.Routes, func(rt route.Route) bool { return rt.Host == host })
}

// protections are what the notices say of the AccessPolicies protecting the object's
// hosts, each once: an accepted route says so in its status as well as in its events.
func (o *outcome) protections() []string {
	var out []string
	for _, n := range o.source.Notices {
		if n.Protects != "" && !slices.Contains(out, n.Message) {
			out = append(out, n.Message)
		}
	}
	return out
}

// status is the status to write on the object, once every stage has spoken, with the
// hosts served and pending (publishedHostnames).
func (o *outcome) status(hostnames plugin.Hostnames) plugin.Status {
	return decideStatus(o.source, o.unpublished(), o.protections(), hostnames)
}

// retries reports whether a refusal may fix itself: the object is looked at again with
// backoff.
func (o *outcome) retries() bool {
	return slices.ContainsFunc(o.refusals, func(rf refusal) bool { return rf.Retry })
}

// requeue is when to look at the object of req again: the next backoff of limiter when
// a refusal may fix itself (a refusal only the user can fix waits for their change),
// and within TunnelNotReadyRecheck while a tunnel is not Ready; zero for neither. The
// backoff starts over once no refusal retries.
func (o *outcome) requeue(limiter workqueue.TypedRateLimiter[reconcile.Request], req reconcile.Request) time.Duration {
	var after time.Duration
	if o.retries() {
		after = limiter.When(req)
	} else {
		limiter.Forget(req)
	}
	if len(o.notReady) > 0 && (after == 0 || after > TunnelNotReadyRecheck) {
		after = TunnelNotReadyRecheck
	}
	return after
}
