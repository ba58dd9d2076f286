package simtest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// send makes a request with the root key under ctx and returns its error, if any.
func send(ctx context.Context, s *simtest.Server, method, path, body string) (int, error) {
	var rd *strings.Reader
	if body == "" {
		rd = strings.NewReader("")
	} else {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+pangolinsim.RootKey.Token())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// Requests beyond Pace.MaxConcurrent wait for a slot: with every served request held, the
// gauge shows the limit served and the rest waiting, and never more served at once.
func TestMaxConcurrentQueuesTheRest(t *testing.T) {
	s := newPacedServer(t, simtest.Pace{MaxConcurrent: 2})
	release := make(chan struct{})
	s.SetFault(func(_ http.ResponseWriter, _ *http.Request) bool {
		<-release // runs inside the slot: holds it
		return false
	})
	const n = 5
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			codes[i], _ = send(t.Context(), s, http.MethodGet, "/v1/org/interop/domains", "")
		})
	}
	require.Eventually(t, func() bool {
		serving, waiting, _ := s.Load()
		return serving == 2 && waiting == n-2
	}, 10*time.Second, 5*time.Millisecond, "two served, the rest waiting")
	close(release)
	wg.Wait()
	for _, c := range codes {
		assert.Equal(t, http.StatusOK, c)
	}
	serving, waiting, peak := s.Load()
	assert.Equal(t, [3]int{0, 0, 2}, [3]int{serving, waiting, peak})
	assert.Equal(t, n, s.Reads(), "every request counted once")
}

// Without a limit every request is served at once.
func TestNoLimitServesAllAtOnce(t *testing.T) {
	s := newPacedServer(t, simtest.Pace{})
	release := make(chan struct{})
	s.SetFault(func(_ http.ResponseWriter, _ *http.Request) bool {
		<-release
		return false
	})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() { _, _ = send(t.Context(), s, http.MethodGet, "/v1/org/interop/domains", "") })
	}
	require.Eventually(t, func() bool { serving, _, _ := s.Load(); return serving == 6 }, 10*time.Second, 5*time.Millisecond)
	close(release)
	wg.Wait()
}

// The service time is spent before the request is handled: a client that gives up
// during it has changed nothing, and frees its slot.
func TestServiceTimeComesBeforeTheHandling(t *testing.T) {
	s := newPacedServer(t, simtest.Pace{ServiceTime: time.Hour, MaxConcurrent: 1})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := send(ctx, s, http.MethodPut, "/v1/org/interop/resource", `{"name":"a","mode":"http","subdomain":"a","domainId":"domain1"}`)
		done <- err
	}()
	require.Eventually(t, func() bool { serving, _, _ := s.Load(); return serving == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Empty(t, s.Resources(), "nothing handled during the service time")
	cancel()
	require.Error(t, <-done)
	require.Eventually(t, func() bool { serving, waiting, _ := s.Load(); return serving == 0 && waiting == 0 }, 10*time.Second, 5*time.Millisecond)
	assert.Empty(t, s.Resources())

	quick := newPacedServer(t, simtest.Pace{ServiceTime: time.Microsecond, MaxConcurrent: 1})
	code, err := send(t.Context(), quick, http.MethodPut, "/v1/org/interop/resource", `{"name":"a","mode":"http","subdomain":"a","domainId":"domain1"}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, code)
	assert.Len(t, quick.Resources(), 1)
}

// Closing the server releases the requests waiting for a slot.
func TestCloseReleasesWaiting(t *testing.T) {
	s := simtest.NewPacedServer(pangolinsim.Options{}, simtest.Pace{ServiceTime: time.Hour, MaxConcurrent: 1})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { _, _ = send(t.Context(), s, http.MethodGet, "/v1/org/interop/domains", "") })
	}
	require.Eventually(t, func() bool { serving, waiting, _ := s.Load(); return serving == 1 && waiting == 2 }, 10*time.Second, 5*time.Millisecond)
	s.Close()
	released := make(chan struct{})
	go func() { wg.Wait(); close(released) }()
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("requests still waiting 10 s after Close")
	}
}

func newPacedServer(t *testing.T, pace simtest.Pace) *simtest.Server {
	s := simtest.NewPacedServer(pangolinsim.Options{}, pace)
	t.Cleanup(s.Close)
	return s
}
