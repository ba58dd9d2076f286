package controller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// retryConflicts runs r, and takes a conflict it returns (a status written over an
// object that changed since the cache read it: "the object has been modified") for what
// it is, a normal race: one debug line, and the object is reconciled again after a
// backoff of its own, level-based like any retry, instead of controller-runtime's
// "Reconciler error" at ERROR. Any other error is returned as is: controller-runtime logs
// it once, on one line (the logger records stacks for panics only, see cmd/manager), and
// retries it with the controller's backoff.
func retryConflicts(r reconcile.Reconciler) reconcile.Reconciler {
	return &conflictRetrier{
		next:    r,
		backoff: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, time.Minute),
	}
}

type conflictRetrier struct {
	next    reconcile.Reconciler
	backoff workqueue.TypedRateLimiter[reconcile.Request]
}

func (c *conflictRetrier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := c.next.Reconcile(ctx, req)
	if err == nil || !apierrors.IsConflict(err) {
		c.backoff.Forget(req)
		return res, err
	}
	after := c.backoff.When(req)
	log.FromContext(ctx).V(1).Info("write conflict, reconciling again", "error", err.Error(), "in", after)
	return reconcile.Result{RequeueAfter: after}, nil
}
