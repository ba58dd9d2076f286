package pangolinapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTargetReadsEitherHeaderShape: the create answer carries hcHeaders JSON-encoded in
// a string, GET and the list an array (the reference's section 13); a target reads in
// both, and in the null of a target without headers.
func TestTargetReadsEitherHeaderShape(t *testing.T) {
	for name, headers := range map[string]string{
		"a string (create)":    `"[{\"name\":\"X-Probe\",\"value\":\"1\"}]"`,
		"an array (GET, list)": `[{"name":"X-Probe","value":"1"}]`,
		"null":                 `null`,
	} {
		t.Run(name, func(t *testing.T) {
			var tj targetJSON
			body := `{"targetId":7,"siteId":1,"ip":"web.svc","port":80,"enabled":true,"hcEnabled":true,"hcHostname":"web.svc","hcMode":"tcp","hcInterval":5,"hcHeaders":` + headers + `}`
			require.NoError(t, json.Unmarshal([]byte(body), &tj))
			assert.Equal(t, HealthCheck{Enabled: true, Hostname: "web.svc", Mode: "tcp", Interval: 5}, tj.target().Health)
		})
	}
}
