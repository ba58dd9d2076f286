package sources

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
)

// liveReads shares the live reads of a namespace's AccessPolicies between the first
// publishes that need one (Policies.confirmer). What a confirmation must see is every
// policy applied before the object: a read that began after the object was created
// sees them all, so every object created before a read began can use that read. A
// creation timestamp has one-second resolution, and is the API server's clock while a
// read's start is PIC's: a read serves an object only when it began clockMargin and a
// second or more after the object's timestamp, so that PIC's clock running ahead of the
// API server's by less than clockMargin cannot let a read taken before the object
// confirm it.
//
// Without the sharing, a fresh install with N objects costs N reads of the API server,
// one per first publish, each a quorum read from etcd.
type liveReads struct {
	reader client.Reader
	now    func() time.Time

	mu          sync.Mutex
	byNamespace map[string]*liveRead
}

// liveRead is one read of a namespace's AccessPolicies, finished once done is closed.
type liveRead struct {
	began    time.Time
	done     chan struct{}
	policies []accessv1alpha1.AccessPolicy
	err      error
}

// clockMargin is how far ahead of the API server's clock PIC's may run without a live
// read confirming an object created after it began. Clocks synchronized by NTP are
// milliseconds apart; the price of a wider margin is a read of its own for each object
// created less than that long before the reads under way.
const clockMargin = 5 * time.Second

func newLiveReads(reader client.Reader) *liveReads {
	return &liveReads{reader: reader, now: time.Now, byNamespace: map[string]*liveRead{}}
}

// policies returns the AccessPolicies of namespace as the API server held them at some
// moment after created (an object's creation timestamp), joining a read that began
// clockMargin and a second or more after it, or starting one.
func (l *liveReads) policies(ctx context.Context, namespace string, created time.Time) ([]accessv1alpha1.AccessPolicy, error) {
	notBefore := created.Add(time.Second + clockMargin)
	if created.IsZero() {
		notBefore = l.now() // no creation time known: only a read from now on will do
	}
	l.mu.Lock()
	read := l.byNamespace[namespace]
	if read == nil || read.began.Before(notBefore) || read.failed() {
		read = &liveRead{began: l.now(), done: make(chan struct{})}
		l.byNamespace[namespace] = read
		l.mu.Unlock()
		var list accessv1alpha1.AccessPolicyList
		read.err = l.reader.List(ctx, &list, client.InNamespace(namespace))
		if read.err != nil {
			read.err = fmt.Errorf("list the AccessPolicies of namespace %s from the API server: %w", namespace, read.err)
		}
		read.policies = list.Items
		close(read.done)
	} else {
		l.mu.Unlock()
	}
	select {
	case <-read.done:
		return read.policies, read.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// failed reports whether the read finished with an error: the next caller reads again.
func (r *liveRead) failed() bool {
	select {
	case <-r.done:
		return r.err != nil
	default:
		return false
	}
}
