package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Where the processes of a run may execute. In a cluster PIC runs on a node's cores, not
// on the control plane's: on cores shared with etcd and kube-apiserver, every CPU-second
// the client under test spends is taken from the API server serving it, and the
// measurement says more about the machine than about the client.
const (
	// affinitySplit runs the control plane (etcd, kube-apiserver, and the harness with
	// its watch and the in-repo Pangolin server) on one set of CPUs and the client under
	// test (the floor or PIC) on the other.
	affinitySplit = "split"
	// affinityShared lets every process run on every CPU the bench may use.
	affinityShared = "shared"
	// affinityBoth runs the convergence pairs in both ways; every other run is split.
	affinityBoth = "both"
)

// affinity is how a run places its processes on CPUs.
type affinity struct {
	// Modes are the placements of the convergence pairs, the goal's first: "split"
	// and/or "shared".
	Modes []string
	// ControlPlane and Client are the CPUs of each side in the split placement; All is
	// every CPU the bench may use, the shared placement.
	ControlPlane, Client, All []int
}

// primary is the placement of every run that is not a convergence pair.
func (a affinity) primary() string { return a.Modes[0] }

// cpus is the set a side runs on under mode.
func (a affinity) cpus(mode string, client bool) []int {
	switch {
	case mode == affinityShared:
		return a.All
	case client:
		return a.Client
	default:
		return a.ControlPlane
	}
}

// newAffinity decides the placement from the mode (BENCH_AFFINITY), the CPU lists asked
// for (BENCH_CPUS_CONTROLPLANE, BENCH_CPUS_CLIENT; empty: chosen) and the CPUs the bench
// may use. Unless both lists are given, the client gets the last usable CPU and the
// control plane the others: on two cores, CPU 0 and CPU 1. With fewer than two CPUs the
// sides cannot be apart: the run is shared, and note says so.
func newAffinity(mode, controlPlane, client string, usable []int) (a affinity, note string, err error) {
	switch mode {
	case "", affinityBoth:
		a.Modes = []string{affinitySplit, affinityShared}
	case affinitySplit:
		a.Modes = []string{affinitySplit}
	case affinityShared:
		a.Modes = []string{affinityShared}
	default:
		return affinity{}, "", fmt.Errorf("BENCH_AFFINITY=%q: want split, shared or both", mode)
	}
	a.All = slices.Sorted(slices.Values(usable))
	if a.Modes[0] == affinityShared {
		return a, "", nil
	}
	if (controlPlane == "") != (client == "") {
		return affinity{}, "", fmt.Errorf("BENCH_CPUS_CONTROLPLANE and BENCH_CPUS_CLIENT: set both or neither")
	}
	if controlPlane != "" {
		if a.ControlPlane, err = parseCPUList(controlPlane); err != nil {
			return affinity{}, "", fmt.Errorf("BENCH_CPUS_CONTROLPLANE: %w", err)
		}
		if a.Client, err = parseCPUList(client); err != nil {
			return affinity{}, "", fmt.Errorf("BENCH_CPUS_CLIENT: %w", err)
		}
		for _, c := range slices.Concat(a.ControlPlane, a.Client) {
			if !slices.Contains(a.All, c) {
				return affinity{}, "", fmt.Errorf("CPU %d is not one the bench may use (%s)", c, formatCPUList(a.All))
			}
		}
		for _, c := range a.Client {
			if slices.Contains(a.ControlPlane, c) {
				return affinity{}, "", fmt.Errorf("CPU %d is in both BENCH_CPUS_CONTROLPLANE and BENCH_CPUS_CLIENT", c)
			}
		}
		return a, "", nil
	}
	if len(a.All) < 2 {
		a.Modes = []string{affinityShared}
		return a, fmt.Sprintf("fewer than two CPUs known usable (%q): the control plane and the client under test share it; the split figures are not measured", formatCPUList(a.All)), nil
	}
	last := len(a.All) - 1
	a.ControlPlane, a.Client = slices.Clone(a.All[:last]), a.All[last:]
	return a, "", nil
}

// parseCPUList reads a Linux CPU list, as taskset -c and /sys/devices/system/cpu take:
// "0", "0,2", "0-3", "0-1,4". The result is sorted, without repeats.
func parseCPUList(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return nil, fmt.Errorf("%q: %q is not a CPU number or range", s, part)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("%q: %q is not a CPU range low-high", s, part)
			}
		}
		for c := first; c <= last; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// formatCPUList writes sorted CPUs as a CPU list, ranges collapsed: "0-3,6".
func formatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
