package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// The plain change client runs as a process of its own, as the floor does, so that it
// can be placed on the client's CPUs as PIC is: in the harness's process it would run
// beside the control plane, and the two latencies would not compare.
const changeClientSpecEnv = "BENCH_CHANGE_CLIENT_SPEC"

// changeClientSpec is what the change client's process needs, and the files through
// which it reports.
type changeClientSpec struct {
	Kubeconfig string `json:"kubeconfig"`
	// Ready is created once its caches have synced; Failed holds its first failed
	// write, once there is one.
	Ready  string `json:"ready"`
	Failed string `json:"failed"`
}

// isChangeClientProcess says whether this process is the change client's.
func isChangeClientProcess() bool { return os.Getenv(changeClientSpecEnv) != "" }

// changeClientMain is the change client's process: it reacts to Ingress changes until
// SIGTERM, and reports its first failed write in the Failed file.
func changeClientMain() int {
	ctrllog.SetLogger(logr.Discard())
	// The signal does not cancel the client's context: its stop lets a write in flight
	// finish first (changeClient.stop), which a cancelled context would fail.
	term := make(chan os.Signal, 1)
	signal.Notify(term, os.Interrupt, syscall.SIGTERM)
	if err := changeClientProcess(context.Background(), os.Getenv(changeClientSpecEnv), term); err != nil {
		fmt.Fprintln(os.Stderr, "change client:", err)
		return 1
	}
	return 0
}

func changeClientProcess(ctx context.Context, specPath string, term <-chan os.Signal) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec changeClientSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("read %s: %w", specPath, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", spec.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load %s: %w", spec.Kubeconfig, err)
	}
	cc, err := startChangeClient(ctx, cfg)
	if err != nil {
		return err
	}
	defer cc.stop()
	if err := os.WriteFile(spec.Ready, nil, 0o600); err != nil {
		return err
	}
	for {
		select {
		case <-term:
			cc.stop()
			return writeFailure(spec.Failed, cc.failure())
		case <-time.After(50 * time.Millisecond):
			if err := cc.failure(); err != nil {
				return writeFailure(spec.Failed, err)
			}
		}
	}
}

func writeFailure(path string, err error) error {
	if err == nil {
		return nil
	}
	return errors.Join(err, os.WriteFile(path, []byte(err.Error()), 0o600))
}

// changeClientProc is a running change client's process.
type changeClientProc struct {
	*testenv.Process
	spec changeClientSpec
}

// startChangeClientProcess starts the change client's process on w's client CPUs and
// waits until its caches have synced.
func (b *bench) startChangeClientProcess(ctx context.Context, w *world) (*changeClientProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench's binary for the change client: %w", err)
	}
	spec := changeClientSpec{
		Kubeconfig: w.kubeconfig,
		Ready:      filepath.Join(w.dir, "change-client.ready"), Failed: filepath.Join(w.dir, "change-client.failed"),
	}
	for _, f := range []string{spec.Ready, spec.Failed} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	specPath := filepath.Join(w.dir, "change-client.json")
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		return nil, err
	}
	proc, err := testenv.NewProcess("change-client", exe, filepath.Join(w.dir, "change-client.log"))
	if err != nil {
		return nil, err
	}
	proc.Env = append(testenv.EnvWithout(changeClientSpecEnv+"=", floorSpecEnv+"=", "KUBECONFIG="), changeClientSpecEnv+"="+specPath)
	if err := proc.Start(); err != nil {
		return nil, err
	}
	c := &changeClientProc{Process: proc, spec: spec}
	if err := w.pinClient(proc.Pid()); err != nil {
		proc.Kill()
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(spec.Ready); err == nil {
			return c, nil
		}
		if err := c.failure(); err != nil {
			proc.Kill()
			return nil, err
		}
		if time.Now().After(deadline) {
			proc.Kill()
			return nil, errors.New("the change client's caches did not sync within a minute")
		}
		select {
		case <-ctx.Done():
			proc.Kill()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// failure is the client's first failed write, or its process's end.
func (c *changeClientProc) failure() error {
	if data, err := os.ReadFile(c.spec.Failed); err == nil {
		return fmt.Errorf("the change client: %s", data)
	}
	if err := c.Alive(); err != nil {
		return fmt.Errorf("the change client: %w: %s", err, c.Log())
	}
	return nil
}

// stop ends the client, letting a write in flight finish, and returns its failure.
func (c *changeClientProc) stop() error {
	c.Stop()
	if data, err := os.ReadFile(c.spec.Failed); err == nil {
		return fmt.Errorf("the change client: %s", data)
	}
	return nil
}
