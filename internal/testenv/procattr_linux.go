package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// ChildProcAttr is for every process a harness starts. It puts the child in a process
// group of its own, so that a Ctrl-C at the terminal reaches only the harness, which
// then stops its children in order (PIC before the control plane), as envtest does for
// etcd and kube-apiserver. And it makes the kernel kill the child when the harness dies,
// so that a killed or crashed run does not leave it running.
func ChildProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// diesWithParent is the path of a script that runs binary so that the kernel kills it
// when the harness dies, as ChildProcAttr does for the processes the harness starts
// itself: envtest starts etcd and kube-apiserver, and takes only a path. The script runs
// binary through setpriv --pdeathsig, exec after exec, so binary keeps the pid envtest
// signals. Without a setpriv that knows --pdeathsig it is binary itself: the orderly
// stop remains, only the net under a killed harness is missing.
func diesWithParent(binary string) string {
	setprivOnce.Do(func() {
		path, err := exec.LookPath("setpriv")
		if err != nil {
			return
		}
		help, _ := exec.Command(path, "--help").CombinedOutput()
		if strings.Contains(string(help), "--pdeathsig") {
			setpriv = path
		}
	})
	if setpriv == "" {
		return binary
	}
	// One directory per directory of binaries, rewritten rather than accumulated run after
	// run.
	sum := sha256.Sum256([]byte(filepath.Dir(binary)))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("pic-testenv-%d", os.Getuid()), hex.EncodeToString(sum[:8]))
	script := filepath.Join(dir, filepath.Base(binary))
	content := fmt.Sprintf("#!/bin/sh\nexec %s --pdeathsig KILL -- %s \"$@\"\n", shellQuote(setpriv), shellQuote(binary))
	if err := writeExecutable(script, content); err != nil {
		return binary
	}
	return script
}

var (
	setprivOnce sync.Once
	setpriv     string
)

// writeExecutable writes content to path through a rename, so that a concurrent test
// binary never runs a half-written script.
func writeExecutable(path, content string) error {
	if current, err := os.ReadFile(path); err == nil && string(current) == content {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".script-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o700); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
