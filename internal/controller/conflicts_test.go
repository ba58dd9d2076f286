package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type reconcileFunc func(context.Context, reconcile.Request) (reconcile.Result, error)

func (f reconcileFunc) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return f(ctx, req)
}

// TestConflictsAreRetriedQuietly: a conflict on a status write is no error for
// controller-runtime to log; it is retried after a growing backoff. Other errors pass.
func TestConflictsAreRetriedQuietly(t *testing.T) {
	var err error
	r := retryConflicts(reconcileFunc(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, err }))
	req := reconcile.Request{}
	err = fmt.Errorf("update status of Ingress shop/web: %w",
		apierrors.NewConflict(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "web", errors.New("the object has been modified")))
	first, gotErr := r.Reconcile(context.Background(), req)
	assert.NoError(t, gotErr)
	assert.Positive(t, first.RequeueAfter)
	second, _ := r.Reconcile(context.Background(), req)
	assert.Greater(t, second.RequeueAfter, first.RequeueAfter, "level-based backoff")

	err = errors.New("pangolin unreachable")
	_, gotErr = r.Reconcile(context.Background(), req)
	assert.Equal(t, err, gotErr, "other errors are controller-runtime's to log and retry")
}
