package pangolinresource

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Factory is the sink's registration: the operator's CRD variant is detected when the
// sink is built, and the cache holds only PIC's PangolinResources.
var Factory = plugin.SinkFactory{Indexes: indexes, Kinds: kinds, Cache: cacheOptions, New: build, Offline: offline}

// kinds: the sink writes PangolinResources, and reads PangolinTunnels, whose status the
// operator writes, and the CRDs that tell the operator's variant.
var kinds = plugin.Kinds{
	Scheme: func(s *runtime.Scheme) error {
		return errors.Join(tunnelv1alpha1.AddToScheme(s), apiextensionsv1.AddToScheme(s))
	},
	Status:  []client.Object{&tunnelv1alpha1.PangolinResource{}, &tunnelv1alpha1.PangolinTunnel{}},
	Trimmed: []client.Object{&tunnelv1alpha1.PangolinTunnel{}},
	Read:    []plugin.ReadKind{{Object: &tunnelv1alpha1.PangolinTunnel{}}},
	RBAC:    []string{"pangolinresource"},
}

func build(ctx context.Context, deps plugin.SinkDeps) (plugin.Sink, error) {
	caps, err := DetectCapabilities(ctx, deps.APIReader)
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("detected pangolin-operator CRD", "variant", caps.Variant(), "pathRouting", caps.Targets, "accessControl", caps.AccessControl, "tunnelNamespace", caps.TunnelNamespace, "rawResources", caps.RawResources)
	recordCRDVariant(caps.Variant())
	return New(deps.Client, deps.APIReader, caps), nil
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
	return tunnelCheck(ctx, s.client, ref)
}

func tunnelCheck(ctx context.Context, c client.Reader, ref route.TunnelRef) (plugin.TunnelCheck, error) {
	var t tunnelv1alpha1.PangolinTunnel
	err := c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &t)
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
func (s *Sink) Describe(r engine.Resource) plugin.Description {
	return plugin.Description{
		Kind: "PangolinResource", Name: r.Name, Tunnel: "tunnel " + r.Tunnel.String(),
		Object: &corev1.ObjectReference{APIVersion: tunnelv1alpha1.GroupVersion.String(), Kind: "PangolinResource", Namespace: r.Namespace, Name: r.Name},
	}
}

// indexes are the sink's cache indexes: PangolinResources by owner, for Current, and
// by published host, for Holders.
func indexes(*config.Config) []plugin.Index {
	return []plugin.Index{
		{Object: &tunnelv1alpha1.PangolinResource{}, Field: OwnerIndex, Func: IndexOwner},
		{Object: &tunnelv1alpha1.PangolinResource{}, Field: HostIndex, Func: IndexHost},
	}
}

// Declare implements plugin.Sink. A PangolinResource's change concerns its owner; its
// creation or deletion changes who serves its host, whatever made the owner start or
// stop publishing (a Service, a class, a Gateway's verdict), so it concerns the host's
// claimants too. A PangolinTunnel's change concerns the objects waiting for it.
func (s *Sink) Declare() plugin.SinkDeclaration {
	return plugin.SinkDeclaration{
		Resources: []plugin.ResourceWatch{{
			Object: &tunnelv1alpha1.PangolinResource{}, Owners: ownerOf, Hosts: resourceHost, WrittenBy: s.writtenBy,
		}},
		Tunnels: []plugin.TunnelWatch{{
			Object: &tunnelv1alpha1.PangolinTunnel{},
			Tunnel: func(o client.Object) route.TunnelRef {
				return route.TunnelRef{Namespace: o.GetNamespace(), Name: o.GetName()}
			},
		}},
	}
}

// writtenBy reports whether an event for obj (deleted: its deletion) is the echo of a
// write Apply made for obj's owner, and that owner's UID.
func (s *Sink) writtenBy(obj client.Object, deleted bool) (types.UID, bool) {
	owners := ownerOf(obj)
	if len(owners) != 1 {
		return "", false
	}
	return owners[0].UID, s.pending.shows(owners[0].UID, obj, deleted)
}

// ownerOf is the source object a PangolinResource's controller reference names.
func ownerOf(o client.Object) []route.Origin {
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil {
		return nil
	}
	return []route.Origin{{Kind: ref.Kind, Namespace: o.GetNamespace(), Name: ref.Name, UID: ref.UID}}
}

// resourceHost is the host a PangolinResource of PIC's publishes (engine.Resource's
// ClaimKey): the one its claimants claim, whatever host its owner writes.
func resourceHost(o client.Object) []string {
	if pr, ok := o.(*tunnelv1alpha1.PangolinResource); ok && pr.Spec.HTTPConfig != nil && pr.Spec.HTTPConfig.DomainName != "" &&
		pr.Spec.Protocol == tunnelv1alpha1.ProtocolHTTP {
		return []string{hostname.Join(pr.Spec.HTTPConfig.Subdomain, pr.Spec.HTTPConfig.DomainName)}
	}
	if h := o.GetAnnotations()[pic.AnnotationHost]; h != "" {
		return []string{h}
	}
	return nil
}
