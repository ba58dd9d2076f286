package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// The Pangolin the direct part measures PIC against: the in-repo server at a simulated
// pace (the default), or a real Pangolin behind a counting proxy (pangolin_real.go).

// secret is a value that is never printed: fmt, JSON and slog show it redacted. Only
// reveal gives it, for the clients and PIC's environment.
type secret string

const redacted = "[redacted]"

func (secret) String() string               { return redacted }
func (secret) GoString() string             { return redacted }
func (secret) Format(f fmt.State, _ rune)   { _, _ = io.WriteString(f, redacted) }
func (secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (s secret) reveal() string             { return string(s) }

// The kinds of server the direct results name.
const (
	serverInRepo = "in-repo"
	serverReal   = "real"
)

// pangolinUnderTest is the Pangolin of the direct-mode run.
type pangolinUnderTest interface {
	// server names it for the results and the log: its kind (serverInRepo or
	// serverReal) and, for a real one, the host of its URL (never the key).
	server() (kind, host string)
	// pace is the service time and concurrency the run's timeouts and repair bounds
	// assume; simulated is false when the server's pace is its own (a real one).
	pace() (serviceTime time.Duration, concurrency int, simulated bool)
	// hostPrefix starts, and baseDomain ends, every host of the direct shape.
	hostPrefix() string
	baseDomain() string
	// shared reports whether every fresh start gives the same server (a real one): runs
	// then cannot overlap, since they publish the same hosts.
	shared() bool
	// freshStart gives an empty Pangolin, its counts at zero, for the next publishing
	// run: a new in-repo server beside the others, or the real one emptied of what the
	// bench created.
	freshStart(ctx context.Context) (pangolinServer, error)
	// close removes what the bench created from a real server. PIC must have stopped.
	close(ctx context.Context) error
}

// pangolinEndpoint is what PIC and the plain clients are given.
type pangolinEndpoint struct {
	URL        string // the in-repo server's, or the counting proxy's
	APIKey     secret
	Org        string
	SiteNiceID string // PIC's default tunnel
	SiteID     int    // what a target names
	BaseDomain string
	DomainID   string // what a create names
	// PICFlags are PIC's flags beyond the URL, org and key.
	PICFlags []string
}

// benchResource is a resource the bench created, or PIC for it.
type benchResource struct {
	ID         int
	FullDomain string
}

// benchTarget is a target as the bench checks it.
type benchTarget struct {
	ID     int
	SiteID int
	IP     string
	Port   int
}

// pangolinServer is one publishing run's Pangolin. Its reads are the bench's own checks:
// against a real server they go straight to it, outside the counts.
type pangolinServer interface {
	endpoint() pangolinEndpoint
	// sideClient is a client to the server itself, for the hand edits: a real server's
	// counts leave it out.
	sideClient() (*pangolinapi.Client, error)
	// published is the number of the bench's hosts with a target. It sends the server
	// no request: it is polled while PIC is timed.
	published(ctx context.Context) (int, error)
	// resources are the bench's resources.
	resources(ctx context.Context) ([]benchResource, error)
	// resourceOn is the bench's resource on host, if any.
	resourceOn(ctx context.Context, host string) (benchResource, bool, error)
	targets(ctx context.Context, resourceID int) ([]benchTarget, error)
	blockAccess(ctx context.Context, resourceID int) (bool, error)
	// reads, writes and counts are the requests PIC and the plain clients sent since the
	// fresh start or the last resetCounts; counts keyed by method and route pattern
	// ("GET /v1/resource/:resourceId"), as pangolinsim.Server.Counts.
	reads() int
	writes() int
	counts() map[string]int
	resetCounts()
	// pollInterval is how often the bench checks the server, given how often it checks
	// the in-repo one: each check of a real server takes a slot PIC is timed against.
	pollInterval(inRepo time.Duration) time.Duration
	// release ends a run's use of the server: an in-repo server closes, a real one stays
	// for the next run.
	release()
}

// The in-repo server's fixture: org "bench", example.com, the site named like PIC's
// default tunnel.
const (
	inRepoOrg      = "bench"
	inRepoDomainID = "domain1"
	inRepoSiteID   = 1
)

// inRepoOptions is the in-repo server's fixture.
func inRepoOptions() pangolinsim.Options {
	return pangolinsim.Options{
		Org:     inRepoOrg,
		Domains: []pangolinsim.Domain{{ID: inRepoDomainID, BaseDomain: domain, Verified: true}},
		Sites:   []pangolinsim.Site{{ID: inRepoSiteID, NiceID: tunnelName, Name: "bench"}},
	}
}

// inRepoPangolin gives each run a new in-repo server at the bench's pace.
type inRepoPangolin struct {
	serviceTime time.Duration
	concurrency int
}

func (inRepoPangolin) server() (string, string) { return serverInRepo, "" }
func (p inRepoPangolin) pace() (time.Duration, int, bool) {
	return p.serviceTime, p.concurrency, true
}
func (inRepoPangolin) hostPrefix() string { return "" }
func (inRepoPangolin) baseDomain() string { return domain }
func (inRepoPangolin) shared() bool       { return false }
func (p inRepoPangolin) freshStart(context.Context) (pangolinServer, error) {
	return inRepoServer{simtest.NewPacedServer(inRepoOptions(), simtest.Pace{ServiceTime: p.serviceTime, MaxConcurrent: p.concurrency})}, nil
}
func (inRepoPangolin) close(context.Context) error { return nil }

// inRepoServer is one in-repo server, read through its introspection.
type inRepoServer struct{ srv *simtest.Server }

func (s inRepoServer) endpoint() pangolinEndpoint {
	return pangolinEndpoint{
		URL: s.srv.BaseURL(), APIKey: secret(pangolinsim.RootKey.Token()), Org: inRepoOrg,
		SiteNiceID: tunnelName, SiteID: inRepoSiteID, BaseDomain: domain, DomainID: inRepoDomainID,
	}
}

func (s inRepoServer) sideClient() (*pangolinapi.Client, error) {
	return pangolinapi.New(pangolinapi.Config{BaseURL: s.srv.BaseURL(), Org: inRepoOrg, APIKey: pangolinsim.RootKey.Token()})
}

func (s inRepoServer) published(context.Context) (int, error) {
	return s.srv.ResourcesWithTargets(), nil
}

func (s inRepoServer) resources(context.Context) ([]benchResource, error) {
	var out []benchResource
	for _, r := range s.srv.Resources() {
		out = append(out, benchResource{ID: r.ID, FullDomain: r.FullDomain})
	}
	return out, nil
}

func (s inRepoServer) resourceOn(_ context.Context, host string) (benchResource, bool, error) {
	for _, r := range s.srv.Resources() {
		if r.FullDomain == host {
			return benchResource{ID: r.ID, FullDomain: r.FullDomain}, true, nil
		}
	}
	return benchResource{}, false, nil
}

func (s inRepoServer) targets(_ context.Context, resourceID int) ([]benchTarget, error) {
	var out []benchTarget
	for _, t := range s.srv.Targets(resourceID) {
		out = append(out, benchTarget{ID: t.ID, SiteID: t.SiteID, IP: t.IP, Port: t.Port})
	}
	return out, nil
}

func (s inRepoServer) blockAccess(_ context.Context, resourceID int) (bool, error) {
	for _, r := range s.srv.Resources() {
		if r.ID == resourceID {
			return r.BlockAccess, nil
		}
	}
	return false, fmt.Errorf("resource %d is not in Pangolin", resourceID)
}

func (s inRepoServer) reads() int                                    { return s.srv.Reads() }
func (s inRepoServer) writes() int                                   { return s.srv.Writes() }
func (s inRepoServer) counts() map[string]int                        { return s.srv.Counts() }
func (s inRepoServer) resetCounts()                                  { s.srv.ResetCounts() }
func (inRepoServer) pollInterval(inRepo time.Duration) time.Duration { return inRepo }
func (s inRepoServer) release()                                      { s.srv.Close() }

// pangolinUnderTest is the Pangolin the options name for the direct-mode run.
func (b *bench) pangolinUnderTest(ctx context.Context) (pangolinUnderTest, error) {
	if b.opts.RealPangolin == nil {
		return inRepoPangolin{serviceTime: b.opts.PangolinServiceTime, concurrency: b.opts.PangolinConcurrency}, nil
	}
	return newRealServer(ctx, *b.opts.RealPangolin, b.opts.Logf)
}
