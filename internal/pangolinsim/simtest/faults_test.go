package simtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// do sends a request with the root key and returns its status and the envelope's message.
func do(t *testing.T, s *simtest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+pangolinsim.RootKey.Token())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env struct{ Message string }
	_ = json.Unmarshal(b, &env)
	return resp.StatusCode, env.Message
}

func TestFaultsAndCounts(t *testing.T) {
	s := simtest.NewServer(pangolinsim.Options{})
	t.Cleanup(s.Close)

	s.SetFault(simtest.Outage(http.StatusServiceUnavailable))
	status, message := do(t, s, "GET", "/v1/org/interop/resources", "")
	assert.Equal(t, 503, status)
	assert.Equal(t, "Service Unavailable", message)

	s.SetFault(simtest.When(simtest.IsWrite, simtest.DropConnection()))
	req, _ := http.NewRequest(http.MethodPut, s.URL+"/v1/org/interop/resource", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	assert.Error(t, err, "a dropped connection gives no answer")
	status, _ = do(t, s, "GET", "/v1/org/interop/resources", "")
	assert.Equal(t, 200, status, "reads pass")

	s.SetFault(simtest.Latency(50 * time.Millisecond))
	start := time.Now()
	do(t, s, "GET", "/v1/org/interop/domains", "")
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	status, message = do(t, s, "PUT", "/v1/org/interop/resource", `{"name":"slow","mode":"http","domainId":"domain1"}`)
	assert.Equal(t, 201, status, "a delayed write still reaches the simulator with its body: %s", message)
	s.SetFault(nil)

	assert.Equal(t, 3, s.Reads(), "requests a fault answered are counted: they were sent")
	assert.Equal(t, 2, s.Writes())
	assert.Equal(t, 2, s.Counts()["GET /v1/org/:orgId/resources"])
	s.ResetCounts()
	do(t, s, "GET", "/v1/nope", "")
	assert.Equal(t, map[string]int{"GET unknown": 1}, s.Counts())
}
