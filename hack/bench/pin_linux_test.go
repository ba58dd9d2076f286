package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPinSetsEveryThread pins the test process, whose runtime has several threads, to
// one CPU and reads each thread's mask back from /proc.
func TestPinSetsEveryThread(t *testing.T) {
	usable, err := usableCPUs()
	require.NoError(t, err)
	require.NotEmpty(t, usable)
	t.Cleanup(func() { require.NoError(t, pin(os.Getpid(), usable)) })

	one := usable[len(usable)-1:]
	require.NoError(t, pin(os.Getpid(), one))
	threads, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	require.Greater(t, len(threads), 1, "a Go process runs several threads")
	for _, th := range threads {
		data, err := os.ReadFile(filepath.Join("/proc/self/task", th.Name(), "status"))
		if err != nil {
			continue // the thread ended since the listing
		}
		assert.Equal(t, formatCPUList(one), statusField(string(data), "Cpus_allowed_list"), "thread %s", th.Name())
	}
}

func statusField(status, field string) string {
	for line := range strings.SplitSeq(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
