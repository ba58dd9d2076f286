package pangolinapi_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// TestHealthCheckRoundTrip: what is sent is what every read gives back, for the
// fields PIC writes; zero integers are left out (the server refuses 0); an update
// sends the check whole, so what an earlier check left is cleared.
func TestHealthCheckRoundTrip(t *testing.T) {
	s := newFake(t, pangolinsim.Options{Sites: []pangolinsim.Site{{ID: 1, NiceID: "edge", Name: "edge", Type: "newt"}}})
	c := newClient(t, s)
	ctx := context.Background()
	sub := "app"
	rid := s.SeedResource(pangolinsim.Resource{Name: "app", Subdomain: &sub, DomainID: "domain1", Enabled: true}).ID

	httpCheck := pangolinapi.HealthCheck{Enabled: true, Hostname: "web.svc", Port: 8080, Mode: pangolinapi.HealthModeHTTP,
		Scheme: "http", Path: "/healthz", Method: "GET", Interval: 10, Timeout: 2, UnhealthyThreshold: 3}
	created, err := c.CreateTarget(ctx, rid, pangolinapi.TargetSpec{SiteID: 1, IP: "web.svc", Port: 80, Method: "http", Enabled: true, Health: httpCheck})
	require.NoError(t, err)
	assert.Equal(t, httpCheck, created.Health, "the create answer")
	got, err := c.GetTarget(ctx, created.TargetID)
	require.NoError(t, err)
	assert.Equal(t, httpCheck, got.Health, "GET")
	listed, err := c.ListTargets(ctx, rid)
	require.NoError(t, err)
	assert.Equal(t, httpCheck, listed[0].Health, "the list")
	assert.Equal(t, pangolinsim.HealthCheck{Hostname: "web.svc", Port: 8080, Mode: "http", Scheme: "http", Path: "/healthz", Method: "GET",
		Interval: 10, Timeout: 2, UnhealthyThreshold: 3}, s.Targets(rid)[0].HC, "stored as sent; the healthy threshold left out")

	tcpCheck := pangolinapi.HealthCheck{Enabled: true, Hostname: "web.svc", Port: 8080, Mode: pangolinapi.HealthModeTCP, Interval: 5}
	updated, err := c.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: 1, IP: "web.svc", Health: tcpCheck})
	require.NoError(t, err)
	assert.Equal(t, tcpCheck, updated.Health, "the http fields, the timeout and the threshold are cleared")

	updated, err = c.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: 1, IP: "web.svc", Port: 81})
	require.NoError(t, err)
	assert.False(t, updated.Health.Enabled, "an update without a check turns it off")
	assert.False(t, s.Targets(rid)[0].HCEnabled)

	raw, err := c.CreateRawTarget(ctx, rid, pangolinapi.RawTargetSpec{SiteID: 1, IP: "db.svc", Port: 5432, Enabled: true, Health: tcpCheck})
	require.NoError(t, err)
	assert.Equal(t, tcpCheck, raw.Health, "a raw target carries one too")
}
