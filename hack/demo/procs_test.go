package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// processes records every process seen below a root process, sampled from /proc, so
// that a test can check by pid that none of them outlives the root. A process is known
// by its pid and start time, so that a pid reused later is not mistaken for it.
type processes struct {
	root int
	mu   sync.Mutex
	seen map[proc]string // the executable's base name, from argv[0]
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

type proc struct {
	pid   int
	start string // field 22 of /proc/<pid>/stat, in clock ticks since boot
}

// watchDescendants samples root's descendants every 50 ms until stop. Linux only.
func watchDescendants(t *testing.T, root int) *processes {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to follow the demo's processes")
	}
	p := &processes{root: root, seen: map[proc]string{}, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			p.sample()
			select {
			case <-p.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return p
}

// stop ends the sampling and returns the processes seen that still run, checked at once
// with no grace: a child still shutting down when its parent returns has outlived it.
func (p *processes) stop() []procAlive {
	alive := p.alive()
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	return alive
}

func (p *processes) sample() {
	parents := map[int]int{}
	starts := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		parents[pid], starts[pid] = st.ppid, st.start
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid, ppid := range parents {
		for ancestor := ppid; ancestor > 1; ancestor = parents[ancestor] {
			if ancestor == p.root {
				// The latest name wins: a process may be seen before its last exec (a
				// shell, setpriv), or between two, with no command line at all.
				key := proc{pid: pid, start: starts[pid]}
				if name := argv0(pid); name != "" || p.seen[key] == "" {
					p.seen[key] = name
				}
				break
			}
		}
	}
}

// alive are the processes seen that still run; a zombie has ended.
func (p *processes) alive() []procAlive {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []procAlive
	for key, name := range p.seen {
		st, ok := readStat(key.pid)
		if ok && st.start == key.start && st.state != "Z" && st.state != "X" {
			out = append(out, procAlive{pid: key.pid, name: name, cmdline: cmdline(key.pid)})
		}
	}
	return out
}

type procAlive struct {
	pid           int
	name, cmdline string
}

// saw reports whether a process whose executable is name ran below the root.
func (p *processes) saw(name string) bool { return slices.Contains(p.names(), name) }

func (p *processes) names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, name := range p.seen {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

type stat struct {
	state string
	ppid  int
	start string
}

// readStat parses /proc/<pid>/stat; the command name, in parentheses, may hold spaces.
func readStat(pid int) (stat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(fields[1])
	return stat{state: fields[0], ppid: ppid, start: fields[19]}, true
}

// argv0 is the base name of the process's executable, "" when /proc shows none.
func argv0(pid int) string {
	args := strings.Fields(cmdline(pid))
	if len(args) == 0 {
		return ""
	}
	return filepath.Base(args[0])
}

func cmdline(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}
