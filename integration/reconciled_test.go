package integration_test

import (
	"sync"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
)

// reconcileCounts counts, per object, the reconciles of one PIC that found nothing to
// change: those whose ending PIC's reconciler reports as controller.UpToDate, after
// the reconcile's last write (its status's too). A "writes nothing" check waits for
// one of its own object's, not for any reconcile of the controller: other tests'
// objects are reconciled too.
type reconcileCounts struct {
	mu       sync.Mutex
	upToDate map[string]int // by "<controller> <namespace>/<name>"
}

func reconcileKey(controller, namespace, name string) string {
	return controller + " " + namespace + "/" + name
}

// record is PIC's controller.Deps.OnReconciled (manager.OnReconciled).
func (l *reconcileCounts) record(source string, key types.NamespacedName, ended controller.Ending) {
	if ended != controller.UpToDate {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.upToDate == nil {
		l.upToDate = map[string]int{}
	}
	l.upToDate[reconcileKey(source, key.Namespace, key.Name)]++
}

func (l *reconcileCounts) count(controller, namespace, name string) int {
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
