package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

// results is everything the bench measured; bench/results.json is its JSON.
type results struct {
	Machine         machine        `json:"machine"`
	Settings        settings       `json:"settings"`
	Convergence     []convergence  `json:"convergence"`
	SteadyState     *steadyState   `json:"steadyState"`
	ChangeLatency   *changeLatency `json:"changeLatency"`
	Memory          *memory        `json:"memory"`
	Scale           *scale         `json:"scale,omitempty"`
	DirectMemory    *directMemory  `json:"directMemory,omitempty"`
	Startup         *startup       `json:"startup"`
	Direct          *direct        `json:"direct,omitempty"`
	Goals           []goal         `json:"goals"`
	Started         time.Time      `json:"started"`
	DurationSeconds float64        `json:"durationSeconds"`
}

type machine struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpuModel,omitempty"`
	OS       string `json:"os"`
	Kernel   string `json:"kernel,omitempty"`
	Go       string `json:"go"`
	// LoadAverage is /proc/loadavg at the start and the end: the machine is shared, and
	// what else ran shows here.
	LoadAverageStart string `json:"loadAverageStart,omitempty"`
	LoadAverageEnd   string `json:"loadAverageEnd,omitempty"`
}

type settings struct {
	Sizes   []int `json:"sizes"`
	Updates int   `json:"changeLatencyUpdates"`
	// Repeat is how many floor and unthrottled PIC runs each convergence figure is the
	// median of.
	Repeat int `json:"repeat"`
	// PIC's defaults; the floor copies their concurrency.
	MaxConcurrentReconciles int       `json:"maxConcurrentReconciles"`
	KubeAPIQPS              float32   `json:"kubeAPIQPS"`
	KubeAPIBurst            int       `json:"kubeAPIBurst"`
	ConvergenceResync       string    `json:"convergenceResyncPeriod"`
	SteadyStateResync       string    `json:"steadyStateResyncPeriod"`
	OperatorCRDs            string    `json:"operatorCRDs"`
	ControlPlane            string    `json:"controlPlane"`
	Placement               placement `json:"placement"`
}

// placement is where the processes ran: the convergence pairs in each of Modes, every
// other run in the first.
type placement struct {
	Modes []string `json:"modes"`
	// ControlPlaneCPUs ran etcd, kube-apiserver and the harness, ClientCPUs the floor
	// or PIC, in the split placement; "" when it did not run.
	ControlPlaneCPUs string `json:"controlPlaneCPUs"`
	ClientCPUs       string `json:"clientCPUs"`
	// UsableCPUs are every CPU of the shared placement.
	UsableCPUs string `json:"usableCPUs"`
	// Note says why the split placement did not run, when it did not.
	Note string `json:"note,omitempty"`
}

// convergence is one shape at one N.
type convergence struct {
	Shape           string `json:"shape"` // single: one host per Ingress; multi: 10 hosts per Ingress
	Ingresses       int    `json:"ingresses"`
	HostsPerIngress int    `json:"hostsPerIngress"`
	Resources       int    `json:"resources"`
	// pairs are the alternating floor and PIC unthrottled runs in the primary
	// placement (split, the goal's, unless only shared ran); Shared the same in the
	// shared placement when both ran.
	pairs
	Shared *pairs `json:"sharedCores,omitempty"`
	// CreatesOnlySeconds is the earlier floor, the same client creating the resources
	// without their events, run once after the pairs; CreatesOnlyRatio is PICSeconds
	// over it. A figure, not a goal.
	CreatesOnlySeconds float64 `json:"createsOnlyFloorSeconds"`
	CreatesOnlyRatio   float64 `json:"createsOnlyRatio"`
	// PICDefaultsSeconds is the same at PIC's default settings; DefaultsRatio its ratio.
	PICDefaultsSeconds float64 `json:"picDefaultsSeconds"`
	DefaultsRatio      float64 `json:"defaultsRatio"`
	PICReadySeconds    float64 `json:"picReadySeconds"`
	// Writes, reconciles, requests and peak RSS are the unthrottled run's.
	PICWrites       int   `json:"picWrites"`
	PICReconciles   int   `json:"picReconciles"`
	PICRequests     int   `json:"picRequests"`
	PICPeakRSSBytes int64 `json:"picPeakRSSBytes"`
	// PICEventsDropped is the `Created` events PIC recorded but dropped (its queue
	// full): the floor writes every one.
	PICEventsDropped int `json:"picEventsDropped"`
	// CPU seconds by process (kube-apiserver, etcd, pic) from the start of the first
	// pair's floor run, or PIC run, to its last resource seen.
	BaselineCPU cpuTimes `json:"baselineCPUSeconds"`
	PICCPU      cpuTimes `json:"picCPUSeconds"`
}

// pairs are the floor's and PIC unthrottled's runs in one placement, one after the
// other, repeated.
type pairs struct {
	// Affinity is the placement: split (the control plane and the client under test
	// on CPUs apart) or shared.
	Affinity string `json:"affinity"`
	// BaselineSeconds is the floor: a plain client, no client-side rate limit, PIC's
	// concurrency, doing the specification's work: each resource's create and its
	// `Created` event, in a process of its own, timed from its start. The median of
	// BaselineRuns.
	BaselineSeconds float64   `json:"baselineSeconds"`
	BaselineRuns    []float64 `json:"baselineRuns"`
	// PICSeconds is PIC unthrottled (--kube-api-qps=-1): process start to the last
	// expected resource seen, the median of PICRuns, each run right after a floor's run.
	// Ratio is the median of the pairs' ratios (PICRuns[i] / BaselineRuns[i]): each pair
	// ran under the same load, which drifts between pairs by more than the gap being
	// measured.
	PICSeconds float64   `json:"picSeconds"`
	PICRuns    []float64 `json:"picRuns"`
	Ratio      float64   `json:"ratio"`
	// FloorCPURuns and PICCPURuns are the CPU-seconds (user + system, /proc/<pid>/stat)
	// of the client's own process, from its start to the last resource seen; the Per1000
	// figures are their medians per 1,000 resources, CPURatio PIC's over the floor's.
	FloorCPURuns    []float64 `json:"floorCPUSecondsRuns"`
	PICCPURuns      []float64 `json:"picCPUSecondsRuns"`
	FloorCPUPer1000 float64   `json:"floorCPUSecondsPer1000"`
	PICCPUPer1000   float64   `json:"picCPUSecondsPer1000"`
	CPURatio        float64   `json:"cpuRatio"`
}

// summarize fills in the medians and ratios of n resources' runs.
func (p *pairs) summarize(n int) {
	p.BaselineSeconds, p.PICSeconds = median(p.BaselineRuns), median(p.PICRuns)
	if p.BaselineSeconds > 0 {
		p.Ratio = round(pairedRatio(p.PICRuns, p.BaselineRuns), 2)
	}
	p.FloorCPUPer1000 = round(median(p.FloorCPURuns)*1000/float64(n), 3)
	p.PICCPUPer1000 = round(median(p.PICCPURuns)*1000/float64(n), 3)
	if p.FloorCPUPer1000 > 0 {
		p.CPURatio = round(p.PICCPUPer1000/p.FloorCPUPer1000, 2)
	}
}

// set fills in PIC's two runs.
func (c *convergence) set(un, def picRun) {
	c.PICSeconds, c.PICReadySeconds = un.seconds, un.ready
	c.PICWrites, c.PICReconciles, c.PICRequests, c.PICPeakRSSBytes = un.writes, un.reconciles, un.requests, un.peak
	c.PICCPU, c.PICEventsDropped = un.cpu, un.eventsDropped
	c.PICDefaultsSeconds = def.seconds
	if c.BaselineSeconds > 0 {
		c.DefaultsRatio = round(c.PICDefaultsSeconds/c.BaselineSeconds, 2)
	}
	if c.CreatesOnlySeconds > 0 {
		c.CreatesOnlyRatio = round(c.PICSeconds/c.CreatesOnlySeconds, 2)
	}
}

type steadyState struct {
	N                         int     `json:"n"`
	ResyncPeriod              string  `json:"resyncPeriod"`
	WritesAfterRestart        int     `json:"writesAfterRestart"`
	ResyncWrites              int     `json:"resyncWrites"`
	ResyncReconciles          int     `json:"resyncReconciles"`
	ResyncRequests            int     `json:"resyncRequests"`
	RequestsPerReconcile      float64 `json:"requestsPerReconcile"`
	StartupRequestsPerIngress float64 `json:"startupRequestsPerIngress"`
}

// changeLatency is PIC's time from an Ingress update to its PangolinResource update
// seen through a watch, and the same for the plain change client (changeClient), in
// the same run, one after the other, never both running at once.
type changeLatency struct {
	N       int     `json:"n"`
	Updates int     `json:"updates"` // each of PIC and of the plain client
	P50Ms   float64 `json:"p50Ms"`
	P99Ms   float64 `json:"p99Ms"`
	MaxMs   float64 `json:"maxMs"`
	// The plain client's, and RatioP99ToPlainP99, the goal's ratio.
	PlainP50Ms         float64 `json:"plainP50Ms"`
	PlainP99Ms         float64 `json:"plainP99Ms"`
	PlainMaxMs         float64 `json:"plainMaxMs"`
	RatioP99ToPlainP99 float64 `json:"ratioP99ToPlainP99"`
	// A direct update of a PangolinResource seen through the watch, before each change
	// of both runs: one write's round trip, a figure.
	DirectP50Ms float64 `json:"directWriteP50Ms"`
	DirectP99Ms float64 `json:"directWriteP99Ms"`
	PICWrites   int     `json:"picWrites"`
}

type memory struct {
	N                       int   `json:"n"`
	PeakRSSBytes            int64 `json:"peakRSSBytes"`
	ConvergencePeakRSSBytes int64 `json:"convergencePeakRSSBytes"`
	// RestartPeakRSSBytes is the median of RestartPeakRSSRuns: PIC restarted on the
	// converged cluster, each run's peak to the end of its first pass.
	RestartPeakRSSBytes int64   `json:"restartPeakRSSBytes"`
	RestartPeakRSSRuns  []int64 `json:"restartPeakRSSBytesRuns"`
	BytesPerIngress     int64   `json:"bytesPerIngress"`
	// RSSAnonBytes and RSSFileBytes split the restarted process's resident set at the
	// end of its first pass: heap, stacks and runtime; the binary's mapped pages.
	RSSAnonBytes int64 `json:"rssAnonBytes,omitempty"`
	RSSFileBytes int64 `json:"rssFileBytes,omitempty"`
	// MarginalBytesPerIngress is the slope of the converging process's peak RSS between
	// the smallest and the largest N (single-host shape).
	MarginalBytesPerIngress int64 `json:"marginalBytesPerIngress,omitempty"`
}

// scale is the largest N against the goals' N (the reference, 5000), single-host
// Ingresses: how time, memory and CPU grow.
type scale struct {
	N    int `json:"n"`
	RefN int `json:"referenceN"`
	// PICSeconds is PIC unthrottled's convergence (split placement when it ran);
	// per resource, in milliseconds, against the reference's, and their ratio.
	PICSeconds          float64 `json:"picSeconds"`
	MsPerResource       float64 `json:"msPerResource"`
	RefMsPerResource    float64 `json:"referenceMsPerResource"`
	TimeRatio           float64 `json:"timePerResourceRatio"`
	PICRequests         int     `json:"picRequests"`
	PICCPUPer1000       float64 `json:"picCPUSecondsPer1000"`
	FloorCPUPer1000     float64 `json:"floorCPUSecondsPer1000"`
	RestartPeakRSSRuns  []int64 `json:"restartPeakRSSBytesRuns"`
	RestartPeakRSSBytes int64   `json:"restartPeakRSSBytes"` // the median
	RefRestartPeakRSS   int64   `json:"referenceRestartPeakRSSBytes"`
	RSSRatio            float64 `json:"rssRatio"`
	WritesAfterRestart  int     `json:"writesAfterRestart"`
}

// directMemory is PIC's peak RSS in direct mode (sink pangolin) with N single-host
// Ingresses, against the in-repo Pangolin server answering at once: publishing them on
// an empty server, then restarted on the converged one.
type directMemory struct {
	N                   int   `json:"n"`
	PeakRSSBytes        int64 `json:"peakRSSBytes"`
	PublishPeakRSSBytes int64 `json:"publishPeakRSSBytes"`
	RestartPeakRSSBytes int64 `json:"restartPeakRSSBytes"`
}

type startup struct {
	N              int     `json:"n"`
	ReadySeconds   float64 `json:"readySeconds"`
	SettledSeconds float64 `json:"settledSeconds"` // until the first full pass is done
	Writes         int     `json:"writes"`
	Reconciles     int     `json:"reconciles"`
	Requests       int     `json:"requests"`
}

// goal is one of the project's performance goals with what was measured.
type goal struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      *bool  `json:"met"` // null: not measured in this run
}

func newResults(opts options, sizes []int) *results {
	d := defaultsForReport()
	return &results{
		Started: time.Now().UTC().Round(time.Second),
		Machine: machine{
			CPUs: runtime.NumCPU(), CPUModel: cpuModel(), OS: runtime.GOOS + "/" + runtime.GOARCH,
			Kernel: readTrimmed("/proc/sys/kernel/osrelease"), Go: runtime.Version(),
			LoadAverageStart: readTrimmed("/proc/loadavg"),
		},
		Settings: settings{
			Sizes: sizes, Updates: opts.Updates, Repeat: max(1, opts.Repeat),
			MaxConcurrentReconciles: d.MaxConcurrentReconciles, KubeAPIQPS: d.KubeAPIQPS, KubeAPIBurst: d.KubeAPIBurst,
			ConvergenceResync: convergenceResync, SteadyStateResync: opts.ResyncPeriod.String(),
			OperatorCRDs: "fork", ControlPlane: "envtest etcd + kube-apiserver (hack/controlplane), same machine",
			Placement: placement{
				Modes: opts.Affinity.Modes, ControlPlaneCPUs: formatCPUList(opts.Affinity.ControlPlane),
				ClientCPUs: formatCPUList(opts.Affinity.Client), UsableCPUs: formatCPUList(opts.Affinity.All),
				Note: opts.AffinityNote,
			},
		},
	}
}

func (r *results) finish(d time.Duration) {
	r.DurationSeconds = math.Round(d.Seconds())
	r.Machine.LoadAverageEnd = readTrimmed("/proc/loadavg")
	if r.Memory != nil {
		var small, large *convergence
		for i := range r.Convergence {
			c := &r.Convergence[i]
			if c.Shape != "single" {
				continue
			}
			if small == nil || c.Ingresses < small.Ingresses {
				small = c
			}
			if large == nil || c.Ingresses > large.Ingresses {
				large = c
			}
		}
		if small != nil && large != nil && large.Ingresses > small.Ingresses {
			r.Memory.MarginalBytesPerIngress = (large.PICPeakRSSBytes - small.PICPeakRSSBytes) / int64(large.Ingresses-small.Ingresses)
		}
	}
	r.Scale.fill(r.Convergence, r.Memory)
	r.Goals = r.goals()
}

// fill computes the scale run's figures from its convergence and restarts, against the
// single-host shape at the reference N (goalN) and its memory.
func (s *scale) fill(conv []convergence, ref *memory) {
	if s == nil {
		return
	}
	s.RefN = goalN
	s.RestartPeakRSSBytes = medianBytes(s.RestartPeakRSSRuns)
	for _, c := range conv {
		if c.Shape != "single" {
			continue
		}
		switch c.Resources {
		case s.N:
			s.PICSeconds, s.PICRequests = c.PICSeconds, c.PICRequests
			s.PICCPUPer1000, s.FloorCPUPer1000 = c.PICCPUPer1000, c.FloorCPUPer1000
			s.MsPerResource = round(c.PICSeconds*1000/float64(c.Resources), 3)
		case goalN:
			s.RefMsPerResource = round(c.PICSeconds*1000/float64(c.Resources), 3)
		}
	}
	if s.RefMsPerResource > 0 {
		s.TimeRatio = round(s.MsPerResource/s.RefMsPerResource, 2)
	}
	if ref != nil && ref.N == goalN && ref.RestartPeakRSSBytes > 0 {
		s.RefRestartPeakRSS = ref.RestartPeakRSSBytes
		s.RSSRatio = round(float64(s.RestartPeakRSSBytes)/float64(ref.RestartPeakRSSBytes), 2)
	}
}

// The goals' names, as results.json and docs/performance.md list them.
const (
	goalConvergence = "convergence, the control plane on its own cores, vs the floor doing the specification's work (N=%d)"
	goalCPU         = "CPU per 1,000 resources (N=5000)"
	goalRSS         = "RSS at N=5000"
	goalScale       = "scale: N=%d"
	goalLatency     = "p99 change latency"
	goalWrites      = "steady-state writes"
	// Direct mode (sink pangolin): PIC's own goals.
	goalDirectChange = "Pangolin requests per Ingress change"
	goalDirectWrites = "Pangolin writes at steady state"
	goalDirectResync = "Pangolin requests per full refresh (N=%d)"
	// Direct mode at Pangolin's pace (issue 29).
	goalDirectPublish = "publishing 1000 new hosts in direct mode: at most %.1fx a plain client sending the requests the specification asks, at PIC's concurrency"
	goalDirectRestart = "restart to the first reconcile in direct mode, N=1000: at most %.0f s"
	goalDirectLoad    = "Pangolin requests an hour at steady state, N=1000, default settings: at most %.0f, hand deletions and edits repaired within the documented bounds"
	directPublishGoal = 1.2
	directRestartGoal = 10.0
	directLoadGoal    = 5000.0
	// directChangeGoal: a port change is one target update; one more request is allowed.
	directChangeGoal = 2.0
	// convergenceGoal is the most PIC unthrottled may take, as a multiple of the floor.
	convergenceGoal = 1.10
	rssGoal         = 100 << 20
	// rssRuns is how many restarts the RSS goal's median is of.
	rssRuns = 5
	// cpuGoal is the most PIC's CPU per resource may be, as a multiple of the floor
	// client's.
	cpuGoal = 2.0
	// goalN is the N of the convergence, CPU, memory and latency goals, and the
	// reference of the scale goal.
	goalN = 5000
	// scaleN is the scale goal's N; scaleTimeGoal and scaleRSSGoal bound its time per
	// resource and its restarted peak RSS as multiples of those at goalN.
	scaleN        = 20000
	scaleTimeGoal = 1.2
	scaleRSSGoal  = 3.5
	// latencyGoal is the most PIC's p99 change latency may be, as a multiple of the
	// plain change client's p99.
	latencyGoal    = 1.5
	latencyUpdates = 200
)

func (r *results) goals() []goal {
	var out []goal

	for _, n := range []int{1000, goalN} {
		out = append(out, r.convergenceGoal(n))
	}
	out = append(out, r.cpuGoal(), r.rssGoal(), r.scaleGoal())

	g := goal{Goal: goalLatency + fmt.Sprintf(": at most %.1fx the p99 of a plain client reacting to the same Ingress watch with the same PangolinResource update, same run, N=5000, %d+ changes", latencyGoal, latencyUpdates), Measured: "not measured"}
	if l := r.ChangeLatency; l != nil {
		g.Measured = fmt.Sprintf("%.2fx (p99 %.1f ms vs the plain client's %.1f ms; p50 %.1f vs %.1f ms; N=%d, %d changes each)", l.RatioP99ToPlainP99, l.P99Ms, l.PlainP99Ms, l.P50Ms, l.PlainP50Ms, l.N, l.Updates)
		if l.N == goalN && l.Updates >= latencyUpdates {
			g.Met = yes(l.RatioP99ToPlainP99 <= latencyGoal)
		} else {
			g.Measured += " (not N=5000 with 200+ updates)"
		}
	}
	out = append(out, g)

	g = goal{Goal: goalWrites + ": 0 after a restart and in a full resync", Measured: "not measured"}
	if s := r.SteadyState; s != nil {
		g.Measured = fmt.Sprintf("%d after restart, %d in a full resync (N=%d)", s.WritesAfterRestart, s.ResyncWrites, s.N)
		g.Met = yes(s.WritesAfterRestart == 0 && s.ResyncWrites == 0)
	}
	out = append(out, g)

	if d := r.Direct; d != nil {
		out = append(out,
			goal{Goal: goalDirectChange + fmt.Sprintf(": at most %.0f (one target update, one more request allowed)", directChangeGoal),
				Measured: fmt.Sprintf("%.2f requests, %.2f writes per change (%d changes, N=%d)", d.RequestsPerChange, d.WritesPerChange, d.Changes, d.N),
				Met:      yes(d.RequestsPerChange <= directChangeGoal)},
			goal{Goal: goalDirectWrites + ": 0 after a restart and at steady state (refreshes, light and full)",
				Measured: fmt.Sprintf("%d after restart, %d in %d refreshes (%d full) (N=%d)", d.RestartWrites, d.ResyncWrites, d.Refreshes, d.FullRefreshes, d.N),
				Met:      yes(d.RestartWrites == 0 && d.ResyncWrites == 0)},
			goal{Goal: fmt.Sprintf(goalDirectResync, d.N) + fmt.Sprintf(": a full read at most 2N + N/500 + 3 = %d", directResyncBudget(d.N)),
				Measured: fmt.Sprintf("%d requests per full refresh (%d full of %d refreshes in the window)", d.FullRefreshReads, d.FullRefreshes, d.Refreshes),
				Met:      yes(d.FullRefreshes > 0 && d.FullRefreshReads <= directResyncBudget(d.N))},
		)
		pace := d.pace()
		g := goal{Goal: fmt.Sprintf(goalDirectPublish, directPublishGoal), Measured: fmt.Sprintf("%.2fx (PIC %.2fs vs plain client %.2fs, median of %d pairs; a bare create + target client %.2fs), N=%d, %s",
			d.PublishRatio, d.PublishPICSeconds, d.PublishPlainSeconds, len(d.PublishPICRuns), d.PublishBareSeconds, d.N, pace)}
		if d.N == 1000 {
			g.Met = yes(d.PublishRatio > 0 && d.PublishRatio <= directPublishGoal)
		} else {
			g.Measured += " (not N=1000)"
		}
		out = append(out, g)
		g = goal{Goal: fmt.Sprintf(goalDirectRestart, directRestartGoal), Measured: fmt.Sprintf("%.2fs to the first reconcile, %.2fs to every Ingress's, %d requests, N=%d, %s",
			d.RestartFirstReconcileSeconds, d.RestartSettledSeconds, d.RestartRequests, d.N, pace)}
		if d.N == 1000 {
			g.Met = yes(d.RestartFirstReconcileSeconds > 0 && d.RestartFirstReconcileSeconds <= directRestartGoal)
		} else {
			g.Measured += " (not N=1000)"
		}
		out = append(out, g)
		g = goal{Goal: fmt.Sprintf(goalDirectLoad, directLoadGoal),
			Measured: fmt.Sprintf("%.0f requests an hour (resync %s, drift %s: %d requests in %.0fs with the periods divided by %d); repaired: a deleted resource after %.1fs and a target edit after %.1fs (bound %.1fs), a blockAccess edit after %.1fs (bound %.1fs), at that scale; N=%d",
				d.RequestsPerHour, d.DefaultResync, d.DefaultDrift, d.SteadyRequests, d.SteadyWindow, d.Scale, d.RepairDeleted, d.RepairTargetEdit, d.ListVisibleBound, d.RepairBlockAccess, d.ListHiddenBound, d.N)}
		if d.N == 1000 {
			g.Met = yes(d.RequestsPerHour > 0 && d.RequestsPerHour <= directLoadGoal && d.RepairsInBound)
		} else {
			g.Measured += " (not N=1000)"
		}
		out = append(out, g)
	}
	return out
}

// convergenceGoal is PIC unthrottled against the floor at n resources, both shapes,
// the control plane on its own cores; the shared-cores ratio is a figure beside it.
func (r *results) convergenceGoal(n int) goal {
	g := goal{Goal: fmt.Sprintf(goalConvergence, n) + fmt.Sprintf(": PIC unthrottled within %.2fx a plain client creating the same PangolinResources and their Created events, 4 workers, both shapes, median of alternating pairs", convergenceGoal), Measured: fmt.Sprintf("N=%d not measured", n)}
	var parts []string
	met, shapes, split := true, 0, true
	for _, c := range r.Convergence {
		if c.Resources != n {
			continue
		}
		shapes++
		part := fmt.Sprintf("%s %.2fx %s (%.2fs vs %.2fs; at defaults %.2fx; vs the creates-only floor %.2fx)", c.Shape, c.Ratio, c.Affinity, c.PICSeconds, c.BaselineSeconds, c.DefaultsRatio, c.CreatesOnlyRatio)
		if sh := c.Shared; sh != nil {
			part += fmt.Sprintf(", %.2fx on shared cores", sh.Ratio)
		}
		parts = append(parts, part)
		met = met && c.Ratio > 0 && c.Ratio <= convergenceGoal
		split = split && c.Affinity == affinitySplit
	}
	if shapes == 0 {
		return g
	}
	g.Measured = strings.Join(parts, "; ")
	switch {
	case !split:
		g.Measured += " (the control plane did not run on cores of its own)"
	case shapes < 2:
		g.Measured += " (one shape only)"
	default:
		g.Met = yes(met)
	}
	return g
}

// cpuGoal is PIC's CPU per 1,000 resources against the floor client's at goalN, every
// shape measured, in the primary placement.
func (r *results) cpuGoal() goal {
	g := goal{Goal: goalCPU + fmt.Sprintf(": PIC's CPU-seconds per 1,000 resources converged at most %.0fx the floor client's", cpuGoal), Measured: "not measured"}
	var parts []string
	met, shapes := true, 0
	for _, c := range r.Convergence {
		if c.Resources != goalN || c.FloorCPUPer1000 <= 0 {
			continue
		}
		shapes++
		parts = append(parts, fmt.Sprintf("%s %.2fx (%.3f vs %.3f CPU-s per 1,000, %s)", c.Shape, c.CPURatio, c.PICCPUPer1000, c.FloorCPUPer1000, c.Affinity))
		met = met && c.CPURatio <= cpuGoal
	}
	if shapes > 0 {
		g.Measured, g.Met = strings.Join(parts, "; "), yes(met)
	}
	return g
}

// rssGoal is the restarted peak RSS at goalN, the median of rssRuns restarts.
func (r *results) rssGoal() goal {
	g := goal{Goal: goalRSS + fmt.Sprintf(": restarted, peak RSS at most 100 MiB, Go's defaults (no GOMEMLIMIT), median of %d runs", rssRuns), Measured: "not measured"}
	if m := r.Memory; m != nil {
		g.Measured = fmt.Sprintf("%.1f MiB restarted at N=%d, median of %d (converging %.1f; peak of the run %.1f)", mib(m.RestartPeakRSSBytes), m.N, len(m.RestartPeakRSSRuns), mib(m.ConvergencePeakRSSBytes), mib(m.PeakRSSBytes))
		switch {
		case m.N != goalN:
			g.Measured += " (N=5000 not measured)"
		case len(m.RestartPeakRSSRuns) < rssRuns:
			g.Measured += fmt.Sprintf(" (fewer than %d restarts: BENCH_REPEAT)", rssRuns)
		default:
			g.Met = yes(m.RestartPeakRSSBytes <= rssGoal)
		}
	}
	// Direct mode's peak is a figure beside the goal's.
	if d := r.DirectMemory; d != nil {
		g.Measured += fmt.Sprintf("; direct mode %.1f MiB at N=%d (publishing %.1f, restarted %.1f)", mib(d.PeakRSSBytes), d.N, mib(d.PublishPeakRSSBytes), mib(d.RestartPeakRSSBytes))
	}
	return g
}

// scaleGoal is N = scaleN against goalN: time per resource, restarted peak RSS, and no
// write after a restart.
func (r *results) scaleGoal() goal {
	g := goal{Goal: fmt.Sprintf(goalScale, scaleN) + fmt.Sprintf(": time per resource at most %.1fx that at N=%d, restarted peak RSS at most %.1fx, 0 writes after a restart", scaleTimeGoal, goalN, scaleRSSGoal), Measured: "not measured"}
	s := r.Scale
	if s == nil {
		return g
	}
	g.Measured = fmt.Sprintf("N=%d: %.3f ms per resource vs %.3f at N=%d (%.2fx); restarted peak %.1f MiB vs %.1f (%.2fx); %d writes after %d restarts; %d API requests; %.3f CPU-s per 1,000 (floor %.3f)",
		s.N, s.MsPerResource, s.RefMsPerResource, s.RefN, s.TimeRatio, mib(s.RestartPeakRSSBytes), mib(s.RefRestartPeakRSS), s.RSSRatio, s.WritesAfterRestart, len(s.RestartPeakRSSRuns), s.PICRequests, s.PICCPUPer1000, s.FloorCPUPer1000)
	switch {
	case s.N != scaleN:
		g.Measured += fmt.Sprintf(" (N=%d not measured)", scaleN)
	case s.TimeRatio == 0 || s.RSSRatio == 0:
		g.Measured += fmt.Sprintf(" (no reference at N=%d)", goalN)
	default:
		g.Met = yes(s.TimeRatio <= scaleTimeGoal && s.RSSRatio <= scaleRSSGoal && s.WritesAfterRestart == 0)
	}
	return g
}

func yes(b bool) *bool { return &b }

// table renders the results as Markdown tables.
func (r *results) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Convergence (process start to the last PangolinResource seen, the floor's as PIC's; floor: a plain client creating the PangolinResources and their Created events, %d workers, no client rate limit, a process of its own; PIC unthrottled and at its defaults, QPS %v burst %d; placement %s)\n\n",
		r.Settings.MaxConcurrentReconciles, r.Settings.KubeAPIQPS, r.Settings.KubeAPIBurst, firstOr(r.Settings.Placement.Modes, affinityShared))
	b.WriteString("| resources | Ingresses x hosts | floor | PIC unthrottled | ratio | PIC at defaults | ratio | creates-only floor (1 run) | ratio | PIC ready | writes | reconciles | API requests | events dropped | peak RSS |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Convergence {
		fmt.Fprintf(&b, "| %d | %d x %d | %.2f s | %.2f s | %.2f | %.2f s | %.2f | %.2f s | %.2f | %.2f s | %d | %d | %d | %d | %.1f MiB |\n",
			c.Resources, c.Ingresses, c.HostsPerIngress, c.BaselineSeconds, c.PICSeconds, c.Ratio, c.PICDefaultsSeconds, c.DefaultsRatio,
			c.CreatesOnlySeconds, c.CreatesOnlyRatio, c.PICReadySeconds, c.PICWrites, c.PICReconciles, c.PICRequests, c.PICEventsDropped, mib(c.PICPeakRSSBytes))
	}
	b.WriteString("\nThe floor and PIC unthrottled by placement: the control plane and the client under test on CPUs apart (split) and on every CPU (shared); times and CPU-seconds per 1,000 resources of the client's own process, medians of the pairs:\n\n")
	b.WriteString("| resources | shape | placement | floor | PIC unthrottled | ratio | floor CPU / 1,000 | PIC CPU / 1,000 | CPU ratio |\n")
	b.WriteString("|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Convergence {
		for _, p := range []*pairs{&c.pairs, c.Shared} {
			if p != nil {
				fmt.Fprintf(&b, "| %d | %s | %s | %.2f s | %.2f s | %.2f | %.3f s | %.3f s | %.2f |\n",
					c.Resources, c.Shape, p.Affinity, p.BaselineSeconds, p.PICSeconds, p.Ratio, p.FloorCPUPer1000, p.PICCPUPer1000, p.CPURatio)
			}
		}
	}
	b.WriteString("\nCPU seconds until the last resource is seen, the first pair of the first placement (kube-apiserver, etcd, the client):\n\n| resources | shape | floor | PIC unthrottled |\n|---:|---|---|---|\n")
	for _, c := range r.Convergence {
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", c.Resources, c.Shape, c.BaselineCPU, c.PICCPU)
	}
	if s := r.SteadyState; s != nil {
		fmt.Fprintf(&b, "\n### Steady state (N=%d, PIC restarted, then one full resync, period %s)\n\n", s.N, s.ResyncPeriod)
		b.WriteString("| writes after restart | writes in the resync | reconciles in the resync | API requests in the resync | requests per reconcile | startup requests per Ingress |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %.3f | %.3f |\n", s.WritesAfterRestart, s.ResyncWrites, s.ResyncReconciles, s.ResyncRequests, s.RequestsPerReconcile, s.StartupRequestsPerIngress)
	}
	if l := r.ChangeLatency; l != nil {
		fmt.Fprintf(&b, "\n### Change latency (N=%d, %d Ingress updates one at a time for PIC, then as many for the plain change client with PIC stopped; update to PangolinResource update seen through a watch)\n\n", l.N, l.Updates)
		b.WriteString("| PIC p50 | PIC p99 | PIC max | plain client p50 | plain client p99 | plain client max | p99 / plain p99 | direct write p50 | direct write p99 |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.2f | %.1f ms | %.1f ms |\n",
			l.P50Ms, l.P99Ms, l.MaxMs, l.PlainP50Ms, l.PlainP99Ms, l.PlainMaxMs, l.RatioP99ToPlainP99, l.DirectP50Ms, l.DirectP99Ms)
	}
	if m := r.Memory; m != nil {
		fmt.Fprintf(&b, "\n### Memory (N=%d)\n\n", m.N)
		b.WriteString("| peak RSS (VmHWM) | converging | restarted (median) | restarts | bytes per Ingress | marginal bytes per Ingress |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.1f MiB | %.1f MiB | %.1f MiB | %d | %d | %d |\n", mib(m.PeakRSSBytes), mib(m.ConvergencePeakRSSBytes), mib(m.RestartPeakRSSBytes), len(m.RestartPeakRSSRuns), m.BytesPerIngress, m.MarginalBytesPerIngress)
	}
	if s := r.Scale; s != nil {
		fmt.Fprintf(&b, "\n### Scale (N=%d single-host Ingresses against N=%d)\n\n", s.N, s.RefN)
		b.WriteString("| PIC unthrottled | per resource | at the reference N | ratio | restarted peak RSS (median) | at the reference N | ratio | writes after restarts | API requests | PIC CPU / 1,000 | floor CPU / 1,000 |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.2f s | %.3f ms | %.3f ms | %.2f | %.1f MiB | %.1f MiB | %.2f | %d (%d restarts) | %d | %.3f s | %.3f s |\n",
			s.PICSeconds, s.MsPerResource, s.RefMsPerResource, s.TimeRatio, mib(s.RestartPeakRSSBytes), mib(s.RefRestartPeakRSS), s.RSSRatio,
			s.WritesAfterRestart, len(s.RestartPeakRSSRuns), s.PICRequests, s.PICCPUPer1000, s.FloorCPUPer1000)
	}
	if d := r.DirectMemory; d != nil {
		fmt.Fprintf(&b, "\n### Memory in direct mode (N=%d single-host Ingresses, in-repo Pangolin server answering at once)\n\n", d.N)
		b.WriteString("| peak RSS (VmHWM) | publishing | restarted |\n|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.1f MiB | %.1f MiB | %.1f MiB |\n", mib(d.PeakRSSBytes), mib(d.PublishPeakRSSBytes), mib(d.RestartPeakRSSBytes))
	}
	if s := r.Startup; s != nil {
		fmt.Fprintf(&b, "\n### Startup on a converged cluster (N=%d)\n\n", s.N)
		b.WriteString("| to /readyz | to the end of the first pass | writes | reconciles | API requests |\n")
		b.WriteString("|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.2f s | %.2f s | %d | %d | %d |\n", s.ReadySeconds, s.SettledSeconds, s.Writes, s.Reconciles, s.Requests)
	}
	if d := r.Direct; d != nil {
		server := fmt.Sprintf("in-repo Pangolin server at %.0f ms a request, %d at once", d.ServiceTimeMs, d.MaxConcurrent)
		if d.Server == serverReal {
			server = d.pace()
		}
		fmt.Fprintf(&b, "\n### Direct mode (sink pangolin, %s; N=%d single-host Ingresses)\n\n", server, d.N)
		b.WriteString("| publish N: PIC | plain client | ratio | bare client | requests | per Ingress | requests per change | writes per change |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.2f s | %.2f s | %.2f | %.2f s | %d | %.2f | %.2f | %.2f |\n", d.PublishPICSeconds, d.PublishPlainSeconds, d.PublishRatio, d.PublishBareSeconds,
			d.ConvergeRequests, d.RequestsPerCreatedIngress, d.RequestsPerChange, d.WritesPerChange)
		b.WriteString("\n| restart: first reconcile | every Ingress | requests | writes | steady: requests (window, periods / scale) | refreshes (full) | requests an hour at defaults | writes | repaired: deleted | target edit | blockAccess |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %.2f s | %.2f s | %d | %d | %d (%.0f s, /%d) | %d (%d) | %.0f | %d | %.1f s | %.1f s | %.1f s |\n",
			d.RestartFirstReconcileSeconds, d.RestartSettledSeconds, d.RestartRequests, d.RestartWrites, d.SteadyRequests, d.SteadyWindow, d.Scale,
			d.Refreshes, d.FullRefreshes, d.RequestsPerHour, d.ResyncWrites, d.RepairDeleted, d.RepairTargetEdit, d.RepairBlockAccess)
	}
	b.WriteString("\n### Goals\n\n| goal | measured | met |\n|---|---|---|\n")
	for _, g := range r.Goals {
		met := "not measured"
		if g.Met != nil {
			met = map[bool]string{true: "yes", false: "**no**"}[*g.Met]
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", g.Goal, g.Measured, met)
	}
	fmt.Fprintf(&b, "\n%d CPUs (%s), %s, %s; load average %s at the start, %s at the end; %.0f s in all.\n",
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.OS, r.Machine.Go, r.Machine.LoadAverageStart, r.Machine.LoadAverageEnd, r.DurationSeconds)
	pl := r.Settings.Placement
	fmt.Fprintf(&b, "Placement: convergence pairs %s, every other run %s; split: the control plane and the harness on CPUs %s, the client under test on CPUs %s; shared: CPUs %s.",
		strings.Join(pl.Modes, " and "), firstOr(pl.Modes, affinityShared), pl.ControlPlaneCPUs, pl.ClientCPUs, pl.UsableCPUs)
	if pl.Note != "" {
		fmt.Fprintf(&b, " %s.", pl.Note)
	}
	b.WriteString("\n")
	return b.String()
}

func firstOr(v []string, def string) string {
	if len(v) == 0 {
		return def
	}
	return v[0]
}

// pace names the direct-mode run's server and its pace.
func (d *direct) pace() string {
	if d.Server == serverReal {
		return "a real Pangolin (" + d.ServerHost + ") at its own pace"
	}
	return fmt.Sprintf("Pangolin at %.0f ms a request, %d at once", d.ServiceTimeMs, d.MaxConcurrent)
}

func (r *results) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// percentile is the nearest-rank percentile.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// medianBytes is median for byte counts.
func medianBytes(v []int64) int64 {
	f := make([]float64, len(v))
	for i, b := range v {
		f[i] = float64(b)
	}
	return int64(median(f))
}

// median of the values, the lower middle one for an even count.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[(len(s)-1)/2]
}

// pairedRatio is the median of pic[i] / floor[i].
func pairedRatio(pic, floor []float64) float64 {
	var ratios []float64
	for i := range min(len(pic), len(floor)) {
		if floor[i] > 0 {
			ratios = append(ratios, pic[i]/floor[i])
		}
	}
	return median(ratios)
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 2) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

func readTrimmed(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func cpuModel() string {
	for line := range strings.SplitSeq(readTrimmed("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func defaultsForReport() *config.Config { return config.Default() }
