package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatFields(t *testing.T) {
	tests := []struct {
		name string
		line string
		want procStat
		ok   bool
	}{
		{
			name: "utime and stime add up in 100 Hz ticks",
			line: "4242 (kube apiserver) S 17 4242 17 0 -1 4194560 1 0 0 0 250 75 0 0 20 0 12 0 1 2 3",
			want: procStat{comm: "kube apiserver", ppid: 17, cpuSeconds: 3.25}, ok: true,
		},
		{
			name: "a name holding parentheses is read to the last one",
			line: "7 (a) b) (c) R 1 7 7 0 -1 0 0 0 0 0 100 0 0 0 20 0 1 0 1 2 3",
			want: procStat{comm: "a) b) (c", ppid: 1, cpuSeconds: 1}, ok: true,
		},
		{name: "a line without a name is refused", line: "garbage", ok: false},
		{name: "a line cut short is refused", line: "1 (x) S 0 1 1 0", ok: false},
		{name: "a tick count that is no number is refused", line: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 ten 0 0 0 20 0 1 0 1 2 3", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat(tt.line)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestPairsSummarize(t *testing.T) {
	p := pairs{
		Affinity:     affinitySplit,
		BaselineRuns: []float64{2, 2, 6}, PICRuns: []float64{3, 4, 9},
		FloorCPURuns: []float64{1.0, 1.2, 1.1}, PICCPURuns: []float64{2.0, 2.6, 2.2},
	}
	p.summarize(2000)
	assert.Equal(t, 2.0, p.BaselineSeconds)
	assert.Equal(t, 4.0, p.PICSeconds)
	assert.Equal(t, 1.5, p.Ratio, "the median of the pairs' ratios")
	assert.Equal(t, 0.55, p.FloorCPUPer1000, "the median run's 1.1 CPU-s over 2,000 resources")
	assert.Equal(t, 1.1, p.PICCPUPer1000)
	assert.Equal(t, 2.0, p.CPURatio)

	none := pairs{BaselineRuns: []float64{1}, PICRuns: []float64{1}}
	none.summarize(100)
	assert.Zero(t, none.CPURatio, "no CPU read (off Linux): no ratio")
}

func TestRoles(t *testing.T) {
	tests := []struct {
		name            string
		sizes           []int
		latency, scaleN int
	}{
		{name: "the full run: latency at 5000, scale at 20000", sizes: []int{100, 1000, 5000, 20000}, latency: 5000, scaleN: 20000},
		{name: "without 5000 the largest is the full run and there is no scale run", sizes: []int{100, 20000}, latency: 20000},
		{name: "5000 the largest: no scale run", sizes: []int{1000, 5000}, latency: 5000},
		{name: "the smoke's one size is the full run", sizes: []int{20}, latency: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			latency, scaleN := roles(tt.sizes)
			assert.Equal(t, tt.latency, latency)
			assert.Equal(t, tt.scaleN, scaleN)
		})
	}
}

// conv is a convergence of n resources of shape in a placement, with its ratio and
// CPU per 1,000.
func conv(n int, shape, placement string, ratio, picSeconds, picCPU, floorCPU float64) convergence {
	c := convergence{Shape: shape, Resources: n, Ingresses: n, HostsPerIngress: 1}
	c.pairs = pairs{Affinity: placement, Ratio: ratio, PICSeconds: picSeconds, BaselineSeconds: picSeconds / ratio,
		PICCPUPer1000: picCPU, FloorCPUPer1000: floorCPU}
	if floorCPU > 0 {
		c.CPURatio = round(picCPU/floorCPU, 2)
	}
	return c
}

func met(g goal) string {
	if g.Met == nil {
		return "not measured"
	}
	if *g.Met {
		return "met"
	}
	return "not met"
}

func TestConvergenceGoal(t *testing.T) {
	tests := []struct {
		name string
		conv []convergence
		want string
	}{
		{name: "nothing at N=5000 is not measured", conv: []convergence{conv(1000, "single", affinitySplit, 1.0, 1, 0, 0)}, want: "not measured"},
		{
			name: "both shapes split within 1.10x are met",
			conv: []convergence{conv(5000, "single", affinitySplit, 1.05, 8, 0, 0), conv(5000, "multi", affinitySplit, 1.10, 8, 0, 0)},
			want: "met",
		},
		{
			name: "one shape above 1.10x is not met",
			conv: []convergence{conv(5000, "single", affinitySplit, 1.05, 8, 0, 0), conv(5000, "multi", affinitySplit, 1.11, 8, 0, 0)},
			want: "not met",
		},
		{
			name: "one shape only is not decided",
			conv: []convergence{conv(5000, "single", affinitySplit, 1.05, 8, 0, 0)},
			want: "not measured",
		},
		{
			name: "figures on shared cores do not decide the goal",
			conv: []convergence{conv(5000, "single", affinityShared, 1.05, 8, 0, 0), conv(5000, "multi", affinityShared, 1.05, 8, 0, 0)},
			want: "not measured",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{Convergence: tt.conv}
			assert.Equal(t, tt.want, met(r.convergenceGoal(goalN)))
		})
	}
}

func TestConvergenceGoalShowsTheSharedColumn(t *testing.T) {
	c := conv(5000, "single", affinitySplit, 1.05, 8, 0, 0)
	c.Shared = &pairs{Affinity: affinityShared, Ratio: 1.21}
	g := (&results{Convergence: []convergence{c}}).convergenceGoal(goalN)
	assert.Contains(t, g.Measured, "1.21x on shared cores")
}

func TestCPUGoal(t *testing.T) {
	tests := []struct {
		name string
		conv []convergence
		want string
	}{
		{name: "no CPU read is not measured", conv: []convergence{conv(5000, "single", affinitySplit, 1, 8, 0, 0)}, want: "not measured"},
		{name: "CPU at another N is not measured", conv: []convergence{conv(1000, "single", affinitySplit, 1, 8, 1.0, 0.6)}, want: "not measured"},
		{name: "PIC at twice the floor's CPU is met", conv: []convergence{conv(5000, "single", affinitySplit, 1, 8, 1.2, 0.6)}, want: "met"},
		{
			name: "one shape above twice the floor's is not met",
			conv: []convergence{conv(5000, "single", affinitySplit, 1, 8, 1.0, 0.6), conv(5000, "multi", affinitySplit, 1, 8, 1.3, 0.6)},
			want: "not met",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{Convergence: tt.conv}
			assert.Equal(t, tt.want, met(r.cpuGoal()))
		})
	}
}

func TestRSSGoal(t *testing.T) {
	five := func(mb int64) []int64 { return []int64{mb << 20, mb << 20, mb << 20, mb << 20, mb << 20} }
	tests := []struct {
		name string
		mem  *memory
		want string
	}{
		{name: "no memory run is not measured", want: "not measured"},
		{name: "the median of five restarts at 100 MiB is met", mem: &memory{N: 5000, RestartPeakRSSBytes: 100 << 20, RestartPeakRSSRuns: five(100)}, want: "met"},
		{name: "the median of five restarts above 100 MiB is not met", mem: &memory{N: 5000, RestartPeakRSSBytes: 101 << 20, RestartPeakRSSRuns: five(101)}, want: "not met"},
		{name: "fewer than five restarts do not decide", mem: &memory{N: 5000, RestartPeakRSSBytes: 90 << 20, RestartPeakRSSRuns: []int64{90 << 20}}, want: "not measured"},
		{name: "another N does not decide", mem: &memory{N: 1000, RestartPeakRSSBytes: 50 << 20, RestartPeakRSSRuns: five(50)}, want: "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{Memory: tt.mem}
			assert.Equal(t, tt.want, met(r.rssGoal()))
		})
	}
}

func TestScaleGoal(t *testing.T) {
	ref := conv(5000, "single", affinitySplit, 1, 5, 0.6, 0.3) // 1 ms per resource
	refMem := &memory{N: 5000, RestartPeakRSSBytes: 100 << 20}
	tests := []struct {
		name      string
		scaleSecs float64
		peak      int64
		writes    int
		n         int
		want      string
	}{
		{name: "1.2x the time per resource, 3.5x the memory, no write: met", scaleSecs: 24, peak: 350 << 20, n: 20000, want: "met"},
		{name: "more than 1.2x the time per resource: not met", scaleSecs: 24.2, peak: 300 << 20, n: 20000, want: "not met"},
		{name: "more than 3.5x the memory: not met", scaleSecs: 20, peak: 351 << 20, n: 20000, want: "not met"},
		{name: "a write after a restart: not met", scaleSecs: 20, peak: 300 << 20, writes: 1, n: 20000, want: "not met"},
		{name: "another N does not decide", scaleSecs: 10, peak: 200 << 20, n: 10000, want: "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			big := conv(tt.n, "single", affinitySplit, 1, tt.scaleSecs, 0.7, 0.3)
			r := &results{
				Convergence: []convergence{ref, big}, Memory: refMem,
				Scale: &scale{N: tt.n, RestartPeakRSSRuns: []int64{tt.peak}, WritesAfterRestart: tt.writes},
			}
			r.Scale.fill(r.Convergence, r.Memory)
			assert.Equal(t, tt.want, met(r.scaleGoal()), r.scaleGoal().Measured)
		})
	}

	t.Run("no scale run is not measured", func(t *testing.T) {
		assert.Equal(t, "not measured", met((&results{}).scaleGoal()))
	})
	t.Run("no reference at N=5000 does not decide", func(t *testing.T) {
		r := &results{Convergence: []convergence{conv(20000, "single", affinitySplit, 1, 20, 0, 0)}, Scale: &scale{N: 20000, RestartPeakRSSRuns: []int64{1}}}
		r.Scale.fill(r.Convergence, r.Memory)
		assert.Equal(t, "not measured", met(r.scaleGoal()))
	})
}

func TestGoalsNeverFakeAMeasurement(t *testing.T) {
	r := &results{}
	goals := r.goals()
	require.NotEmpty(t, goals)
	for _, g := range goals {
		assert.Nil(t, g.Met, "%s: nothing measured, nothing decided", g.Goal)
		assert.Contains(t, g.Measured, "not measured", g.Goal)
	}
}
