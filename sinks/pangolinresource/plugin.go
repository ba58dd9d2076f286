package pangolinresource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Factory is the sink's registration: the operator's CRD variant is detected when the
// sink is built, and the cache holds only PIC's PangolinResources.
var Factory = plugin.SinkFactory{Cache: cacheOptions, New: build}

func build(ctx context.Context, mgr ctrl.Manager, _ *config.Config) (plugin.Sink, error) {
	caps, err := DetectCapabilities(ctx, mgr.GetAPIReader())
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("detected pangolin-operator CRD", "variant", caps.Variant(), "pathRouting", caps.Targets, "accessControl", caps.AccessControl, "tunnelNamespace", caps.TunnelNamespace)
	recordCRDVariant(caps.Variant())
	return New(mgr.GetClient(), mgr.GetAPIReader(), caps), nil
}

// DetectCapabilities reads the installed PangolinResource CRD.
func DetectCapabilities(ctx context.Context, c client.Reader) (tunnelv1alpha1.Capabilities, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: tunnelv1alpha1.ResourceCRDName}, &crd); err != nil {
		if apierrors.IsNotFound(err) {
			return tunnelv1alpha1.Capabilities{}, fmt.Errorf("the PangolinResource CRD (%s) is not installed: install pangolin-operator (or its CRDs) before PIC, or choose the direct sink (sink: pangolin)", tunnelv1alpha1.ResourceCRDName)
		}
		return tunnelv1alpha1.Capabilities{}, fmt.Errorf("read CRD %s to detect the pangolin-operator variant: %w", tunnelv1alpha1.ResourceCRDName, err)
	}
	return tunnelv1alpha1.CapabilitiesFromCRD(&crd)
}

// cacheOptions keep in memory only PangolinResources that carry PIC's label, and, when
// PIC watches some namespaces only, PangolinTunnels there and where tunnels are
// configured to live.
func cacheOptions(cfg *config.Config) map[client.Object]cache.ByObject {
	opts := map[client.Object]cache.ByObject{&tunnelv1alpha1.PangolinResource{}: {Label: CacheSelector()}}
	if len(cfg.WatchNamespaces) == 0 {
		return opts
	}
	namespaces := map[string]cache.Config{}
	add := func(ns string) {
		if ns != "" {
			namespaces[ns] = cache.Config{}
		}
	}
	for _, ns := range cfg.WatchNamespaces {
		add(ns)
	}
	add(cfg.Tunnels.Namespace)
	add(cfg.Tunnels.Default.Namespace)
	for _, t := range cfg.Tunnels.Aliases {
		add(t.Namespace)
	}
	opts[&tunnelv1alpha1.PangolinTunnel{}] = cache.ByObject{Namespaces: namespaces}
	return opts
}

// Tunnel implements plugin.Sink: a tunnel is a PangolinTunnel, Ready when the operator
// says so.
func (s *Sink) Tunnel(ctx context.Context, ref route.TunnelRef) (plugin.TunnelCheck, error) {
	var t tunnelv1alpha1.PangolinTunnel
	err := s.client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &t)
	switch {
	case apierrors.IsNotFound(err):
		return plugin.TunnelCheck{State: plugin.TunnelNotFound, Message: fmt.Sprintf(
			"PangolinTunnel %s does not exist: nothing is published or removed until it does; check the class, the %s annotation and the tunnel configuration",
			ref, pic.AnnotationTunnelName)}, nil
	case err != nil:
		return plugin.TunnelCheck{}, fmt.Errorf("get PangolinTunnel %s: %w", ref, err)
	case !t.Ready():
		return plugin.TunnelCheck{State: plugin.TunnelNotReady, Message: fmt.Sprintf(
			"PangolinTunnel %s is not Ready yet: the PangolinResources are written and the operator serves them once it is", ref)}, nil
	}
	return plugin.TunnelCheck{State: plugin.TunnelReady}, nil
}

// Describe implements plugin.Sink.
func (s *Sink) Describe(r engine.Resource) (string, *corev1.ObjectReference) {
	return "PangolinResource", &corev1.ObjectReference{APIVersion: tunnelv1alpha1.GroupVersion.String(), Kind: "PangolinResource", Namespace: r.Namespace, Name: r.Name}
}

// Register implements plugin.Sink: the owner index, and a controller that only
// watches. A PangolinResource's change wakes its owner; its creation or deletion changes
// who serves its host, whatever made the owner start or stop publishing (a Service, a
// class, a Gateway's verdict), so the host's claimants look again; a PangolinTunnel's
// change wakes the objects waiting for it.
func (s *Sink) Register(ctx context.Context, mgr ctrl.Manager, wake plugin.Wake) error {
	if err := plugin.AddIndexes(ctx, mgr.GetCache(), []plugin.Index{{Object: &tunnelv1alpha1.PangolinResource{}, Field: OwnerIndex, Func: IndexOwner}}); err != nil {
		return err
	}
	if err := plugin.StartWithCache(ctx, mgr.GetCache(), &tunnelv1alpha1.PangolinTunnel{}); err != nil {
		return err
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("pangolinresource").
		Watches(&tunnelv1alpha1.PangolinResource{}, s.resourceChanges(wake)).
		Watches(&tunnelv1alpha1.PangolinTunnel{}, tunnelChanges(wake)).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil // nothing is enqueued: the handlers only wake
		}))
	if err != nil {
		return fmt.Errorf("set up PangolinResource watch: %w", err)
	}
	return nil
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// resourceChanges wakes a PangolinResource's owner when it changed, and the claimants of
// its host when it came or went, but not for the echo of the owner's own write (the
// reconcile that wrote it knows what it did, and ran in full), nor for the initial list.
func (s *Sink) resourceChanges(wake plugin.Wake) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, _ queue) {
			if e.IsInInitialList {
				return // every owner and claimant is reconciled at start, from its own
			}
			if owner, ok := s.echo(e.Object, false); ok {
				wake.HostsChangedBy(ctx, owner, resourceHost(e.Object)...)
				return
			}
			wake.Owners(ctx, ownerOf(e.Object)...)
			wake.Hosts(ctx, resourceHost(e.Object)...)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ queue) {
			// A resync is not news: the owner's own resync covers it.
			if e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
				return
			}
			if _, ok := s.echo(e.ObjectNew, false); !ok {
				wake.Owners(ctx, ownerOf(e.ObjectNew)...)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ queue) {
			if owner, ok := s.echo(e.Object, true); ok {
				wake.HostsChangedBy(ctx, owner, resourceHost(e.Object)...)
				return
			}
			wake.Owners(ctx, ownerOf(e.Object)...)
			wake.Hosts(ctx, resourceHost(e.Object)...)
		},
	}
}

// echo reports whether an event for obj (deleted: its deletion) is the echo of a write
// Apply made for obj's owner, and that owner.
func (s *Sink) echo(obj client.Object, deleted bool) (route.Origin, bool) {
	owners := ownerOf(obj)
	if len(owners) != 1 {
		return route.Origin{}, false
	}
	return owners[0], s.pending.echo(owners[0].UID, obj, deleted)
}

func tunnelChanges(wake plugin.Wake) handler.EventHandler {
	tunnel := func(ctx context.Context, o client.Object) {
		wake.Tunnels(ctx, route.TunnelRef{Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, e event.CreateEvent, _ queue) { tunnel(ctx, e.Object) },
		UpdateFunc:  func(ctx context.Context, e event.UpdateEvent, _ queue) { tunnel(ctx, e.ObjectNew) },
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, _ queue) { tunnel(ctx, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, _ queue) { tunnel(ctx, e.Object) },
	}
}

// ownerOf is the source object a PangolinResource's controller reference names.
func ownerOf(o client.Object) []route.Origin {
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil {
		return nil
	}
	return []route.Origin{{Kind: ref.Kind, Namespace: o.GetNamespace(), Name: ref.Name, UID: ref.UID}}
}

// resourceHost is the source host a PangolinResource of PIC's serves.
func resourceHost(o client.Object) []string {
	if h := o.GetAnnotations()[pic.AnnotationHost]; h != "" {
		return []string{h}
	}
	return nil
}
