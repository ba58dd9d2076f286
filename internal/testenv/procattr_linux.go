package testenv

import "syscall"

// childProcAttr makes the kernel kill a child process when the test binary dies, so an
// interrupted or crashed run does not leave it running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
