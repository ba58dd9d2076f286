package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// expectation is what the PangolinResource of one public host must be.
type expectation struct {
	spec  tunnelv1alpha1.PangolinResourceSpec
	owner types.UID // the owning Ingress's UID; empty for the probe
}

// watcher follows the bench namespace's PangolinResources through a watch (an
// informer), and tells when they match what is expected. Every time it reports is the
// time the watch event that made the condition true arrived.
type watcher struct {
	mu       sync.Mutex
	expected map[string]expectation // by public host
	byName   map[string]*tunnelv1alpha1.PangolinResource
	matched  map[string]bool // public host -> its object matches
	nMatched int
	waiters  []*waiter
}

type waiter struct {
	cond func() bool // called with mu held
	done chan time.Time
}

// startWatcher starts an informer on the namespace's PangolinResources and waits for its
// initial list.
func startWatcher(ctx context.Context, cfg *rest.Config) (*watcher, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, -1
	c, err := cache.New(cfg, cache.Options{
		Scheme:            testenv.Scheme(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("create watch cache: %w", err)
	}
	inf, err := c.GetInformer(ctx, &tunnelv1alpha1.PangolinResource{})
	if err != nil {
		return nil, fmt.Errorf("get PangolinResource informer: %w", err)
	}
	w := &watcher{expected: map[string]expectation{}, byName: map[string]*tunnelv1alpha1.PangolinResource{}, matched: map[string]bool{}}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			w.observe(obj, true)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch PangolinResources: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the PangolinResource watch did not sync")
	}
	return w, nil
}

// publishedHost is the host pr publishes, as the bench names its hosts: subdomain.domain.
func publishedHost(pr *tunnelv1alpha1.PangolinResource) string {
	if pr.Spec.HTTPConfig == nil {
		return ""
	}
	return pr.Spec.HTTPConfig.Subdomain + "." + pr.Spec.HTTPConfig.DomainName
}

func (w *watcher) observe(obj any, deleted bool) {
	pr, ok := obj.(*tunnelv1alpha1.PangolinResource)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.byName[pr.Name]; ok {
		w.setMatched(publishedHost(old), false)
		delete(w.byName, pr.Name)
	}
	if !deleted {
		host := publishedHost(pr)
		w.byName[pr.Name] = pr
		w.setMatched(host, w.matches(host, pr))
	}
	w.notify(now)
}

func (w *watcher) matches(host string, pr *tunnelv1alpha1.PangolinResource) bool {
	want, ok := w.expected[host]
	if !ok || !equality.Semantic.DeepEqual(want.spec, pr.Spec) {
		return false
	}
	return want.owner == "" || pr.Labels[pic.LabelOwnerUID] == string(want.owner)
}

func (w *watcher) setMatched(host string, m bool) {
	if w.matched[host] == m {
		return
	}
	w.matched[host] = m
	if m {
		w.nMatched++
	} else {
		w.nMatched--
	}
}

func (w *watcher) notify(now time.Time) {
	kept := w.waiters[:0]
	for _, wt := range w.waiters {
		if wt.cond() {
			wt.done <- now
			continue
		}
		kept = append(kept, wt)
	}
	w.waiters = kept
}

// expect replaces the expectations and re-matches the objects already seen.
func (w *watcher) expect(all map[string]expectation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected = all
	w.matched, w.nMatched = map[string]bool{}, 0
	for _, pr := range w.byName {
		host := publishedHost(pr)
		w.setMatched(host, w.matches(host, pr))
	}
}

// expectHost changes one host's expectation and re-matches its object.
func (w *watcher) expectHost(host string, e expectation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected[host] = e
	w.setMatched(host, false)
	for _, pr := range w.byName {
		if publishedHost(pr) == host {
			w.setMatched(host, w.matches(host, pr))
		}
	}
}

// mismatch describes one object that is expected but does not match, for a timeout's
// message: what the watch saw against what was expected.
func (w *watcher) mismatch() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, pr := range w.byName {
		host := publishedHost(pr)
		want, ok := w.expected[host]
		if !ok || w.matched[host] {
			continue
		}
		got, _ := json.Marshal(pr.Spec)
		exp, _ := json.Marshal(want.spec)
		return fmt.Sprintf("e.g. %s: spec %s, owner %s; expected spec %s, owner %s", pr.Name, got, pr.Labels[pic.LabelOwnerUID], exp, want.owner)
	}
	return ""
}

// counts returns the number of objects seen and of hosts that match.
func (w *watcher) counts() (objects, matched int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byName), w.nMatched
}

// when returns a channel that receives the arrival time of the watch event after which
// cond holds (at once, with now, if it already does). cond runs with the lock held and
// may read matched, nMatched and byName.
func (w *watcher) when(cond func() bool) <-chan time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	done := make(chan time.Time, 1)
	if cond() {
		done <- time.Now()
		return done
	}
	w.waiters = append(w.waiters, &waiter{cond: cond, done: done})
	return done
}

func (w *watcher) allMatched(n int) <-chan time.Time {
	return w.when(func() bool { return w.nMatched >= n })
}

func (w *watcher) hostMatched(host string) <-chan time.Time {
	return w.when(func() bool { return w.matched[host] })
}

func (w *watcher) empty() <-chan time.Time {
	return w.when(func() bool { return len(w.byName) == 0 })
}

// await waits for ch up to timeout.
func await(ctx context.Context, ch <-chan time.Time, timeout time.Duration, what string, progress func() string) (time.Time, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case t := <-ch:
		return t, nil
	case <-timer.C:
		return time.Time{}, fmt.Errorf("timed out after %s waiting for %s (%s)", timeout, what, progress())
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}
