package pangolinsim

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// Transport serves every request with s, in memory, with no listener: what `manager
// render` needs to drive the direct sink without a network. It is a plain ResponseWriter
// rather than net/http/httptest's recorder, which has no place in the shipped binary.
func (s *Server) Transport() http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		// What a server would see: a body, even empty.
		in := r.Clone(r.Context())
		if in.Body == nil {
			in.Body = http.NoBody
		}
		w := &responseWriter{header: http.Header{}}
		s.ServeHTTP(w, in)
		if w.status == 0 {
			w.status = http.StatusOK
		}
		return &http.Response{
			Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
			StatusCode:    w.status,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        w.header,
			Body:          io.NopCloser(bytes.NewReader(w.body.Bytes())),
			ContentLength: int64(w.body.Len()),
			Request:       r,
		}, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// responseWriter keeps what a handler writes.
type responseWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
