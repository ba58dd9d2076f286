package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// picProcess is bin/manager run as a child process against a world, as in production,
// through the harness e2e uses too.
type picProcess struct {
	*testenv.Process
	pprof string // host:port of /debug/pprof; "" when not profiling
}

// startPIC runs the binary on w with PIC's defaults, except the given extra flags (and
// a pprof address when profiling). The environment is the harness's minus PIC_* and
// KUBECONFIG, so that nothing configured on the machine changes what is measured.
func (b *bench) startPIC(w *world, logPath string, extra ...string) (*picProcess, error) {
	return startPICWith(b.opts.Binary, w, logPath, b.prof != nil, nil, extra...)
}

// startPICWith is startPIC with extra environment variables (env, added after the
// PIC_* variables are removed). PIC runs on the client's CPUs of w's placement.
func startPICWith(binary string, w *world, logPath string, profile bool, env []string, extra ...string) (*picProcess, error) {
	args := append([]string{"--kubeconfig", w.kubeconfig}, extra...)
	var pprof string
	if profile {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return nil, err
		}
		pprof = addr
		args = append(args, "--pprof-bind-address", addr)
	}
	proc, err := testenv.NewProcess("pic", binary, logPath, args...)
	if err != nil {
		return nil, err
	}
	proc.Env = append(testenv.EnvWithout("PIC_", "KUBECONFIG="), env...)
	if err := proc.Start(); err != nil {
		return nil, err
	}
	if err := w.pinClient(proc.Pid()); err != nil {
		proc.Kill()
		return nil, err
	}
	return &picProcess{Process: proc, pprof: pprof}, nil
}

// counters are the series the bench reads.
type counters struct {
	writes     float64 // pic_pangolinresource_writes_total
	reconciles float64 // controller_runtime_reconcile_total of the ingress controller
	requests   float64 // rest_client_requests_total: every API request of the process
	depth      float64 // workqueue_depth of the ingress controller
	// eventsDropped is pic_events_dropped_total: events recorded and not written (a
	// full queue during a burst of creates).
	eventsDropped float64
}

func (p *picProcess) counters(ctx context.Context) (counters, error) {
	m, err := p.Scrape(ctx)
	if err != nil {
		return counters{}, err
	}
	ingress := map[string]string{"controller": "ingress"}
	return counters{
		writes:        m.Sum("pic_pangolinresource_writes_total", nil),
		reconciles:    m.Sum("controller_runtime_reconcile_total", ingress),
		requests:      m.Sum("rest_client_requests_total", nil),
		depth:         m.Sum("workqueue_depth", map[string]string{"name": "ingress"}),
		eventsDropped: m.Sum("pic_events_dropped_total", nil),
	}, nil
}

// settle waits until the ingress controller has reconciled at least minReconciles
// objects (counted from zero in this process), its queue is empty and no reconcile
// happened for quiet; it returns the counters then.
func (p *picProcess) settle(ctx context.Context, minReconciles float64, quiet, timeout time.Duration) (counters, error) {
	last, lastChange := -1.0, time.Now()
	c, err := p.poll(ctx, timeout, 250*time.Millisecond, func(c counters) bool {
		if c.reconciles != last {
			last, lastChange = c.reconciles, time.Now()
		}
		return c.reconciles >= minReconciles && c.depth == 0 && time.Since(lastChange) >= quiet
	})
	if errors.Is(err, errPollTimeout) {
		return c, fmt.Errorf("PIC did not settle within %s: %v reconciles (want %v), queue depth %v", timeout, c.reconciles, minReconciles, c.depth)
	}
	return c, err
}

// quiet waits until PIC has sent no API request for quiet: after a convergence its
// event writer may still be draining a backlog, which a latency measurement would
// otherwise share the API server with.
func (p *picProcess) quiet(ctx context.Context, quiet, timeout time.Duration) error {
	last, lastChange := -1.0, time.Now()
	_, err := p.poll(ctx, timeout, 100*time.Millisecond, func(c counters) bool {
		if c.requests != last {
			last, lastChange = c.requests, time.Now()
		}
		return time.Since(lastChange) >= quiet
	})
	if errors.Is(err, errPollTimeout) {
		return fmt.Errorf("PIC's API requests did not stop within %s", timeout)
	}
	return err
}

var errPollTimeout = errors.New("timed out")

// poll reads PIC's counters every interval until done says so, and returns them then;
// it fails at once if PIC exits, and with errPollTimeout (and the last counters) after
// timeout.
func (p *picProcess) poll(ctx context.Context, timeout, interval time.Duration, done func(counters) bool) (counters, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := p.Alive(); err != nil {
			return counters{}, err
		}
		c, err := p.counters(ctx)
		if err != nil {
			return counters{}, err
		}
		if done(c) {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, errPollTimeout
		}
		select {
		case <-ctx.Done():
			return counters{}, ctx.Err()
		case <-time.After(interval):
		}
	}
}
