package main

import "syscall"

// demoProcAttr gives the demo a process group of its own, as a shell gives a foreground
// job, and asks it to stop, as a user would, if the test binary dies: it would otherwise
// follow changes forever.
func demoProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
