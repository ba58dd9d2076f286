package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// hostsPerMultiIngress is the multi-host shape: N/10 Ingresses of 10 hosts.
const hostsPerMultiIngress = 10

// convergenceResync is the resync period of the convergence and change-latency run: long
// enough that no full resync falls inside either window. The resync is measured on
// its own, in the steady-state run.
const convergenceResync = "1h"

type bench struct {
	opts options
	res  *results
	// picDefaults are PIC's own defaults (internal/config); the baseline copies their
	// concurrency.
	picDefaults *config.Config
	prof        *profiler // nil unless BENCH_PPROF is set
	// lastBaseline is the last baseline's seconds: how long to profile PIC's convergence.
	lastBaseline float64
}

// unthrottled are the flags of PIC's unthrottled run: no client-side rate limit, as the
// baseline.
var unthrottled = []string{"--kube-api-qps=-1"}

func (b *bench) all(ctx context.Context, sizes []int) error {
	b.picDefaults = config.Default()
	variant, err := testenv.VariantByName(testenv.VariantFork)
	if err != nil {
		return err
	}
	largest := sizes[len(sizes)-1]
	for _, n := range sizes {
		shapes := []shape{{Name: "single", Ingresses: n, HostsPerIngress: 1}}
		if n >= hostsPerMultiIngress {
			shapes = append(shapes, shape{Name: "multi", Ingresses: n / hostsPerMultiIngress, HostsPerIngress: hostsPerMultiIngress})
		}
		for _, s := range shapes {
			if len(b.opts.Shapes) > 0 && !slices.Contains(b.opts.Shapes, s.Name) {
				continue
			}
			full := n == largest && s.Name == "single"
			if err := b.one(ctx, variant, s, full); err != nil {
				return fmt.Errorf("N=%d %s: %w", n, s.Name, err)
			}
		}
	}
	if b.opts.DirectN > 0 {
		if err := b.directMode(ctx, variant, b.opts.DirectN); err != nil {
			return fmt.Errorf("direct mode: %w", err)
		}
	}
	if b.opts.DirectMemoryN > 0 {
		if err := b.directMemoryRun(ctx, variant, b.opts.DirectMemoryN); err != nil {
			return fmt.Errorf("direct mode memory: %w", err)
		}
	}
	return nil
}

// one measures one shape on a fresh control plane: convergence always; with full, also
// change latency, memory, startup after a restart and the steady state.
func (b *bench) one(ctx context.Context, variant testenv.Variant, s shape, full bool) (err error) {
	logf := b.opts.Logf
	dir, err := newDir(b.opts.WorkDir, fmt.Sprintf("%s-%d", s.Name, s.resources()))
	if err != nil {
		return err
	}
	logf("N=%d %s (%d Ingresses x %d hosts): starting a control plane", s.resources(), s.Name, s.Ingresses, s.HostsPerIngress)
	w, err := startWorld(dir, variant)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.stop()) }()
	start := time.Now()
	if err := w.setup(ctx, s); err != nil {
		return err
	}
	logf("created %d Ingresses in %.1fs", s.Ingresses, since(start))
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watch, err := startWatcher(watchCtx, w.env.Config)
	if err != nil {
		return err
	}

	if b.prof, err = newProfiler(b.opts.PprofDir, w.env.Config); err != nil {
		return err
	}
	conv := convergence{Shape: s.Name, Ingresses: s.Ingresses, HostsPerIngress: s.HostsPerIngress, Resources: s.resources()}
	// The floor, then PIC unthrottled, the same fixture, each run's resources deleted
	// before the next; repeated, for the medians: on shared cores one run can be off by
	// half. The first pair gives the counters, CPU and memory.
	var un picRun
	for r := range max(1, b.opts.Repeat) {
		floor, cpu, err := b.baseline(ctx, w, watch, floorCreatesAndEvents)
		if err != nil {
			return err
		}
		conv.BaselineRuns = append(conv.BaselineRuns, floor)
		if r == 0 {
			conv.BaselineCPU = cpu
		}
		run, err := b.converge(ctx, w, watch, dir, fmt.Sprintf("unthrottled-%d", r+1), unthrottled)
		if run.p != nil {
			run.p.Stop()
		}
		if err == nil {
			err = b.deleteAll(ctx, w, watch, s.resources())
		}
		if err != nil {
			return err
		}
		conv.PICRuns = append(conv.PICRuns, run.seconds)
		if r == 0 {
			un = run
		}
	}
	conv.BaselineSeconds, un.seconds = median(conv.BaselineRuns), median(conv.PICRuns)
	// The earlier floor, the creates alone, once: a figure beside the goal's.
	if conv.CreatesOnlySeconds, _, err = b.baseline(ctx, w, watch, floorCreatesOnly); err != nil {
		return err
	}
	// Then PIC at its defaults, once.
	def, err := b.converge(ctx, w, watch, dir, "defaults", nil)
	p := def.p
	if p != nil {
		defer p.Stop()
	}
	conv.set(un, def)
	b.res.Convergence = append(b.res.Convergence, conv)
	if err != nil || !full {
		return err
	}

	peak, err := b.changeLatency(ctx, w, watch, p)
	if err != nil {
		return err
	}
	return b.restart(ctx, w, dir, peak)
}

// timeout for waiting on n writes: n at 50 a second, or at PIC's client rate limit if
// it sets a lower one, five times over, and at least two minutes.
func (b *bench) timeout(n int) time.Duration {
	qps := float64(b.picDefaults.KubeAPIQPS)
	if qps <= 0 || qps > 50 {
		qps = 50
	}
	need := time.Duration(float64(n)/qps*float64(time.Second)) * 5
	return max(need, 2*time.Minute)
}

// baseline is the floor: a plain client without client-side rate limiting does, with
// PIC's concurrency, the work the specification asks of PIC for the fixture (work:
// each resource's create and its `Created` event, or the create alone). It is timed,
// as PIC is, from its first create to the last resource seen through the watch; its
// events are queued by the workers and written by one writer beside them, as PIC's
// recorder does, and those still queued then are written before the objects are
// deleted again. It returns the floor's seconds and the CPU the control plane spent meanwhile.
func (b *bench) baseline(ctx context.Context, w *world, watch *watcher, work floorWork) (float64, cpuTimes, error) {
	objs := w.baselineObjects()
	watch.expect(w.expectations())
	cfg := rest.CopyConfig(w.env.Config)
	cfg.QPS, cfg.Burst = -1, -1
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return 0, nil, err
	}
	events, err := newEventWriter(cfg)
	if err != nil {
		return 0, nil, err
	}
	all := watch.allMatched(len(objs))
	// The events go as PIC's do: the workers queue them, and one writer sends them
	// beside the workers' creates (internal/controller/recorder.go), so the floor has
	// PIC's concurrency, not one more request in flight or one fewer.
	queued := make(chan int, len(objs))
	written := make(chan error, 1)
	go func() {
		var first error
		for i := range queued {
			if err := events.created(ctx, objs[i].owner, objs[i].resource, objs[i].host); err != nil && first == nil {
				first = err
			}
		}
		written <- first
	}()
	cpu := sampleCPU(0)
	start := time.Now()
	err = parallel(ctx, b.picDefaults.MaxConcurrentReconciles, len(objs), func(ctx context.Context, i int) error {
		if err := c.Create(ctx, objs[i].resource); err != nil {
			return err
		}
		if work == floorCreatesAndEvents {
			queued <- i
		}
		return nil
	})
	close(queued)
	if err != nil {
		return 0, nil, fmt.Errorf("baseline (%s): %w", work, err)
	}
	done, err := await(ctx, all, b.timeout(len(objs)), "the baseline's objects", b.progress(watch, len(objs)))
	if err != nil {
		return 0, nil, err
	}
	// Timed, like PIC, to the last resource seen; the events still queued are written
	// before the next run, so that none spills into it.
	if err := <-written; err != nil {
		return 0, nil, fmt.Errorf("baseline (%s): record an event: %w", work, err)
	}
	floor, used := seconds(done.Sub(start)), sampleCPU(0).since(cpu)
	if work == floorCreatesAndEvents {
		b.lastBaseline = floor
	}
	b.opts.Logf("baseline (%s): %d PangolinResources in %.2fs (%d workers, no client rate limit); CPU: %s",
		work, len(objs), floor, b.picDefaults.MaxConcurrentReconciles, used)
	return floor, used, b.deleteAll(ctx, w, watch, len(objs))
}

// deleteAll deletes every PangolinResource of the namespace and waits until the watch
// shows none. It deletes the namespace's events too, those of PIC and of the floor, so
// that every run starts on the same stored state.
func (b *bench) deleteAll(ctx context.Context, w *world, watch *watcher, n int) error {
	gone := watch.empty()
	if err := w.fast.DeleteAllOf(ctx, &tunnelv1alpha1.PangolinResource{}, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("delete the PangolinResources: %w", err)
	}
	if err := w.fast.DeleteAllOf(ctx, &eventsv1.Event{}, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("delete the events: %w", err)
	}
	_, err := await(ctx, gone, b.timeout(n), "the PangolinResources to be deleted", b.progress(watch, n))
	return err
}

func (b *bench) progress(watch *watcher, want int) func() string {
	return func() string {
		objects, matched := watch.counts()
		return fmt.Sprintf("%d objects, %d of %d matching; %s", objects, matched, want, watch.mismatch())
	}
}

// picRun is one PIC process's convergence.
type picRun struct {
	p                            *picProcess
	seconds, ready               float64
	writes, reconciles, requests int
	eventsDropped                int
	peak                         int64
	cpu                          cpuTimes
}

// converge starts PIC on the fixture with the extra flags and times it until every
// expected resource is seen. It returns the run with its process, still running.
func (b *bench) converge(ctx context.Context, w *world, watch *watcher, dir, label string, flags []string) (picRun, error) {
	var run picRun
	want := w.shape.resources()
	watch.expect(w.expectations())
	all := watch.allMatched(want)
	cpu := sampleCPU(0)
	p, err := b.startPIC(w, filepath.Join(dir, "pic-converge-"+label+".log"), append([]string{"--resync-period", convergenceResync}, flags...)...)
	if err != nil {
		return run, err
	}
	run.p = p
	if b.prof != nil && label == "unthrottled-1" {
		// PIC's convergence lasts about the baseline's time: profile that long, twice over.
		wait := b.prof.cpu(ctx, fmt.Sprintf("%s-%d-converge", w.shape.Name, want), p.pprof, 2*time.Duration(float64(time.Second)*b.lastBaseline)+time.Second)
		defer wait()
	}
	ready := make(chan time.Duration, 1)
	go func() {
		d, err := p.WaitReady(ctx, b.timeout(want))
		if err != nil {
			d = -1
		}
		ready <- d
	}()
	done, err := await(ctx, all, b.timeout(want), "PIC's PangolinResources", func() string {
		return b.progress(watch, want)() + "; " + errString(p.Alive())
	})
	if err != nil {
		return run, err
	}
	run.seconds = seconds(done.Sub(p.Started()))
	run.cpu = sampleCPU(p.Pid()).since(cpu)
	if d := <-ready; d >= 0 {
		run.ready = seconds(d)
	}
	c, err := p.settle(ctx, float64(w.shape.Ingresses), time.Second, b.timeout(want))
	if err != nil {
		return run, err
	}
	run.writes, run.reconciles, run.requests = int(c.writes), int(c.reconciles), int(c.requests)
	run.eventsDropped = int(c.eventsDropped)
	run.peak, _ = p.Memory()
	b.opts.Logf("PIC %s: %d PangolinResources in %.2fs (ready after %.2fs); %d writes, %d reconciles, %d API requests, %d events dropped, peak RSS %.1f MiB; CPU to convergence: %s",
		label, want, run.seconds, run.ready, run.writes, run.reconciles, run.requests, run.eventsDropped, mib(run.peak), run.cpu)
	return run, nil
}

func errString(err error) string {
	if err == nil {
		return "PIC running"
	}
	return err.Error()
}

// changeLatency times Ingress changes one at a time, from the Ingress update to its
// PangolinResource update seen through the watch: first PIC's (p, running), then, with
// PIC stopped, the plain change client's, reacting to the same kind of change with the
// same write. Never both at once: each would write. Before every change, a direct write
// of an unowned PangolinResource gives one write's round trip, a figure. It stops p and
// returns its peak RSS.
func (b *bench) changeLatency(ctx context.Context, w *world, watch *watcher, p *picProcess) (int64, error) {
	n := b.opts.Updates
	logf := b.opts.Logf
	if err := p.quiet(ctx, time.Second, b.timeout(w.shape.resources())); err != nil {
		return 0, err
	}
	pr := probe(1000)
	watch.expectHost(probeHost, expectation{spec: pr.Spec})
	seen := watch.hostMatched(probeHost)
	if err := w.fast.Create(ctx, pr); err != nil {
		return 0, fmt.Errorf("create the probe: %w", err)
	}
	if _, err := await(ctx, seen, time.Minute, "the probe", func() string { return "" }); err != nil {
		return 0, err
	}

	logf("change latency: %d Ingress updates through PIC, each after a direct PangolinResource write", n)
	before, err := p.counters(ctx)
	if err != nil {
		return 0, err
	}
	picChanges, picDirect, err := b.timeChanges(ctx, w, watch, pr, p.Alive)
	if err != nil {
		return 0, err
	}
	// The watch can show the last update before PIC has counted its write: let it settle.
	after, err := p.settle(ctx, before.reconciles+float64(n), 500*time.Millisecond, time.Minute)
	if err != nil {
		return 0, err
	}
	peak, _ := p.Memory()
	p.Stop()

	logf("change latency: %d Ingress updates through the plain change client (PIC stopped)", n)
	plain, err := startChangeClient(ctx, w.env.Config)
	if err != nil {
		return 0, err
	}
	plainChanges, plainDirect, err := b.timeChanges(ctx, w, watch, pr, plain.failure)
	plain.stop()
	if err == nil {
		err = plain.failure()
	}
	if err != nil {
		return 0, err
	}

	direct := slices.Concat(picDirect, plainDirect)
	lat := &changeLatency{
		N: w.shape.resources(), Updates: n,
		P50Ms: ms(percentile(picChanges, 50)), P99Ms: ms(percentile(picChanges, 99)), MaxMs: ms(slices.Max(picChanges)),
		PlainP50Ms: ms(percentile(plainChanges, 50)), PlainP99Ms: ms(percentile(plainChanges, 99)), PlainMaxMs: ms(slices.Max(plainChanges)),
		DirectP50Ms: ms(percentile(direct, 50)), DirectP99Ms: ms(percentile(direct, 99)),
		PICWrites: int(after.writes - before.writes),
	}
	lat.RatioP99ToPlainP99 = round(lat.P99Ms/lat.PlainP99Ms, 2)
	b.res.ChangeLatency = lat
	logf("change latency: PIC p50 %.1f ms, p99 %.1f ms; plain client p50 %.1f ms, p99 %.1f ms; p99 ratio %.2f; direct write p50 %.1f ms",
		lat.P50Ms, lat.P99Ms, lat.PlainP50Ms, lat.PlainP99Ms, lat.RatioP99ToPlainP99, lat.DirectP50Ms)
	return peak, nil
}

// timeChanges changes the backend port of b.opts.Updates Ingresses, spread over the
// fixture, one at a time, and times each from its update to every PangolinResource of
// the Ingress seen with the new port; before each, it times a direct update of the
// probe pr. Whoever reacts to the changes (PIC or the plain change client) must be
// running; failed tells why it may not have written.
func (b *bench) timeChanges(ctx context.Context, w *world, watch *watcher, pr *tunnelv1alpha1.PangolinResource, failed func() error) (change, direct []time.Duration, err error) {
	n := b.opts.Updates
	progress := func() string {
		if err := failed(); err != nil {
			return err.Error()
		}
		return "no failure reported"
	}
	for k := range n {
		// The direct write: one update of a PangolinResource, seen through the watch.
		pr.Spec = expectedSpec(probeHost, pr.Spec.Targets[0].Port+1)
		watch.expectHost(probeHost, expectation{spec: pr.Spec})
		seen := watch.hostMatched(probeHost)
		start := time.Now()
		if err := w.fast.Update(ctx, pr); err != nil {
			return nil, nil, fmt.Errorf("update the probe: %w", err)
		}
		at, err := await(ctx, seen, time.Minute, "the probe's update", func() string { return "" })
		if err != nil {
			return nil, nil, err
		}
		direct = append(direct, at.Sub(start))

		// The change: the Ingress's backend port, then its resources.
		i := k * w.shape.Ingresses / n
		next := int32(portB)
		if w.port[i] == portB {
			next = portA
		}
		ing, err := w.getIngress(ctx, i)
		if err != nil {
			return nil, nil, err
		}
		setBackendPort(ing, next)
		for h := range w.shape.HostsPerIngress {
			host := w.shape.host(i, h)
			watch.expectHost(host, expectation{spec: expectedSpec(host, next), owner: ing.UID})
		}
		hosts := w.shape.HostsPerIngress
		updated := watch.when(func() bool {
			for h := range hosts {
				if !watch.matched[w.shape.host(i, h)] {
					return false
				}
			}
			return true
		})
		start = time.Now()
		if err := w.fast.Update(ctx, ing); err != nil {
			return nil, nil, fmt.Errorf("update Ingress %s: %w", ing.Name, err)
		}
		w.port[i] = next
		at, err = await(ctx, updated, time.Minute, "the PangolinResource of "+ing.Name, progress)
		if err != nil {
			return nil, nil, err
		}
		change = append(change, at.Sub(start))
	}
	return change, direct, nil
}

// restart starts PIC again on the converged cluster: startup to /readyz, the writes of
// its first full pass (none expected), then one full resync (none expected either).
func (b *bench) restart(ctx context.Context, w *world, dir string, convergencePeak int64) error {
	logf := b.opts.Logf
	n := w.shape.Ingresses
	p, err := b.startPIC(w, filepath.Join(dir, "pic-restart.log"), "--resync-period", b.opts.ResyncPeriod.String())
	if err != nil {
		return err
	}
	defer p.Stop()
	ready, err := p.WaitReady(ctx, b.timeout(n))
	if err != nil {
		return err
	}
	settled, err := p.settle(ctx, float64(n), time.Second, b.timeout(n))
	if err != nil {
		return err
	}
	b.prof.heap(ctx, fmt.Sprintf("%s-%d-restart", w.shape.Name, w.shape.resources()), p.pprof)
	rss := testenv.ProcStatus(p.Pid(), "RssAnon", "RssFile")
	anon, file := rss["RssAnon"], rss["RssFile"]
	st := &startup{
		N: n, ReadySeconds: seconds(ready), SettledSeconds: round(since(p.Started())-1, 3),
		Writes: int(settled.writes), Reconciles: int(settled.reconciles), Requests: int(settled.requests),
	}
	b.res.Startup = st
	logf("restart: ready after %.2fs, first pass done after %.2fs: %d writes, %d reconciles, %d API requests",
		st.ReadySeconds, st.SettledSeconds, st.Writes, st.Reconciles, st.Requests)

	logf("steady state: waiting for a full resync (period %s)", b.opts.ResyncPeriod)
	resynced, err := p.settle(ctx, settled.reconciles+float64(n), time.Second, 2*b.opts.ResyncPeriod+b.timeout(n))
	if err != nil {
		return err
	}
	ss := &steadyState{
		N: n, ResyncPeriod: b.opts.ResyncPeriod.String(),
		WritesAfterRestart: st.Writes,
		ResyncWrites:       int(resynced.writes - settled.writes),
		ResyncReconciles:   int(resynced.reconciles - settled.reconciles),
		ResyncRequests:     int(resynced.requests - settled.requests),
	}
	ss.RequestsPerReconcile = round(float64(ss.ResyncRequests)/float64(ss.ResyncReconciles), 3)
	ss.StartupRequestsPerIngress = round(float64(st.Requests)/float64(n), 3)
	b.res.SteadyState = ss
	logf("steady state: resync of %d reconciles: %d writes, %d API requests (%.3f per reconcile)", ss.ResyncReconciles, ss.ResyncWrites, ss.ResyncRequests, ss.RequestsPerReconcile)

	restartPeak, _ := p.Memory()
	b.res.Memory = &memory{
		N: n, PeakRSSBytes: max(convergencePeak, restartPeak),
		ConvergencePeakRSSBytes: convergencePeak, RestartPeakRSSBytes: restartPeak,
	}
	b.res.Memory.BytesPerIngress = b.res.Memory.PeakRSSBytes / int64(n)
	b.res.Memory.RSSAnonBytes, b.res.Memory.RSSFileBytes = anon, file
	logf("memory: peak RSS %.1f MiB (converging %.1f MiB, restarted %.1f MiB); after the restart's first pass: %.1f MiB anonymous, %.1f MiB file-backed",
		mib(b.res.Memory.PeakRSSBytes), mib(convergencePeak), mib(restartPeak), mib(anon), mib(file))
	return nil
}
