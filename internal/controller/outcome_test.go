package controller

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// fixedBackoff is a rate limiter whose every delay is after; it remembers whether it
// was told to forget.
type fixedBackoff struct {
	workqueue.TypedRateLimiter[reconcile.Request]
	after     time.Duration
	forgotten bool
}

func (b *fixedBackoff) When(reconcile.Request) time.Duration { return b.after }
func (b *fixedBackoff) Forget(reconcile.Request)             { b.forgotten = true }

// TestOutcome: what one reconcile's refusals and notices, stage by stage, come to: the
// events told, the refusals the status reports, the refusals the plan holds, and when
// the object is looked at again. A refusal is written "Reason host" ("Reason" alone
// for the whole object or a tunnel).
func TestOutcome(t *testing.T) {
	origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web", UID: "uid-web"}
	refused := func(reason, host string) route.Rejection {
		return route.Rejection{Origin: origin, Host: host, Reason: reason, Message: reason + " " + host}
	}
	retried := func(reason, host string) route.Rejection {
		rj := refused(reason, host)
		rj.Hold, rj.Retry = true, true
		return rj
	}
	kept := func(reason, host string) route.Rejection {
		rj := refused(reason, host)
		rj.Kept = true
		return rj
	}
	notice := func(reason string) route.Notice {
		return route.Notice{Origin: origin, Reason: reason, Message: reason}
	}
	published := func(hosts ...string) []engine.Resource {
		var out []engine.Resource
		for _, h := range hosts {
			out = append(out, engine.Resource{Host: h})
		}
		return out
	}
	const backoff = 10 * time.Minute

	for _, tc := range []struct {
		name    string
		source  plugin.Result
		stages  func(o *outcome)
		told    []string
		notices []string
		status  []string
		held    []string
		requeue time.Duration
	}{
		{
			name: "a reconcile where nothing is refused tells nothing, reports nothing and is not looked at again",
		},
		{
			name:   "a host the source refuses and nothing publishes is told, held and reported",
			source: plugin.Result{Rejections: []route.Rejection{refused(pic.ReasonInvalidHost, "a.example.com")}},
			told:   []string{"InvalidHost a.example.com"}, held: []string{"InvalidHost a.example.com"}, status: []string{"InvalidHost a.example.com"},
		},
		{
			name:   "a host the source refuses in part and the engine publishes all the same is told, not reported",
			source: plugin.Result{Rejections: []route.Rejection{refused(pic.ReasonPathRoutingUnsupported, "a.example.com")}},
			stages: func(o *outcome) { o.decided(published("a.example.com")) },
			told:   []string{"PathRoutingUnsupported a.example.com"}, held: []string{"PathRoutingUnsupported a.example.com"},
		},
		{
			name:   "the source's refusal of the whole object is left to its parent conditions",
			source: plugin.Result{Rejections: []route.Rejection{refused(pic.ReasonInvalidAnnotation, "")}},
			told:   []string{"InvalidAnnotation"}, held: []string{"InvalidAnnotation"},
		},
		{
			name:   "the engine's refusal of the whole object is reported",
			stages: func(o *outcome) { o.refuse(stageEngine, refused(pic.ReasonTunnelNamespaceUnsupported, "")) },
			told:   []string{"TunnelNamespaceUnsupported"}, held: []string{"TunnelNamespaceUnsupported"}, status: []string{"TunnelNamespaceUnsupported"},
		},
		{
			name: "an engine refusal of a host published all the same is not reported",
			stages: func(o *outcome) {
				o.refuse(stageEngine, refused(pic.ReasonHealthCheckUnsupported, "a.example.com"))
				o.decided(published("a.example.com"))
			},
			told: []string{"HealthCheckUnsupported a.example.com"}, held: []string{"HealthCheckUnsupported a.example.com"},
		},
		{
			name:   "a host the host policy refuses is told, held and reported",
			source: plugin.Result{Routes: []route.Route{{Host: "a.example.com"}}},
			stages: func(o *outcome) { o.refuse(stageHostPolicy, refused(pic.ReasonHostNotAllowed, "a.example.com")) },
			told:   []string{"HostNotAllowed a.example.com"}, held: []string{"HostNotAllowed a.example.com"}, status: []string{"HostNotAllowed a.example.com"},
		},
		{
			name:   "a host the object no longer asks for, taken back by the host policy, is told, not reported",
			stages: func(o *outcome) { o.refuse(stageHostPolicy, refused(pic.ReasonHostNotAllowed, "gone.example.com")) },
			told:   []string{"HostNotAllowed gone.example.com"}, held: []string{"HostNotAllowed gone.example.com"},
		},
		{
			name: "a missing tunnel is told once, held, reported for each host it drops, and retried with backoff",
			stages: func(o *outcome) {
				o.tunnelMissing(retried(pic.ReasonTunnelNotFound, ""), []string{"a.example.com", "b.example.com"})
			},
			told: []string{"TunnelNotFound"}, held: []string{"TunnelNotFound"},
			status: []string{"TunnelNotFound a.example.com", "TunnelNotFound b.example.com"}, requeue: backoff,
		},
		{
			name:    "a tunnel not Ready is told after the source's notices and looked at again within its recheck",
			source:  plugin.Result{Notices: []route.Notice{notice(pic.ReasonTLSIgnored)}},
			stages:  func(o *outcome) { o.tunnelNotReady(notice(pic.ReasonTunnelNotReady)) },
			notices: []string{"TLSIgnored", "TunnelNotReady"}, requeue: TunnelNotReadyRecheck,
		},
		{
			name:   "a host whose first write waits for its confirmation is told, held, reported and retried",
			stages: func(o *outcome) { o.refuse(stageConfirm, retried(pic.ReasonAccessPolicyPending, "a.example.com")) },
			told:   []string{"AccessPolicyPending a.example.com"}, held: []string{"AccessPolicyPending a.example.com"},
			status: []string{"AccessPolicyPending a.example.com"}, requeue: backoff,
		},
		{
			name:   "a resource the plan keeps for a refused replacement is told, neither held nor reported",
			stages: func(o *outcome) { o.refuse(stagePlan, kept(pic.ReasonReplacementRefused, "a.example.com")) },
			told:   []string{"ReplacementRefused a.example.com"},
		},
		{
			name: "the sink's refusal is told and reported, its kept replacement only told",
			stages: func(o *outcome) {
				o.refuse(stageSink, refused(pic.ReasonPangolinError, "a.example.com"), kept(pic.ReasonReplacementRefused, "b.example.com"))
			},
			told:   []string{"PangolinError a.example.com", "ReplacementRefused b.example.com"},
			status: []string{"PangolinError a.example.com"},
		},
		{
			name:   "a sink's refusal that keeps its resource published is only told, whatever its reason",
			stages: func(o *outcome) { o.refuse(stageSink, kept(pic.ReasonHostTakenInPangolin, "a.example.com")) },
			told:   []string{"HostTakenInPangolin a.example.com"},
		},
		{
			name:   "a sink refusal that may fix itself is retried with backoff",
			stages: func(o *outcome) { o.refuse(stageSink, retried(pic.ReasonPangolinError, "a.example.com")) },
			told:   []string{"PangolinError a.example.com"}, status: []string{"PangolinError a.example.com"}, requeue: backoff,
		},
		{
			name:   "a tunnel not Ready shortens a longer backoff to its recheck",
			source: plugin.Result{Rejections: []route.Rejection{retried(pic.ReasonServiceNotFound, "a.example.com")}},
			stages: func(o *outcome) {
				o.tunnelNotReady(notice(pic.ReasonTunnelNotReady))
			},
			told: []string{"ServiceNotFound a.example.com"}, notices: []string{"TunnelNotReady"},
			held: []string{"ServiceNotFound a.example.com"}, status: []string{"ServiceNotFound a.example.com"},
			requeue: TunnelNotReadyRecheck,
		},
		{
			name:   "the status reports the tunnel's refusals first, then the host policy's, the confirmation's, the source's, the engine's and the sink's",
			source: plugin.Result{Rejections: []route.Rejection{refused(pic.ReasonInvalidHost, "s.example.com")}, Routes: []route.Route{{Host: "p.example.com"}}},
			stages: func(o *outcome) {
				o.refuse(stageHostPolicy, refused(pic.ReasonHostNotAllowed, "p.example.com"))
				o.tunnelMissing(refused(pic.ReasonTunnelNotFound, ""), []string{"t.example.com"})
				o.refuse(stageEngine, refused(pic.ReasonHostConflict, "e.example.com"))
				o.refuse(stageConfirm, refused(pic.ReasonAccessPolicyPending, "c.example.com"))
				o.refuse(stagePlan, kept(pic.ReasonReplacementRefused, "k.example.com"))
				o.refuse(stageSink, refused(pic.ReasonPangolinError, "w.example.com"))
			},
			told: []string{"InvalidHost s.example.com", "HostNotAllowed p.example.com", "TunnelNotFound", "HostConflict e.example.com",
				"AccessPolicyPending c.example.com", "ReplacementRefused k.example.com", "PangolinError w.example.com"},
			held: []string{"InvalidHost s.example.com", "HostNotAllowed p.example.com", "TunnelNotFound", "HostConflict e.example.com",
				"AccessPolicyPending c.example.com"},
			status: []string{"TunnelNotFound t.example.com", "HostNotAllowed p.example.com", "AccessPolicyPending c.example.com",
				"InvalidHost s.example.com", "HostConflict e.example.com", "PangolinError w.example.com"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOutcome(tc.source)
			if tc.stages != nil {
				tc.stages(o)
			}
			assert.Equal(t, tc.told, names(o.warnings()), "told")
			var notices []string
			for _, n := range o.notices() {
				notices = append(notices, n.Reason)
			}
			assert.Equal(t, tc.notices, notices, "notices")
			assert.Equal(t, tc.status, names(o.unpublished()), "reported in the status")
			assert.Equal(t, tc.held, names(o.held()), "held")
			limiter := &fixedBackoff{after: backoff}
			assert.Equal(t, tc.requeue, o.requeue(limiter, reconcile.Request{}), "requeue")
			assert.Equal(t, !o.retries(), limiter.forgotten, "the backoff starts over once nothing retries")
		})
	}
}

// names writes refusals as "Reason host", or "Reason" when they name no host.
func names(rejections []route.Rejection) []string {
	var out []string
	for _, rj := range rejections {
		if rj.Host == "" {
			out = append(out, rj.Reason)
			continue
		}
		out = append(out, rj.Reason+" "+rj.Host)
	}
	return out
}
