package manifests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// workflow is the part of a GitHub Actions workflow these tests read.
type workflow struct {
	// On is the key "on", which YAML 1.1 (sigs.k8s.io/yaml) reads as true.
	On struct {
		Push struct {
			Tags []string `json:"tags"`
		} `json:"push"`
	} `json:"true"`
	Jobs map[string]struct {
		Needs any `json:"needs"`
		Steps []struct {
			Name string            `json:"name"`
			Uses string            `json:"uses"`
			Run  string            `json:"run"`
			With map[string]any    `json:"with"`
			Env  map[string]string `json:"env"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(repoPath(".github", "workflows", name))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	return w
}

// pinnedAction is owner/repo[/path]@vN[.N[.N]]: a released version, not a branch.
var pinnedAction = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@v[0-9]+(\.[0-9]+){0,2}$`)

// TestWorkflowsPinActions: every action a workflow uses is pinned to a released version.
func TestWorkflowsPinActions(t *testing.T) {
	files, err := filepath.Glob(repoPath(".github", "workflows", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		w := readWorkflow(t, filepath.Base(f))
		for job, j := range w.Jobs {
			for _, s := range j.Steps {
				if s.Uses != "" {
					assert.Regexp(t, pinnedAction, s.Uses, "%s, job %s", filepath.Base(f), job)
				}
			}
		}
	}
}

// TestReleaseWorkflow checks what the release publishes, as far as reading the workflow
// can: the run itself needs GitHub and ghcr.io (docs/releasing.md).
func TestReleaseWorkflow(t *testing.T) {
	w := readWorkflow(t, "release.yaml")
	assert.Equal(t, []string{"v*.*.*"}, w.On.Push.Tags, "a release is a semver tag")
	require.Contains(t, w.Jobs, "test")
	require.Contains(t, w.Jobs, "publish")
	assert.Equal(t, "test", w.Jobs["publish"].Needs, "nothing is published before make test passes")
	var test []string
	for _, s := range w.Jobs["test"].Steps {
		test = append(test, s.Run)
	}
	assert.Contains(t, test, ".ci/run", "the release runs the same tests as CI")

	var run []string
	var image map[string]any
	for _, s := range w.Jobs["publish"].Steps {
		run = append(run, s.Run)
		if strings.HasPrefix(s.Uses, "docker/build-push-action@") {
			image = s.With
		}
	}
	all := strings.Join(run, "\n")
	assert.Contains(t, all, `hack/release/version.sh "$GITHUB_REF_NAME"`, "the tag names everything")
	require.NotNil(t, image, "the image is built with docker/build-push-action")
	assert.Equal(t, "linux/amd64,linux/arm64", image["platforms"])
	assert.Equal(t, true, image["push"])
	assert.Equal(t, "Dockerfile", image["file"])
	assert.Equal(t, "${{ steps.version.outputs.tags }}", image["tags"])
	assert.Contains(t, all, `helm package charts/pangolin-ingress-controller --version "$CHART_VERSION" --app-version "$VERSION"`)
	assert.Contains(t, all, "helm push \"dist/pangolin-ingress-controller-$CHART_VERSION.tgz\" oci://ghcr.io/stefb69/charts")
	assert.Contains(t, all, `make manifests IMAGE="$IMAGE"`)
	assert.Regexp(t, `gh release create "\$GITHUB_REF_NAME"[^\n]*\\\n\s+dist/install.yaml`, all)
}

// TestReleaseVersionScript runs hack/release/version.sh, which turns a tag into what the
// release publishes.
func TestReleaseVersionScript(t *testing.T) {
	const repo = imageRepository
	cases := []struct {
		name, tag, versionFile string
		want                   map[string]string
		wantErr                string
	}{
		{"a release pushes its tag, vX.Y, vX and latest", "v1.2.3", "v1.2.3\n", map[string]string{
			"version": "v1.2.3", "chart_version": "1.2.3", "prerelease": "false", "image": repo + ":v1.2.3",
			"tags": repo + ":v1.2.3," + repo + ":v1.2," + repo + ":v1," + repo + ":latest",
		}, ""},
		{"a pre-release pushes its own tag only, whatever VERSION says", "v1.3.0-rc.1", "v1.2.3\n", map[string]string{
			"version": "v1.3.0-rc.1", "chart_version": "1.3.0-rc.1", "prerelease": "true", "image": repo + ":v1.3.0-rc.1",
			"tags": repo + ":v1.3.0-rc.1",
		}, ""},
		{"a release whose tag is not VERSION is refused", "v1.2.4", "v1.2.3\n", nil, "VERSION says v1.2.3"},
		{"a tag without v is refused", "1.2.3", "v1.2.3\n", nil, "want vX.Y.Z"},
		{"a tag with two numbers is refused", "v1.2", "v1.2.3\n", nil, "want vX.Y.Z"},
		{"a leading zero is refused", "v1.02.3", "v1.2.3\n", nil, "want vX.Y.Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			versionFile := filepath.Join(t.TempDir(), "VERSION")
			require.NoError(t, os.WriteFile(versionFile, []byte(c.versionFile), 0o644))
			cmd := exec.Command("bash", repoPath("hack", "release", "version.sh"), c.tag)
			cmd.Env = append(os.Environ(), "VERSION_FILE="+versionFile)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, stderr.String(), c.wantErr)
				assert.Empty(t, stdout.String(), "nothing reaches $GITHUB_OUTPUT")
				return
			}
			require.NoError(t, err, stderr.String())
			got := map[string]string{}
			for line := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
				k, v, ok := strings.Cut(line, "=")
				require.True(t, ok, line)
				got[k] = v
			}
			assert.Equal(t, c.want, got)
		})
	}
	t.Run("the repository's VERSION is a release the script accepts", func(t *testing.T) {
		out, err := exec.Command("bash", repoPath("hack", "release", "version.sh"), readVersion(t)).CombinedOutput()
		require.NoError(t, err, string(out))
	})
}
