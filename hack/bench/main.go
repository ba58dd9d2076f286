// Command bench is `make bench`: it measures PIC, the real bin/manager process, on a
// local control plane (etcd and kube-apiserver from internal/testenv, the fork
// pangolin-operator's CRDs, no operator), and prints a table and writes the same
// figures as JSON (bench/results.json):
//
//   - convergence: N Ingresses exist, PIC starts; the time until every expected
//     PangolinResource exists with the right spec, seen through a watch, against a
//     baseline, the floor: a plain client without client-side rate limiting doing the
//     specification's work with PIC's concurrency, creating the same objects and
//     recording a Created event for each, in a process of its own timed from its
//     start, as PIC's; the CPU-seconds of each client's process per 1,000 resources.
//     The control plane runs on CPUs apart from the client's (BENCH_AFFINITY). PIC
//     runs unthrottled (--kube-api-qps=-1) in pairs with the floor, BENCH_REPEAT
//     times, which of the two first by turns, then once at its defaults (the same
//     settings while the default sets no client limit); the earlier floor, the
//     creates alone, runs once, a figure;
//   - steady state: PIC restarted on the converged cluster, then one full resync: the
//     PangolinResource writes (must be 0) and API requests per reconciled Ingress;
//   - change latency: Ingresses updated one at a time, from the update to the
//     PangolinResource update seen through a watch, first through PIC, then, PIC
//     stopped, through a plain client that watches Ingresses and writes the same
//     update, a process of its own placed as PIC is;
//   - memory: PIC's peak RSS (VmHWM) at N = 5000, restarted BENCH_REPEAT times, and
//     at the scale run's N, and in direct mode at BENCH_DIRECT_MEMORY;
//   - startup: process start to /readyz on the converged cluster, and its writes;
//   - direct mode (sink pangolin, the in-repo Pangolin server at a real server's pace,
//     or a real Pangolin: PIC_CONTRACT_PANGOLIN_* below): publishing N hosts against a
//     plain client, Pangolin requests per Ingress change, a restart to its first
//     reconcile, the requests an hour at steady state, and how soon what is deleted or
//     edited by hand is repaired.
//
// Settings (environment):
//
//	BENCH_SIZES         comma-separated N (default 100,1000,5000,20000). Change
//	                    latency, the steady state and memory run at 5000 (else the
//	                    largest); a larger N is the scale run: convergence and
//	                    BENCH_REPEAT restarts
//	BENCH_SHAPES        single (one host per Ingress) and/or multi (10 hosts per
//	                    Ingress, N/10 Ingresses, N up to 5000); default both
//	BENCH_AFFINITY      split: etcd, kube-apiserver and the harness on one set of
//	                    CPUs, the client under test (the floor or PIC) on the other,
//	                    for every run; shared: every process on every CPU; both
//	                    (default): the convergence pairs in each placement, the
//	                    rest split. Fewer than two CPUs: shared, with a message
//	BENCH_CPUS_CONTROLPLANE, BENCH_CPUS_CLIENT
//	                    the two sets, as CPU lists ("0", "2-3"), both or neither;
//	                    default: the client the last CPU the bench may use, the
//	                    control plane the others (on two cores, CPU 0 and CPU 1)
//	BENCH_UPDATES       change-latency updates (default 200)
//	BENCH_RESYNC        resync period of the steady-state runs (default 30s)
//	BENCH_REPEAT        runs of the floor and of PIC unthrottled per shape, for
//	                    their medians and the median of their pairs' ratios
//	                    (default 5)
//	BENCH_DIRECT        Ingresses of the direct-mode run (default 1000; 0 skips it)
//	BENCH_DIRECT_MEMORY Ingresses of the direct-mode memory run, its peak RSS against
//	                    the in-repo Pangolin answering at once (default 20000; 0 skips it)
//	BENCH_PANGOLIN_SERVICE_TIME  the in-repo Pangolin's time per request in the
//	                    direct-mode run (default 30ms, a real server's argon2 key check;
//	                    not with a real Pangolin, below)
//	BENCH_PANGOLIN_CONCURRENCY   requests it serves at once, the rest waiting
//	                    (default 4, Node's thread pool)
//	BENCH_DIRECT_SCALE  the direct-mode steady state runs PIC's default resync and
//	                    drift periods divided by this (default 60: 5 s and 1 min), and
//	                    scales the requests it counts back to an hour
//	PIC_CONTRACT_PANGOLIN_URL, PIC_CONTRACT_PANGOLIN_API_KEY, PIC_CONTRACT_PANGOLIN_ORG,
//	PIC_CONTRACT_PANGOLIN_SITE, PIC_CONTRACT_PANGOLIN_DOMAIN
//	                    all five, as for the contract suite (base URL including /v1, an
//	                    API key, an org, a site niceId, a verified base domain), point
//	                    the direct-mode run at a real Pangolin: its publishing pairs,
//	                    changes, restart, steady state and hand-edit repairs, through a
//	                    counting proxy on loopback, on hosts
//	                    pic-bench-<random>-direct-NNNNN.<domain> that it deletes between
//	                    runs and at the end (nothing else in the org is touched). The
//	                    service time and concurrency above then do not apply. The
//	                    direct-mode memory run stays on the in-repo server answering at
//	                    once. None set: the in-repo server; only some: an error
//	BENCH_OUT           JSON output (default bench/results.json; "-" for none)
//	BENCH_WORKDIR       where kubeconfigs and PIC's logs go (default: a temporary
//	                    directory, removed after a successful run)
//	BENCH_PPROF         a directory for pprof profiles: PIC's and kube-apiserver's CPU
//	                    while PIC converges unthrottled, PIC's heap after a restart,
//	                    the harness's own CPU (the in-repo Pangolin server) while the
//	                    direct-mode memory run publishes
//	PIC_MANAGER_BINARY  the binary (default bin/manager)
//
// Timings depend on the machine and on what else runs on it; the harness asserts
// nothing about them (the smoke test checks only that every figure is produced and that
// the steady state writes nothing).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

func main() {
	if isFloorProcess() {
		os.Exit(floorMain())
	}
	if isChangeClientProcess() {
		os.Exit(changeClientMain())
	}
	// The harness's own watch logs nothing worth reading (a reflector ending when a
	// control plane stops).
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first interrupt cancels the run, which then cleans up (a real Pangolin's
		// org is swept); the default handling comes back, so a second one ends a
		// clean-up that is stuck.
		<-ctx.Done()
		stop()
	}()
	opts, err := optionsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	res, err := run(ctx, opts)
	if res != nil {
		fmt.Print(res.table())
		if opts.Out != "" {
			if werr := res.write(opts.Out); werr != nil {
				fmt.Fprintln(os.Stderr, "bench:", werr)
				os.Exit(1)
			}
			fmt.Printf("\nwrote %s\n", opts.Out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the harness's settings.
type options struct {
	Sizes        []int
	Shapes       []string // "single", "multi"; empty: both
	Updates      int
	ResyncPeriod time.Duration
	Binary       string
	Out          string
	// WorkDir receives kubeconfigs and PIC's logs; kept on failure.
	WorkDir string
	// Repeat is how many times the floor and PIC unthrottled run, for their medians.
	Repeat int
	// DirectN is the number of Ingresses of the direct-mode run (sink pangolin against
	// the in-repo Pangolin server); 0 skips it.
	DirectN int
	// DirectMemoryN is the number of Ingresses of the direct-mode memory run; 0 skips it.
	DirectMemoryN int
	// PangolinServiceTime and PangolinConcurrency are the direct-mode server's pace.
	// Against a real Pangolin they do not apply: its pace is its own.
	PangolinServiceTime time.Duration
	PangolinConcurrency int
	// RealPangolin, when set, points the direct-mode run (not its memory run) at a real
	// Pangolin instead of the in-repo server.
	RealPangolin *realPangolin
	// DirectScale divides PIC's default periods in the direct-mode steady state.
	DirectScale int
	// PprofDir, when set, receives CPU profiles of PIC and kube-apiserver during PIC's
	// unthrottled convergence, and PIC's heap after a restart.
	PprofDir string
	// Affinity places the control plane and the client under test on CPUs; zero: both
	// placements, the CPUs chosen (newAffinity). AffinityNote says why the split
	// placement cannot run, when it cannot.
	Affinity     affinity
	AffinityNote string
	// Logf reports progress.
	Logf func(format string, args ...any)
}

func optionsFromEnv() (options, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return options{}, err
	}
	opts := options{
		Sizes:         []int{100, 1000, goalN, scaleN},
		Updates:       200,
		DirectN:       1000,
		DirectMemoryN: scaleN,
		DirectScale:   60,
		// A real Pangolin's pace: argon2 on every key check, a small thread pool.
		PangolinServiceTime: simtest.PaceServiceTime,
		PangolinConcurrency: simtest.PaceMaxConcurrent,
		Repeat:              5,
		ResyncPeriod:        30 * time.Second,
		Binary:              envOr("PIC_MANAGER_BINARY", filepath.Join(root, "bin", "manager")),
		Out:                 envOr("BENCH_OUT", filepath.Join(root, "bench", "results.json")),
		WorkDir:             os.Getenv("BENCH_WORKDIR"),
		PprofDir:            os.Getenv("BENCH_PPROF"),
		Logf:                stderrf,
	}
	if opts.Out == "-" {
		opts.Out = ""
	}
	if !filepath.IsAbs(opts.Binary) {
		opts.Binary = filepath.Join(root, opts.Binary)
	}
	if v := os.Getenv("BENCH_SIZES"); v != "" {
		opts.Sizes = nil
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return options{}, fmt.Errorf("BENCH_SIZES=%q: want positive integers separated by commas", v)
			}
			opts.Sizes = append(opts.Sizes, n)
		}
	}
	if v := os.Getenv("BENCH_SHAPES"); v != "" {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "single" && f != "multi" {
				return options{}, fmt.Errorf("BENCH_SHAPES=%q: want single and/or multi", v)
			}
			opts.Shapes = append(opts.Shapes, strings.TrimSpace(f))
		}
	}
	if v := os.Getenv("BENCH_UPDATES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return options{}, fmt.Errorf("BENCH_UPDATES=%q: want a positive integer", v)
		}
		opts.Updates = n
	}
	if v := os.Getenv("BENCH_REPEAT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return options{}, fmt.Errorf("BENCH_REPEAT=%q: want a positive integer", v)
		}
		opts.Repeat = n
	}
	if v := os.Getenv("BENCH_DIRECT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return options{}, fmt.Errorf("BENCH_DIRECT=%q: want a number of Ingresses, 0 to skip", v)
		}
		opts.DirectN = n
	}
	if v := os.Getenv("BENCH_DIRECT_MEMORY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return options{}, fmt.Errorf("BENCH_DIRECT_MEMORY=%q: want a number of Ingresses, 0 to skip", v)
		}
		opts.DirectMemoryN = n
	}
	if v := os.Getenv("BENCH_PANGOLIN_SERVICE_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return options{}, fmt.Errorf("BENCH_PANGOLIN_SERVICE_TIME=%q: want a Go duration, 0 for none", v)
		}
		opts.PangolinServiceTime = d
	}
	if v := os.Getenv("BENCH_PANGOLIN_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return options{}, fmt.Errorf("BENCH_PANGOLIN_CONCURRENCY=%q: want a number of requests, 0 for no limit", v)
		}
		opts.PangolinConcurrency = n
	}
	if v := os.Getenv("BENCH_DIRECT_SCALE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return options{}, fmt.Errorf("BENCH_DIRECT_SCALE=%q: want a positive integer", v)
		}
		opts.DirectScale = n
	}
	if opts.RealPangolin, err = realPangolinFromEnv(); err != nil {
		return options{}, err
	}
	usable, err := usableCPUs()
	if err != nil {
		return options{}, err
	}
	if opts.Affinity, opts.AffinityNote, err = newAffinity(os.Getenv("BENCH_AFFINITY"), os.Getenv("BENCH_CPUS_CONTROLPLANE"), os.Getenv("BENCH_CPUS_CLIENT"), usable); err != nil {
		return options{}, err
	}
	if v := os.Getenv("BENCH_RESYNC"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return options{}, fmt.Errorf("BENCH_RESYNC=%q: want a positive Go duration", v)
		}
		opts.ResyncPeriod = d
	}
	return opts, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func stderrf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// run measures every size and returns what it measured, also when it fails part way.
func run(ctx context.Context, opts options) (*results, error) {
	if _, err := os.Stat(opts.Binary); err != nil {
		return nil, fmt.Errorf("%s: %w (run make build; make bench does)", opts.Binary, err)
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if len(opts.Affinity.Modes) == 0 {
		usable, err := usableCPUs()
		if err != nil {
			return nil, err
		}
		if opts.Affinity, opts.AffinityNote, err = newAffinity("", "", "", usable); err != nil {
			return nil, err
		}
	}
	if opts.AffinityNote != "" {
		opts.Logf("%s", opts.AffinityNote)
	}
	if slices.Contains(opts.Affinity.Modes, affinitySplit) {
		opts.Logf("placement: the control plane and the harness on CPUs %s, the client under test on CPUs %s; convergence pairs %s",
			formatCPUList(opts.Affinity.ControlPlane), formatCPUList(opts.Affinity.Client), strings.Join(opts.Affinity.Modes, " and "))
	}
	sizes := slices.Sorted(slices.Values(opts.Sizes))
	sizes = slices.Compact(sizes)
	keep := opts.WorkDir != ""
	if !keep {
		dir, err := os.MkdirTemp("", "pic-bench-")
		if err != nil {
			return nil, err
		}
		opts.WorkDir = dir
	}
	// The worlds place the harness with the control plane; it gets every CPU back at the
	// end (the smoke runs in a test binary that goes on).
	if all := opts.Affinity.All; len(all) > 0 {
		defer func() { _ = pin(os.Getpid(), all) }()
	}
	b := &bench{opts: opts, res: newResults(opts, sizes)}
	start := time.Now()
	err := b.all(ctx, sizes)
	b.res.finish(time.Since(start))
	if err != nil {
		opts.Logf("failed; PIC's logs are in %s", opts.WorkDir)
		return b.res, err
	}
	if !keep {
		_ = os.RemoveAll(opts.WorkDir)
	}
	return b.res, nil
}
