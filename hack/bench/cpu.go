package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. The kernel
// fixes it at 100 for user space on every architecture the bench runs on (x86, arm64),
// whatever its own tick rate; Go reads no sysconf(_SC_CLK_TCK) without cgo. A tick is
// 10 ms: a run's CPU is read to that grain.
const clockTicks = 100

// cpuTimes is CPU seconds (user + system) by process name, for the processes the
// bench started: kube-apiserver, etcd, and the client under test (pic or floor). On
// shared cores they compete for the same CPU, so where it goes says where a run's time
// goes.
type cpuTimes map[string]float64

// The names of the clients under test in cpuTimes.
const (
	cpuPIC   = "pic"
	cpuFloor = "floor"
)

// sampleCPU reads the CPU time of the bench's child processes (envtest's etcd and
// kube-apiserver, PIC, the floor), summed by command name, except that the pids of
// clients are named as it says ("pic", "floor"). Empty off Linux.
func sampleCPU(clients map[int]string) cpuTimes {
	out := cpuTimes{}
	for pid, st := range children() {
		name, ok := clients[pid]
		if !ok {
			name = st.comm
		}
		out[name] += st.cpuSeconds
	}
	return out
}

// children are the bench's child processes by pid. Empty off Linux.
func children() map[int]procStat {
	out := map[int]procStat{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if st, ok := parseStat(string(data)); ok && st.ppid == self {
			out[pid] = st
		}
	}
	return out
}

// controlPlanePids are the pids of the bench's etcd and kube-apiserver processes.
func controlPlanePids() []int {
	var out []int
	for pid, st := range children() {
		if st.comm == "etcd" || st.comm == "kube-apiserver" {
			out = append(out, pid)
		}
	}
	return out
}

// apiserverRSS is the bench's kube-apiserver's resident set now, in bytes (0 off
// Linux): it grows over a shape's runs, and the server slows with it, which the runs'
// log lines show beside their times.
func apiserverRSS() int64 {
	for pid, st := range children() {
		if st.comm == "kube-apiserver" {
			return testenv.ProcStatus(pid, "VmRSS")["VmRSS"]
		}
	}
	return 0
}

// since is the CPU each process used from before to now.
func (now cpuTimes) since(before cpuTimes) cpuTimes {
	out := cpuTimes{}
	for k, v := range now {
		out[k] = round(v-before[k], 2)
	}
	return out
}

type procStat struct {
	comm       string
	ppid       int
	cpuSeconds float64
}

// parseStat reads the command name, parent pid and utime+stime of a /proc/<pid>/stat
// line. The name is in parentheses and may hold spaces or parentheses itself, so the
// fields after it are counted from the last ')'.
func parseStat(line string) (procStat, bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(line[end+1:])
	// After the name: state(0) ppid(1) ... utime(11) stime(12).
	if len(f) < 13 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseUint(f[11], 10, 64)
	stime, err3 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{comm: line[open+1 : end], ppid: ppid, cpuSeconds: float64(utime+stime) / clockTicks}, true
}

// String is "kube-apiserver 3.10 s, etcd 0.90 s, pic 1.20 s".
func (c cpuTimes) String() string {
	var parts []string
	for _, k := range []string{"kube-apiserver", "etcd", cpuPIC, cpuFloor} {
		if v, ok := c[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f s", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

// profiler collects pprof profiles of PIC and of kube-apiserver while a phase runs,
// when BENCH_PPROF names a directory.
type profiler struct {
	dir string
	api *http.Client
	cfg *rest.Config
}

func newProfiler(dir string, cfg *rest.Config) (*profiler, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &profiler{dir: dir, api: hc, cfg: cfg}, nil
}

// cpu starts CPU profiles of PIC (at its pprof address) and of kube-apiserver (its
// /debug/pprof, on by default) for d, written as <name>-pic.pprof and
// <name>-apiserver.pprof; the returned function waits for them.
func (p *profiler) cpu(ctx context.Context, name, picAddr string, d time.Duration) func() {
	if p == nil {
		return func() {}
	}
	secs := max(1, int(d.Seconds()+0.5))
	done := make(chan struct{}, 2)
	get := func(c *http.Client, url, file string) {
		defer func() { done <- struct{}{} }()
		// PIC's pprof listener comes up a moment after the process starts.
		var err error
		for range 50 {
			if err = fetch(ctx, c, url, filepath.Join(p.dir, file)); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: profile %s: %v\n", file, err)
		}
	}
	go get(http.DefaultClient, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", picAddr, secs), name+"-pic.pprof")
	go get(p.api, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(p.cfg.Host, "/"), secs), name+"-apiserver.pprof")
	return func() { <-done; <-done }
}

// harness starts a CPU profile of the harness's own process, written as
// <name>-harness.pprof when the returned function is called. The harness holds the
// in-repo Pangolin server, so in direct mode its profile is the server's time.
func (p *profiler) harness(name string) func() {
	if p == nil {
		return func() {}
	}
	f, err := os.Create(filepath.Join(p.dir, name+"-harness.pprof"))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: harness profile: %v\n", err)
		if f != nil {
			_ = f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// heap writes PIC's heap profile as <name>-pic-heap.pprof.
func (p *profiler) heap(ctx context.Context, name, picAddr string) {
	if p == nil {
		return
	}
	if err := fetch(ctx, http.DefaultClient, "http://"+picAddr+"/debug/pprof/heap", filepath.Join(p.dir, name+"-pic-heap.pprof")); err != nil {
		fmt.Fprintf(os.Stderr, "bench: heap profile: %v\n", err)
	}
}

func fetch(ctx context.Context, c *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
