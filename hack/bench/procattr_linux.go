package main

import "syscall"

// childProcAttr makes the kernel kill PIC when the harness dies, so an interrupted run
// leaves no controller behind.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
