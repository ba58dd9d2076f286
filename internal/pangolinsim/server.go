package pangolinsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
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
}

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

// Server is an in-memory Pangolin Integration API. It is safe for concurrent use.
type Server struct {
	opts Options

	countMu sync.Mutex
	counts  map[string]int

	mu      sync.Mutex
	orgs    map[string]bool
	res     map[int]*resource
	targets map[int]*target
	// byResource indexes targets by their resource (a target never changes resource):
	// lists, routers and the bench read one resource's targets at a time, and at tens
	// of thousands of targets reading every target each time is quadratic.
	byResource map[int]map[int]*target
	nextRes    int
	nextTgt    int
	rng        *rand.Rand
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

// New returns a simulator of the Pangolin Options describe. It serves no port: mount
// it in a server (internal/pangolinsim/simtest serves it on loopback), or reach it
// through Transport.
func New(opts Options) *Server {
	opts.defaults()
	return &Server{
		opts:       opts,
		counts:     map[string]int{},
		orgs:       map[string]bool{opts.Org: true},
		res:        map[int]*resource{},
		targets:    map[int]*target{},
		byResource: map[int]map[int]*target{},
		nextRes:    1,
		nextTgt:    1,
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

// SetDenyRawResources switches Options.DenyRawResources, as an administrator turning
// flags.allow_raw_resources off (deny) or on would: the raw resources that exist stay.
func (s *Server) SetDenyRawResources(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.DenyRawResources = deny
}

// Counts returns how many requests each route received, keyed by method and pattern
// ("GET /v1/org/:orgId/resources"); requests to no route count under "<METHOD> unknown".
// `manager render` reports the writes; tests check what a change cost.
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

// Deletes is the number of DELETE requests received.
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

// ServeHTTP counts r (Count), then answers it (Answer).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Count(r)
	s.Answer(w, r)
}

// Count counts r under its route, as Counts reports it. A server that puts something
// in front of Answer (a fault, a wait) counts first: a request it intercepts was sent.
func (s *Server) Count(r *http.Request) {
	pattern := "unknown"
	if rt, _, found := s.lookup(r.Method, routePath(r)); found {
		pattern = rt.pattern
	}
	s.countMu.Lock()
	s.counts[r.Method+" "+pattern]++
	s.countMu.Unlock()
}

// routePath is the path r is routed by: Express's non-strict routing treats "/x/" as "/x".
func routePath(r *http.Request) string {
	if len(r.URL.Path) > 1 {
		return strings.TrimSuffix(r.URL.Path, "/")
	}
	return r.URL.Path
}

// Answer answers r like the Integration API at /v1, without counting it.
func (s *Server) Answer(w http.ResponseWriter, r *http.Request) {
	path := routePath(r)
	rt, params, found := s.lookup(r.Method, path)
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 10<<20))
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

// WriteError answers with status and Pangolin's JSON error envelope carrying message.
func WriteError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, errorEnvelope(status, message))
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
