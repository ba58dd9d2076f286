package simtest

import (
	"net/http"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
)

// Outage answers every request with status and the JSON error envelope, as a server
// behind a failing proxy or a crashing handler would.
func Outage(status int) Fault {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		pangolinsim.WriteError(w, status, http.StatusText(status))
		return true
	}
}

// DropConnection closes the connection without an answer.
func DropConnection() Fault {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler) // net/http closes the connection
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return true
	}
}

// Latency delays every request by d, then lets the simulator answer it.
func Latency(d time.Duration) Fault {
	return func(_ http.ResponseWriter, r *http.Request) bool {
		select {
		case <-time.After(d):
			return false
		case <-r.Context().Done():
			return true
		}
	}
}

// Hang never answers: the request stays open until the client gives up, like the real
// server on an empty blueprint.
func Hang() Fault {
	return func(_ http.ResponseWriter, r *http.Request) bool {
		<-r.Context().Done()
		return true
	}
}

// When applies f only to the requests match selects.
func When(match func(*http.Request) bool, f Fault) Fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		return match(r) && f(w, r)
	}
}

// IsWrite selects PUT, POST and DELETE requests, for faults that only hit writes.
func IsWrite(r *http.Request) bool {
	return r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete
}
