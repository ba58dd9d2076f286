package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	recordutil "k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Recorder writes every event PIC records as an events.k8s.io/v1 Event of its own.
//
// client-go's events recorder folds the events that share a type, reason, action,
// regarding and related object into one series, and keeps the series' first note for
// minutes: a Warning whose cause changed (another port, another winner) kept its old
// message in the API. PIC records an event only when what it reports changes, so it has
// no repetition for a series to absorb: each event is written as it is, once.
//
// Writes are asynchronous, so that a reconcile never waits on the API server for an
// event, and Warnings go first. Normal events report routine work (a resource created,
// a host exposed): they wait while events keep coming, and are written once none has
// come for routineQuiet, or when the oldest has waited routineMaxWait. Converging
// thousands of Ingresses records one Normal event per write; writing each beside its
// write doubled the API server's work while PIC published (docs/performance.md).
// Both queues are bounded, and what does not fit is dropped with a log line.
type Recorder struct {
	client     eventsv1client.EventsGetter
	scheme     *runtime.Scheme
	controller string // reportingController: what users filter PIC's events by
	instance   string // reportingInstance: which replica wrote it
	now        func() time.Time

	warnings chan *eventsv1.Event
	// routineArrived wakes the writer when a Normal event finds the routine queue empty.
	routineArrived chan struct{}
	quiet, maxWait time.Duration // routineQuiet, routineMaxWait; tests shorten them

	mu           sync.Mutex
	routine      []*eventsv1.Event // Normal events, oldest first
	lastRecorded time.Time         // when the last event of either type was recorded
}

var _ events.EventRecorder = (*Recorder)(nil)

const (
	warningQueue = 1000
	// routineQueue holds the Normal events of a burst of this many writes (about
	// 1 KiB each) before they are dropped.
	routineQueue   = 10000
	routineQuiet   = 250 * time.Millisecond
	routineMaxWait = 30 * time.Second

	recorderRetries = 3
	// recorderFlush bounds how long the queues are drained at shutdown.
	recorderFlush = 5 * time.Second
)

// NewRecorder returns a recorder writing through client; it writes once started.
func NewRecorder(client eventsv1client.EventsGetter, scheme *runtime.Scheme, controller, instance string) *Recorder {
	return &Recorder{
		client: client, scheme: scheme, controller: controller, instance: instance, now: time.Now,
		warnings:       make(chan *eventsv1.Event, warningQueue),
		routineArrived: make(chan struct{}, 1),
		quiet:          routineQuiet, maxWait: routineMaxWait,
	}
}

// Eventf implements events.EventRecorder.
func (r *Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		log.Log.Error(err, "cannot record an event about an object without a reference", "reason", reason)
		return
	}
	now := r.now()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// client-go's naming: unique per object and instant, and a valid name even
			// for an object whose own name is already at the length limit.
			Name:      recordutil.GenerateEventName(ref.Name, now.UnixNano()),
			Namespace: eventNamespace(ref),
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Note:                fmt.Sprintf(note, args...),
		Type:                eventtype,
	}
	if related != nil {
		if rel, err := reference.GetReference(r.scheme, related); err == nil {
			ev.Related = rel
		}
	}
	if !r.enqueue(ev, now) {
		log.Log.Info("event dropped: too many events queued", "reason", reason, "regarding", ref.Namespace+"/"+ref.Name, "note", ev.Note)
	}
}

// enqueue queues ev, recorded at now, and reports whether it fit.
func (r *Recorder) enqueue(ev *eventsv1.Event, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastRecorded = now
	if ev.Type != corev1.EventTypeNormal {
		select {
		case r.warnings <- ev:
			return true
		default:
			return false
		}
	}
	if len(r.routine) >= routineQueue {
		return false
	}
	r.routine = append(r.routine, ev)
	if len(r.routine) == 1 {
		select {
		case r.routineArrived <- struct{}{}:
		default:
		}
	}
	return true
}

// nextRoutine returns the oldest Normal event if it is due; otherwise how long until it
// may be (0: none is queued).
func (r *Recorder) nextRoutine() (*eventsv1.Event, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.routine) == 0 {
		return nil, 0
	}
	now := r.now()
	quietFor := now.Sub(r.lastRecorded)
	waited := now.Sub(r.routine[0].EventTime.Time)
	if quietFor < r.quiet && waited < r.maxWait {
		return nil, min(r.quiet-quietFor, r.maxWait-waited)
	}
	ev := r.routine[0]
	r.routine[0] = nil
	r.routine = r.routine[1:]
	if len(r.routine) == 0 {
		r.routine = nil // let a burst's backing array go
	}
	return ev, 0
}

// Start implements manager.Runnable: it writes queued events until ctx ends, then what
// is still queued, for recorderFlush at most.
func (r *Recorder) Start(ctx context.Context) error {
	due := time.NewTimer(time.Hour)
	due.Stop()
	for {
		select {
		case ev := <-r.warnings:
			r.write(ctx, ev)
			continue
		case <-ctx.Done():
			r.flush(ctx)
			return nil
		default:
		}
		ev, wait := r.nextRoutine()
		if ev != nil {
			r.write(ctx, ev)
			continue
		}
		var dueC <-chan time.Time
		if wait > 0 {
			due.Reset(wait)
			dueC = due.C
		}
		select {
		case ev := <-r.warnings:
			r.write(ctx, ev)
		case <-r.routineArrived:
		case <-dueC:
		case <-ctx.Done():
			r.flush(ctx)
			return nil
		}
		due.Stop()
	}
}

// flush writes what is still queued, Warnings first, for recorderFlush at most.
func (r *Recorder) flush(ctx context.Context) {
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), recorderFlush)
	defer cancel()
	for {
		select {
		case ev := <-r.warnings:
			r.write(flush, ev)
			continue
		default:
		}
		r.mu.Lock()
		routine := r.routine
		r.routine = nil
		r.mu.Unlock()
		if len(routine) == 0 {
			return
		}
		for _, ev := range routine {
			r.write(flush, ev)
		}
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the leader records
// events, but a replica losing the lease still writes what it recorded while it led.
func (r *Recorder) NeedLeaderElection() bool { return false }

func (r *Recorder) write(ctx context.Context, ev *eventsv1.Event) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := r.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		switch {
		case err == nil:
			return
		case apierrors.IsAlreadyExists(err):
			// Two events about one object in the same nanosecond: the second gets a name of its own.
			ev.Name = recordutil.GenerateEventName(ev.Regarding.Name, r.now().UnixNano()+int64(attempt))
		case attempt >= recorderRetries || apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || ctx.Err() != nil:
			// Forbidden: the namespace is being deleted, or RBAC lacks events; Invalid
			// will not heal. Either way, retrying cannot help.
			log.Log.Error(err, "cannot record event", "reason", ev.Reason, "regarding", ev.Regarding.Namespace+"/"+ev.Regarding.Name, "note", ev.Note)
			return
		default:
			select {
			case <-time.After(backoff):
				backoff *= 2
			case <-ctx.Done():
			}
		}
	}
}

// eventNamespace is where an event about ref lives: beside it, or in default for a
// cluster-scoped object.
func eventNamespace(ref *corev1.ObjectReference) string {
	if ref.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return ref.Namespace
}
