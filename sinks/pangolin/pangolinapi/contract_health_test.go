package pangolinapi_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// TestContractHealthChecks is what the direct sink relies on of target health checks
// (the reference's section 13): the fields it writes read back as written, whatever
// the read, so that a converged target is never written again; an update turns a check
// off; the server refuses what pangolinapi.HealthCheck.Validate refuses first. What
// hcHealth does on the contract's site is logged: the sink never enables a check on a
// site that is not a Newt site, so it depends on none of it.
func TestContractHealthChecks(t *testing.T) {
	c := newContract(t)
	ctx := context.Background()
	cl := c.client
	r := c.create(t, "hc")
	backend := c.prefix + ".invalid" // never resolves: nothing is ever healthy

	checks := []struct {
		name  string
		check pangolinapi.HealthCheck
	}{
		{"http", pangolinapi.HealthCheck{Enabled: true, Hostname: backend, Port: 8080, Mode: pangolinapi.HealthModeHTTP,
			Scheme: "http", Path: "/healthz", Method: "GET", Interval: 10, Timeout: 1, HealthyThreshold: 1, UnhealthyThreshold: 3}},
		{"tcp", pangolinapi.HealthCheck{Enabled: true, Hostname: backend, Port: 5432, Mode: pangolinapi.HealthModeTCP, Interval: 5}},
	}
	for i, tc := range checks {
		t.Run("a target with an "+tc.name+" check reads back as written", func(t *testing.T) {
			created, err := cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{
				SiteID: c.site.SiteID, IP: backend, Port: 9000 + i, Method: pangolinapi.MethodHTTP, Enabled: true,
				Path: "/" + tc.name, PathMatchType: pangolinapi.MatchPrefix, Health: tc.check,
			})
			require.NoError(t, err)
			assert.Equal(t, tc.check, created.Health, "the create answer")
			got, err := cl.GetTarget(ctx, created.TargetID)
			require.NoError(t, err)
			assert.Equal(t, tc.check, got.Health, "GET")
			list, err := cl.ListTargets(ctx, r.ResourceID)
			require.NoError(t, err)
			i := slices.IndexFunc(list, func(tg pangolinapi.Target) bool { return tg.TargetID == created.TargetID })
			require.GreaterOrEqual(t, i, 0, "the created target is listed")
			assert.Equal(t, tc.check, list[i].Health, "the list")
			health := c.raw(t, http.MethodGet, "/target/"+strconv.Itoa(created.TargetID), "", true)
			t.Logf("%s check created on a %q site: %s", tc.name, c.site.Type, health.Body)

			// A probe that changes is written in place, the check sent whole.
			changed := tc.check
			changed.Interval, changed.Timeout = 30, 0
			updated, err := cl.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: backend, Health: changed})
			require.NoError(t, err)
			assert.Equal(t, created.TargetID, updated.TargetID)
			assert.Equal(t, changed, updated.Health, "the update answer: the timeout cleared")
			got, err = cl.GetTarget(ctx, created.TargetID)
			require.NoError(t, err)
			assert.Equal(t, changed, got.Health, "GET after the update")

			// A check no longer asked is turned off by an update.
			off, err := cl.UpdateTarget(ctx, created.TargetID, pangolinapi.TargetUpdate{SiteID: c.site.SiteID, IP: backend})
			require.NoError(t, err)
			assert.False(t, off.Health.Enabled)
			got, err = cl.GetTarget(ctx, created.TargetID)
			require.NoError(t, err)
			assert.False(t, got.Health.Enabled, "GET after turning it off")
			assert.Equal(t, "/"+tc.name, got.Path, "the rest of the target is untouched")
		})
	}

	t.Run("the server refuses what Validate refuses", func(t *testing.T) {
		target := `"siteId":` + strconv.Itoa(c.site.SiteID) + `,"ip":"` + backend + `","port":80,"method":"http"`
		cases := []struct {
			name, hc string
			invalid  pangolinapi.HealthCheck
		}{
			{"hcEnabled without hcHostname", `"hcEnabled":true,"hcMode":"tcp"`, pangolinapi.HealthCheck{Enabled: true, Mode: pangolinapi.HealthModeTCP}},
			{"hcInterval 0", `"hcEnabled":true,"hcHostname":"` + backend + `","hcMode":"tcp","hcInterval":0`, pangolinapi.HealthCheck{}},
			{"an empty hcPath", `"hcEnabled":true,"hcHostname":"` + backend + `","hcMode":"http","hcPath":""`,
				pangolinapi.HealthCheck{Enabled: true, Hostname: backend, Mode: pangolinapi.HealthModeHTTP}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rep := c.raw(t, http.MethodPut, "/resource/"+strconv.Itoa(r.ResourceID)+"/target", `{`+target+`,`+tc.hc+`}`, true)
				assert.Equal(t, http.StatusBadRequest, rep.Status, rep.Body)
				t.Logf("%s: %s", tc.name, rep.Message)
				// The client never sends it: 0 is not sent at all (it stands for none),
				// the others are refused before sending.
				if tc.invalid.Enabled {
					assert.Error(t, tc.invalid.Validate())
				}
			})
		}
	})
}
