package controller

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
)

func TestTruncateNote(t *testing.T) {
	short := strings.Repeat("a", maxNoteBytes)
	assert.Equal(t, short, truncateNote(short), "a note of exactly the limit is kept")
	for _, long := range []string{strings.Repeat("a", 5000), strings.Repeat("é", 700), "x" + strings.Repeat("€", 400)} {
		got := truncateNote(long)
		assert.LessOrEqual(t, len(got), maxNoteBytes)
		assert.True(t, utf8.ValidString(got), "cut on a character boundary")
		assert.True(t, strings.HasSuffix(got, "…"))
		assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")))
		assert.Greater(t, len(got), maxNoteBytes-8, "not cut shorter than needed")
	}
}

type noteLog struct{ notes []string }

func (l *noteLog) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	l.notes = append(l.notes, note)
	if len(args) == 1 {
		l.notes[len(l.notes)-1] = args[0].(string)
	}
}

func TestNoteLimiter(t *testing.T) {
	log := &noteLog{}
	r := limitNotes(log)
	r.Eventf(&corev1.ObjectReference{}, nil, corev1.EventTypeWarning, "InvalidAnnotation", "Validate", "%s=%q: want true or false", "sso", strings.Repeat("yes-", 500))
	r.Eventf(&corev1.ObjectReference{}, nil, corev1.EventTypeNormal, "Created", "Create", "Created %s", "pic-a")
	assert.Len(t, log.notes[0], maxNoteBytes)
	assert.True(t, strings.HasPrefix(log.notes[0], `sso="yes-yes-`))
	assert.Equal(t, "Created pic-a", log.notes[1])
	assert.Nil(t, limitNotes(nil))
}

func TestRecorderWritesEveryNote(t *testing.T) {
	clientset := fake.NewClientset()
	r := limitNotes(NewRecorder(clientset.EventsV1(), scheme.Scheme, "pic", "pic-0")).(noteLimiter)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.EventRecorder.(*Recorder).Start(ctx) }()

	ing := &corev1.ObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "shop", Name: "web", UID: "uid-web"}
	r.Eventf(ing, nil, corev1.EventTypeWarning, "ServicePortNotFound", "Validate", "Service %s has no port %d", "shop/web", 8080)
	r.Eventf(ing, nil, corev1.EventTypeWarning, "ServicePortNotFound", "Validate", "Service %s has no port %d", "shop/web", 8081)
	r.Eventf(ing, &corev1.ObjectReference{Kind: "PangolinResource", Namespace: "shop", Name: "pic-shop-web"}, corev1.EventTypeNormal, "Created", "Create", "%s", strings.Repeat("x", 2000))
	cancel()
	require.NoError(t, <-done, "the queue is flushed at shutdown")

	list, err := clientset.EventsV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var notes []string
	for _, e := range list.Items {
		notes = append(notes, e.Note)
		assert.Equal(t, "pic", e.ReportingController)
		assert.Equal(t, "pic-0", e.ReportingInstance)
		assert.Equal(t, "web", e.Regarding.Name)
		assert.LessOrEqual(t, len(e.Note), maxNoteBytes)
		if e.Reason == "Created" {
			require.NotNil(t, e.Related)
			assert.Equal(t, "pic-shop-web", e.Related.Name)
		}
	}
	assert.Contains(t, notes, "Service shop/web has no port 8080")
	assert.Contains(t, notes, "Service shop/web has no port 8081", "a changed note is an event of its own")
	assert.Len(t, notes, 3)
}

func TestRecorderDropsWhatDoesNotFit(t *testing.T) {
	r := NewRecorder(fake.NewClientset().EventsV1(), scheme.Scheme, "pic", "pic-0")
	ing := &corev1.ObjectReference{Kind: "Ingress", Namespace: "shop", Name: "web"}
	dropped := eventsDropped.WithLabelValues(corev1.EventTypeNormal, "queue_full")
	before := testutil.ToFloat64(dropped)
	for range recorderQueue + 10 {
		r.Eventf(ing, nil, corev1.EventTypeNormal, "Created", "Create", "created")
	}
	r.Eventf(ing, nil, corev1.EventTypeWarning, "ServicePortNotFound", "Validate", "no port")
	assert.Len(t, r.routine, recorderQueue, "a recorder that is not started never blocks its caller")
	assert.Len(t, r.warnings, 1, "a burst of Normal events leaves the Warnings their own room")
	assert.Equal(t, 10.0, testutil.ToFloat64(dropped)-before, "each dropped event is counted")
}

// writeOrder records the notes of the events written through a fake clientset, in order.
func writeOrder(clientset *fake.Clientset) func() []string {
	var (
		mu    sync.Mutex
		notes []string
	)
	clientset.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, a.(k8stesting.CreateAction).GetObject().(*eventsv1.Event).Note)
		return false, nil, nil
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(notes)
	}
}

func TestRecorderWritesWarningsFirst(t *testing.T) {
	ing := &corev1.ObjectReference{Kind: "Ingress", Namespace: "shop", Name: "web"}
	// recorded is a recorder, not started, holding events of both types, and what it
	// has written so far.
	recorded := func() (*Recorder, func() []string) {
		clientset := fake.NewClientset()
		written := writeOrder(clientset)
		r := NewRecorder(clientset.EventsV1(), scheme.Scheme, "pic", "pic-0")
		r.Eventf(ing, nil, corev1.EventTypeNormal, "Created", "Create", "created 1")
		r.Eventf(ing, nil, corev1.EventTypeNormal, "Created", "Create", "created 2")
		r.Eventf(ing, nil, corev1.EventTypeWarning, "ServicePortNotFound", "Validate", "no port")
		r.Eventf(ing, nil, corev1.EventTypeNormal, "Created", "Create", "created 3")
		r.Eventf(ing, nil, corev1.EventTypeWarning, "ServicePortNotFound", "Validate", "no port 2")
		return r, written
	}
	want := []string{"no port", "no port 2", "created 1", "created 2", "created 3"}

	t.Run("while running", func(t *testing.T) {
		r, written := recorded()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _ = r.Start(ctx) }()
		require.Eventually(t, func() bool { return len(written()) == len(want) }, 10*time.Second, 5*time.Millisecond)
		assert.Equal(t, want, written())
	})
	t.Run("at shutdown", func(t *testing.T) {
		r, written := recorded()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r.flush(ctx)
		assert.Equal(t, want, written())
	})
}

func TestRecorderNamesEventsOfLongNamedObjects(t *testing.T) {
	clientset := fake.NewClientset()
	r := NewRecorder(clientset.EventsV1(), scheme.Scheme, "pic", "pic-0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	long := strings.Repeat("n", 253)
	r.Eventf(&corev1.ObjectReference{Kind: "Ingress", Namespace: "shop", Name: long}, nil, corev1.EventTypeWarning, "WildcardHost", "Validate", "wildcard")
	cancel()
	require.NoError(t, <-done)
	list, err := clientset.EventsV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Empty(t, validation.IsDNS1123Subdomain(list.Items[0].Name), "the API server accepts the event's name")
	assert.Equal(t, long, list.Items[0].Regarding.Name)
}
