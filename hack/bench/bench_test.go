package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// TestMain lets the test binary be the floor's and the change client's processes, as
// the bench's binary is: the smoke starts them by running its own binary again.
func TestMain(m *testing.M) {
	if isFloorProcess() {
		os.Exit(floorMain())
	}
	if isChangeClientProcess() {
		os.Exit(changeClientMain())
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole harness with N=20 so that it cannot rot: every figure must be
// produced and the steady state must write nothing. It asserts correctness only, never
// a duration: timings depend on the machine.
func TestSmoke(t *testing.T) {
	testenv.SkipIfShort(t)
	// As main does: the harness's own clients log nothing worth reading.
	ctrllog.SetLogger(logr.Discard())
	binary := managerBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := run(ctx, options{
		Sizes:   []int{20},
		Updates: 20,
		DirectN: 20,
		// Direct mode's memory run, on a control plane of its own.
		DirectMemoryN: 20,
		Repeat:        2,
		ResyncPeriod:  2 * time.Second,
		// The direct mode at a pace; its steady state at 2 s resync, 24 s drift (the
		// informers resync as often: a shorter period leaves PIC never quiet).
		PangolinServiceTime: 2 * time.Millisecond,
		PangolinConcurrency: 4,
		DirectScale:         150,
		Binary:              binary,
		WorkDir:             filepath.Join(dir, "work"),
		Logf:                t.Logf,
	})
	require.NoError(t, err, "the harness failed; PIC's logs are in %s", filepath.Join(dir, "work"))
	require.NoError(t, res.write(out))
	t.Log(res.table())

	require.Len(t, res.Convergence, 2, "the single-host and the multi-host shape")
	for _, c := range res.Convergence {
		assert.Equal(t, 20, c.Resources, c.Shape)
		assert.Positive(t, c.PICSeconds, c.Shape)
		assert.Positive(t, c.BaselineSeconds, "%s: the floor, creates and events", c.Shape)
		assert.Positive(t, c.CreatesOnlySeconds, "%s: the creates-only floor", c.Shape)
		assert.Positive(t, c.CreatesOnlyRatio, c.Shape)
		assert.Positive(t, c.Ratio, c.Shape)
		assert.Len(t, c.BaselineRuns, 2, c.Shape)
		assert.Len(t, c.PICRuns, 2, c.Shape)
		assert.Positive(t, c.PICDefaultsSeconds, "%s: PIC at its defaults", c.Shape)
		assert.Positive(t, c.DefaultsRatio, c.Shape)
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			assert.Positive(t, c.PICCPU["kube-apiserver"], "%s: the API server's CPU while PIC converged", c.Shape)
			assert.Positive(t, c.PICCPU[cpuPIC], "%s: PIC's own CPU", c.Shape)
			assert.Positive(t, c.BaselineCPU["kube-apiserver"], "%s: the API server's CPU under the baseline", c.Shape)
			assert.Len(t, c.FloorCPURuns, 2, "%s: the floor's own process's CPU, each run", c.Shape)
			assert.Len(t, c.PICCPURuns, 2, "%s: PIC's own CPU, each run", c.Shape)
			// At N=20 a process's CPU is a few 10 ms ticks: positive, not asserted more.
			assert.Positive(t, c.PICCPUPer1000, c.Shape)
		}
		if slices.Contains(res.Settings.Placement.Modes, affinitySplit) {
			assert.Equal(t, affinitySplit, c.Affinity, "%s: the goal's figures are split", c.Shape)
			if assert.NotNil(t, c.Shared, "%s: the shared-cores column", c.Shape) {
				assert.Positive(t, c.Shared.Ratio, c.Shape)
				assert.Len(t, c.Shared.PICRuns, 2, c.Shape)
			}
		}
		assert.Positive(t, c.PICReconciles, c.Shape)
		assert.GreaterOrEqual(t, c.PICWrites, c.Resources, "%s: PIC created every resource", c.Shape)
	}
	require.NotNil(t, res.SteadyState)
	assert.Zero(t, res.SteadyState.WritesAfterRestart, "a restarted PIC on a converged cluster writes nothing")
	assert.Zero(t, res.SteadyState.ResyncWrites, "a full resync of a converged cluster writes nothing")
	assert.GreaterOrEqual(t, res.SteadyState.ResyncReconciles, 20, "the resync reconciled every Ingress")

	require.NotNil(t, res.ChangeLatency)
	assert.Equal(t, 20, res.ChangeLatency.Updates)
	assert.Positive(t, res.ChangeLatency.P50Ms)
	assert.Positive(t, res.ChangeLatency.P99Ms)
	assert.Positive(t, res.ChangeLatency.DirectP50Ms)
	assert.Positive(t, res.ChangeLatency.PlainP50Ms, "the plain change client's")
	assert.Positive(t, res.ChangeLatency.PlainP99Ms)
	assert.Positive(t, res.ChangeLatency.RatioP99ToPlainP99)
	assert.Equal(t, 20, res.ChangeLatency.PICWrites, "one update per changed Ingress, nothing else")
	// The plain change client ran last, with PIC stopped: PIC restarted on what it
	// wrote finds nothing to write (asserted below), so it wrote what PIC would.

	require.NotNil(t, res.Memory)
	require.NotNil(t, res.Startup)
	assert.Len(t, res.Memory.RestartPeakRSSRuns, 2, "a restarted peak per repeat")
	if _, err := os.Stat("/proc/self/status"); err == nil {
		assert.Positive(t, res.Memory.PeakRSSBytes)
		assert.Positive(t, res.Memory.RestartPeakRSSBytes)
		assert.Positive(t, res.Memory.BytesPerIngress)
	}
	assert.Positive(t, res.Startup.ReadySeconds)
	assert.Zero(t, res.Startup.Writes)

	require.NotNil(t, res.DirectMemory, "the direct mode's memory run")
	assert.Equal(t, 20, res.DirectMemory.N)
	if _, err := os.Stat("/proc/self/status"); err == nil {
		assert.Positive(t, res.DirectMemory.PublishPeakRSSBytes)
		assert.Positive(t, res.DirectMemory.RestartPeakRSSBytes)
	}

	require.NotNil(t, res.Direct, "the direct mode")
	assert.Positive(t, res.Direct.ConvergeWrites, "PIC created the resources in Pangolin")
	assert.Positive(t, res.Direct.RequestsPerChange)
	assert.Zero(t, res.Direct.RestartWrites, "a restarted PIC writes nothing to a converged Pangolin")
	assert.Zero(t, res.Direct.ResyncWrites, "refreshes write nothing to a converged Pangolin")
	assert.Positive(t, res.Direct.SteadyRequests, "the refreshes read Pangolin")
	assert.Positive(t, res.Direct.FullRefreshes, "a full refresh in the window")
	assert.Positive(t, res.Direct.PublishRatio)
	assert.Positive(t, res.Direct.RestartFirstReconcileSeconds)
	// Repaired at all (the harness waits twice the bound); how soon is a figure, not asserted.
	assert.Positive(t, res.Direct.RepairDeleted, "a resource deleted by hand was created again")
	assert.Positive(t, res.Direct.RepairTargetEdit, "a target edited by hand was restored")
	assert.Positive(t, res.Direct.RepairBlockAccess, "blockAccess set by hand was restored")

	require.Len(t, res.Goals, 13)
	// The goals that depend on no timing are decided, and met, even at the smoke's size.
	for _, g := range res.Goals {
		if strings.HasPrefix(g.Goal, goalWrites) || strings.HasPrefix(g.Goal, goalDirectWrites) {
			if assert.NotNil(t, g.Met, g.Goal) {
				assert.True(t, *g.Met, "%s: %s", g.Goal, g.Measured)
			}
		}
	}
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"convergence"`)
}

// managerBinary is $PIC_MANAGER_BINARY (make test sets it to bin/manager), else a
// binary built for the test.
func managerBinary(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	if p := os.Getenv("PIC_MANAGER_BINARY"); p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		return p
	}
	p := filepath.Join(t.TempDir(), "manager")
	cmd := exec.Command("go", "build", "-o", p, "./cmd/manager")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "build ./cmd/manager: %s", out)
	return p
}

func TestParseStat(t *testing.T) {
	st, ok := parseStat("4242 (kube apiserver) S 17 4242 17 0 -1 4194560 1 0 0 0 250 75 0 0 20 0 12 0 1 2 3")
	require.True(t, ok)
	assert.Equal(t, procStat{comm: "kube apiserver", ppid: 17, cpuSeconds: 3.25}, st)
	_, ok = parseStat("garbage")
	assert.False(t, ok)
}

func TestMedian(t *testing.T) {
	assert.Zero(t, median(nil))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 1.0, median([]float64{4, 1}), "the lower middle for an even count")
}

func TestPairedRatio(t *testing.T) {
	// The third pair ran under twice the load: its ratio is like the others, while the
	// ratio of the medians (4.0 / 2.0) would be 2.
	assert.InDelta(t, 1.5, pairedRatio([]float64{3, 4, 9}, []float64{2, 2, 6}), 1e-9)
	assert.Zero(t, pairedRatio(nil, nil))
	assert.InDelta(t, 2.0, pairedRatio([]float64{4, 5}, []float64{2}), 1e-9, "an unpaired run is left out")
}

// The floor runs first in the first pair, whose run gives the counters, then the
// order alternates so that a control plane slowing over the runs weighs on both.
func TestPairsAlternateTheirOrder(t *testing.T) {
	for r, want := range []bool{false, true, false, true, false} {
		if got := picFirst(r); got != want {
			t.Errorf("pair %d: PIC first = %v, want %v", r+1, got, want)
		}
	}
}
