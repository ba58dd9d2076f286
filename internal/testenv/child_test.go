package testenv

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChildStop(t *testing.T) {
	cases := []struct {
		name string
		// script is run by sh; exec keeps it one process, signal dispositions included.
		script   string
		wantKill bool
	}{
		{name: "a child that exits on SIGTERM is not killed", script: "exec sleep 30"},
		{name: "a child that ignores SIGTERM is killed after the grace period", script: "trap '' TERM; exec sleep 30", wantKill: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := startChild(exec.Command("sh", "-c", tc.script))
			require.NoError(t, err)
			time.Sleep(100 * time.Millisecond) // let sh set the trap and exec
			c.stop(syscall.SIGTERM, 300*time.Millisecond)
			select {
			case <-c.done:
			default:
				t.Fatal("stop returned before the child was gone")
			}
			status := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
			want := syscall.SIGTERM
			if tc.wantKill {
				want = syscall.SIGKILL
			}
			assert.Equal(t, want, status.Signal())
		})
	}
}

// TestDiesWithParent runs sleep through diesWithParent below a shell, kills the shell,
// and expects the kernel to kill sleep too: what happens to etcd and kube-apiserver when
// the demo or a test binary is killed.
func TestDiesWithParent(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	script := diesWithParent(sleep)
	if script == sleep {
		t.Skip("no setpriv with --pdeathsig on this machine")
	}
	parent := exec.Command("sh", "-c", shellQuote(script)+" 30 & echo $!; wait")
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// Past both execs: before setpriv has run, nothing would kill it.
	require.Eventually(t, func() bool { return strings.HasPrefix(cmdlineOf(pid), sleep+"\x00") },
		10*time.Second, 20*time.Millisecond, "the script never became sleep")

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()
	assert.Eventually(t, func() bool { return cmdlineOf(pid) == "" }, 10*time.Second, 20*time.Millisecond,
		"sleep outlived the shell that started it")
}

// cmdlineOf is the command line of a running process; "" once it has exited (a zombie
// has none).
func cmdlineOf(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(data)
}
