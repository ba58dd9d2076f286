package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// usableCPUs are the CPUs the bench process may run on (its own affinity, which a
// cgroup or taskset may have narrowed).
func usableCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("read the bench's CPU affinity: %w", err)
	}
	var out []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// pin sets the CPU affinity of every thread of process pid. sched_setaffinity applies
// to one thread, and a Go process has started several before the harness can reach it:
// each is set, and the threads are listed again until a pass finds none new. A thread
// started after that is cloned from one already set, and inherits its mask.
func pin(pid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	done := map[int]bool{}
	for {
		entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		if err != nil {
			return fmt.Errorf("list the threads of %d: %w", pid, err)
		}
		fresh := 0
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			// A thread that ended between the listing and now has nothing to pin.
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("set the CPU affinity of %d (thread %d) to %s: %w", pid, tid, formatCPUList(cpus), err)
			}
			done[tid] = true
			fresh++
		}
		if fresh == 0 {
			return nil
		}
	}
}
