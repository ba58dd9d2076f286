package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// picProcess is bin/manager run as a child process against a world, as in production
// (its own process, its own client, its metrics and probes on loopback).
type picProcess struct {
	cmd     *exec.Cmd
	done    chan struct{}
	started time.Time
	metrics string // host:port
	probes  string
	logPath string
}

// startPIC runs the binary with PIC's defaults, except the given extra flags. The
// environment is the harness's minus PIC_* and KUBECONFIG, so that nothing configured
// on the machine changes what is measured.
func startPIC(binary, kubeconfig, logPath string, extra ...string) (*picProcess, error) {
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	probes, err := freeAddr()
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own descriptor
	args := append([]string{
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", metrics,
		"--health-probe-bind-address", probes,
	}, extra...)
	fmt.Fprintf(log, "=== bench: %s %s\n", binary, strings.Join(args, " "))
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIC_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childProcAttr()
	p := &picProcess{cmd: cmd, done: make(chan struct{}), metrics: metrics, probes: probes, logPath: logPath}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func (p *picProcess) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("PIC exited (%s); see %s", p.cmd.ProcessState, p.logPath)
	default:
		return nil
	}
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 30 s).
func (p *picProcess) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *picProcess) get(ctx context.Context, addr, path string) (int, string, error) {
	return testenv.Get(ctx, "http://"+addr+path, 10*time.Second)
}

// waitReady polls /readyz every 20 ms and returns the time from process start to the
// first 200.
func (p *picProcess) waitReady(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := p.alive(); err != nil {
			return 0, err
		}
		if code, _, err := p.get(ctx, p.probes, "/readyz"); err == nil && code == http.StatusOK {
			return time.Since(p.started), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("PIC not ready within %s; see %s", timeout, p.logPath)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// scrape reads /metrics.
func (p *picProcess) scrape(ctx context.Context) (testenv.Metrics, error) {
	code, body, err := p.get(ctx, p.metrics, "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scrape PIC's metrics: %w", err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("scrape PIC's metrics: status %d", code)
	}
	return testenv.ParseMetrics(body)
}

// counters are the series the bench reads.
type counters struct {
	writes     float64 // pic_pangolinresource_writes_total
	reconciles float64 // controller_runtime_reconcile_total of the ingress controller
	requests   float64 // rest_client_requests_total: every API request of the process
	depth      float64 // workqueue_depth of the ingress controller
}

func (p *picProcess) counters(ctx context.Context) (counters, error) {
	m, err := p.scrape(ctx)
	if err != nil {
		return counters{}, err
	}
	ingress := map[string]string{"controller": "ingress"}
	return counters{
		writes:     m.Sum("pic_pangolinresource_writes_total", nil),
		reconciles: m.Sum("controller_runtime_reconcile_total", ingress),
		requests:   m.Sum("rest_client_requests_total", nil),
		depth:      m.Sum("workqueue_depth", map[string]string{"name": "ingress"}),
	}, nil
}

// settle waits until the ingress controller has reconciled at least minReconciles
// objects (counted from zero in this process), its queue is empty and no reconcile
// happened for quiet; it returns the counters then.
func (p *picProcess) settle(ctx context.Context, minReconciles float64, quiet, timeout time.Duration) (counters, error) {
	deadline := time.Now().Add(timeout)
	var last counters
	lastChange := time.Now()
	for {
		if err := p.alive(); err != nil {
			return counters{}, err
		}
		c, err := p.counters(ctx)
		if err != nil {
			return counters{}, err
		}
		if c.reconciles != last.reconciles {
			lastChange = time.Now()
		}
		last = c
		if c.reconciles >= minReconciles && c.depth == 0 && time.Since(lastChange) >= quiet {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("PIC did not settle within %s: %v reconciles (want %v), queue depth %v", timeout, c.reconciles, minReconciles, c.depth)
		}
		select {
		case <-ctx.Done():
			return counters{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// memory reads the process's resident set: VmHWM (peak) and VmRSS (now), in bytes.
// Zero where /proc is not available.
func (p *picProcess) memory() (peak, current int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmHWM:":
			peak = kb * 1024
		case "VmRSS:":
			current = kb * 1024
		}
	}
	return peak, current
}
