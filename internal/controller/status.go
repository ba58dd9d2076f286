package controller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// decideStatus is the status of an object whose status PIC owns, once everything that
// can refuse has spoken: the source judged the object and each of its parents
// (res.Parents), then the stages after it refused what they refused (refused: the
// refusals that leave a host, or the object, not published; outcome.unpublished), and
// AccessPolicies protect some of its hosts (protections). It is the one place that
// decides what a parent's conditions say:
//
//	the source's verdict on the parent | refused                                  | conditions written
//	Accepted=False                     | anything                                 | the source's: the first cause stands
//	Accepted=True                      | nothing                                  | Accepted=True, no PartiallyInvalid; the
//	                                   |                                          |   message names the AccessPolicy that
//	                                   |                                          |   protects its hosts, if one does
//	Accepted=True                      | every host the object asks for, or it all | Accepted=False, reason and message of the refusals
//	Accepted=True                      | some of its hosts                        | Accepted=True, PartiallyInvalid=True ("Dropped Rule(s) for host …")
//
// The reasons are PIC's event reasons (HostConflict, DomainNotFound, TunnelNotFound,
// PangolinError…): Gateway API allows implementation-specific ones, and a user reads
// the same word in the route's status and in its events.
func decideStatus(res plugin.Result, refused []route.Rejection, protections []string, hostnames plugin.Hostnames) plugin.Status {
	status := plugin.Status{Hostnames: hostnames}
	if res.Origin != nil {
		status.Generation = res.Origin.Generation
	}
	if len(res.Parents) == 0 {
		return status
	}
	verdict := refusalVerdict(res.Routes, res.MergedInto, refused)
	protection := strings.Join(protections, "; ")
	for _, p := range res.Parents {
		parent := plugin.ParentStatus{Parent: p.Parent}
		accepted := slices.ContainsFunc(p.Conditions, func(c plugin.Condition) bool {
			return c.Type == pic.ConditionAccepted && c.Status
		})
		for _, c := range p.Conditions {
			if c.Type == pic.ConditionPartiallyInvalid {
				continue // decided here, below
			}
			switch {
			case c.Type == pic.ConditionAccepted && accepted && verdict != nil && verdict.all:
				c = plugin.Condition{Type: pic.ConditionAccepted, Status: false, Reason: verdict.reason, Message: verdict.message}
			case c.Type == pic.ConditionAccepted && accepted && protection != "":
				c.Message += "; " + protection
			}
			parent.Conditions = append(parent.Conditions, c)
		}
		if accepted && verdict != nil && !verdict.all {
			parent.Conditions = append(parent.Conditions, plugin.Condition{
				Type: pic.ConditionPartiallyInvalid, Status: true, Reason: verdict.reason, Message: verdict.message,
			})
		}
		status.Parents = append(status.Parents, parent)
	}
	return status
}

// summary is what the refusals after the source amount to for an object.
type summary struct {
	// all is true when nothing the object asks for is published: every host it routes
	// is refused, or the object as a whole is.
	all             bool
	reason, message string
}

func refusalVerdict(routes []route.Route, mergedInto []string, refused []route.Rejection) *summary {
	if len(refused) == 0 {
		return nil
	}
	refusedHosts := map[string]bool{}
	partial := map[string]bool{} // published, without some of their paths
	whole := false
	var messages []string
	for _, rj := range refused {
		switch {
		case rj.Host == "":
			whole = true
		case rj.Path != "":
			partial[rj.Host] = true
		default:
			refusedHosts[rj.Host] = true
		}
		if !slices.Contains(messages, rj.Message) {
			messages = append(messages, rj.Message)
		}
	}
	// Every host refused: none of those the object publishes, nor of those it is
	// served under through another object, escaped.
	all := whole || !slices.ContainsFunc(routes, func(rt route.Route) bool { return !refusedHosts[rt.Host] }) &&
		!slices.ContainsFunc(mergedInto, func(host string) bool { return !refusedHosts[host] })
	v := &summary{all: all, reason: refused[0].Reason, message: strings.Join(messages, "; ")}
	if !all {
		hosts := make([]string, 0, len(refusedHosts)+len(partial))
		for h := range refusedHosts {
			hosts = append(hosts, h)
		}
		for h := range partial {
			if !refusedHosts[h] {
				hosts = append(hosts, h)
			}
		}
		slices.Sort(hosts)
		// Gateway API asks a PartiallyInvalid message to start so.
		v.message = fmt.Sprintf("Dropped Rule(s) for host %s: %s", strings.Join(hosts, ", "), v.message)
	}
	return v
}
