package testenv

import "syscall"

// childProcAttr puts a child process in a process group of its own, so that a Ctrl-C at
// the terminal reaches only the harness, which then stops its children in order (PIC
// before the control plane), as envtest does for etcd and kube-apiserver. And it makes
// the kernel kill the child when the harness dies, so that a killed or crashed run does
// not leave it running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
