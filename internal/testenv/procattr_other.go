//go:build !linux

package testenv

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }

func diesWithParent(binary string) string { return binary }
