package testenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is the manager binary run as a child process, as in production: its own
// process and client, its metrics and probes on loopback. It can be stopped, killed and
// started again; every run appends to the same log file. e2e, the benchmarks and the
// demo run PIC through it.
type Process struct {
	Name    string
	Binary  string
	Args    []string // the listener flags included
	LogPath string
	Metrics string // host:port
	Probes  string // host:port
	// Env is the child's environment; nil means the parent's.
	Env []string

	mu      sync.Mutex
	run     *child // the current run
	runs    int
	started time.Time
}

// NewProcess prepares binary with args, listening for metrics and probes on free
// loopback ports, logging to logPath. It does not start it.
func NewProcess(name, binary, logPath string, args ...string) (*Process, error) {
	metrics, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	probes, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	return &Process{
		Name: name, Binary: binary, LogPath: logPath, Metrics: metrics, Probes: probes,
		Args: append(append([]string{}, args...), "--metrics-bind-address", metrics, "--health-probe-bind-address", probes),
	}, nil
}

// EnvWithout is the parent's environment less the variables with one of prefixes, so
// that nothing configured on the machine changes what a child does.
func EnvWithout(prefixes ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range prefixes {
			keep = keep && !strings.HasPrefix(kv, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// Start runs the binary once more; it fails if the previous run is still going.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != nil {
		select {
		case <-p.run.done:
		default:
			return fmt.Errorf("%s: start while the previous process still runs", p.Name)
		}
	}
	log, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own copy of the descriptor
	p.runs++
	fmt.Fprintf(log, "=== %s run %d: %s %s\n", p.Name, p.runs, p.Binary, strings.Join(p.Args, " "))
	cmd := exec.Command(p.Binary, p.Args...)
	cmd.Env = p.Env
	cmd.Stdout, cmd.Stderr = log, log
	p.started = time.Now()
	run, err := startChild(cmd)
	if err != nil {
		return fmt.Errorf("start %s: %w", p.Binary, err)
	}
	p.run = run
	return nil
}

// Exited is closed when the current run ends; nil before the first start.
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return nil
	}
	return p.run.done
}

// Started is when the current run started.
func (p *Process) Started() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// Alive is nil while the current run goes on.
func (p *Process) Alive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return fmt.Errorf("%s was never started", p.Name)
	}
	select {
	case <-p.run.done:
		return fmt.Errorf("%s exited (%s); see %s", p.Name, p.run.cmd.ProcessState, p.LogPath)
	default:
		return nil
	}
}

// Signal sends sig and waits up to grace for the exit, then kills; it returns once the
// process is gone.
func (p *Process) Signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	run := p.run
	p.mu.Unlock()
	if run != nil {
		run.stop(sig, grace)
	}
}

// Stop sends SIGTERM and waits up to 30 s for a graceful exit, then kills.
func (p *Process) Stop() { p.Signal(syscall.SIGTERM, 30*time.Second) }

// Kill ends the process at once, as a crash or a lost node would.
func (p *Process) Kill() { p.Signal(syscall.SIGKILL, 10*time.Second) }

// Get fetches path from addr (p.Metrics or p.Probes).
func (p *Process) Get(ctx context.Context, addr, path string) (int, string, error) {
	return Get(ctx, "http://"+addr+path, 10*time.Second)
}

// WaitReady polls /readyz every 20 ms, and returns the time from the start of the run
// to the first 200.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if err := p.Alive(); err != nil {
			return 0, err
		}
		code, body, err := p.Get(ctx, p.Probes, "/readyz")
		if err == nil && code == http.StatusOK {
			p.mu.Lock()
			defer p.mu.Unlock()
			return time.Since(p.started), nil
		}
		last = fmt.Sprintf("status %d %q, error %v", code, body, err)
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s: /readyz not 200 within %s (last: %s); see %s", p.Name, timeout, last, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Scrape reads /metrics.
func (p *Process) Scrape(ctx context.Context) (Metrics, error) {
	code, body, err := p.Get(ctx, p.Metrics, "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scrape %s's metrics: %w", p.Name, err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("scrape %s's metrics: status %d", p.Name, code)
	}
	return ParseMetrics(body)
}

// Log is everything the runs wrote.
func (p *Process) Log() string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogPath, err)
	}
	return string(data)
}

// Pid is the current run's process id, 0 before the first start.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return 0
	}
	return p.run.cmd.Process.Pid
}

// Memory reads the current run's resident set from /proc: VmHWM (peak) and VmRSS
// (now), in bytes; zero where /proc is not available.
func (p *Process) Memory() (peak, current int64) {
	pid := p.Pid()
	if pid == 0 {
		return 0, 0
	}
	m := ProcStatus(pid, "VmHWM", "VmRSS")
	return m["VmHWM"], m["VmRSS"]
}

// ProcStatus reads the named sizes of /proc/<pid>/status (VmHWM, RssAnon, ...), in
// bytes; none where /proc is not available.
func ProcStatus(pid int, names ...string) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !slices.Contains(names, strings.TrimSuffix(fields[0], ":")) {
			continue
		}
		if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
			out[strings.TrimSuffix(fields[0], ":")] = kb << 10
		}
	}
	return out
}
