package render

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// maxPasses bounds the passes of a run. PIC converges in one: the second pass of every
// golden case writes nothing. A cluster would go on reconciling on watch events; a run
// goes on until a pass writes nothing, this many at most.
const maxPasses = 5

// Options are what a run needs besides the objects.
type Options struct {
	// Config is PIC's configuration: the tunnels, the defaults and the sources (by name
	// in builtin.Registry) that run.
	Config *config.Config
	// CRDVariant is the pangolin-operator CRD variant a sink writing PangolinResources
	// writes for: "fork" (the default) or "original".
	CRDVariant string
	// AssumeTunnels makes every tunnel that is not among the objects exist, and be
	// Ready.
	AssumeTunnels bool
	// Domains are the Pangolin org's domains, for a sink that needs them (direct
	// mode); nil derives them from the hosts (derivedDomains).
	Domains []string
	// Registry holds the sources and sinks the configuration names; the zero value
	// means builtin.Registry, what the manager runs.
	Registry plugin.Registry
}

// Result is the world after a run.
type Result struct {
	// Client holds every object as the run left it: statuses included.
	Client client.Client
	// Resources are every PangolinResource in the fake cluster in the end, sorted by
	// namespace and name.
	Resources []tunnelv1alpha1.PangolinResource
	// Published is what the sink holds in the end, as render prints it
	// (plugin.OfflineSink.Published).
	Published []any
	// Events are the events PIC emitted, in order.
	Events []Event
	// Passes are the writes of each pass. The second and later passes of a converged
	// run write nothing.
	Passes []Pass
}

// Pass counts the writes of one pass over every object.
type Pass struct {
	Writes       int // creates, updates and deletes
	StatusWrites int
}

// Warnings are the Warning events, sorted and without repeats.
func (r *Result) Warnings() []Event {
	var out []Event
	for _, e := range r.Events {
		if e.Type == corev1.EventTypeWarning {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Event) int { return strings.Compare(a.Line(), b.Line()) })
	return slices.Compact(out)
}

// Event is an event PIC emitted about an object.
type Event struct {
	Type, Reason          string
	Kind, Namespace, Name string
	Message               string
}

// String is "Type Reason Kind namespace/name: message".
func (e Event) String() string {
	return fmt.Sprintf("%s %s %s %s/%s: %s", e.Type, e.Reason, e.Kind, e.Namespace, e.Name, e.Message)
}

// Line is "Type Kind namespace/name Reason: message", as render prints Warnings.
func (e Event) Line() string {
	return fmt.Sprintf("%s %s %s/%s %s: %s", e.Type, e.Kind, e.Namespace, e.Name, e.Reason, e.Message)
}

// Run puts objects in a fake cluster and reconciles every object of the configured
// sources, in the order given, then runs the sources' other controllers (the status of
// Gateways) over the objects of their kinds; that is a pass. It makes passes until one
// writes nothing, two at least. Objects need their UID and creation time: the fake
// cluster does not set them.
func Run(ctx context.Context, objects []client.Object, opts Options) (*Result, error) {
	cfg := opts.Config
	registry := opts.Registry
	if registry.Sources == nil {
		registry = builtin.Registry
	}
	sinkFactory, ok := registry.Sinks[cfg.Sink]
	switch {
	case !ok:
		return nil, fmt.Errorf("no sink named %q in this build", cfg.Sink)
	case sinkFactory.Offline == nil:
		return nil, fmt.Errorf("the %s sink cannot run without a cluster", cfg.Sink)
	}
	var factories []plugin.SourceFactory
	for _, name := range cfg.Sources {
		f, ok := registry.Sources[name]
		if !ok {
			return nil, fmt.Errorf("no source named %q in this build", name)
		}
		factories = append(factories, f)
	}

	res := &Result{Passes: []Pass{{}}}
	count := func(status bool) {
		p := &res.Passes[len(res.Passes)-1]
		if status {
			p.StatusWrites++
		} else {
			p.Writes++
		}
	}
	// The kinds and statuses of every registered adapter, as a cluster would serve
	// them: an update leaves the status of a kind an adapter declares alone, and a
	// status update its spec (plugin.Kinds).
	scheme, err := registry.Scheme()
	if err != nil {
		return nil, err
	}
	builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithStatusSubresource(registry.StatusKinds()...).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
				count(false)
				return c.Create(ctx, obj, o...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.UpdateOption) error {
				count(false)
				return c.Update(ctx, obj, o...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.DeleteOption) error {
				count(false)
				return c.Delete(ctx, obj, o...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, o ...client.SubResourceUpdateOption) error {
				count(true)
				return c.SubResource(sub).Update(ctx, obj, o...)
			},
		})
	var indexes []plugin.Index
	if sinkFactory.Indexes != nil {
		indexes = append(indexes, sinkFactory.Indexes(cfg)...)
	}
	for _, f := range factories {
		if f.Indexes != nil {
			indexes = append(indexes, f.Indexes(cfg)...)
		}
	}
	for _, idx := range plugin.DistinctIndexes(indexes) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	c := builder.Build()
	res.Client = c

	offline := plugin.OfflineOptions{
		CRDVariant: cmp.Or(opts.CRDVariant, "fork"), AssumeTunnels: opts.AssumeTunnels,
		Domains: opts.Domains, DomainsGiven: opts.Domains != nil,
	}
	if opts.Domains == nil {
		// The sources' claims only: they ask nothing of the sink.
		srcs, err := buildSources(ctx, factories, plugin.SourceDeps{Client: c, Config: cfg, Shared: plugin.NewShared()})
		if err != nil {
			return nil, err
		}
		offline.Domains = derivedDomains(ctx, objects, srcs)
	}
	sink, err := sinkFactory.Offline(ctx, plugin.OfflineDeps{Client: c, Config: cfg, Options: offline})
	if err != nil {
		return nil, err
	}
	shared := plugin.NewShared()
	all, err := buildSources(ctx, factories, plugin.SourceDeps{Client: c, Tunnels: sink, Config: cfg, Shared: shared})
	if err != nil {
		return nil, err
	}
	recorder := &eventLog{}
	deps := controller.Deps{
		Sink:            sink,
		Recorder:        recorder,
		Defaults:        engine.Defaults{SSO: cfg.DefaultSSO, BlockAccess: cfg.DefaultBlockAccess},
		Objects:         c,
		Sources:         all,
		SharedParts:     shared.Declarations(),
		HostPolicy:      cfg.HostPolicy,
		NamespaceLabels: controller.NamespaceLabels(c),
	}
	jobs, err := plan(objects, deps)
	if err != nil {
		return nil, err
	}
	for pass := 1; ; pass++ {
		for _, j := range jobs {
			if _, err := j.reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(j.object)}); err != nil {
				return nil, fmt.Errorf("reconcile %T %s: %w", j.object, client.ObjectKeyFromObject(j.object), err)
			}
		}
		res.Passes[len(res.Passes)-1].Writes += sink.Writes()
		last := res.Passes[len(res.Passes)-1]
		if pass >= 2 && last == (Pass{}) {
			break
		}
		if pass >= maxPasses {
			return nil, fmt.Errorf("no convergence: pass %d still wrote %d objects and %d statuses", pass, last.Writes, last.StatusWrites)
		}
		res.Passes = append(res.Passes, Pass{})
	}

	var list tunnelv1alpha1.PangolinResourceList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list PangolinResources: %w", err)
	}
	res.Resources = list.Items
	slices.SortFunc(res.Resources, func(a, b tunnelv1alpha1.PangolinResource) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	if res.Published, err = sink.Published(ctx); err != nil {
		return nil, err
	}
	res.Events = recorder.events
	return res, nil
}

// buildSources builds the sources of factories as the manager does, over render's fake
// cluster, each declared once: no source is unavailable there.
func buildSources(ctx context.Context, factories []plugin.SourceFactory, deps plugin.SourceDeps) ([]plugin.Declared, error) {
	srcs := make([]plugin.Source, 0, len(factories))
	for _, f := range factories {
		src, err := f.New(ctx, deps)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
	}
	return plugin.DeclareAll(srcs...), nil
}

// job is one reconcile of a pass.
type job struct {
	reconciler reconcile.Reconciler
	object     client.Object
}

// plan lists a pass: each object of a source's kind, in the order of objects, then
// the other controllers (deps.Controllers), each over the objects of its kind.
func plan(objects []client.Object, deps controller.Deps) ([]job, error) {
	controllers, err := deps.Controllers()
	if err != nil {
		return nil, err
	}
	var jobs []job
	reconcilers := make([]reconcile.Reconciler, len(deps.Sources))
	for i, src := range deps.Sources {
		reconcilers[i] = controller.NewReconciler(src, deps)
	}
	for _, o := range objects {
		for i, src := range deps.Sources {
			if sameKind(o, src.Object()) {
				jobs = append(jobs, job{reconcilers[i], o})
			}
		}
	}
	for _, ctl := range controllers {
		for _, o := range objects {
			if sameKind(o, ctl.Object) {
				jobs = append(jobs, job{ctl.Reconciler, o})
			}
		}
	}
	return jobs, nil
}

func sameKind(a, b client.Object) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }

// eventLog records the events PIC emits.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := Event{Type: eventtype, Reason: reason, Message: fmt.Sprintf(note, args...)}
	if ref, ok := regarding.(*corev1.ObjectReference); ok {
		e.Kind, e.Namespace, e.Name = ref.Kind, ref.Namespace, ref.Name
	}
	l.events = append(l.events, e)
}
