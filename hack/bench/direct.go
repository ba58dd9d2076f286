package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// directChanges is how many Ingresses the direct-mode run changes.
const directChanges = 100

// direct is the direct mode (sink pangolin) against the in-repo Pangolin server at a
// real server's pace (a service time per request, a few served at once), or against a
// real Pangolin, with N single-host Ingresses: what PIC asks of Pangolin's API, and how
// long it takes.
type direct struct {
	N            int    `json:"n"`
	ResyncPeriod string `json:"resyncPeriod"`
	// Server is "in-repo", or "real" with ServerHost the host of its URL.
	Server     string `json:"server"`
	ServerHost string `json:"serverHost,omitempty"`
	// The in-repo server's pace: every request takes ServiceTimeMs, MaxConcurrent at
	// once. Both 0 with a real server, whose pace is its own.
	ServiceTimeMs float64 `json:"serviceTimeMs"`
	MaxConcurrent int     `json:"maxConcurrent"`
	// Publishing N new hosts: PIC started on N Ingresses and an empty Pangolin, from its
	// process start to the last host with its target; against a plain client sending
	// the requests the specification asks for each new host (search the host, create,
	// mark, add the target) with PIC's concurrency, from its first request; alternating
	// pairs, each on a fresh server. PublishRatio is the median of the pairs' ratios.
	PublishPICRuns      []float64 `json:"publishPICRuns"`
	PublishPlainRuns    []float64 `json:"publishPlainRuns"`
	PublishPICSeconds   float64   `json:"publishPICSeconds"`
	PublishPlainSeconds float64   `json:"publishPlainSeconds"`
	PublishRatio        float64   `json:"publishRatio"`
	// PublishBareSeconds is a client sending only a create and a target per host: what
	// Pangolin alone costs, without the host check and the marks (one run).
	PublishBareSeconds        float64 `json:"publishBareSeconds"`
	ConvergeRequests          int     `json:"convergeRequests"`
	ConvergeWrites            int     `json:"convergeWrites"`
	RequestsPerCreatedIngress float64 `json:"requestsPerCreatedIngress"`
	// Changes: Ingresses whose backend port changed, each one update.
	Changes           int     `json:"changes"`
	ChangeRequests    int     `json:"changeRequests"`
	ChangeWrites      int     `json:"changeWrites"`
	RequestsPerChange float64 `json:"requestsPerChange"`
	WritesPerChange   float64 `json:"writesPerChange"`
	// Restart on the converged Pangolin at the default settings: process start to the
	// first successful reconcile, and to every Ingress reconciled.
	RestartFirstReconcileSeconds float64 `json:"restartFirstReconcileSeconds"`
	RestartSettledSeconds        float64 `json:"restartSettledSeconds"`
	RestartRequests              int     `json:"restartRequests"`
	RestartWrites                int     `json:"restartWrites"`
	// Steady state: PIC restarted with its default resync and drift periods divided by
	// Scale, then left alone for one drift period and one resync period. The window's
	// requests are those of Scale times as long at the defaults: RequestsPerHour scales
	// them to an hour. Refreshes are counted by their domain lists, full ones by their
	// per-resource reads.
	Scale            int     `json:"scale"`
	SteadyResync     string  `json:"steadyResyncPeriod"`
	SteadyDrift      string  `json:"steadyDriftPeriod"`
	SteadyWindow     float64 `json:"steadyWindowSeconds"`
	SteadyRequests   int     `json:"steadyRequests"`
	Refreshes        int     `json:"refreshes"`
	FullRefreshes    int     `json:"fullRefreshes"`
	FullRefreshReads int     `json:"fullRefreshRequests"`
	RequestsPerHour  float64 `json:"requestsPerHourAtDefaults"`
	// ScaledWindowPerHour is the window's requests times 1 h / (window x Scale).
	ScaledWindowPerHour float64 `json:"scaledWindowRequestsPerHour"`
	ResyncWrites        int     `json:"resyncWrites"`
	DefaultResync       string  `json:"defaultResyncPeriod"`
	DefaultDrift        string  `json:"defaultDriftPeriod"`
	ListVisibleBound    float64 `json:"repairBoundListVisibleSeconds"`
	ListHiddenBound     float64 `json:"repairBoundListHiddenSeconds"`
	RepairDeleted       float64 `json:"repairDeletedSeconds"`
	RepairTargetEdit    float64 `json:"repairTargetEditSeconds"`
	RepairBlockAccess   float64 `json:"repairBlockAccessSeconds"`
	RepairsInBound      bool    `json:"repairsInBound"`
}

// directResyncBudget is the goal for the requests of one full refresh: the org's
// domains and sites and, one page per 500, the resources; each owned resource and its
// targets (the API has no bulk read of targets), and the one site. 2N + ceil(N/500) + 3.
func directResyncBudget(n int) int { return 2*n + (n+499)/500 + 3 }

// startDirect starts a direct-mode PIC: the drift period goes through the environment,
// which a binary without the setting ignores.
func (b *bench) startDirect(w *world, dir, log string, srv pangolinServer, resync, drift string) (*picProcess, error) {
	return b.startDirectProfiled(w, dir, log, srv, resync, drift, nil)
}

// startDirectProfiled is startDirect serving pprof when prof is set. The key goes
// through the environment, never a flag: flags show in the process list.
func (b *bench) startDirectProfiled(w *world, dir, log string, srv pangolinServer, resync, drift string, prof *profiler) (*picProcess, error) {
	e := srv.endpoint()
	env := []string{"PIC_PANGOLIN_API_KEY=" + e.APIKey.reveal()}
	if drift != "" {
		env = append(env, "PIC_PANGOLIN_DRIFT_PERIOD="+drift)
	}
	args := append([]string{"--sink=pangolin", "--pangolin-url=" + e.URL, "--pangolin-org=" + e.Org, "--resync-period", resync}, e.PICFlags...)
	return startPICWith(b.opts.Binary, w, filepath.Join(dir, log), prof != nil, env, args...)
}

// awaitPublished polls srv until n hosts have a target, and returns when. A poll asks
// the server under test nothing (published), so it can be frequent.
func awaitPublished(ctx context.Context, srv pangolinServer, n int, timeout time.Duration, alive func() error) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := srv.published(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if got >= n {
			return time.Now(), nil
		} else if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%d of %d hosts published in Pangolin within %s", got, n, timeout)
		}
		if alive != nil {
			if err := alive(); err != nil {
				return time.Time{}, err
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkPublished checks, once PIC has settled, that the server holds exactly n of the
// bench's resources, each with a target.
func checkPublished(ctx context.Context, srv pangolinServer, n int) error {
	list, err := srv.resources(ctx)
	if err != nil {
		return err
	}
	if got := len(list); got != n {
		return fmt.Errorf("direct mode: %d resources in Pangolin after convergence, want %d", got, n)
	}
	for _, r := range list {
		ts, err := srv.targets(ctx, r.ID)
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			return fmt.Errorf("direct mode: %s has no target after convergence", r.FullDomain)
		}
	}
	return nil
}

// plainPublish is the floor of publishing: a plain client creates the n hosts with
// workers at once. With spec, each host costs what the specification asks: a search
// for resources already on the host, the create, the marks (niceId, sso, blockAccess),
// the target; without, only the create and the target. It returns the seconds from its
// first request to the last target created.
// It goes where PIC goes (through the counting proxy, to a real server), with the
// server's own site and domain ids.
func plainPublish(ctx context.Context, srv pangolinServer, s shape, workers int, spec bool) (float64, error) {
	e := srv.endpoint()
	api, err := pangolinapi.New(pangolinapi.Config{BaseURL: e.URL, Org: e.Org, APIKey: e.APIKey.reveal()})
	if err != nil {
		return 0, err
	}
	sso, block := true, false
	start := time.Now()
	err = parallel(ctx, workers, s.Ingresses, func(ctx context.Context, i int) error {
		host := s.host(i, 0)
		name := fmt.Sprintf("%s (Ingress %s/%s)", host, namespace, s.ingressName(i))
		if spec {
			if _, err := api.ListResources(ctx, host); err != nil {
				return err
			}
		}
		sub := strings.TrimSuffix(host, "."+s.baseDomain())
		created, err := api.CreateResource(ctx, name, pangolinapi.Host{DomainID: e.DomainID, Subdomain: sub})
		if err != nil {
			return err
		}
		if spec {
			// niceIds are unique in an org: the run's prefix keeps a real one's apart.
			nice := s.HostPrefix + "plain-" + strconv.Itoa(i)
			if _, err := api.UpdateResource(ctx, created.ResourceID, pangolinapi.ResourceUpdate{NiceID: nice, SSO: &sso, BlockAccess: &block}); err != nil {
				return err
			}
		}
		_, err = api.CreateTarget(ctx, created.ResourceID, pangolinapi.TargetSpec{
			SiteID: e.SiteID, IP: serviceName + "." + namespace + ".svc.cluster.local", Port: portA, Method: pangolinapi.MethodHTTP,
			Enabled: true, Path: "/", PathMatchType: pangolinapi.MatchPrefix, Priority: 100,
		})
		return err
	})
	return since(start), err
}

// directMode measures the direct mode with n single-host Ingresses on a fresh control
// plane, against paced in-repo Pangolin servers or a real Pangolin.
func (b *bench) directMode(ctx context.Context, variant testenv.Variant, n int) (err error) {
	logf := b.opts.Logf
	pt, err := b.pangolinUnderTest(ctx)
	if err != nil {
		return err
	}
	// Registered first, so that it runs last, once PIC has stopped: a real server is
	// left without the bench's resources, whatever happened.
	defer func() { err = errors.Join(err, pt.close(ctx)) }()
	s := shape{Name: "direct", Ingresses: n, HostsPerIngress: 1, HostPrefix: pt.hostPrefix(), Domain: pt.baseDomain()}
	dir, err := newDir(b.opts.WorkDir, fmt.Sprintf("direct-%d", n))
	if err != nil {
		return err
	}
	kind, host := pt.server()
	serviceTime, concurrency, simulated := pt.pace()
	if simulated {
		logf("direct mode, N=%d: starting a control plane; Pangolin at %s a request, %d at once", n, serviceTime, concurrency)
	} else {
		logf("direct mode, N=%d: starting a control plane; a real Pangolin at %s, at its own pace (BENCH_PANGOLIN_SERVICE_TIME and BENCH_PANGOLIN_CONCURRENCY do not apply), hosts %s to %s",
			n, host, s.host(0, 0), s.host(n-1, 0))
	}
	w, err := startWorld(dir, variant, b.opts.Affinity)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.stop()) }()
	if err := w.setup(ctx, s); err != nil {
		return err
	}
	def := b.picDefaults
	d := &direct{N: n, ResyncPeriod: def.ResyncPeriod.String(), Changes: min(directChanges, n), Server: kind, ServerHost: host,
		DefaultResync: def.ResyncPeriod.String(), DefaultDrift: defaultDrift().String()}
	if simulated {
		d.ServiceTimeMs, d.MaxConcurrent = ms(serviceTime), concurrency
	}
	b.res.Direct = d
	workers := def.MaxConcurrentReconciles
	// The timeout of a publishing: every request one after another, five times over.
	paced := max(5*time.Duration(5*n)*max(serviceTime, time.Millisecond), b.timeout(n))

	// Publishing, in alternating pairs; the last PIC run goes on with the changes.
	var srv pangolinServer
	var p *picProcess
	defer func() {
		if p != nil {
			p.Stop()
		}
		if srv != nil {
			srv.release()
		}
	}()
	// The bare client, once.
	bareRun := func() error {
		bare, err := pt.freshStart(ctx)
		if err != nil {
			return err
		}
		secs, err := plainPublish(ctx, bare, s, workers, false)
		bare.release()
		if err != nil {
			return fmt.Errorf("bare client: %w", err)
		}
		d.PublishBareSeconds = round(secs, 3)
		return nil
	}
	// A real server is one server for every run, and the runs publish the same hosts:
	// none may meet another's resources, nor its requests. There PIC stops before each
	// plain run, and the bare client runs first. The in-repo server gives each run a
	// server of its own, and the runs keep the order they always had.
	if pt.shared() {
		if err := bareRun(); err != nil {
			return err
		}
	}
	for run := range max(1, b.opts.Repeat) {
		if p != nil && pt.shared() {
			p.Stop()
		}
		plain, err := pt.freshStart(ctx)
		if err != nil {
			return err
		}
		secs, err := plainPublish(ctx, plain, s, workers, true)
		plain.release()
		if err != nil {
			return fmt.Errorf("plain client: %w", err)
		}
		d.PublishPlainRuns = append(d.PublishPlainRuns, round(secs, 3))
		if p != nil {
			p.Stop()
			srv.release()
		}
		if srv, err = pt.freshStart(ctx); err != nil {
			return err
		}
		if p, err = b.startDirect(w, dir, fmt.Sprintf("pic-direct-publish-%d.log", run), srv, convergenceResync, ""); err != nil {
			return err
		}
		at, err := awaitPublished(ctx, srv, n, paced, p.Alive)
		if err != nil {
			return err
		}
		pic := seconds(at.Sub(p.Started()))
		d.PublishPICRuns = append(d.PublishPICRuns, round(pic, 3))
		logf("direct mode: publishing %d hosts, pair %d: plain client %.2fs, PIC %.2fs (%.2fx)", n, run+1, secs, pic, pic/secs)
	}
	d.PublishPICSeconds, d.PublishPlainSeconds = median(d.PublishPICRuns), median(d.PublishPlainRuns)
	d.PublishRatio = round(pairedRatio(d.PublishPICRuns, d.PublishPlainRuns), 2)
	if !pt.shared() {
		if err := bareRun(); err != nil {
			return err
		}
	}
	c, err := p.settle(ctx, float64(n), time.Second, paced)
	if err != nil {
		return err
	}
	if err := checkPublished(ctx, srv, n); err != nil {
		return err
	}
	d.ConvergeRequests, d.ConvergeWrites = srv.reads()+srv.writes(), srv.writes()
	d.RequestsPerCreatedIngress = round(float64(d.ConvergeRequests)/float64(n), 2)
	logf("direct mode: %d hosts published: PIC %.2fs, plain client %.2fs (%.2fx), bare client %.2fs; PIC sent %d requests (%d writes), %.2f per Ingress",
		n, d.PublishPICSeconds, d.PublishPlainSeconds, d.PublishRatio, d.PublishBareSeconds, d.ConvergeRequests, d.ConvergeWrites, d.RequestsPerCreatedIngress)

	srv.resetCounts()
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
	if _, err := p.settle(ctx, c.reconciles+float64(d.Changes), time.Second, paced); err != nil {
		return err
	}
	d.ChangeRequests, d.ChangeWrites = srv.reads()+srv.writes(), srv.writes()
	d.RequestsPerChange = round(float64(d.ChangeRequests)/float64(d.Changes), 2)
	d.WritesPerChange = round(float64(d.ChangeWrites)/float64(d.Changes), 2)
	logf("direct mode: %d Ingress changes: %d Pangolin requests (%d writes), %.2f per change",
		d.Changes, d.ChangeRequests, d.ChangeWrites, d.RequestsPerChange)
	p.Stop()

	// A restart at the defaults: to the first reconcile, then to every Ingress's.
	srv.resetCounts()
	if p, err = b.startDirect(w, dir, "pic-direct-restart.log", srv, def.ResyncPeriod.String(), ""); err != nil {
		return err
	}
	first, err := p.firstSuccess(ctx, paced)
	if err != nil {
		return err
	}
	d.RestartFirstReconcileSeconds = round(seconds(first.Sub(p.Started())), 3)
	if _, err := p.settle(ctx, float64(n), time.Second, paced); err != nil {
		return err
	}
	d.RestartSettledSeconds = round(since(p.Started())-1, 3) // settle waited a quiet second
	d.RestartRequests, d.RestartWrites = srv.reads()+srv.writes(), srv.writes()
	logf("direct mode: restart: first reconcile after %.2fs, all %d after %.2fs; %d requests, %d writes",
		d.RestartFirstReconcileSeconds, n, d.RestartSettledSeconds, d.RestartRequests, d.RestartWrites)
	p.Stop()
	return b.directSteady(ctx, w, dir, srv, d, &p, paced, serviceTime, concurrency)
}

// firstSuccess waits for the ingress controller's first successful reconcile.
func (p *picProcess) firstSuccess(ctx context.Context, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := p.Alive(); err != nil {
			return time.Time{}, err
		}
		if m, err := p.Scrape(ctx); err == nil && m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "ingress", "result": "success"}) > 0 {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("no successful reconcile within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// directSteady measures the steady state with the default periods divided by the
// scale, then how soon what was deleted or edited by hand is repaired. serviceTime and
// concurrency are the pace the repair bounds assume.
func (b *bench) directSteady(ctx context.Context, w *world, dir string, srv pangolinServer, d *direct, p **picProcess, paced, serviceTime time.Duration, concurrency int) error {
	logf := b.opts.Logf
	n := d.N
	k := max(1, b.opts.DirectScale)
	resync, drift := b.picDefaults.ResyncPeriod/time.Duration(k), defaultDrift()/time.Duration(k)
	d.Scale, d.SteadyResync, d.SteadyDrift = k, resync.String(), drift.String()
	var err error
	srv.resetCounts()
	if *p, err = b.startDirect(w, dir, "pic-direct-steady.log", srv, resync.String(), drift.String()); err != nil {
		return err
	}
	if _, err := (*p).WaitReady(ctx, paced); err != nil {
		return err
	}
	if _, err := (*p).settle(ctx, float64(n), time.Second, paced); err != nil {
		return err
	}
	srv.resetCounts()
	window := drift + resync
	logf("direct mode: steady state, periods divided by %d (resync %s, drift %s): watching Pangolin for %s", k, resync, drift, window)
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(window):
	}
	if err := (*p).Alive(); err != nil {
		return err
	}
	counts := srv.counts()
	d.SteadyWindow = round(since(start), 3)
	d.SteadyRequests, d.ResyncWrites = srv.reads()+srv.writes(), srv.writes()
	d.Refreshes = counts["GET /v1/org/:orgId/domains"]
	gets := counts["GET /v1/resource/:resourceId"]
	d.FullRefreshes = (gets + n/2) / max(n, 1)
	if d.FullRefreshes > 0 {
		// A full refresh's requests: its per-resource reads, and a light refresh's.
		light := float64(d.SteadyRequests-2*gets) / float64(max(d.Refreshes, 1))
		d.FullRefreshReads = int(float64(2*gets)/float64(d.FullRefreshes) + light + 0.5)
	}
	// An hour at the default periods: (1 h / resync) refreshes, of which (1 h / drift)
	// full (all of them for a binary that reads everything at every refresh), each
	// refresh costing what the window's did. The window itself, scaled, is a check.
	perResource := 2*gets + counts["GET /v1/resource/:resourceId/policies"]
	light := float64(d.SteadyRequests-perResource) / float64(max(d.Refreshes, 1))
	fullsPerHour := float64(time.Hour) / float64(defaultDrift())
	if d.FullRefreshes >= d.Refreshes {
		fullsPerHour = float64(time.Hour) / float64(b.picDefaults.ResyncPeriod)
	}
	perFull := float64(perResource) / float64(max(d.FullRefreshes, 1))
	d.RequestsPerHour = round(float64(time.Hour)/float64(b.picDefaults.ResyncPeriod)*light+fullsPerHour*perFull, 0)
	d.ScaledWindowPerHour = round(float64(d.SteadyRequests)*float64(time.Hour)/float64(time.Duration(d.SteadyWindow*float64(k)*float64(time.Second))), 0)
	logf("direct mode: steady state: %d requests in %.1fs (%d refreshes, %d full), %d writes: %.0f requests an hour at the default periods (the window scaled: %.0f)",
		d.SteadyRequests, d.SteadyWindow, d.Refreshes, d.FullRefreshes, d.ResyncWrites, d.RequestsPerHour, d.ScaledWindowPerHour)

	// Hand edits, each found by the next refresh that can see it. The bounds: the
	// period, plus the time a refresh of that kind takes at this pace (all of its
	// requests one slot at a time), plus a reconcile's few requests. With a real server
	// the pace is the default simulated one (30 ms a request, 4 at once): its own is not
	// known to the bench.
	api, err := srv.sideClient()
	if err != nil {
		return err
	}
	pace := max(serviceTime, time.Millisecond)
	lightTime := time.Duration(10) * pace
	fullTime := time.Duration(directResyncBudget(n)/max(1, concurrency)+10) * pace
	d.ListVisibleBound = round(seconds(resync+lightTime+time.Second), 2)
	d.ListHiddenBound = round(seconds(drift+resync+fullTime+time.Second), 2)
	var picked [3]benchResource
	for i, host := range []string{w.shape.host(0, 0), w.shape.host(n/2, 0), w.shape.host(n-1, 0)} {
		r, ok, err := srv.resourceOn(ctx, host)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("direct mode: the hosts to edit by hand are not in Pangolin")
		}
		picked[i] = r
	}
	deleted, edited, blocked := picked[0], picked[1], picked[2]
	start = time.Now()
	if err := api.DeleteResource(ctx, deleted.ID); err != nil {
		return err
	}
	targets, err := srv.targets(ctx, edited.ID)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return fmt.Errorf("direct mode: %s has no target", edited.FullDomain)
	}
	if _, err := api.UpdateTarget(ctx, targets[0].ID, pangolinapi.TargetUpdate{SiteID: targets[0].SiteID, IP: targets[0].IP, Port: 9999}); err != nil {
		return err
	}
	yes := true
	if _, err := api.UpdateResource(ctx, blocked.ID, pangolinapi.ResourceUpdate{BlockAccess: &yes}); err != nil {
		return err
	}
	// Each check reads only what is not repaired yet. A failed read of a real server
	// is a repair not seen yet: the next check reads again.
	checks := map[string]func() (bool, error){
		"deleted": func() (bool, error) {
			r, ok, err := srv.resourceOn(ctx, deleted.FullDomain)
			if err != nil || !ok {
				return false, err
			}
			ts, err := srv.targets(ctx, r.ID)
			return len(ts) > 0, err
		},
		"edited": func() (bool, error) {
			ts, err := srv.targets(ctx, edited.ID)
			return len(ts) > 0 && ts[0].Port != 9999, err
		},
		"blocked": func() (bool, error) {
			r, ok, err := srv.resourceOn(ctx, blocked.FullDomain)
			if err != nil || !ok {
				return false, err
			}
			on, err := srv.blockAccess(ctx, r.ID)
			return err == nil && !on, err
		},
	}
	repaired := map[string]float64{}
	var lastErr error
	limit := time.Duration(d.ListHiddenBound*float64(time.Second)) * 2
	for len(repaired) < len(checks) && time.Since(start) < limit {
		now := since(start)
		for name, check := range checks {
			if _, done := repaired[name]; done {
				continue
			}
			if ok, err := check(); err != nil {
				lastErr = err
			} else if ok {
				repaired[name] = now
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(srv.pollInterval(50 * time.Millisecond)):
		}
	}
	if len(repaired) < len(checks) && lastErr != nil {
		logf("direct mode: reading Pangolin while waiting for the repairs failed, last: %v", lastErr)
	}
	d.RepairDeleted, d.RepairTargetEdit, d.RepairBlockAccess = round(repaired["deleted"], 2), round(repaired["edited"], 2), round(repaired["blocked"], 2)
	d.RepairsInBound = len(repaired) == 3 && d.RepairDeleted <= d.ListVisibleBound && d.RepairTargetEdit <= d.ListVisibleBound && d.RepairBlockAccess <= d.ListHiddenBound
	logf("direct mode: repaired a hand delete after %.1fs and a target port edit after %.1fs (bound %.1fs), blockAccess after %.1fs (bound %.1fs)",
		d.RepairDeleted, d.RepairTargetEdit, d.ListVisibleBound, d.RepairBlockAccess, d.ListHiddenBound)
	return nil
}

// defaultDrift is PIC's default drift period, or, for a binary that predates the
// setting, its resync period (every refresh then reads everything).
func defaultDrift() time.Duration {
	if d := defaultsForReport().Pangolin.DriftPeriod; d > 0 {
		return d
	}
	return defaultsForReport().ResyncPeriod
}

// directMemoryRun measures direct mode's peak RSS with n single-host Ingresses on a
// fresh control plane: PIC publishing them on an empty Pangolin, then restarted on the
// converged one, as the PangolinResource mode's memory is measured. The in-repo server
// answers at once: what PIC holds does not depend on the server's pace, and n = 5000
// at a real server's pace would take minutes (4 requests a host, 30 ms each, 4 at once).
// It stays on the in-repo server when the direct-mode run is pointed at a real one.
func (b *bench) directMemoryRun(ctx context.Context, variant testenv.Variant, n int) (err error) {
	logf := b.opts.Logf
	s := shape{Name: "direct", Ingresses: n, HostsPerIngress: 1}
	dir, err := newDir(b.opts.WorkDir, fmt.Sprintf("direct-memory-%d", n))
	if err != nil {
		return err
	}
	logf("direct mode memory, N=%d: starting a control plane; Pangolin answering at once", n)
	w, err := startWorld(dir, variant, b.opts.Affinity)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.stop()) }()
	if err := w.setup(ctx, s); err != nil {
		return err
	}
	prof, err := newProfiler(b.opts.PprofDir, w.env.Config)
	if err != nil {
		return err
	}
	srv := inRepoServer{simtest.NewServer(inRepoOptions())}
	defer srv.release()
	def := b.picDefaults
	timeout := b.timeout(4 * n)

	p, err := b.startDirectProfiled(w, dir, "pic-direct-memory-publish.log", srv, convergenceResync, "", prof)
	if err != nil {
		return err
	}
	defer p.Stop()
	stopProfile := prof.harness(fmt.Sprintf("direct-%d-publish", n))
	_, err = awaitPublished(ctx, srv, n, timeout, p.Alive)
	stopProfile()
	if err != nil {
		return err
	}
	if _, err := p.settle(ctx, float64(n), time.Second, timeout); err != nil {
		return err
	}
	publishPeak, _ := p.Memory()
	p.Stop()

	if p, err = b.startDirectProfiled(w, dir, "pic-direct-memory-restart.log", srv, def.ResyncPeriod.String(), "", prof); err != nil {
		return err
	}
	defer p.Stop()
	if _, err := p.WaitReady(ctx, timeout); err != nil {
		return err
	}
	if _, err := p.settle(ctx, float64(n), time.Second, timeout); err != nil {
		return err
	}
	prof.heap(ctx, fmt.Sprintf("direct-%d-restart", n), p.pprof)
	restartPeak, _ := p.Memory()
	m := &directMemory{N: n, PeakRSSBytes: max(publishPeak, restartPeak), PublishPeakRSSBytes: publishPeak, RestartPeakRSSBytes: restartPeak}
	b.res.DirectMemory = m
	logf("direct mode memory, N=%d: peak RSS %.1f MiB (publishing %.1f MiB, restarted %.1f MiB)", n, mib(m.PeakRSSBytes), mib(publishPeak), mib(restartPeak))
	return nil
}
