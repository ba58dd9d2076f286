package simtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
)

// Pace is how slowly a server answers.
type Pace struct {
	// ServiceTime is how long each request takes to serve, as a real Pangolin spends
	// 25-50 ms verifying the API key (argon2) on every call; 0 answers at once.
	ServiceTime time.Duration
	// MaxConcurrent is how many requests are served at once, as Node runs that work on
	// a small thread pool (libuv's, 4 threads by default); the others wait their turn,
	// in arrival order as far as Go's scheduler keeps it. 0 sets no limit.
	MaxConcurrent int
}

// The pace of a real Pangolin, as the bench simulates it: 30 ms a request, 4 at once.
const (
	PaceServiceTime   = 30 * time.Millisecond
	PaceMaxConcurrent = 4
)

// Fault intercepts a request before the simulator answers it. It returns true when it
// has answered (or dropped) the request, false to let the simulator answer.
type Fault func(w http.ResponseWriter, r *http.Request) bool

// Server is the simulator behind a test server: its fixture, state and request counts
// are the embedded simulator's; faults, pace and the listener are the harness's. It is
// safe for concurrent use.
type Server struct {
	*pangolinsim.Server

	// URL is the server's root, e.g. http://127.0.0.1:41234; the API is under BaseURL().
	// It is empty for a server from NewHandler.
	URL string

	srv  *http.Server
	pace Pace
	// ctx ends when the server closes, releasing requests a fault or the pace holds.
	ctx    context.Context
	cancel context.CancelFunc

	faultMu sync.RWMutex
	fault   Fault

	// slots holds one token per request being served when Pace.MaxConcurrent is set.
	slots   chan struct{}
	gaugeMu sync.Mutex
	serving int // requests being served (service time included)
	waiting int // requests waiting for a slot
	peak    int // the most requests ever served at once
}

// NewServer serves a simulator of opts on a loopback port, answering at once. Close it
// when done. It panics when no loopback port can be had, as net/http/httptest does.
func NewServer(opts pangolinsim.Options) *Server { return NewPacedServer(opts, Pace{}) }

// NewPacedServer is NewServer at pace.
func NewPacedServer(opts pangolinsim.Options, pace Pace) *Server {
	s := newServer(opts, pace)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("simtest: listen on a loopback port: %v", err))
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.URL = "http://" + listener.Addr().String()
	go func() { _ = s.srv.Serve(listener) }()
	return s
}

// NewHandler returns a server that is not listening, to mount in another server (its
// ServeHTTP is the harness's, faults included).
func NewHandler(opts pangolinsim.Options) *Server { return newServer(opts, Pace{}) }

func newServer(opts pangolinsim.Options, pace Pace) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	var slots chan struct{}
	if pace.MaxConcurrent > 0 {
		slots = make(chan struct{}, pace.MaxConcurrent)
	}
	return &Server{Server: pangolinsim.New(opts), pace: pace, ctx: ctx, cancel: cancel, slots: slots}
}

// BaseURL is the API root including /v1, as a client is configured with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the server. Requests held by a fault or waiting for a slot are released
// first.
func (s *Server) Close() {
	s.cancel()
	if s.srv != nil {
		_ = s.srv.Close() // closes the listener and every connection
	}
}

// SetFault installs f for every following request; nil removes it.
func (s *Server) SetFault(f Fault) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.fault = f
}

// ServeHTTP counts the request, waits for its turn at the server's pace, lets the fault
// intercept it, and has the simulator answer the rest. A request is counted whatever
// happens to it after: it was sent.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Count(r)
	// The body is read before any fault runs: net/http notices a client that hangs up
	// (and cancels the request's context) only once the body has been read.
	body, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	if !s.admit(r.Context()) {
		return // the client gave up, or the server closed, while it waited
	}
	defer s.release()
	s.faultMu.RLock()
	f := s.fault
	s.faultMu.RUnlock()
	if f != nil {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.ctx, cancel)()
		fr := r.WithContext(ctx)
		fr.Body = io.NopCloser(bytes.NewReader(body))
		if f(w, fr) {
			return
		}
	}
	answered := r.WithContext(r.Context())
	answered.Body = io.NopCloser(bytes.NewReader(body))
	s.Answer(w, answered)
}

// admit waits for a slot when Pace.MaxConcurrent is set, then spends Pace.ServiceTime.
// It returns false when the request's context or the server ends first.
func (s *Server) admit(ctx context.Context) bool {
	if s.slots != nil {
		s.gauge(0, 1)
		select {
		case s.slots <- struct{}{}:
			s.gauge(1, -1)
		case <-ctx.Done():
			s.gauge(0, -1)
			return false
		case <-s.ctx.Done():
			s.gauge(0, -1)
			return false
		}
	} else {
		s.gauge(1, 0)
	}
	if d := s.pace.ServiceTime; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			s.release()
			return false
		case <-s.ctx.Done():
			s.release()
			return false
		}
	}
	return true
}

// release frees the slot admit took.
func (s *Server) release() {
	s.gauge(-1, 0)
	if s.slots != nil {
		<-s.slots
	}
}

func (s *Server) gauge(serving, waiting int) {
	s.gaugeMu.Lock()
	defer s.gaugeMu.Unlock()
	s.serving += serving
	s.waiting += waiting
	s.peak = max(s.peak, s.serving)
}

// Load is the requests being served now, those waiting for a slot (Pace.MaxConcurrent),
// and the most ever served at once.
func (s *Server) Load() (serving, waiting, peak int) {
	s.gaugeMu.Lock()
	defer s.gaugeMu.Unlock()
	return s.serving, s.waiting, s.peak
}
