// Package manager runs PIC: the rest config, the controller-runtime manager with its
// cache, the configured sink and the configured sources, built from the registry it is
// given and wired by internal/controller. It names no source or sink: the scheme, and
// the kinds the cache trims, are what the registered adapters declare (plugin.Kinds).
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
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
	// QPS -1 turns client-go's token bucket off: the API server's priority and fairness
	// queues PIC's requests instead (see docs/performance.md).
	rc.QPS, rc.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	rc.UserAgent = EventSource
	return rc, nil
}

// Run starts PIC and blocks until ctx is cancelled or the manager fails.
func Run(ctx context.Context, cfg *config.Config, registry plugin.Registry) error {
	rc, err := RESTConfig(cfg)
	if err != nil {
		return err
	}
	mgr, err := New(ctx, cfg, rc, registry)
	if err != nil {
		return err
	}
	log.FromContext(ctx).Info("starting", "sources", cfg.Sources, "watchNamespaces", cfg.WatchNamespaces, "leaderElection", cfg.LeaderElection.Enabled)
	return mgr.Start(ctx)
}

// Option adjusts what New wires, for a test that runs PIC's real manager.
type Option func(*controller.Deps)

// OnReconciled has f told how each reconcile of a source's object ended, after its
// last write (controller.Deps.OnReconciled).
func OnReconciled(f func(source string, key types.NamespacedName, ended controller.Ending)) Option {
	return func(d *controller.Deps) { d.OnReconciled = f }
}

// New returns a manager running the configured sources and sink from registry, not
// yet started.
func New(ctx context.Context, cfg *config.Config, rc *rest.Config, registry plugin.Registry, opts ...Option) (ctrl.Manager, error) {
	sinkFactory, ok := registry.Sinks[cfg.Sink]
	if !ok {
		return nil, fmt.Errorf("no sink named %q in this build", cfg.Sink)
	}
	useClientGates()
	// The API server is asked something before anything else, so that a wrong
	// kubeconfig or refused credentials say so plainly rather than as a failing
	// informer; client-go's own text can be as bare as "unknown".
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err == nil {
		_, err = dc.ServerGroups()
	}
	if err != nil {
		return nil, fmt.Errorf("connect to the Kubernetes API at %s (check the kubeconfig, its credentials and that the API server is reachable): %w", rc.Host, err)
	}
	scheme, err := registry.Scheme()
	if err != nil {
		return nil, err
	}
	indexes := plugin.NewIndexStore(scheme)
	mgr, err := ctrl.NewManager(rc, managerOptions(cfg, scheme, registry, sinkFactory, indexes, log.FromContext(ctx)))
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := checkNamespaceRead(ctx, mgr.GetAPIReader(), cfg.HostPolicy); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache())); err != nil {
		return nil, fmt.Errorf("add readiness check: %w", err)
	}
	sink, err := sinkFactory.New(ctx, plugin.SinkDeps{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: cfg})
	if err != nil {
		return nil, err
	}
	shared := plugin.NewShared()
	srcs, err := enabledSources(ctx, cfg, mgr, registry, sink, shared)
	if err != nil {
		return nil, err
	}
	all := plugin.DeclareAll(srcs...)
	if err := addIndexes(ctx, mgr, indexes, cfg, sinkFactory, registry, all); err != nil {
		return nil, err
	}
	// The runnables the adapters declare, each with who declared it for the error.
	type declared struct {
		by       string
		runnable manager.Runnable
	}
	var runnables []declared
	sinkDeclared := sink.Declare()
	for _, r := range sinkDeclared.Runnables {
		runnables = append(runnables, declared{"the " + cfg.Sink + " sink", r})
	}
	for _, src := range all {
		for _, r := range src.Declaration.Runnables {
			runnables = append(runnables, declared{"the " + src.Name() + " source", r})
		}
	}
	sharedParts := shared.Declarations()
	for _, part := range sharedParts {
		for _, r := range part.Runnables {
			runnables = append(runnables, declared{"the sources' shared parts", r})
		}
	}
	for _, d := range runnables {
		if err := mgr.Add(d.runnable); err != nil {
			return nil, fmt.Errorf("add %s's %T: %w", d.by, d.runnable, err)
		}
	}
	recorder, err := newRecorder(mgr)
	if err != nil {
		return nil, err
	}
	deps := controller.Deps{
		Sink:            sink,
		SinkDeclaration: sinkDeclared,
		Recorder:        recorder,
		Defaults:        engine.Defaults{SSO: cfg.DefaultSSO, BlockAccess: cfg.DefaultBlockAccess},
		Objects:         mgr.GetClient(),
		Sources:         all,
		SharedParts:     sharedParts,
		HostPolicy:      cfg.HostPolicy,
	}
	if cfg.HostPolicy.NeedsLabels() {
		deps.NamespaceLabels = controller.NamespaceLabels(mgr.GetClient())
	}
	for _, opt := range opts {
		opt(&deps)
	}
	if err := controller.Setup(ctx, mgr, deps, cfg.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	return mgr, nil
}

// addIndexes registers the cache indexes of the sink and of the running sources.
func addIndexes(ctx context.Context, mgr ctrl.Manager, store *plugin.IndexStore, cfg *config.Config, sink plugin.SinkFactory, registry plugin.Registry, running []plugin.Declared) error {
	var indexes []plugin.Index
	if sink.Indexes != nil {
		indexes = append(indexes, sink.Indexes(cfg)...)
	}
	for _, src := range running {
		if f := registry.Sources[src.Name()]; f.Indexes != nil {
			indexes = append(indexes, f.Indexes(cfg)...)
		}
	}
	var served []plugin.Index
	for _, idx := range plugin.DistinctIndexes(indexes) {
		// An adapter reads an optional kind (an AccessPolicy) only where the cluster
		// serves it, as it finds out itself; an index on it elsewhere would be an
		// informer that never syncs.
		gvk, err := apiutil.GVKForObject(idx.Object, mgr.GetScheme())
		if err != nil {
			return fmt.Errorf("index %T: %w", idx.Object, err)
		}
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); apimeta.IsNoMatchError(err) {
			continue
		}
		served = append(served, idx)
	}
	return store.Add(ctx, mgr.GetCache(), served)
}

// newRecorder returns the event recorder, registered to write once the manager starts.
func newRecorder(mgr ctrl.Manager) (*controller.Recorder, error) {
	client, err := eventsv1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("create events client: %w", err)
	}
	instance, err := os.Hostname() // the Pod's name in a cluster
	if err != nil {
		instance = "unknown"
	}
	recorder := controller.NewRecorder(client, mgr.GetScheme(), EventSource, EventSource+"-"+instance)
	if err := mgr.Add(recorder); err != nil {
		return nil, fmt.Errorf("add event recorder: %w", err)
	}
	return recorder, nil
}

// enabledSources builds the configured sources, with the parts they share in shared;
// one whose API is not installed is left out with a log line, so that PIC goes on
// serving the others.
func enabledSources(ctx context.Context, cfg *config.Config, mgr ctrl.Manager, registry plugin.Registry, sink plugin.Sink, shared *plugin.Shared) ([]plugin.Source, error) {
	deps := plugin.SourceDeps{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Tunnels: sink, Config: cfg, Shared: shared}
	var out []plugin.Source
	for _, name := range cfg.Sources {
		factory, ok := registry.Sources[name]
		if !ok {
			return nil, fmt.Errorf("no source named %q in this build", name)
		}
		src, err := factory.New(ctx, deps)
		switch {
		case errors.Is(err, plugin.ErrUnavailable):
			log.FromContext(ctx).Info("the "+name+" source is disabled", "reason", err.Error())
			continue
		case err != nil:
			return nil, fmt.Errorf("build the %s source: %w", name, err)
		}
		out = append(out, src)
	}
	return out, nil
}

// managerOptions are the manager's settings. The cache's informers and the manager's
// client go through indexes, which keeps the adapters' cache indexes (plugin.IndexStore).
func managerOptions(cfg *config.Config, scheme *runtime.Scheme, registry plugin.Registry, sink plugin.SinkFactory, indexes *plugin.IndexStore, logger logr.Logger) ctrl.Options {
	resync := cfg.ResyncPeriod
	cacheOpts := cacheOptions(cfg, &resync, sink)
	cacheOpts.DefaultTransform = trimmer(registry.TrimmedKinds())
	cacheOpts.NewInformer = indexes.NewInformer
	return ctrl.Options{
		// The context's logger (controller-runtime's global one unless the caller set
		// another): the controllers' reconcile loggers derive from it.
		Logger:                        logger,
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: cfg.MetricsBindAddress},
		HealthProbeBindAddress:        cfg.HealthProbeBindAddress,
		PprofBindAddress:              cfg.PprofBindAddress,
		LeaderElection:                cfg.LeaderElection.Enabled,
		LeaderElectionID:              cfg.LeaderElection.ID,
		LeaderElectionNamespace:       cfg.LeaderElection.Namespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOpts,
		NewClient: func(rc *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.New(rc, opts)
			if err != nil {
				return nil, err
			}
			return indexes.Client(c), nil
		},
	}
}

// cacheOptions keep in memory only what PIC reads: the watched namespaces, what the
// sink asks for its own objects, and Secrets only where PIC may read them
// (secretNamespaces). What the cache trims of each object is the registry's (trimmer).
func cacheOptions(cfg *config.Config, resync *time.Duration, sink plugin.SinkFactory) cache.Options {
	opts := cache.Options{SyncPeriod: resync}
	if sink.Cache != nil {
		opts.ByObject = sink.Cache(cfg)
	}
	if len(cfg.SecretNamespaces) > 0 {
		// PIC's RBAC grants Secrets only there: a watch of every namespace's Secrets (the
		// metadata the AccessPolicies' sources follow) would be refused.
		if opts.ByObject == nil {
			opts.ByObject = map[client.Object]cache.ByObject{}
		}
		namespaces := map[string]cache.Config{}
		for _, ns := range cfg.SecretNamespaces {
			namespaces[ns] = cache.Config{}
		}
		opts.ByObject[&corev1.Secret{}] = cache.ByObject{Namespaces: namespaces}
	}
	if len(cfg.WatchNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range cfg.WatchNamespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
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

// lastApplied is kubectl's copy of the whole object as last applied: often as large as
// the object itself, and never read by PIC.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

var stripManagedFields = cache.TransformStripManagedFields()

// trimmer is the caches' transform: managedFields go from every object, and the
// last-applied annotation from the kinds of trimmed, which the adapters declare they
// only read (plugin.Kinds.Trimmed), and from Namespaces, which the core itself only
// reads (the host policy's selectors). Every other kind keeps its metadata whole: PIC
// writes it from the cached object, and a write must not drop what others set.
func trimmer(trimmed []client.Object) func(obj any) (any, error) {
	readOnly := map[reflect.Type]bool{reflect.TypeFor[*corev1.Namespace](): true}
	for _, kind := range trimmed {
		readOnly[reflect.TypeOf(kind)] = true
	}
	return func(obj any) (any, error) {
		obj, err := stripManagedFields(obj)
		if err != nil {
			return obj, err
		}
		if m, ok := obj.(metav1.Object); ok && readOnly[reflect.TypeOf(obj)] {
			delete(m.GetAnnotations(), lastApplied) // the map itself: no copy
		}
		return obj, nil
	}
}
