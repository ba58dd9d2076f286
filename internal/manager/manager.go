// Package manager wires PIC together: the rest config, the detected operator CRD
// variant, the controller-runtime manager with its cache, and one reconciler per
// configured source. It holds no logic of its own.
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

// EventSource is the component name on PIC's events.
const EventSource = "pangolin-ingress-controller"

// RESTConfig is the API server connection: --kubeconfig, else the in-cluster config or
// $KUBECONFIG, with the configured client rate limits.
func RESTConfig(cfg *config.Config) (*rest.Config, error) {
	var (
		rc  *rest.Config
		err error
	)
	if cfg.Kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	} else {
		rc, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("load Kubernetes client configuration: %w", err)
	}
	rc.QPS, rc.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	rc.UserAgent = EventSource
	return rc, nil
}

// DetectCapabilities reads the installed PangolinResource CRD.
func DetectCapabilities(ctx context.Context, rc *rest.Config) (tunnelv1alpha1.Capabilities, error) {
	c, err := client.New(rc, client.Options{Scheme: apis.Scheme()})
	if err != nil {
		// client-go's own text can be as bare as "unknown" for refused credentials.
		return tunnelv1alpha1.Capabilities{}, fmt.Errorf("connect to the Kubernetes API at %s (check the kubeconfig, its credentials and that the API server is reachable): %w", rc.Host, err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: tunnelv1alpha1.ResourceCRDName}, &crd); err != nil {
		if apierrors.IsNotFound(err) {
			return tunnelv1alpha1.Capabilities{}, fmt.Errorf("the PangolinResource CRD (%s) is not installed: install pangolin-operator (or its CRDs) before PIC", tunnelv1alpha1.ResourceCRDName)
		}
		return tunnelv1alpha1.Capabilities{}, fmt.Errorf("read CRD %s to detect the pangolin-operator variant: %w", tunnelv1alpha1.ResourceCRDName, err)
	}
	return tunnelv1alpha1.CapabilitiesFromCRD(&crd)
}

// Run starts PIC and blocks until ctx is cancelled or the manager fails.
func Run(ctx context.Context, cfg *config.Config) error {
	rc, err := RESTConfig(cfg)
	if err != nil {
		return err
	}
	mgr, err := New(ctx, cfg, rc)
	if err != nil {
		return err
	}
	log.FromContext(ctx).Info("starting", "sources", cfg.Sources, "watchNamespaces", cfg.WatchNamespaces, "leaderElection", cfg.LeaderElection.Enabled)
	return mgr.Start(ctx)
}

// New detects the operator's CRD variant and returns a manager with every configured
// source's reconciler registered, not yet started.
func New(ctx context.Context, cfg *config.Config, rc *rest.Config) (ctrl.Manager, error) {
	caps, err := DetectCapabilities(ctx, rc)
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("detected pangolin-operator CRD", "variant", caps.Variant(), "pathRouting", caps.Targets, "accessControl", caps.AccessControl, "tunnelNamespace", caps.TunnelNamespace)
	controller.RecordCRDVariant(caps.Variant())

	mgr, err := ctrl.NewManager(rc, managerOptions(cfg))
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache())); err != nil {
		return nil, fmt.Errorf("add readiness check: %w", err)
	}
	if err := controller.IndexPangolinResources(ctx, mgr); err != nil {
		return nil, err
	}
	sink := pangolinresource.New(mgr.GetClient(), mgr.GetAPIReader(), caps)
	all, err := enabledSources(ctx, cfg, mgr)
	if err != nil {
		return nil, err
	}
	deps := controller.Deps{
		Sink:     sink,
		Cache:    mgr.GetCache(),
		Recorder: mgr.GetEventRecorder(EventSource),
		Defaults: engine.Defaults{SSO: cfg.DefaultSSO, BlockAccess: cfg.DefaultBlockAccess},
		Sources:  all,
	}
	for _, src := range all {
		r := controller.NewReconciler(src, deps)
		if err := r.SetupWithManager(ctx, mgr, cfg.MaxConcurrentReconciles); err != nil {
			return nil, fmt.Errorf("set up %s controller: %w", src.Name(), err)
		}
		if sc, ok := src.(interface{ SetupStatusControllers(ctrl.Manager) error }); ok {
			if err := sc.SetupStatusControllers(mgr); err != nil {
				return nil, err
			}
		}
	}
	return mgr, nil
}

// enabledSources is the one place sources are registered by name.
func enabledSources(ctx context.Context, cfg *config.Config, mgr ctrl.Manager) ([]sources.Source, error) {
	var out []sources.Source
	for _, name := range cfg.Sources {
		switch name {
		case ingress.Name:
			out = append(out, ingress.New(mgr.GetClient(), ingress.Config{
				Tunnels: cfg.Tunnels, BackendScheme: cfg.BackendScheme, ClusterDomain: cfg.ClusterDomain,
			}))
		case gatewayapi.Name:
			missing, err := missingGatewayAPIKinds(mgr)
			if err != nil {
				return nil, err
			}
			if len(missing) > 0 {
				// Keep serving Ingresses: a missing optional API is not a reason to stop.
				log.FromContext(ctx).Info("the httproute source is disabled: Gateway API CRDs are not installed at "+gatewayv1.GroupVersion.String()+"; install the Gateway API v1.5+ standard CRDs and restart PIC", "missing", missing)
				continue
			}
			out = append(out, gatewayapi.New(mgr.GetClient(), gatewayapi.Config{
				Tunnels: cfg.Tunnels, BackendScheme: cfg.BackendScheme, ClusterDomain: cfg.ClusterDomain,
			}))
		}
	}
	return out, nil
}

func managerOptions(cfg *config.Config) ctrl.Options {
	resync := cfg.ResyncPeriod
	return ctrl.Options{
		Scheme:                        apis.Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: cfg.MetricsBindAddress},
		HealthProbeBindAddress:        cfg.HealthProbeBindAddress,
		LeaderElection:                cfg.LeaderElection.Enabled,
		LeaderElectionID:              cfg.LeaderElection.ID,
		LeaderElectionNamespace:       cfg.LeaderElection.Namespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions(cfg, &resync),
	}
}

// cacheOptions keep in memory only what PIC reads: the watched namespaces (plus where
// tunnels live), PangolinResources that carry PIC's label, and no managedFields.
func cacheOptions(cfg *config.Config, resync *time.Duration) cache.Options {
	opts := cache.Options{
		SyncPeriod:       resync,
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&tunnelv1alpha1.PangolinResource{}: {Label: pangolinresource.CacheSelector()}},
	}
	if len(cfg.WatchNamespaces) == 0 {
		return opts
	}
	opts.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range cfg.WatchNamespaces {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	tunnelNamespaces := map[string]cache.Config{}
	for _, ns := range append(slices.Clone(cfg.WatchNamespaces), configuredTunnelNamespaces(cfg)...) {
		tunnelNamespaces[ns] = cache.Config{}
	}
	opts.ByObject[&tunnelv1alpha1.PangolinTunnel{}] = cache.ByObject{Namespaces: tunnelNamespaces}
	return opts
}

func configuredTunnelNamespaces(cfg *config.Config) []string {
	var out []string
	add := func(ns string) {
		if ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	add(cfg.Tunnels.Namespace)
	add(cfg.Tunnels.Default.Namespace)
	for _, t := range cfg.Tunnels.Aliases {
		add(t.Namespace)
	}
	return out
}

// cachesSynced makes /readyz fail until every informer has synced, so a new replica
// is not reported ready before it has seen the cluster.
func cachesSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		if !c.WaitForCacheSync(req.Context()) {
			return errors.New("caches not synced")
		}
		return nil
	}
}

// missingGatewayAPIKinds lists the Gateway API kinds the httproute source reads that the
// API server does not serve at v1. An older bundle serving ReferenceGrant only at v1beta1
// would leave an informer that never syncs, so it counts as missing.
// Any other discovery error is returned: a passing API server hiccup must not switch the
// source off until the next restart.
func missingGatewayAPIKinds(mgr ctrl.Manager) ([]string, error) {
	var missing []string
	for _, kind := range []string{"GatewayClass", "Gateway", "HTTPRoute", "ReferenceGrant"} {
		gk := schema.GroupKind{Group: gatewayv1.GroupName, Kind: kind}
		_, err := mgr.GetRESTMapper().RESTMapping(gk, gatewayv1.GroupVersion.Version)
		switch {
		case meta.IsNoMatchError(err):
			missing = append(missing, kind)
		case err != nil:
			return nil, fmt.Errorf("look up the Gateway API %s kind: %w", kind, err)
		}
	}
	return missing, nil
}
