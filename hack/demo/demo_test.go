package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// TestDemoOneShot runs the demo as a user does with DEMO_ONESHOT=1 make demo: its own
// process, a local control plane, the real manager binary. It passes when the demo
// prints the table with every sample host and the expected Warnings, exits 0, and
// leaves no process behind, although PIC takes seconds to stop.
func TestDemoOneShot(t *testing.T) {
	root, demo, manager := buildDemo(t)
	output, procs, alive := runDemo(t, root, demo, slowToStop(t, manager))
	assertAllGone(t, procs, alive, "etcd", "kube-apiserver", "kube-controller-manager", filepath.Base(manager))
	for _, want := range append(append([]string{}, expected.hosts...), expected.warnings...) {
		assert.Contains(t, output, want)
	}
	assert.Contains(t, output, "kubeconfig: ", "the demo tells the user how to reach its cluster")
	assert.Contains(t, output, "WARNINGS", "the table shows the Warning events")
	assert.NotContains(t, output, "ClusterIPNotAllocated", "only PIC's own Warnings are shown")
}

// TestDemoDirectOneShot is DEMO_SINK=pangolin DEMO_ONESHOT=1 make demo: the same samples
// published by the direct sink into the in-repo Pangolin server, whose routers it prints.
func TestDemoDirectOneShot(t *testing.T) {
	root, demo, manager := buildDemo(t)
	output, procs, alive := runDemo(t, root, demo, slowToStop(t, manager), "DEMO_SINK=pangolin")
	assertAllGone(t, procs, alive, "etcd", "kube-apiserver", "kube-controller-manager", filepath.Base(manager))
	for _, want := range append(append([]string{}, expectedDirect.hosts...), expectedDirect.warnings...) {
		assert.Contains(t, output, want)
	}
	assert.Contains(t, output, "PathRegexp(`^/api(/.*)?$`)", "path routing reaches Pangolin")
	assert.Contains(t, output, "http://api.demo.svc.cluster.local:9090", "the named port resolved")
	assert.NotContains(t, output, "ApexHost", "the organization's domain itself can be published")
	assert.Regexp(t, `postgres\s+tcp:5432\s+pic-default-[0-9a-f]+\s+postgres\.demo\.svc\.cluster\.local:5432\s+`+demoAddress, output,
		"the TCP service is published, and its status shows the address")
	assert.Regexp(t, `lab\s+lab \(PIC default\)\s+true\s+1\.15\.0\s+pangolin-system/newt-lab`, output,
		"the managed site is created with its agent, and shows online with Newt's version once the agent connects")
	assert.NotContains(t, output, "NEWT_SECRET", "never a credential")
}

// slowToStop wraps manager in a script that, asked to stop, waits 2 s before passing the
// signal on, as PIC may take that long on a busy machine. A demo that does not wait
// for PIC then returns while it runs, every time rather than now and then.
func slowToStop(t *testing.T, manager string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manager-slow-to-stop")
	script := `#!/bin/sh
"` + manager + `" "$@" &
pid=$!
trap 'sleep 2; kill -TERM $pid; wait $pid; exit 0' INT TERM
wait $pid
`
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return path
}

// buildDemo builds the demo and, unless make test has built it, the manager.
func buildDemo(t *testing.T) (root, demo, manager string) {
	t.Helper()
	testenv.SkipIfShort(t) // the demo starts a control plane
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	manager = os.Getenv("PIC_MANAGER_BINARY") // make test builds bin/manager and sets it
	if manager == "" {
		manager = filepath.Join(t.TempDir(), "manager")
		build := exec.Command("go", "build", "-o", manager, "./cmd/manager")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "build the manager: %s", out)
	}
	demo = filepath.Join(t.TempDir(), "demo")
	build := exec.Command("go", "build", "-o", demo, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the demo: %s", out)
	return root, demo, manager
}

// runDemo runs the demo once with DEMO_ONESHOT=1 and returns what it printed, every
// process seen below it while it ran, and those still running when it returned.
func runDemo(t *testing.T, root, demo, manager string, env ...string) (string, *processes, []procAlive) {
	t.Helper()
	cmd := exec.Command(demo)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "DEMO_ONESHOT=1", "PIC_MANAGER_BINARY="+manager), env...)
	cmd.SysProcAttr = demoProcAttr()
	var stdout syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	require.NoError(t, cmd.Start())
	procs := watchDescendants(t, cmd.Process.Pid)
	err := cmd.Wait()
	alive := procs.stop()
	output := stdout.String()
	if err != nil {
		assertAllGone(t, procs, alive)
	}
	require.NoError(t, err, "the demo failed; its output:\n%s", output)
	t.Logf("demo output:\n%s", output)
	return output, procs, alive
}

// TestDemoStopsEverything ends the demo in the ways a user or a failure does, and checks
// that no process it started outlives it: PIC, etcd, kube-apiserver and
// kube-controller-manager are gone the moment it returns, with no grace.
func TestDemoStopsEverything(t *testing.T) {
	root, demo, manager := buildDemo(t)
	// A manager that exits on its own, as one with a bad flag or a lost lease does.
	quitter := filepath.Join(t.TempDir(), "manager-that-exits")
	require.NoError(t, os.WriteFile(quitter, []byte("#!/bin/sh\nsleep 1\nexit 3\n"), 0o700))
	controlPlane := []string{"etcd", "kube-apiserver", "kube-controller-manager"}
	cases := []struct {
		name    string
		env     []string
		manager string
		// stop ends the demo once it prints its first table; nil lets it end by itself.
		stop func(demo *os.Process) error
		// started are the processes that must have run below the demo.
		started []string
		wantErr string
		// killed: the demo cannot stop anything, the kernel kills its children as it
		// dies, which takes a moment.
		killed bool
	}{
		{
			name:    "ctrl-c while following stops PIC and the control plane",
			manager: manager,
			// A terminal's Ctrl-C reaches the whole foreground process group.
			stop:    func(demo *os.Process) error { return syscall.Kill(-demo.Pid, syscall.SIGINT) },
			started: append([]string{filepath.Base(manager)}, controlPlane...),
		},
		{
			name:    "sigterm while following in direct mode stops PIC and the control plane",
			env:     []string{"DEMO_SINK=pangolin"},
			manager: manager,
			stop:    func(demo *os.Process) error { return demo.Signal(syscall.SIGTERM) },
			started: append([]string{filepath.Base(manager)}, controlPlane...),
		},
		{
			name:    "killing the demo kills PIC and the control plane with it",
			manager: manager,
			stop:    func(demo *os.Process) error { return demo.Kill() },
			started: append([]string{filepath.Base(manager)}, controlPlane...),
			wantErr: "signal: killed",
			killed:  true,
		},
		{
			name:    "PIC exiting by itself stops the control plane",
			env:     []string{"DEMO_ONESHOT=1"},
			manager: quitter,
			started: controlPlane,
			wantErr: "exited",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(demo)
			cmd.Dir = root
			cmd.Env = append(append(os.Environ(), "PIC_MANAGER_BINARY="+tc.manager), tc.env...)
			cmd.SysProcAttr = demoProcAttr()
			var stdout syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stdout
			require.NoError(t, cmd.Start())
			exited, gone := make(chan error, 1), make(chan struct{})
			go func() {
				exited <- cmd.Wait()
				close(gone)
			}()
			procs := watchDescendants(t, cmd.Process.Pid)
			t.Cleanup(func() {
				// A failed require below leaves the demo following changes: stop it as a
				// user would, which stops what it started, and wait for that.
				select {
				case <-gone:
				default:
					_ = cmd.Process.Signal(syscall.SIGTERM)
					<-gone
				}
				procs.stop()
			})
			if tc.stop != nil {
				require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "WARNINGS") }, 4*time.Minute, 100*time.Millisecond,
					"the demo never printed its table; its output:\n%s", &stdout)
				require.NoError(t, tc.stop(cmd.Process))
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(4 * time.Minute):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				err = <-exited
				t.Errorf("the demo did not end within 4 minutes")
			}
			alive := procs.stop()
			for deadline := time.Now().Add(10 * time.Second); tc.killed && len(alive) > 0 && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				alive = procs.alive()
			}
			t.Logf("demo output:\n%s", stdout.String())
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, stdout.String()+err.Error(), tc.wantErr)
			} else {
				require.NoError(t, err)
				assert.Contains(t, stdout.String(), "stopping")
			}
			assertAllGone(t, procs, alive, tc.started...)
		})
	}
}

// assertAllGone checks that no process seen below the demo was alive when it returned,
// and that the named ones (by executable name) were among those seen, so that an empty
// watch cannot pass. It kills the survivors, so a failing run leaves nothing behind.
func assertAllGone(t *testing.T, procs *processes, alive []procAlive, started ...string) {
	t.Helper()
	for _, p := range alive {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	assert.Empty(t, alive, "processes the demo started outlived it")
	for _, name := range started {
		assert.True(t, procs.saw(name), "no %s seen below the demo (seen: %v)", name, procs.names())
	}
}

// syncBuffer is a bytes.Buffer that a child process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
