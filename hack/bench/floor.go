package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	recordutil "k8s.io/client-go/tools/record/util"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// This file holds the plain clients PIC is measured against: they do the work the
// specification asks for, and nothing else.

// floorWork is what the convergence floor does for each resource.
type floorWork int

const (
	// floorCreatesAndEvents is the floor of the goal: the create, then the `Created`
	// event the specification asks for, as PIC writes it.
	floorCreatesAndEvents floorWork = iota
	// floorCreatesOnly is the earlier floor, kept as a figure: the create alone.
	floorCreatesOnly
)

func (f floorWork) String() string {
	if f == floorCreatesOnly {
		return "creates only"
	}
	return "creates and events"
}

// eventWriter writes the `Created` events of the floor through client-go's events
// client, as PIC's recorder does (internal/controller/recorder.go), with the same
// codec (the client's default, JSON).
type eventWriter struct {
	client   eventsv1client.EventsGetter
	instance string
}

func newEventWriter(cfg *rest.Config) (*eventWriter, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, -1
	c, err := eventsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create events client: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return &eventWriter{client: c, instance: manager.EventSource + "-" + host}, nil
}

// created writes the event PIC records when it creates pr for host, regarding the
// Ingress that owns it: the same fields, reason, action and note.
func (e *eventWriter) created(ctx context.Context, ing *networkingv1.Ingress, pr *tunnelv1alpha1.PangolinResource, host string) error {
	now := time.Now()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      recordutil.GenerateEventName(ing.Name, now.UnixNano()),
			Namespace: ing.Namespace,
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: manager.EventSource,
		ReportingInstance:   e.instance,
		Action:              "Create",
		Reason:              pic.ReasonCreated,
		Regarding: corev1.ObjectReference{
			APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress",
			Namespace: ing.Namespace, Name: ing.Name, UID: ing.UID,
		},
		Related: &corev1.ObjectReference{
			APIVersion: tunnelv1alpha1.GroupVersion.String(), Kind: "PangolinResource", Namespace: pr.Namespace, Name: pr.Name,
		},
		Note: fmt.Sprintf("%s PangolinResource %s for host %s (tunnel %s)", pic.ReasonCreated, pr.Name, host,
			route.TunnelRef{Namespace: pr.Namespace, Name: tunnelName}),
		Type: corev1.EventTypeNormal,
	}
	_, err := e.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return err
}

// floorObject is one PangolinResource of the floor and what its event needs.
type floorObject struct {
	resource *tunnelv1alpha1.PangolinResource
	owner    *networkingv1.Ingress
	host     string
}

// changeClient is the floor of change latency: a plain client that watches Ingresses
// (an informer) and, on each change of one, writes the update PIC would write: the
// same PangolinResources, their targets' port, over the object its own cache holds
// (an optimistic update, as PIC's sink does). It writes nothing for the Ingresses its
// informer lists at its start, and no event (PIC's `Updated` event is written apart,
// off the path the latency measures).
type changeClient struct {
	client client.Client // reads from the cache, writes to the API server
	api    client.Reader // reads from the API server, for a retry after a conflict
	cancel context.CancelFunc
	done   chan struct{}

	// mu is held while a change is written, so that stop waits for a write in flight
	// and returns only once the client can write no more.
	mu      sync.Mutex
	stopped bool
	err     error // the first failed write
}

// startChangeClient starts the client's informers on the bench namespace's Ingresses
// and PangolinResources and waits until both have listed.
func startChangeClient(ctx context.Context, cfg *rest.Config) (*changeClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, -1
	// One HTTP client for the informers and the writes, as PIC's manager shares one:
	// the writes go over the connection the lists opened, already warm.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{
		HTTPClient:        httpClient,
		Scheme:            testenv.Scheme(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("create the change client's cache: %w", err)
	}
	cached, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: testenv.Scheme(), Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		return nil, err
	}
	api, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	cc := &changeClient{client: cached, api: api, cancel: cancel, done: make(chan struct{})}
	if _, err := c.GetInformer(ctx, &tunnelv1alpha1.PangolinResource{}); err != nil {
		cancel()
		return nil, fmt.Errorf("get PangolinResource informer: %w", err)
	}
	inf, err := c.GetInformer(ctx, &networkingv1.Ingress{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("get Ingress informer: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if ing, ok := obj.(*networkingv1.Ingress); ok {
				cc.changed(ctx, ing)
			}
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watch Ingresses: %w", err)
	}
	go func() {
		defer close(cc.done)
		_ = c.Start(ctx)
	}()
	if !c.WaitForCacheSync(ctx) {
		cc.stop()
		return nil, errors.New("the change client's caches did not sync")
	}
	return cc, nil
}

// changed writes the PangolinResource of each of ing's hosts with the port its rule
// now names. An update refused for a stale resourceVersion is retried on the object
// read from the API server, as PIC's next reconcile would.
func (cc *changeClient) changed(ctx context.Context, ing *networkingv1.Ingress) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.stopped {
		return
	}
	origin := route.Origin{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, UID: ing.UID}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil || len(rule.HTTP.Paths) == 0 || rule.HTTP.Paths[0].Backend.Service == nil {
			continue
		}
		port := rule.HTTP.Paths[0].Backend.Service.Port.Number
		key := client.ObjectKey{Namespace: ing.Namespace, Name: engine.ResourceName(origin, rule.Host)}
		err := cc.setPort(ctx, cc.client, key, port)
		if apierrors.IsConflict(err) {
			err = cc.setPort(ctx, cc.api, key, port)
		}
		if err != nil && cc.err == nil {
			cc.err = fmt.Errorf("the change client's update of %s: %w", key, err)
		}
	}
}

// setPort reads the PangolinResource through r and updates its targets' port.
func (cc *changeClient) setPort(ctx context.Context, r client.Reader, key client.ObjectKey, port int32) error {
	var pr tunnelv1alpha1.PangolinResource
	if err := r.Get(ctx, key, &pr); err != nil {
		return err
	}
	updated := pr.DeepCopy()
	for t := range updated.Spec.Targets {
		updated.Spec.Targets[t].Port = port
	}
	return cc.client.Update(ctx, updated)
}

// failure is the first failed write, for a timeout's message.
func (cc *changeClient) failure() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err
}

// stop ends the client and returns once it writes no more. A write in flight is let
// finish first: the watch can show it before its response arrives, and cancelling it
// then would report a failure for a write that was made.
func (cc *changeClient) stop() {
	cc.mu.Lock()
	cc.stopped = true
	cc.mu.Unlock()
	cc.cancel()
	<-cc.done
}
