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
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// The floor runs as a process of its own, the bench's binary started again with
// floorSpecEnv naming its spec: its time, like PIC's, runs from its process start
// (runtime, clients, connections), its CPU is its own process's in /proc, and it can be
// placed on the client's CPUs as PIC is.
const floorSpecEnv = "BENCH_FLOOR_SPEC"

// floorSpec is what the floor's process is to do: the fixture's resources, rebuilt from
// the shape and the Ingresses' UIDs and ports exactly as the harness builds them
// (world.baselineObjects).
type floorSpec struct {
	Kubeconfig string      `json:"kubeconfig"`
	Workers    int         `json:"workers"`
	Work       floorWork   `json:"work"`
	Shape      shape       `json:"shape"`
	UIDs       []types.UID `json:"uids"`
	Ports      []int32     `json:"ports"`
	// Done is the file the floor creates once every create and every event is written.
	Done string `json:"done"`
}

// isFloorProcess says whether this process is the floor's.
func isFloorProcess() bool { return os.Getenv(floorSpecEnv) != "" }

// floorMain is the floor's process: it does the work, says so in the done file, and
// waits for SIGTERM, so that the harness reads its CPU from /proc while it still exists.
func floorMain() int {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := floorProcess(ctx, os.Getenv(floorSpecEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return 1
	}
	<-ctx.Done()
	return 0
}

func floorProcess(ctx context.Context, specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec floorSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("read %s: %w", specPath, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", spec.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load %s: %w", spec.Kubeconfig, err)
	}
	w := &world{shape: spec.Shape, port: spec.Ports, ingresses: make([]*networkingv1.Ingress, len(spec.UIDs))}
	for i, uid := range spec.UIDs {
		w.ingresses[i] = &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: spec.Shape.ingressName(i), Namespace: namespace, UID: uid}}
	}
	if err := runFloor(ctx, cfg, w.baselineObjects(), spec.Workers, spec.Work); err != nil {
		return err
	}
	return os.WriteFile(spec.Done, nil, 0o600)
}

// floorProc is a running floor process.
type floorProc struct {
	*testenv.Process
	done string
}

// startFloor writes the spec of the floor's work on w's fixture into dir and starts the
// floor's process on the client's CPUs. Its time runs from Started, as PIC's.
func (b *bench) startFloor(w *world, dir, label string, work floorWork) (*floorProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench's binary for the floor: %w", err)
	}
	spec := floorSpec{
		Kubeconfig: w.kubeconfig, Workers: b.picDefaults.MaxConcurrentReconciles, Work: work, Shape: w.shape,
		Ports: w.port, Done: filepath.Join(dir, "floor-"+label+".done"),
	}
	for _, ing := range w.ingresses {
		spec.UIDs = append(spec.UIDs, ing.UID)
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	specPath := filepath.Join(dir, "floor-"+label+".json")
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		return nil, err
	}
	if err := os.Remove(spec.Done); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	proc, err := testenv.NewProcess("floor", exe, filepath.Join(dir, "floor-"+label+".log"))
	if err != nil {
		return nil, err
	}
	proc.Env = append(testenv.EnvWithout(floorSpecEnv+"=", "KUBECONFIG="), floorSpecEnv+"="+specPath)
	if err := proc.Start(); err != nil {
		return nil, err
	}
	if err := w.pinClient(proc.Pid()); err != nil {
		proc.Kill()
		return nil, err
	}
	return &floorProc{Process: proc, done: spec.Done}, nil
}

// finished waits until the floor has written every create and event, or fails.
func (f *floorProc) finished(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(f.done); err == nil {
			return nil
		}
		if err := f.Alive(); err != nil {
			return fmt.Errorf("the floor: %w: %s", err, f.Log())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the floor did not finish its writes within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// runFloor does the floor's work on objs with workers workers: each resource's create
// and, with floorCreatesAndEvents, its `Created` event. The events go as PIC's do: the
// workers queue them, and one writer sends them beside the workers' creates
// (internal/controller/recorder.go), so the floor has PIC's concurrency, not one more
// request in flight or one fewer. It returns once every event is written.
func runFloor(ctx context.Context, cfg *rest.Config, objs []floorObject, workers int, work floorWork) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, -1
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return err
	}
	events, err := newEventWriter(cfg)
	if err != nil {
		return err
	}
	queued := make(chan int, len(objs))
	written := make(chan error, 1)
	go func() {
		var first error
		for i := range queued {
			if err := events.created(ctx, objs[i].owner, objs[i].resource, objs[i].host); err != nil && first == nil {
				first = err
			}
		}
		written <- first
	}()
	err = parallel(ctx, workers, len(objs), func(ctx context.Context, i int) error {
		if err := c.Create(ctx, objs[i].resource); err != nil {
			return err
		}
		if work == floorCreatesAndEvents {
			queued <- i
		}
		return nil
	})
	close(queued)
	if err != nil {
		return fmt.Errorf("floor (%s): %w", work, err)
	}
	if err := <-written; err != nil {
		return fmt.Errorf("floor (%s): record an event: %w", work, err)
	}
	return nil
}
