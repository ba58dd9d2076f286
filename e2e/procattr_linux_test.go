package e2e

import "syscall"

// childProcAttr makes the kernel kill PIC when the test binary dies, so an interrupted
// run leaves no controller behind.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
