//go:build !linux

package testenv

import "syscall"

// ChildProcAttr is for every process a harness starts; see the Linux version.
func ChildProcAttr() *syscall.SysProcAttr { return nil }

func diesWithParent(binary string) string { return binary }
