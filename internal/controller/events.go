package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// maxNoteBytes is the API server's limit on the note of an events.k8s.io/v1 Event. A
// longer note makes it refuse the whole event, so a Warning that quotes user input (an
// annotation value, a long path) or the operator's status message would be lost, with
// only a line in client-go's log to show for it: found by the malformed-input corpus
// (testdata/corpus).
const maxNoteBytes = 1024

// noteLimiter cuts every event's note to what the API server accepts.
type noteLimiter struct{ events.EventRecorder }

func limitNotes(r events.EventRecorder) events.EventRecorder {
	if r == nil {
		return nil
	}
	return noteLimiter{r}
}

func (n noteLimiter) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	n.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", truncateNote(fmt.Sprintf(note, args...)))
}

// truncateNote returns note, or its first bytes and "…" in at most maxNoteBytes, cut on
// a character boundary.
func truncateNote(note string) string {
	if len(note) <= maxNoteBytes {
		return note
	}
	const ellipsis = "…"
	cut := maxNoteBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + ellipsis
}

// regarding is the object events are about.
func regarding(o route.Origin) *corev1.ObjectReference {
	apiVersion := o.Version
	if o.Group != "" {
		apiVersion = o.Group + "/" + o.Version
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

// reportApplied emits a Normal event and a log line for every write.
func (r *Reconciler) reportApplied(ctx context.Context, origin route.Origin, applied plugin.Applied) {
	logger := log.FromContext(ctx)
	for _, c := range []struct {
		reason, action string
		resources      []engine.Resource
	}{
		{pic.ReasonCreated, "Create", applied.Created},
		{pic.ReasonUpdated, "Update", applied.Updated},
		{pic.ReasonDeleted, "Delete", applied.Deleted},
	} {
		for _, d := range c.resources {
			desc := r.sink.Describe(d)
			logger.Info(strings.ToLower(c.reason)+" "+desc.Kind, "resource", desc.Name, "host", d.ShownHost(), "via", desc.Tunnel)
			r.recorder.Eventf(regarding(origin), desc.Object, corev1.EventTypeNormal, c.reason, c.action,
				"%s %s %s for %s %s (%s)", c.reason, desc.Kind, desc.Name, hostOrPort(d), d.ShownHost(), desc.Tunnel)
		}
	}
}

// hostOrPort is what events call what r publishes: a host, or a TCP or UDP port.
func hostOrPort(r engine.Resource) string {
	if r.Raw() {
		return "port"
	}
	return "host"
}

// report emits a Warning event for each rejection and a Normal one for each notice (a
// tunnel not Ready yet among them), once per message: what the previous reconcile reported
// already is not repeated by a resync, so events keep their meaning and a steady state
// writes nothing; a message that changed is reported again, with its new text.
func (r *Reconciler) report(ctx context.Context, origin route.Origin, rejections []route.Rejection, notices []route.Notice, live []engine.Existing) {
	logger := log.FromContext(ctx)
	var reports []report
	for _, rj := range rejections {
		reports = append(reports, report{eventType: corev1.EventTypeWarning, reason: rj.Reason, host: rj.Host, message: rj.Message})
	}
	for _, n := range notices {
		reports = append(reports, report{eventType: corev1.EventTypeNormal, reason: n.Reason, message: n.Message})
	}
	slices.SortFunc(reports, func(a, b report) int { return strings.Compare(a.key(), b.key()) })
	reports = slices.Compact(reports)

	fresh, transitions := r.seen.record(origin.NamespacedName(), reports, live)
	for _, e := range transitions {
		desc := r.sink.Describe(e.Resource)
		switch e.Status.Phase {
		case engine.PhaseReady:
			logger.Info("exposed", "resource", desc.Name, "host", e.ShownHost(), "url", e.Status.URL)
			r.recorder.Eventf(regarding(origin), desc.Object, corev1.EventTypeNormal, pic.ReasonExposed, "Publish", "%s", exposedMessage(e, desc))
		case engine.PhaseError:
			// Only pangolin-operator reports an error of its own; direct mode's refusals
			// are rejections.
			logger.Info("pangolin error", "resource", desc.Name, "host", e.ShownHost(), "message", e.Status.Message)
			r.recorder.Eventf(regarding(origin), desc.Object, corev1.EventTypeWarning, pic.ReasonPangolinError, "Publish",
				"pangolin-operator could not publish %s (%s %s): %s", e.ShownHost(), desc.Kind, desc.Name, e.Status.Message)
		}
	}
	for _, rp := range reports {
		if !fresh[rp.key()] {
			if rp.eventType == corev1.EventTypeWarning {
				logger.V(1).Info("not publishing", "host", rp.host, "reason", rp.reason, "message", rp.message)
			}
			continue
		}
		if rp.eventType == corev1.EventTypeWarning {
			logger.Info("not publishing", "host", rp.host, "reason", rp.reason, "message", rp.message)
		} else {
			logger.Info(rp.message, "reason", rp.reason)
		}
		r.recorder.Eventf(regarding(origin), nil, rp.eventType, rp.reason, "Validate", "%s", rp.message)
	}
}

// exposedMessage is the Exposed event's note. A TCP or UDP port has no URL (the sink
// knows none: it is reached at the Pangolin server's address), so it names the port key
// alone: "tcp:5432 is served by Pangolin".
func exposedMessage(e engine.Existing, desc plugin.Description) string {
	if e.Status.URL == "" {
		return fmt.Sprintf("%s is served by Pangolin (%s %s)", e.Host, desc.Kind, desc.Name)
	}
	return fmt.Sprintf("%s is served by Pangolin at %s (%s %s)", e.Host, e.Status.URL, desc.Kind, desc.Name)
}

// sinkFailed returns err, which fails the reconcile: the controller retries it with
// backoff. When the sink says it is out of reach (plugin.IsUnreachable) and PIC manages
// the object, the object is told once while it lasts, whatever the messages of the
// retries; nothing was removed: the engine only deletes what Current read.
func (r *Reconciler) sinkFailed(ctx context.Context, res plugin.Result, err error) error {
	if ctx.Err() != nil || !res.Managed || !plugin.IsUnreachable(err) {
		return err
	}
	if r.seen.failed(res.Origin.NamespacedName()) {
		r.recorder.Eventf(regarding(*res.Origin), nil, corev1.EventTypeWarning, pic.ReasonSinkUnavailable, "Publish",
			"cannot publish now; retrying with backoff, and nothing is removed meanwhile: %v", err)
	}
	return err
}

// report is one event report makes about an object's state.
type report struct {
	eventType, reason, host, message string
}

func (rp report) key() string {
	return rp.eventType + "\x00" + rp.reason + "\x00" + rp.host + "\x00" + rp.message
}

// observations keeps, per object, what was last reported and served, for the
// once-per-change events and the gauges.
type observations struct {
	source  string
	mu      sync.Mutex
	objects map[types.NamespacedName]observation
}

// observation is kept for every managed object, so it holds slices rather than maps:
// at thousands of objects, three small maps each weighed more than the objects' cache.
type observation struct {
	// reported are the keys of what the last reconcile reported.
	reported []string
	// unreachable is set from a failure of the sink until a reconcile gets through.
	unreachable bool
	reasons     []string
	tunnels     []tunnelCount
	// phases are the operator's last verdicts: "Ready", or "Error: message".
	phases []resourcePhase
}

// tunnelCount is how many resources an object has served through a tunnel.
type tunnelCount struct {
	tunnel string
	n      int
}

type resourcePhase struct{ name, phase string }

func (o observation) phase(name string) string {
	for _, p := range o.phases {
		if p.name == name {
			return p.phase
		}
	}
	return ""
}

// record stores what this reconcile found, and returns the reports the previous one
// did not make (by key) and the resources whose operator verdict changed to Ready or
// Error.
func (o *observations) record(key types.NamespacedName, reports []report, live []engine.Existing) (map[string]bool, []engine.Existing) {
	var next observation
	for _, rp := range reports {
		next.reported = append(next.reported, rp.key())
		if rp.eventType == corev1.EventTypeWarning && !slices.Contains(next.reasons, rp.reason) {
			next.reasons = append(next.reasons, rp.reason)
		}
	}
	for _, e := range live {
		tunnel := e.Tunnel.String()
		if i := slices.IndexFunc(next.tunnels, func(t tunnelCount) bool { return t.tunnel == tunnel }); i >= 0 {
			next.tunnels[i].n++
		} else {
			next.tunnels = append(next.tunnels, tunnelCount{tunnel: tunnel, n: 1})
		}
		switch e.Status.Phase {
		case engine.PhaseReady:
			next.phases = append(next.phases, resourcePhase{e.Name, string(engine.PhaseReady)})
		case engine.PhaseError:
			next.phases = append(next.phases, resourcePhase{e.Name, string(engine.PhaseError) + ": " + e.Status.Message})
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.objects[key]
	o.apply(prev, -1)
	o.apply(next, +1)
	o.objects[key] = next
	fresh := map[string]bool{}
	for _, k := range next.reported {
		if !slices.Contains(prev.reported, k) {
			fresh[k] = true
		}
	}
	var transitions []engine.Existing
	for _, e := range live {
		if p := next.phase(e.Name); p != "" && p != prev.phase(e.Name) {
			transitions = append(transitions, e)
		}
	}
	return fresh, transitions
}

// failed records that the sink is out of reach for key, and reports whether that is
// news: the first failure since a reconcile got through. What was reported before stays
// recorded, so that a recovery does not report it again.
func (o *observations) failed(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	obs := o.objects[key]
	if obs.unreachable {
		return false
	}
	obs.unreachable = true
	o.objects[key] = obs
	return true
}

func (o *observations) forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.objects[key]; ok {
		o.apply(prev, -1)
		delete(o.objects, key)
	}
}
