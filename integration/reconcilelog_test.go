package integration_test

import (
	"encoding/json"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
)

// reconcileLog counts, per object, the reconciles of one PIC that found nothing to
// change: the reconciler's controller.UpToDateMessage debug line, logged after the
// reconcile's last write (its status's too), which controller-runtime's logger
// tags with the controller and the object. A "writes nothing" check waits for one of
// its own object's, not for any reconcile of the controller: other tests' objects are
// reconciled too.
type reconcileLog struct {
	mu       sync.Mutex
	upToDate map[string]int // by "<controller> <namespace>/<name>"
}

func reconcileKey(controller, namespace, name string) string {
	return controller + " " + namespace + "/" + name
}

// logger is a debug-level logger that feeds the log; PIC's manager takes it from its
// context.
func (l *reconcileLog) logger() logr.Logger {
	return funcr.NewJSON(func(line string) {
		var entry struct {
			Msg        string `json:"msg"`
			Controller string `json:"controller"`
			Namespace  string `json:"namespace"`
			Name       string `json:"name"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != controller.UpToDateMessage {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.upToDate == nil {
			l.upToDate = map[string]int{}
		}
		l.upToDate[reconcileKey(entry.Controller, entry.Namespace, entry.Name)]++
	}, funcr.Options{Verbosity: 1})
}

func (l *reconcileLog) count(controller, namespace, name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.upToDate[reconcileKey(controller, namespace, name)]
}

// upToDate is how many reconciles of the object by controller found nothing to change.
func (w *world) upToDate(controller, name string) int {
	return w.reconciled.count(controller, w.ns, name)
}

// eventuallyUpToDateSince waits for a reconcile of the object by controller, ended since
// before was read, that found nothing to change: a "nothing was written" check that
// follows is about that reconcile.
func (w *world) eventuallyUpToDateSince(before int, controller, name string) {
	w.t.Helper()
	require.Eventually(w.t, func() bool { return w.upToDate(controller, name) > before }, wait, tick,
		"a reconcile of %s/%s by %s that finds nothing to change", w.ns, name, controller)
}
