package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/inmemory"
)

// directChanges is how many Ingresses the direct-mode run changes.
const directChanges = 100

// direct is the direct mode (sink pangolin) against the in-repo Pangolin server, with N
// single-host Ingresses: what PIC asks of Pangolin's API.
type direct struct {
	N            int    `json:"n"`
	ResyncPeriod string `json:"resyncPeriod"`
	// Convergence: PIC started on N Ingresses and an empty Pangolin.
	ConvergeSeconds           float64 `json:"convergeSeconds"`
	ConvergeRequests          int     `json:"convergeRequests"`
	ConvergeWrites            int     `json:"convergeWrites"`
	RequestsPerCreatedIngress float64 `json:"requestsPerCreatedIngress"`
	// Changes: Ingresses whose backend port changed, each one update.
	Changes           int     `json:"changes"`
	ChangeRequests    int     `json:"changeRequests"`
	ChangeWrites      int     `json:"changeWrites"`
	RequestsPerChange float64 `json:"requestsPerChange"`
	WritesPerChange   float64 `json:"writesPerChange"`
	// Steady state: PIC restarted on the converged Pangolin, then one full resync.
	RestartRequests int `json:"restartRequests"`
	RestartWrites   int `json:"restartWrites"`
	// Resyncs is how many Pangolin refreshes the window held (counted by their resource
	// lists), in which every Ingress was also reconciled again (the informers' resync,
	// on a timer of its own); the requests are per refresh.
	Resyncs        int `json:"resyncs"`
	ResyncRequests int `json:"resyncRequests"`
	ResyncWrites   int `json:"resyncWrites"`
}

// directResyncBudget is the goal for the requests of one resync: the refresh lists the
// org's domains and sites and, one page per 500, the resources; it reads each owned
// resource and its targets (the API has no bulk read of targets), and checks the one
// site; the controller's own resync reads only its state. 2N + ceil(N/500) + 3.
func directResyncBudget(n int) int { return 2*n + (n+499)/500 + 3 }

// directMode measures the direct mode with n single-host Ingresses on a fresh control
// plane and Pangolin server.
func (b *bench) directMode(ctx context.Context, variant testenv.Variant, n int) (err error) {
	logf := b.opts.Logf
	s := shape{Name: "direct", Ingresses: n, HostsPerIngress: 1}
	dir, err := newDir(b.opts.WorkDir, fmt.Sprintf("direct-%d", n))
	if err != nil {
		return err
	}
	logf("direct mode, N=%d: starting a control plane and a Pangolin server", n)
	w, err := startWorld(dir, variant)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.stop()) }()
	if err := w.setup(ctx, s); err != nil {
		return err
	}
	srv := inmemory.NewServer(inmemory.Options{
		Org:     "bench",
		Domains: []inmemory.Domain{{ID: "domain1", BaseDomain: domain, Verified: true}},
		Sites:   []inmemory.Site{{ID: 1, NiceID: tunnelName, Name: "bench"}},
	})
	defer srv.Close()
	start := func(log, resync string) (*picProcess, error) {
		return startPICWith(b.opts.Binary, w.kubeconfig, filepath.Join(dir, log), false,
			[]string{"PIC_PANGOLIN_API_KEY=" + inmemory.RootKey.Token()},
			"--sink=pangolin", "--pangolin-url="+srv.BaseURL(), "--pangolin-org=bench", "--resync-period", resync)
	}
	d := &direct{N: n, ResyncPeriod: b.opts.ResyncPeriod.String(), Changes: min(directChanges, n)}
	b.res.Direct = d

	// Convergence, then changes, with no resync in the window.
	p, err := start("pic-direct-converge.log", convergenceResync)
	if err != nil {
		return err
	}
	defer func() { p.Stop() }()
	if _, err := p.WaitReady(ctx, b.timeout(n)); err != nil {
		return err
	}
	c, err := p.settle(ctx, float64(n), time.Second, b.timeout(n))
	if err != nil {
		return err
	}
	if got := len(srv.Resources()); got != n {
		return fmt.Errorf("direct mode: %d resources in Pangolin after convergence, want %d", got, n)
	}
	d.ConvergeSeconds = round(since(p.Started())-1, 3) // settle waited a quiet second
	d.ConvergeRequests, d.ConvergeWrites = srv.Reads()+srv.Writes(), srv.Writes()
	d.RequestsPerCreatedIngress = round(float64(d.ConvergeRequests)/float64(n), 2)
	logf("direct mode: %d Ingresses published in %.2fs: %d Pangolin requests (%d writes), %.2f per Ingress",
		n, d.ConvergeSeconds, d.ConvergeRequests, d.ConvergeWrites, d.RequestsPerCreatedIngress)

	srv.ResetCounts()
	for k := range d.Changes {
		i := k * n / d.Changes
		ing, err := w.getIngress(ctx, i)
		if err != nil {
			return err
		}
		next := int32(portB)
		if w.port[i] == portB {
			next = portA
		}
		setBackendPort(ing, next)
		if err := w.fast.Update(ctx, ing); err != nil {
			return fmt.Errorf("update Ingress %s: %w", ing.Name, err)
		}
		w.port[i] = next
	}
	if _, err := p.settle(ctx, c.reconciles+float64(d.Changes), time.Second, b.timeout(n)); err != nil {
		return err
	}
	d.ChangeRequests, d.ChangeWrites = srv.Reads()+srv.Writes(), srv.Writes()
	d.RequestsPerChange = round(float64(d.ChangeRequests)/float64(d.Changes), 2)
	d.WritesPerChange = round(float64(d.ChangeWrites)/float64(d.Changes), 2)
	logf("direct mode: %d Ingress changes: %d Pangolin requests (%d writes), %.2f per change",
		d.Changes, d.ChangeRequests, d.ChangeWrites, d.RequestsPerChange)
	p.Stop()

	// Steady state: a restart, then one full resync.
	srv.ResetCounts()
	if p, err = start("pic-direct-restart.log", b.opts.ResyncPeriod.String()); err != nil {
		return err
	}
	if _, err := p.WaitReady(ctx, b.timeout(n)); err != nil {
		return err
	}
	settled, err := p.settle(ctx, float64(n), time.Second, b.timeout(n))
	if err != nil {
		return err
	}
	d.RestartRequests, d.RestartWrites = srv.Reads()+srv.Writes(), srv.Writes()
	srv.ResetCounts()
	deadline := time.Now().Add(2*b.opts.ResyncPeriod + b.timeout(n))
	var resynced counters
	for {
		// One full resync: every Ingress reconciled again and Pangolin read again.
		if resynced, err = p.settle(ctx, settled.reconciles+float64(n), time.Second, time.Until(deadline)); err != nil {
			return err
		}
		if srv.Counts()["GET /v1/org/:orgId/resources"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("direct mode: no Pangolin refresh within %s", 2*b.opts.ResyncPeriod)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// The informers' resync and the refresh have their own timers: the window may hold
	// more than one of each.
	pages := (n + 499) / 500
	d.Resyncs = max(1, srv.Counts()["GET /v1/org/:orgId/resources"]/pages)
	d.ResyncRequests = (srv.Reads() + srv.Writes()) / d.Resyncs
	d.ResyncWrites = srv.Writes()
	logf("direct mode: restart: %d requests, %d writes; %d refresh(es): %d requests each; %d reconciles in the window; %d writes in all",
		d.RestartRequests, d.RestartWrites, d.Resyncs, d.ResyncRequests, int(resynced.reconciles-settled.reconciles), d.ResyncWrites)
	return nil
}
