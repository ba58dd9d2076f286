package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountingProxy(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string // what the upstream received: method, path and query
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.URL.Query().Get("fail") != "" {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer upstream.Close()
	base, err := url.Parse(upstream.URL + "/api?token=t1")
	require.NoError(t, err)
	p := newCountingProxy(base)
	defer p.close()

	send := func(method, pathAndQuery string) {
		t.Helper()
		req, err := http.NewRequest(method, p.url()+pathAndQuery, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}

	send(http.MethodGet, "/v1/org/acme/resources?limit=5")
	send(http.MethodGet, "/v1/resource/12")
	assert.Equal(t, []string{
		"GET /api/org/acme/resources?token=t1&limit=5",
		"GET /api/resource/12?token=t1",
	}, seen, "the server's own query is kept beside the request's")

	send(http.MethodPut, "/v1/resource/12/target")
	send(http.MethodPut, "/v1/resource/13/target")
	send(http.MethodPut, "/v1/resource/14/target?fail=1")
	assert.Equal(t, 2, p.published(), "a target create the server refused publishes nothing")

	send(http.MethodDelete, "/v1/resource/12")
	assert.Equal(t, 1, p.published(), "a deleted resource is no longer published")
	send(http.MethodDelete, "/v1/resource/13?fail=1")
	assert.Equal(t, 1, p.published(), "a delete the server refused removes nothing")

	assert.Equal(t, map[string]int{
		"GET /v1/org/:orgId/resources":        1,
		"GET /v1/resource/:resourceId":        1,
		"PUT /v1/resource/:resourceId/target": 3,
		"DELETE /v1/resource/:resourceId":     2,
	}, p.snapshot())
	assert.Equal(t, 2, p.reads())
	assert.Equal(t, 5, p.writes())
}
