package testenv

import (
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// child is a process started by the harness, waited for once in the background so that
// any goroutine can ask whether it has exited, and stop it.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startChild starts cmd with the attributes every child of the harness gets (see
// ChildProcAttr).
func startChild(cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = ChildProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// stop sends sig and waits up to grace for the exit, then kills. It returns once the
// process is gone, so that nothing the harness started outlives the call.
func (c *child) stop(sig syscall.Signal, grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// shellQuote quotes s for sh: single quotes, each one inside closed, escaped, reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
