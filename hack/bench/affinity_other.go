//go:build !linux

package main

import "errors"

// usableCPUs is unknown off Linux: none are listed, and the bench runs every process
// on every CPU (newAffinity's shared fallback).
func usableCPUs() ([]int, error) { return nil, nil }

func pin(int, []int) error {
	return errors.New("CPU affinity is set on Linux only: use BENCH_AFFINITY=shared")
}
