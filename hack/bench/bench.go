package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
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
	latencyN, scaleN := roles(sizes)
	for _, n := range sizes {
		shapes := []shape{{Name: "single", Ingresses: n, HostsPerIngress: 1}}
		if n >= hostsPerMultiIngress && n <= multiShapeMaxN {
			shapes = append(shapes, shape{Name: "multi", Ingresses: n / hostsPerMultiIngress, HostsPerIngress: hostsPerMultiIngress})
		}
		for _, s := range shapes {
			if len(b.opts.Shapes) > 0 && !slices.Contains(b.opts.Shapes, s.Name) {
				continue
			}
			role := roleConvergence
			switch {
			case s.Name != "single":
			case n == latencyN:
				role = roleFull
			case n == scaleN:
				role = roleScale
			}
			if err := b.one(ctx, variant, s, role); err != nil {
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

// multiShapeMaxN is the largest N the multi-host shape runs at: the goals ask both
// shapes up to N = 5000, and the scale run (N = 20,000) is single-host Ingresses.
const multiShapeMaxN = 5000

// What a single-host run measures beyond convergence.
type role int

const (
	roleConvergence role = iota
	// roleFull adds change latency, then PIC restarted: startup, the steady state and
	// memory (the restarted peak, BENCH_REPEAT restarts).
	roleFull
	// roleScale adds PIC restarted BENCH_REPEAT times: the peak RSS and the writes.
	roleScale
)

// roles are the N of the full run (change latency, steady state, memory): the goals'
// N = 5000 when measured, else the largest; and of the scale run: the largest, when it
// is larger (0: none).
func roles(sizes []int) (latencyN, scaleN int) {
	largest := slices.Max(sizes)
	if !slices.Contains(sizes, goalN) {
		return largest, 0
	}
	if largest > goalN {
		return goalN, largest
	}
	return goalN, 0
}

// one measures one shape on a fresh control plane: convergence always; then what role
// adds.
func (b *bench) one(ctx context.Context, variant testenv.Variant, s shape, role role) (err error) {
	logf := b.opts.Logf
	dir, err := newDir(b.opts.WorkDir, fmt.Sprintf("%s-%d", s.Name, s.resources()))
	if err != nil {
		return err
	}
	logf("N=%d %s (%d Ingresses x %d hosts): starting a control plane", s.resources(), s.Name, s.Ingresses, s.HostsPerIngress)
	w, err := startWorld(dir, variant, b.opts.Affinity)
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
	// The floor and PIC unthrottled, the same fixture, each run's resources deleted
	// before the next; repeated, for the medians: one run can be off by half. The
	// control plane slows over a shape's runs (kube-apiserver's memory grows with the
	// objects created and deleted, until it levels off), so the second run of a pair
	// meets a slower server than the first: the order alternates, the floor first in
	// odd pairs and PIC first in even ones, so that the drift weighs on both alike.
	// With both placements, each repeat runs a pair in each, one after the other, so
	// that both see the same drift. The primary placement's first pair gives the
	// counters, CPU and memory.
	primary := b.opts.Affinity.primary()
	byMode := map[string]*pairs{}
	var un picRun
	for r := range max(1, b.opts.Repeat) {
		for _, mode := range b.opts.Affinity.Modes {
			if err := w.place(mode); err != nil {
				return err
			}
			pr := byMode[mode]
			if pr == nil {
				pr = &pairs{Affinity: mode}
				byMode[mode] = pr
			}
			label := fmt.Sprintf("%d", r+1)
			if mode != primary {
				label = mode + "-" + label
			}
			floor, cpu, run, err := b.pair(ctx, w, watch, dir, label, picFirst(r))
			if err != nil {
				return err
			}
			pr.BaselineRuns = append(pr.BaselineRuns, floor)
			pr.FloorCPURuns = append(pr.FloorCPURuns, cpu[cpuFloor])
			pr.PICRuns = append(pr.PICRuns, run.seconds)
			pr.PICCPURuns = append(pr.PICCPURuns, run.cpu[cpuPIC])
			if r == 0 && mode == primary {
				conv.BaselineCPU, un = cpu, run
			}
		}
	}
	if err := w.place(primary); err != nil {
		return err
	}
	for _, pr := range byMode {
		pr.summarize(s.resources())
	}
	conv.pairs = *byMode[primary]
	for mode, pr := range byMode {
		if mode != primary {
			conv.Shared = pr
		}
	}
	un.seconds = conv.PICSeconds
	// The earlier floor, the creates alone, once: a figure beside the goal's.
	if conv.CreatesOnlySeconds, _, err = b.baseline(ctx, w, watch, dir, "creates-only", floorCreatesOnly); err != nil {
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
	if err != nil {
		return err
	}
	switch role {
	case roleFull:
		peak, err := b.changeLatency(ctx, w, watch, p)
		if err != nil {
			return err
		}
		return b.restart(ctx, w, dir, peak)
	case roleScale:
		p.Stop()
		peaks, writes, err := b.restarts(ctx, w, dir, max(1, b.opts.Repeat))
		if err != nil {
			return err
		}
		b.res.Scale = &scale{N: s.resources(), RestartPeakRSSRuns: peaks, WritesAfterRestart: writes}
	}
	return nil
}

// picFirst says whether PIC runs before the floor in the pair of index r (from 0):
// the floor first in the first pair, whose figures are the counters', then by turns.
func picFirst(r int) bool { return r%2 == 1 }

// pair runs the floor and PIC unthrottled once each, in the order given, and returns
// the floor's seconds and CPU and PIC's run.
func (b *bench) pair(ctx context.Context, w *world, watch *watcher, dir, label string, pic1st bool) (floor float64, cpu cpuTimes, run picRun, err error) {
	if pic1st {
		if run, err = b.convergeUnthrottled(ctx, w, watch, dir, label); err != nil {
			return 0, nil, run, err
		}
		floor, cpu, err = b.baseline(ctx, w, watch, dir, label, floorCreatesAndEvents)
		return floor, cpu, run, err
	}
	if floor, cpu, err = b.baseline(ctx, w, watch, dir, label, floorCreatesAndEvents); err != nil {
		return 0, nil, run, err
	}
	run, err = b.convergeUnthrottled(ctx, w, watch, dir, label)
	return floor, cpu, run, err
}

// convergeUnthrottled converges PIC unthrottled on the fixture, stops it and deletes
// what it created, as the floor's run does after itself.
func (b *bench) convergeUnthrottled(ctx context.Context, w *world, watch *watcher, dir, label string) (picRun, error) {
	run, err := b.converge(ctx, w, watch, dir, "unthrottled-"+label, unthrottled)
	if run.p != nil {
		run.p.Stop()
	}
	if err != nil {
		return run, err
	}
	return run, b.deleteAll(ctx, w, watch, w.shape.resources())
}

// restarts starts PIC k times on the converged cluster, each until its first full pass
// is done, and returns each run's peak RSS and the writes of them all (none expected).
func (b *bench) restarts(ctx context.Context, w *world, dir string, k int) (peaks []int64, writes int, err error) {
	n := w.shape.Ingresses
	for r := range k {
		p, err := b.startPIC(w, filepath.Join(dir, fmt.Sprintf("pic-restart-%d.log", r+1)), "--resync-period", convergenceResync)
		if err != nil {
			return nil, 0, err
		}
		if _, err := p.WaitReady(ctx, b.timeout(n)); err != nil {
			p.Stop()
			return nil, 0, err
		}
		settled, err := p.settle(ctx, float64(n), time.Second, b.timeout(n))
		peak, _ := p.Memory()
		p.Stop()
		if err != nil {
			return nil, 0, err
		}
		peaks = append(peaks, peak)
		writes += int(settled.writes)
		b.opts.Logf("restart %d of %d, N=%d: peak RSS %.1f MiB, %d writes", r+1, k, n, mib(peak), int(settled.writes))
	}
	return peaks, writes, nil
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
// each resource's create and its `Created` event, or the create alone), in a process
// of its own on the client's CPUs (runFloor). It is timed, as PIC is, from its process
// start to the last resource seen through the watch; its events still queued then are
// written before the objects are deleted again. It returns the floor's seconds and the
// CPU its process and the control plane spent meanwhile, the floor's as "floor".
func (b *bench) baseline(ctx context.Context, w *world, watch *watcher, dir, label string, work floorWork) (float64, cpuTimes, error) {
	n := w.shape.resources()
	watch.expect(w.expectations())
	all := watch.allMatched(n)
	cpu := sampleCPU(nil)
	f, err := b.startFloor(w, dir, label, work)
	if err != nil {
		return 0, nil, err
	}
	defer f.Stop()
	done, err := await(ctx, all, b.timeout(n), "the baseline's objects", func() string {
		return b.progress(watch, n)() + "; " + errString(f.Alive())
	})
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s", err, f.Log())
	}
	// The floor's process is still there: it waits to be told to stop.
	floor, used := seconds(done.Sub(f.Started())), sampleCPU(map[int]string{f.Pid(): cpuFloor}).since(cpu)
	// Its events still queued are written before the next run, so that none spills
	// into it.
	if err := f.finished(ctx, b.timeout(n)); err != nil {
		return 0, nil, err
	}
	f.Stop()
	if work == floorCreatesAndEvents {
		b.lastBaseline = floor
	}
	b.opts.Logf("baseline (%s, %s): %d PangolinResources in %.2fs (%d workers, no client rate limit); CPU: %s; kube-apiserver RSS %.0f MiB",
		work, w.mode, n, floor, b.picDefaults.MaxConcurrentReconciles, used, mib(apiserverRSS()))
	return floor, used, b.deleteAll(ctx, w, watch, n)
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
	cpu := sampleCPU(nil)
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
	run.cpu = sampleCPU(map[int]string{p.Pid(): cpuPIC}).since(cpu)
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
	b.opts.Logf("PIC %s: %d PangolinResources in %.2fs (ready after %.2fs); %d writes, %d reconciles, %d API requests, %d events dropped, peak RSS %.1f MiB; CPU to convergence: %s; kube-apiserver RSS %.0f MiB",
		label, want, run.seconds, run.ready, run.writes, run.reconciles, run.requests, run.eventsDropped, mib(run.peak), run.cpu, mib(apiserverRSS()))
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
	plain, err := b.startChangeClientProcess(ctx, w)
	if err != nil {
		return 0, err
	}
	plainChanges, plainDirect, err := b.timeChanges(ctx, w, watch, pr, plain.failure)
	if serr := plain.stop(); err == nil {
		err = serr
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
	firstPassPeak, _ := p.Memory()
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

	resyncPeak, _ := p.Memory()
	p.Stop()
	// The restarted peak is the median of BENCH_REPEAT restarts, each to the end of its
	// first pass: between runs of one build it wanders by several MiB.
	peaks, writes, err := b.restarts(ctx, w, dir, max(1, b.opts.Repeat)-1)
	if err != nil {
		return err
	}
	peaks = append([]int64{firstPassPeak}, peaks...)
	ss.WritesAfterRestart += writes
	restartPeak := medianBytes(peaks)
	b.res.Memory = &memory{
		N: n, PeakRSSBytes: max(convergencePeak, resyncPeak, restartPeak),
		ConvergencePeakRSSBytes: convergencePeak, RestartPeakRSSBytes: restartPeak, RestartPeakRSSRuns: peaks,
	}
	b.res.Memory.BytesPerIngress = b.res.Memory.PeakRSSBytes / int64(n)
	b.res.Memory.RSSAnonBytes, b.res.Memory.RSSFileBytes = anon, file
	logf("memory: peak RSS %.1f MiB (converging %.1f MiB, restarted %.1f MiB, the median of %d restarts; %.1f MiB through a resync); after the restart's first pass: %.1f MiB anonymous, %.1f MiB file-backed",
		mib(b.res.Memory.PeakRSSBytes), mib(convergencePeak), mib(restartPeak), len(peaks), mib(resyncPeak), mib(anon), mib(file))
	return nil
}
