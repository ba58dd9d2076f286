package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// TestDemoOneShot runs the demo as a user does with DEMO_ONESHOT=1 make demo: its own
// process, a local control plane, the real manager binary. It passes when the demo
// prints the table with every sample host and the expected Warnings, and exits 0.
func TestDemoOneShot(t *testing.T) {
	root, demo, manager := buildDemo(t)
	output := runDemo(t, root, demo, manager)
	for _, want := range append(append([]string{}, expected.hosts...), expected.warnings...) {
		assert.Contains(t, output, want)
	}
	assert.Contains(t, output, "kubeconfig: ", "the demo tells the user how to reach its cluster")
	assert.Contains(t, output, "WARNINGS", "the table shows the Warning events")
	assert.NotContains(t, output, "ClusterIPNotAllocated", "only PIC's own Warnings are shown")
}

// TestDemoDirectOneShot is DEMO_SINK=pangolin DEMO_ONESHOT=1 make demo: the same samples
// published by the direct sink into the in-repo Pangolin server, whose routers it prints.
func TestDemoDirectOneShot(t *testing.T) {
	root, demo, manager := buildDemo(t)
	output := runDemo(t, root, demo, manager, "DEMO_SINK=pangolin")
	for _, want := range append(append([]string{}, expectedDirect.hosts...), expectedDirect.warnings...) {
		assert.Contains(t, output, want)
	}
	assert.Contains(t, output, "PathRegexp(`^/api(/.*)?$`)", "path routing reaches Pangolin")
	assert.Contains(t, output, "http://api.demo.svc.cluster.local:9090", "the named port resolved")
	assert.NotContains(t, output, "ApexHost", "the organization's domain itself can be published")
	assert.Regexp(t, `postgres\s+tcp:5432\s+pic-default-[0-9a-f]+\s+postgres\.demo\.svc\.cluster\.local:5432\s+`+demoAddress, output,
		"the TCP service is published, and its status shows the address")
}

// buildDemo builds the demo and, unless make test has built it, the manager.
func buildDemo(t *testing.T) (root, demo, manager string) {
	t.Helper()
	testenv.SkipIfShort(t) // the demo starts a control plane
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	manager = os.Getenv("PIC_MANAGER_BINARY") // make test builds bin/manager and sets it
	if manager == "" {
		manager = filepath.Join(t.TempDir(), "manager")
		build := exec.Command("go", "build", "-o", manager, "./cmd/manager")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "build the manager: %s", out)
	}
	demo = filepath.Join(t.TempDir(), "demo")
	build := exec.Command("go", "build", "-o", demo, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the demo: %s", out)
	return root, demo, manager
}

// runDemo runs the demo once with DEMO_ONESHOT=1 and returns what it printed.
func runDemo(t *testing.T, root, demo, manager string, env ...string) string {
	t.Helper()
	cmd := exec.Command(demo)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "DEMO_ONESHOT=1", "PIC_MANAGER_BINARY="+manager), env...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	err := cmd.Run()
	output := stdout.String()
	require.NoError(t, err, "the demo failed; its output:\n%s", output)
	t.Logf("demo output:\n%s", output)
	return output
}
