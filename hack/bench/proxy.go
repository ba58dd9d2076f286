package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
)

// routeParams names the path segment that follows each of these words, as the in-repo
// server's route table does (internal/pangolinsim/handlers.go), so that a real
// server's requests count under the keys of pangolinsim.Server.Counts that the direct part
// reads: "/v1/resource/12/targets" under "/v1/resource/:resourceId/targets".
var routeParams = map[string]string{
	"org":             "orgId",
	"domain":          "domainId",
	"site":            "siteId", // "niceId" under an org: /v1/org/:orgId/site/:niceId
	"resource":        "resourceId",
	"public-resource": "resourceId",
	"target":          "targetId",
	"rule":            "ruleId",
}

// targetCreatePattern is the route of a target's create; resourcePattern a resource's
// (its delete).
const (
	targetCreatePattern = "/v1/resource/:resourceId/target"
	resourcePattern     = "/v1/resource/:resourceId"
)

// routePattern is the route pattern of a request path, and its parameters by name.
func routePattern(path string) (string, map[string]string) {
	// Express's non-strict routing treats "/x/" as "/x", and the in-repo server too.
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	segs := strings.Split(path, "/")
	params := map[string]string{}
	for i := 0; i+1 < len(segs); i++ {
		name, ok := routeParams[strings.ToLower(segs[i])]
		if !ok || segs[i+1] == "" {
			continue
		}
		if name == "siteId" && i >= 2 && strings.EqualFold(segs[i-2], "org") {
			name = "niceId"
		}
		params[name] = segs[i+1]
		segs[i+1] = ":" + name
		i++ // a value is never a word of the table
	}
	return strings.Join(segs, "/"), params
}

// countingProxy is a reverse proxy on loopback in front of a real Pangolin. It counts
// the requests it forwards by method and route pattern, and notes the resources whose
// target create the server accepted. PIC is given its URL plus /v1, which it maps onto
// the server's base URL.
type countingProxy struct {
	srv   *httptest.Server
	proxy *httputil.ReverseProxy

	mu         sync.Mutex
	requests   map[string]int  // "GET /v1/resource/:resourceId"
	withTarget map[string]bool // resource ids, as in the path
	failed     int             // requests the server could not be reached for
}

func newCountingProxy(upstream *url.URL) *countingProxy {
	p := &countingProxy{requests: map[string]int{}, withTarget: map[string]bool{}}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// PIC and the plain clients send several requests at once: keep that many
	// connections (and TLS sessions) open rather than the default two.
	transport.MaxIdleConnsPerHost = 64
	p.proxy = &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			rest := strings.TrimPrefix(pr.In.URL.EscapedPath(), "/v1")
			out := *upstream
			out.RawPath = strings.TrimSuffix(upstream.EscapedPath(), "/") + rest
			if path, err := url.PathUnescape(out.RawPath); err == nil {
				out.Path = path
			}
			// The server's URL may carry a query of its own (a gateway's token, say):
			// keep it beside the request's.
			out.RawQuery = joinQueries(upstream.RawQuery, pr.In.URL.RawQuery)
			pr.Out.URL = &out
			pr.Out.Host = "" // the server's own host name, for its TLS and its virtual hosts
		},
		// The default handler logs the error; PIC sees the 502 and logs it itself.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			p.mu.Lock()
			p.failed++
			p.mu.Unlock()
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = httptest.NewServer(p)
	return p
}

func (p *countingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pattern, params := routePattern(r.URL.Path)
	p.mu.Lock()
	p.requests[r.Method+" "+pattern]++
	p.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: w}
	p.proxy.ServeHTTP(rec, r)
	if rec.status < 200 || rec.status >= 300 {
		return
	}
	switch {
	case r.Method == http.MethodPut && pattern == targetCreatePattern:
		p.mu.Lock()
		p.withTarget[params["resourceId"]] = true
		p.mu.Unlock()
	case r.Method == http.MethodDelete && pattern == resourcePattern:
		// A resource deleted and created again has a new id: it counts once it has a
		// target again.
		p.mu.Lock()
		delete(p.withTarget, params["resourceId"])
		p.mu.Unlock()
	}
}

// joinQueries joins two raw query strings, either of which may be empty.
func joinQueries(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "&" + b
}

func (p *countingProxy) url() string { return p.srv.URL }

// close stops the proxy once its requests are answered.
func (p *countingProxy) close() { p.srv.Close() }

// reset sets the counts and the resources with a target back to nothing.
func (p *countingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = map[string]int{}
	p.withTarget = map[string]bool{}
}

func (p *countingProxy) resetCounts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = map[string]int{}
}

func (p *countingProxy) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.requests))
	for k, v := range p.requests {
		out[k] = v
	}
	return out
}

// reads counts the GETs; writes the PUTs, POSTs and DELETEs, as the in-repo server does.
func (p *countingProxy) reads() int { return pangolinsim.ReadsIn(p.snapshot()) }

func (p *countingProxy) writes() int { return pangolinsim.WritesIn(p.snapshot()) }

func (p *countingProxy) published() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.withTarget)
}

func (p *countingProxy) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// statusRecorder notes the status a handler answers with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	// An informational answer (100, 103) comes before the final one.
	if s.status == 0 && code >= http.StatusOK {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController, which the proxy flushes through, reach the
// connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
