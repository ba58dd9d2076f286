package newt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNoCredentials is returned when an agent's Secret is gone or no longer holds its
// credentials while its site exists: Pangolin keeps only a hash of the secret, so they
// cannot be read back, and fresh ones would not match the site.
var ErrNoCredentials = errors.New("the agent's credentials are lost")

// Keeper writes the agents' objects. It reads them past the manager's cache: PIC caches
// no Deployment nor Secret, and may not list or watch them.
type Keeper struct {
	Reader client.Reader
	Writer client.Writer
	// Mint draws fresh credentials.
	Mint func() Credentials
}

// Owner is the owner reference to PIC's own Deployment, name in namespace.
func (k *Keeper) Owner(ctx context.Context, namespace, name string) (metav1.OwnerReference, error) {
	var d appsv1.Deployment
	if err := k.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &d); err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("get PIC's Deployment %s/%s, the owner of the Newt agents (pangolin.newtOwner): %w", namespace, name, err)
	}
	// No blockOwnerDeletion: setting it needs rights on the owner's finalizers, and
	// nothing is gained by holding PIC's deletion until its agents are gone.
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}, nil
}

// Credentials returns the agent's credentials from its Secret. With mint, a Secret that
// is missing or holds none gets fresh ones, written before they are returned; without
// it, that is ErrNoCredentials. The Secret's labels and owner are put back.
func (k *Keeper) Credentials(ctx context.Context, a Agent, mint bool) (Credentials, error) {
	var live corev1.Secret
	err := k.Reader.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Name()}, &live)
	switch {
	case apierrors.IsNotFound(err):
		if !mint {
			return Credentials{}, fmt.Errorf("secret %s/%s is gone: %w", a.Namespace, a.Name(), ErrNoCredentials)
		}
		creds := k.Mint()
		if err := k.Writer.Create(ctx, a.Secret(creds)); err != nil {
			return Credentials{}, fmt.Errorf("create secret %s/%s: %w", a.Namespace, a.Name(), err)
		}
		return creds, nil
	case err != nil:
		return Credentials{}, fmt.Errorf("get secret %s/%s: %w", a.Namespace, a.Name(), err)
	}
	creds := Credentials{ID: string(live.Data[SecretKeyID]), Secret: string(live.Data[SecretKeySecret])}
	if creds.ID == "" || creds.Secret == "" {
		if !mint {
			return Credentials{}, fmt.Errorf("secret %s/%s no longer holds %s and %s: %w", a.Namespace, a.Name(), SecretKeyID, SecretKeySecret, ErrNoCredentials)
		}
		creds = k.Mint()
	}
	want := a.Secret(creds)
	if equality.Semantic.DeepEqual(live.Data, want.Data) && live.Type == want.Type && hasMeta(live.ObjectMeta, want.ObjectMeta) {
		return creds, nil
	}
	live.Data, live.Type = want.Data, want.Type
	putMeta(&live.ObjectMeta, want.ObjectMeta)
	if err := k.Writer.Update(ctx, &live); err != nil {
		return Credentials{}, fmt.Errorf("update secret %s/%s: %w", a.Namespace, a.Name(), err)
	}
	return creds, nil
}

// Deployment makes the agent's Deployment what a describes: created, or put back when a
// field PIC sets was edited (fields PIC leaves to the API server's defaults are not
// compared). It reports whether it wrote.
func (k *Keeper) Deployment(ctx context.Context, a Agent) (bool, error) {
	want := a.Deployment()
	var live appsv1.Deployment
	err := k.Reader.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
		if err := k.Writer.Create(ctx, want); err != nil {
			return false, fmt.Errorf("create deployment %s/%s: %w", a.Namespace, a.Name(), err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get deployment %s/%s: %w", a.Namespace, a.Name(), err)
	}
	if equality.Semantic.DeepDerivative(want.Spec, live.Spec) && hasMeta(live.ObjectMeta, want.ObjectMeta) {
		return false, nil
	}
	live.Spec = want.Spec
	putMeta(&live.ObjectMeta, want.ObjectMeta)
	if err := k.Writer.Update(ctx, &live); err != nil {
		return false, fmt.Errorf("update deployment %s/%s: %w", a.Namespace, a.Name(), err)
	}
	return true, nil
}

// hasMeta reports whether live carries want's labels and owner reference.
func hasMeta(live, want metav1.ObjectMeta) bool {
	return hasLabels(live.Labels, want.Labels) && ownerIndex(live.OwnerReferences, want.OwnerReferences[0]) >= 0
}

// hasLabels reports whether live holds every label of want.
func hasLabels(live, want map[string]string) bool {
	for k, v := range want {
		if live[k] != v {
			return false
		}
	}
	return true
}

// putMeta gives live want's labels and owner reference, keeping the others.
func putMeta(live *metav1.ObjectMeta, want metav1.ObjectMeta) {
	if live.Labels == nil {
		live.Labels = map[string]string{}
	}
	maps.Copy(live.Labels, want.Labels)
	owner := want.OwnerReferences[0]
	if i := ownerIndex(live.OwnerReferences, owner); i >= 0 {
		live.OwnerReferences[i] = owner
		return
	}
	// An object has one controller: a reference that claims it too is replaced.
	live.OwnerReferences = slices.DeleteFunc(live.OwnerReferences, func(ref metav1.OwnerReference) bool {
		return ptr.Deref(ref.Controller, false)
	})
	live.OwnerReferences = append(live.OwnerReferences, owner)
}

func ownerIndex(refs []metav1.OwnerReference, owner metav1.OwnerReference) int {
	for i, ref := range refs {
		if ref.UID == owner.UID && ptr.Deref(ref.Controller, false) == ptr.Deref(owner.Controller, false) {
			return i
		}
	}
	return -1
}

// Remove deletes the agent's Deployment, then its Secret, each only if it carries the
// agent's labels: an object of that name PIC did not create is left alone, and the error
// says so. An object already gone is no error.
func (k *Keeper) Remove(ctx context.Context, a Agent) error {
	key := types.NamespacedName{Namespace: a.Namespace, Name: a.Name()}
	for _, o := range []struct {
		kind string
		obj  client.Object
	}{{"deployment", &appsv1.Deployment{}}, {"secret", &corev1.Secret{}}} {
		err := k.Reader.Get(ctx, key, o.obj)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("get %s %s: %w", o.kind, key, err)
		}
		if !hasLabels(o.obj.GetLabels(), a.labels()) {
			return fmt.Errorf("%s %s lacks the labels of the Newt agent of site %s: PIC did not create it and leaves it alone", o.kind, key, a.Site)
		}
		uid := o.obj.GetUID()
		if err := k.Writer.Delete(ctx, o.obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s %s: %w", o.kind, key, err)
		}
	}
	return nil
}
