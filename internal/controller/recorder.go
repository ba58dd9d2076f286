package controller

import (
	"context"
	"fmt"
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
// event. Warnings have a queue of their own and are written first: converging thousands
// of Ingresses records a Normal event per write, and that burst must not delay or crowd
// out the Warning that tells a user why their Ingress is not published. Each queue is
// bounded, and what does not fit is dropped with a log line.
type Recorder struct {
	client     eventsv1client.EventsGetter
	scheme     *runtime.Scheme
	controller string // reportingController: what users filter PIC's events by
	instance   string // reportingInstance: which replica wrote it
	warnings   chan *eventsv1.Event
	routine    chan *eventsv1.Event // Normal events
	now        func() time.Time
}

var _ events.EventRecorder = (*Recorder)(nil)

const (
	recorderQueue   = 1000 // per queue, as client-go's recorders keep
	recorderRetries = 3
	// recorderFlush bounds how long the queues are drained at shutdown.
	recorderFlush = 5 * time.Second
)

// NewRecorder returns a recorder writing through client; it writes once started.
func NewRecorder(client eventsv1client.EventsGetter, scheme *runtime.Scheme, controller, instance string) *Recorder {
	return &Recorder{
		client: client, scheme: scheme, controller: controller, instance: instance, now: time.Now,
		warnings: make(chan *eventsv1.Event, recorderQueue),
		routine:  make(chan *eventsv1.Event, recorderQueue),
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
	queue := r.routine
	if eventtype != corev1.EventTypeNormal {
		queue = r.warnings
	}
	select {
	case queue <- ev:
	default:
		eventsDropped.WithLabelValues(eventtype, "queue_full").Inc()
		log.Log.Info("event dropped: too many events queued", "reason", reason, "regarding", ref.Namespace+"/"+ref.Name, "note", ev.Note)
	}
}

// Start implements manager.Runnable: it writes queued events, Warnings first, until ctx
// ends, then what is still queued, for recorderFlush at most.
func (r *Recorder) Start(ctx context.Context) error {
	for {
		select {
		case ev := <-r.warnings:
			r.write(ctx, ev)
			continue
		default:
		}
		select {
		case ev := <-r.warnings:
			r.write(ctx, ev)
		case ev := <-r.routine:
			r.write(ctx, ev)
		case <-ctx.Done():
			r.flush(ctx)
			return nil
		}
	}
}

// flush writes what is still queued, Warnings first, for recorderFlush at most.
func (r *Recorder) flush(ctx context.Context) {
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), recorderFlush)
	defer cancel()
	for _, queue := range []chan *eventsv1.Event{r.warnings, r.routine} {
		for len(queue) > 0 { // this goroutine is the queues' only reader
			r.write(flush, <-queue)
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
			eventsDropped.WithLabelValues(ev.Type, "write_failed").Inc()
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
