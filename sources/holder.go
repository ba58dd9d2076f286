package sources

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Holder is plugin.Claims.Holder for a source whose objects are of one kind: it reads
// the object holder names into obj, from c (the cache), and makes its claim with
// claim. ok is false when holder is of another kind, or when no object of that name
// exists with holder's UID (any UID when the sink does not know it, as Pangolin keeps
// none: a successor of the same name takes over what its predecessor published).
func Holder[T client.Object](ctx context.Context, c client.Reader, kind string, holder route.Origin, obj T, claim func(T) engine.Claim) (engine.Claim, bool, error) {
	if holder.Kind != kind {
		return engine.Claim{}, false, nil
	}
	key := types.NamespacedName{Namespace: holder.Namespace, Name: holder.Name}
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return engine.Claim{}, false, nil
		}
		return engine.Claim{}, false, fmt.Errorf("get %s %s: %w", kind, key, err)
	}
	if holder.UID != "" && holder.UID != obj.GetUID() {
		return engine.Claim{}, false, nil
	}
	return claim(obj), true, nil
}
