package controller

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// object reads the source's object with key from the cache, once per reconcile: the
// source turns it into routes and writes its status from it. It is nil when the object
// is gone.
func (r *Reconciler) object(ctx context.Context, key types.NamespacedName) (client.Object, error) {
	obj := r.source.Object()
	if err := r.objects.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %s %s: %w", reflect.TypeOf(obj).Elem().Name(), key, err)
	}
	return obj, nil
}
