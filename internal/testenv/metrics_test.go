package testenv

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const exposition = `# HELP pic_pangolinresource_writes_total Writes.
# TYPE pic_pangolinresource_writes_total counter
pic_pangolinresource_writes_total{operation="create",result="success"} 3
pic_pangolinresource_writes_total{operation="create",result="error"} 1
pic_pangolinresource_writes_total{operation="update",result="success"} 2
# HELP pic_operator_crd_info Variant.
# TYPE pic_operator_crd_info gauge
pic_operator_crd_info{variant="fork"} 1
# HELP pic_reconcile_duration_seconds Duration.
# TYPE pic_reconcile_duration_seconds histogram
pic_reconcile_duration_seconds_bucket{source="ingress",le="1"} 4
pic_reconcile_duration_seconds_bucket{source="ingress",le="+Inf"} 5
pic_reconcile_duration_seconds_sum{source="ingress"} 0.5
pic_reconcile_duration_seconds_count{source="ingress"} 5
`

func TestMetrics(t *testing.T) {
	m, err := ParseMetrics(exposition)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		match map[string]string
		sum   float64
		has   bool
	}{
		{"pic_pangolinresource_writes_total", nil, 6, true},
		{"pic_pangolinresource_writes_total", map[string]string{"operation": "create"}, 4, true},
		{"pic_pangolinresource_writes_total", map[string]string{"operation": "create", "result": "error"}, 1, true},
		{"pic_pangolinresource_writes_total", map[string]string{"operation": "delete"}, 0, false},
		{"pic_pangolinresource_writes_total", map[string]string{"no_such_label": "x"}, 0, false},
		{"pic_operator_crd_info", map[string]string{"variant": "fork"}, 1, true},
		{"pic_operator_crd_info", map[string]string{"variant": "original"}, 0, false},
		{"pic_reconcile_duration_seconds_count", map[string]string{"source": "ingress"}, 5, true},
		{"pic_reconcile_duration_seconds_sum", nil, 0.5, true},
		{"pic_not_exported", nil, 0, false},
	} {
		assert.Equal(t, tc.sum, m.Sum(tc.name, tc.match), "Sum(%s, %v)", tc.name, tc.match)
		assert.Equal(t, tc.has, m.Has(tc.name, tc.match), "Has(%s, %v)", tc.name, tc.match)
	}
	_, err = ParseMetrics("not a metric line {")
	assert.Error(t, err)
}

func TestProcStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/status is Linux's")
	}
	got := ProcStatus(os.Getpid(), "VmRSS", "VmHWM", "NoSuchField")
	assert.Greater(t, got["VmRSS"], int64(1<<20), "this test's own resident set, in bytes")
	assert.GreaterOrEqual(t, got["VmHWM"], got["VmRSS"], "the peak is at least what is resident now")
	assert.NotContains(t, got, "NoSuchField")
	assert.NotContains(t, got, "VmSize", "only the names asked for")
	assert.Empty(t, ProcStatus(-1, "VmRSS"), "no such process")
}
