package pangolinsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Domain is a domain of the org.
type Domain struct {
	ID         string // domainId, e.g. "domain1"
	BaseDomain string
	Type       string // "wildcard" (default), "ns" or "cname"
	Verified   bool
}

// Site is a site of the org.
type Site struct {
	ID     int
	NiceID string
	Name   string
	Type   string // "local" (default), "newt", "wireguard"
	// Offline makes GET site report online:false, as for a Newt agent not connected.
	Offline bool
	// NewtID is the id of the Newt agent a Newt site created through the API accepts;
	// its secret is kept only as a hash, as Pangolin does (NewtCredentialsMatch).
	NewtID         string
	newtSecretHash [32]byte
	// NewtVersion is the version its Newt agent reported on connecting ("" reads null).
	NewtVersion string
}

// Key is an API key. The bearer token is Token().
type Key struct {
	ID     string // 15 lower-case letters and digits on a real server
	Secret string
	// Org is the org an org-scoped key may act in; "" makes a root key, which passes
	// every org check.
	Org string
	// Actions are the action ids granted (e.g. "listResources"); nil grants them all.
	Actions []string
}

// Token is the value that follows "Bearer " in the Authorization header.
func (k Key) Token() string { return k.ID + "." + k.Secret }

// RootKey is the key a server gets when Options.Keys is empty.
var RootKey = Key{ID: "picfakerootkey0", Secret: "pangolintest-root-secret"}

// Options describe the fixture. The zero value gives the reference server's fixture:
// org "interop", domain "domain1" = example.com (wildcard, verified), local site 1
// "murky-merriams-shrew", and RootKey.
type Options struct {
	Org     string
	Domains []Domain
	Sites   []Site
	Keys    []Key
	// Roles are the org's roles besides Admin (roleId 1), which it always has; nil gives
	// the "Member" role (roleId 2) of a new org. A role without an id takes the next one.
	Roles []Role
	// Users are the org's members; nil gives DefaultOwner alone. PIC never creates
	// either: tests place them here.
	Users []User
	// IdentityProviders are the ids of the identity providers the org's resources may
	// skip to (skipToIdpId); nil gives id 1, the reference fixture's "test-idp". Another
	// id is answered with a 500, as the real server does.
	IdentityProviders []int
	// AnyIdentityProvider makes every skipToIdpId name an identity provider. Offline
	// simulation (`manager render`) uses it, where the org's cannot be known.
	AnyIdentityProvider bool
	// DenyRawResources is Pangolin's flags.allow_raw_resources set to false: creating a
	// TCP or UDP resource is refused, and so is moving one to another port. The zero
	// value allows them, as the reference server does.
	DenyRawResources bool
	// AnySite makes every niceId name a site: one asked for that is not among Sites is
	// added, online. Offline simulation (`manager render`) uses it, where the sites a
	// configuration names cannot be known.
	AnySite bool
	// HealthyBackends puts a Newt agent on every online Newt site that probes each
	// checked target as soon as it is written, and finds it healthy: what Pangolin serves
	// once Newt has reported, with backends that answer. Offline simulation (`manager
	// render`) uses it; the zero value leaves health to SetTargetHealth, as Pangolin
	// without a Newt agent does.
	HealthyBackends bool
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

func (o *Options) defaults() {
	if o.Org == "" {
		o.Org = "interop"
	}
	if o.Domains == nil {
		o.Domains = []Domain{{ID: "domain1", BaseDomain: "example.com", Type: "wildcard", Verified: true}}
	}
	if o.Sites == nil {
		o.Sites = []Site{{ID: 1, NiceID: "murky-merriams-shrew", Name: "k8s-local", Type: "local"}}
	}
	if o.Keys == nil {
		o.Keys = []Key{RootKey}
	}
	for i := range o.Domains {
		if o.Domains[i].Type == "" {
			o.Domains[i].Type = "wildcard"
		}
	}
	for i := range o.Sites {
		if o.Sites[i].Type == "" {
			o.Sites[i].Type = "local"
		}
	}
	if o.IdentityProviders == nil {
		o.IdentityProviders = []int{1}
	}
	o.accessDefaults()
}

// Fault intercepts a request before the fake handles it. It returns true when it has
// answered (or dropped) the request, false to let the fake handle it.
type Fault func(w http.ResponseWriter, r *http.Request) bool

// Server is an in-memory Pangolin Integration API. It is safe for concurrent use.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:41234; the API is under BaseURL().
	URL string

	srv  *http.Server
	opts Options
	// ctx ends when the server closes, releasing requests a fault holds.
	ctx    context.Context
	cancel context.CancelFunc

	faultMu sync.RWMutex
	fault   Fault

	countMu sync.Mutex
	counts  map[string]int

	// slots holds one token per request being served when MaxConcurrent is set.
	slots   chan struct{}
	gaugeMu sync.Mutex
	serving int // requests being served (service time included)
	waiting int // requests waiting for a slot
	peak    int // the most requests ever served at once

	mu      sync.Mutex
	orgs    map[string]bool
	res     map[int]*resource
	targets map[int]*target
	nextRes int
	nextTgt int
	rng     *rand.Rand
	// Access control: each table has its own AUTOINCREMENT ids, never reused.
	nextPolicy     int
	nextPassword   int
	nextPincode    int
	nextHeaderAuth int
	nextWhitelist  int
	nextRule       int
	secretWrites   int
	policyRng      *rand.Rand // apart from rng, so that resource niceIds stay as they were
}

// NewServer starts a fake on a loopback port. Close it when done. It panics when no
// loopback port can be had, as net/http/httptest does: it serves tests and demos.
func NewServer(opts Options) *Server {
	s := NewHandler(opts)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("inmemory Pangolin: listen on a loopback port: %v", err))
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.URL = "http://" + listener.Addr().String()
	go func() { _ = s.srv.Serve(listener) }()
	return s
}

// NewHandler returns a fake that is not listening, to mount in another server.
func NewHandler(opts Options) *Server {
	opts.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	var slots chan struct{}
	if opts.MaxConcurrent > 0 {
		slots = make(chan struct{}, opts.MaxConcurrent)
	}
	return &Server{
		slots:   slots,
		ctx:     ctx,
		cancel:  cancel,
		opts:    opts,
		counts:  map[string]int{},
		orgs:    map[string]bool{opts.Org: true},
		res:     map[int]*resource{},
		targets: map[int]*target{},
		nextRes: 1,
		nextTgt: 1,
		// A fixed seed: niceIds look random, as on a real server, but every run of a
		// test sees the same ones.
		rng:            rand.New(rand.NewPCG(0x70616e676f6c696e, 1)),
		policyRng:      rand.New(rand.NewPCG(0x70616e676f6c696e, 2)),
		nextPolicy:     1,
		nextPassword:   1,
		nextPincode:    1,
		nextHeaderAuth: 1,
		nextWhitelist:  1,
		nextRule:       1,
	}
}

// BaseURL is the API root including /v1, as a client is configured with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the server. Requests held by a fault are released first.
func (s *Server) Close() {
	s.cancel()
	if s.srv != nil {
		_ = s.srv.Close() // closes the listener and every connection
	}
}

// SetDenyRawResources switches Options.DenyRawResources, as an administrator turning
// flags.allow_raw_resources off (deny) or on would: the raw resources that exist stay.
func (s *Server) SetDenyRawResources(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.DenyRawResources = deny
}

// SetFault installs f for every following request; nil removes it.
func (s *Server) SetFault(f Fault) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.fault = f
}

// Counts returns how many requests each route received, keyed by method and pattern
// ("GET /v1/org/:orgId/resources"); requests to no route count under "<METHOD> unknown".
// Requests a fault intercepted are counted too: they were sent.
func (s *Server) Counts() map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Reads is the number of GET requests received; Writes the number of PUT, POST and DELETE.
func (s *Server) Reads() int { return ReadsIn(s.Counts()) }

// Deletes is the number of DELETE requests received, those a fault answered included.
func (s *Server) Deletes() int {
	return countIn(s.Counts(), func(m string) bool { return m == http.MethodDelete })
}

// Writes is the number of PUT, POST and DELETE requests received.
func (s *Server) Writes() int { return WritesIn(s.Counts()) }

// ReadsIn is the number of GETs in counts, keyed as Counts keys them ("GET /v1/..."):
// for a client that counts a real server's requests the same way.
func ReadsIn(counts map[string]int) int {
	return countIn(counts, func(m string) bool { return m == http.MethodGet })
}

// WritesIn is the number of PUTs, POSTs and DELETEs in counts, keyed as Counts keys them.
func WritesIn(counts map[string]int) int {
	return countIn(counts, func(m string) bool {
		return m == http.MethodPut || m == http.MethodPost || m == http.MethodDelete
	})
}

func countIn(counts map[string]int, match func(method string) bool) int {
	n := 0
	for k, v := range counts {
		if m, _, _ := strings.Cut(k, " "); match(m) {
			n += v
		}
	}
	return n
}

// ResetCounts sets every counter back to zero.
func (s *Server) ResetCounts() {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	s.counts = map[string]int{}
}

// admit waits for a slot when MaxConcurrent is set, then spends ServiceTime. It
// returns false when the request's context or the server ends first.
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
	if d := s.opts.ServiceTime; d > 0 {
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

// Load is the requests being served now, those waiting for a slot (MaxConcurrent), and
// the most ever served at once.
func (s *Server) Load() (serving, waiting, peak int) {
	s.gaugeMu.Lock()
	defer s.gaugeMu.Unlock()
	return s.serving, s.waiting, s.peak
}

// request is one request being handled.
type request struct {
	r      *http.Request
	params map[string]string
	key    *Key
	body   *object // nil when the body was not parsed (no JSON Content-Type)
}

type response struct {
	status  int
	message string
	data    any // marshalled as the envelope's data; nil gives null
}

func ok(status int, message string, data any) response {
	return response{status: status, message: message, data: data}
}

func fail(status int, format string, args ...any) response {
	return response{status: status, message: fmt.Sprintf(format, args...)}
}

// route is one endpoint. Object routes look their object up before the org and action
// checks (a missing id is 404 whatever the key), org routes check the org first.
type route struct {
	method  string
	pattern string
	action  string
	// object returns the org of the route's object, or a 404 response.
	object func(s *Server, q *request) (org string, notFound *response)
	handle func(s *Server, q *request) response
}

func (rt route) match(method, path string) (map[string]string, bool) {
	if method != rt.method {
		return nil, false
	}
	want := strings.Split(rt.pattern, "/")
	got := strings.Split(path, "/")
	if len(want) != len(got) {
		return nil, false
	}
	params := map[string]string{}
	for i, w := range want {
		switch {
		case strings.HasPrefix(w, ":"):
			if got[i] == "" {
				return nil, false
			}
			params[w[1:]] = got[i]
		case !strings.EqualFold(w, got[i]): // Express routes are case-insensitive
			return nil, false
		}
	}
	return params, true
}

// ServeHTTP answers like the Integration API at /v1.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	// Express's non-strict routing treats "/x/" as "/x".
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	rt, params, found := s.lookup(r.Method, path)
	pattern := "unknown"
	if found {
		pattern = rt.pattern
	}
	s.countMu.Lock()
	s.counts[r.Method+" "+pattern]++
	s.countMu.Unlock()
	// The body is read before any fault runs: net/http notices a client that hangs up
	// (and cancels the request's context) only once the body has been read.
	body, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	// Then the pace of a real server: a slot, the service time.
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
	// body-parser runs before routing and authentication: a malformed JSON body is a 400
	// on any path, with or without a key.
	isJSON := strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "application/json")
	if isJSON && len(bytes.TrimSpace(body)) > 0 {
		if msg := jsonSyntaxError(body); msg != "" {
			writeJSON(w, http.StatusBadRequest, errorEnvelope(http.StatusBadRequest, msg))
			return
		}
	}

	if r.Method == http.MethodGet && path == TraefikConfigPath {
		// Pangolin serves it on its internal port, without a key; here beside the API.
		writeJSON(w, http.StatusOK, s.traefikConfig())
		return
	}
	if r.Method == http.MethodGet && (path == "/v1" || path == "/v1/") {
		writeJSON(w, http.StatusOK, map[string]string{"message": "Healthy"})
		return
	}
	if !strings.HasPrefix(path, "/v1/") {
		cannot(w, r)
		return
	}
	// The authentication middleware is mounted on the whole authenticated router, so an
	// unknown route without a key is 401 before it is 404.
	key, denied := s.authenticate(r)
	if denied != nil {
		writeResponse(w, *denied)
		return
	}
	if !found {
		cannot(w, r)
		return
	}
	q := &request{r: r, params: params, key: key}
	if isJSON {
		q.body, _ = parseObject(body)
		if q.body == nil && len(bytes.TrimSpace(body)) == 0 {
			q.body = &object{values: map[string]json.RawMessage{}} // body-parser: {} for an empty body
		}
	}
	writeResponse(w, s.serve(rt, q))
}

func (s *Server) lookup(method, path string) (route, map[string]string, bool) {
	for _, rt := range routes {
		if p, ok := rt.match(method, path); ok {
			return rt, p, true
		}
	}
	return route{}, nil, false
}

func (s *Server) serve(rt route, q *request) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	org := q.params["orgId"]
	if rt.object != nil {
		var nf *response
		if org, nf = rt.object(s, q); nf != nil {
			return *nf
		}
	}
	if q.key.Org != "" && q.key.Org != org {
		return fail(http.StatusForbidden, "Key does not have access to this organization")
	}
	if q.key.Actions != nil && !slices.Contains(q.key.Actions, rt.action) {
		return fail(http.StatusForbidden, "Key does not have permission perform this action")
	}
	return rt.handle(s, q)
}

// authenticate checks the bearer token the way Pangolin's verifyApiKey does.
func (s *Server) authenticate(r *http.Request) (*Key, *response) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "Bearer ") {
		return nil, &response{status: http.StatusUnauthorized, message: "API key required"}
	}
	token := strings.TrimPrefix(h, "Bearer ")
	if !strings.Contains(token, ".") {
		// Without a dot the whole token is taken for a key id: unknown, it is refused
		// like any other; an existing id without its secret makes the check throw.
		for _, k := range s.opts.Keys {
			if k.ID == token {
				return nil, &response{status: http.StatusInternalServerError, message: "An error occurred checking API key"}
			}
		}
		return nil, &response{status: http.StatusUnauthorized, message: "Invalid API key"}
	}
	parts := strings.Split(token, ".")
	for i := range s.opts.Keys {
		k := &s.opts.Keys[i]
		if k.ID == parts[0] {
			if k.Secret != parts[1] {
				break
			}
			return k, nil
		}
	}
	return nil, &response{status: http.StatusUnauthorized, message: "Invalid API key"}
}

// envelope is every JSON answer's shape.
type envelope struct {
	Data    any    `json:"data"`
	Success bool   `json:"success"`
	Error   bool   `json:"error"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

// errorEnvelope carries "stack": null, as with ENVIRONMENT=prod (dev puts a server stack
// trace there).
func errorEnvelope(status int, message string) any {
	return struct {
		Data    any     `json:"data"`
		Success bool    `json:"success"`
		Error   bool    `json:"error"`
		Message string  `json:"message"`
		Status  int     `json:"status"`
		Stack   *string `json:"stack"`
	}{nil, false, true, message, status, nil}
}

func writeResponse(w http.ResponseWriter, r response) {
	if r.status >= 400 {
		writeJSON(w, r.status, errorEnvelope(r.status, r.message))
		return
	}
	writeJSON(w, r.status, envelope{Data: r.data, Success: true, Message: r.message, Status: r.status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"message":"inmemory Pangolin: cannot encode response"}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// cannot is Express's 404 page for a route or method it does not have.
func cannot(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot %s %s</pre>\n</body>\n</html>\n",
		html.EscapeString(r.Method), html.EscapeString(r.URL.EscapedPath()))
}
