package render

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// inputKinds are the kinds render reads, at the version PIC reads; cluster-scoped or
// not.
type inputKinds map[schema.GroupKind]struct {
	version       string
	clusterScoped bool
}

// inputKindsOf are the kinds the adapters of registry read (plugin.Kinds.Read), at the
// version scheme has their Go type, and Namespaces, which the core reads (the host
// policy's selectors).
func inputKindsOf(registry plugin.Registry, scheme *runtime.Scheme) (inputKinds, error) {
	kinds := inputKinds{}
	read := append(registry.ReadKinds(), plugin.ReadKind{Object: &corev1.Namespace{}, ClusterScoped: true})
	for _, k := range read {
		gvk, err := apiutil.GVKForObject(k.Object, scheme)
		if err != nil {
			return nil, fmt.Errorf("a kind an adapter reads: %w", err)
		}
		kinds[gvk.GroupKind()] = struct {
			version       string
			clusterScoped bool
		}{gvk.Version, k.ClusterScoped}
	}
	return kinds, nil
}

// accept reads the kinds render knows, at the version PIC reads them. The Gateway API's
// v1beta1 has the same schema as v1 (a cluster serves one as the other): it is read as
// v1.
func (kinds inputKinds) accept(gvk schema.GroupVersionKind) (schema.GroupVersionKind, bool, error) {
	k, ok := kinds[gvk.GroupKind()]
	switch {
	case !ok:
		return gvk, false, nil
	case gvk.Version == k.version:
		return gvk, true, nil
	case gvk.Group == gatewayv1.GroupName && gvk.Version == "v1beta1":
		return gvk.GroupKind().WithVersion(k.version), true, nil
	}
	return gvk, false, fmt.Errorf("%s %s: PIC reads %s at %s", gvk.Kind, gvk.GroupVersion(), gvk.Kind, gvk.GroupKind().WithVersion(k.version).GroupVersion())
}

// uidSpace is the name space of the UIDs render gives objects that have none.
var uidSpace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/stefb69/pangolin-ingress-controller/render"))

// epoch is the creation time of objects without one when no object has one.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// prepare makes the objects what an API server would hold, in an order that does not
// depend on the input's: namespaces defaulted, UIDs and creation times set, Namespaces
// the objects live in created with the label the API server gives them. It reports
// whether the input holds PangolinTunnels.
func prepare(manifests []Manifest, kinds inputKinds) ([]client.Object, bool, error) {
	var (
		objects    []client.Object
		seen       = map[string]Manifest{}
		namespaces = map[string]*corev1.Namespace{}
		used       = map[string]bool{}
		tunnels    bool
		latest     time.Time
	)
	for _, m := range manifests {
		o := m.Object
		gvk := o.GetObjectKind().GroupVersionKind()
		if kinds[gvk.GroupKind()].clusterScoped {
			o.SetNamespace("")
		} else if o.GetNamespace() == "" {
			o.SetNamespace(metav1.NamespaceDefault)
		}
		o.SetResourceVersion("")
		o.SetManagedFields(nil)
		// The same object twice (a tunnel in two inputs) is one object; two different
		// objects of one name would make the outcome depend on their order.
		key := gvk.GroupKind().String() + " " + client.ObjectKeyFromObject(o).String()
		if first, dup := seen[key]; dup {
			if equality.Semantic.DeepEqual(first.Object, o) {
				continue
			}
			return nil, false, fmt.Errorf("%s: %s %s is defined twice, differently: first at %s", m.Where, gvk.Kind, client.ObjectKeyFromObject(o), first.Where)
		}
		seen[key] = m
		switch t := o.(type) {
		case *corev1.Namespace:
			namespaces[t.Name] = t
		case *tunnelv1alpha1.PangolinTunnel:
			tunnels = true
		}
		if ns := o.GetNamespace(); ns != "" {
			used[ns] = true
		}
		if ts := o.GetCreationTimestamp(); ts.After(latest) {
			latest = ts.Time
		}
		objects = append(objects, o)
	}
	for ns := range used {
		if namespaces[ns] == nil {
			namespaces[ns] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			namespaces[ns].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
			objects = append(objects, namespaces[ns])
		}
	}
	for _, ns := range namespaces {
		// The API server's NamespaceDefaultLabelName: allowedRoutes selectors use it.
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	created := epoch
	if !latest.IsZero() {
		created = latest.Add(time.Second)
	}
	for _, o := range objects {
		gvk := o.GetObjectKind().GroupVersionKind()
		if o.GetUID() == "" {
			o.SetUID(types.UID(uuid.NewSHA1(uidSpace, []byte(gvk.GroupKind().String()+"/"+o.GetNamespace()+"/"+o.GetName())).String()))
		}
		if ts := o.GetCreationTimestamp(); ts.IsZero() {
			o.SetCreationTimestamp(metav1.NewTime(created))
		}
	}
	// The order claims are settled in (route.Origin.Older), which is also the order
	// a cluster would most likely see them in.
	slices.SortFunc(objects, func(a, b client.Object) int {
		at, bt := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		return cmp.Or(at.Compare(bt.Time),
			cmp.Compare(a.GetNamespace(), b.GetNamespace()),
			cmp.Compare(a.GetName(), b.GetName()),
			cmp.Compare(a.GetObjectKind().GroupVersionKind().Kind, b.GetObjectKind().GroupVersionKind().Kind),
			cmp.Compare(a.GetObjectKind().GroupVersionKind().Group, b.GetObjectKind().GroupVersionKind().Group))
	})
	return objects, tunnels, nil
}

// writeDocument writes the i-th document of a YAML stream.
func writeDocument(w io.Writer, i int, doc []byte) error {
	if i > 0 {
		if _, err := io.WriteString(w, "---\n"); err != nil {
			return err
		}
	}
	_, err := w.Write(bytes.TrimLeft(doc, "\n"))
	return err
}
