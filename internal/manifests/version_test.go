package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// imageRepository is where the release workflow pushes PIC's image.
const imageRepository = "ghcr.io/stefb69/pangolin-ingress-controller"

// releaseVersion is a release tag: vX.Y.Z, or vX.Y.Z-<pre-release> such as v1.2.0-rc.1.
var releaseVersion = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// readVersion returns the VERSION file: the released version everything else follows.
func readVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(repoPath("VERSION"))
	require.NoError(t, err)
	v := strings.TrimSpace(string(data))
	require.Regexp(t, releaseVersion, v, "VERSION holds one release tag, vX.Y.Z")
	return v
}

// TestVersionIsOnePlace checks that the VERSION file is the one source of the released
// version: the chart, config/manager and the Makefile install the image of that release,
// so a user following the README gets an image that exists.
func TestVersionIsOnePlace(t *testing.T) {
	version := readVersion(t)
	image := imageRepository + ":" + version

	t.Run("Chart.yaml's version is VERSION without its v, and its appVersion is VERSION", func(t *testing.T) {
		ch, err := loadChart()
		require.NoError(t, err)
		assert.Equal(t, strings.TrimPrefix(version, "v"), ch.Metadata.Version)
		assert.Equal(t, version, ch.Metadata.AppVersion)
	})
	t.Run("config/manager's images entry names the released image and VERSION as its tag", func(t *testing.T) {
		data, err := os.ReadFile(repoPath("config", "manager", "kustomization.yaml"))
		require.NoError(t, err)
		var k types.Kustomization
		require.NoError(t, yaml.UnmarshalStrict(data, &k))
		require.Len(t, k.Images, 1)
		assert.Equal(t, types.Image{Name: imageRepository, NewTag: version}, k.Images[0])
	})
	t.Run("every rendering runs the released image", func(t *testing.T) {
		for _, r := range renderings {
			t.Run(r.name, func(t *testing.T) {
				c := manager(t, only[appsv1.Deployment](t, r.render(t), "Deployment"))
				assert.Equal(t, image, c.Image)
			})
		}
	})
	t.Run("the Makefile reads VERSION and renders the same image repository", func(t *testing.T) {
		data, err := os.ReadFile(repoPath("Makefile"))
		require.NoError(t, err)
		mk := string(data)
		assert.Contains(t, mk, "VERSION     := $(shell cat $(CURDIR)/VERSION)")
		assert.Contains(t, mk, "IMAGE_REPO  := "+imageRepository)
		assert.Contains(t, mk, "IMAGE       ?= $(IMAGE_REPO):$(VERSION)")
		assert.Contains(t, mk, "edit set image $(IMAGE_REPO)=$(IMAGE)", "make manifests replaces the image by config/manager's name for it")
	})
}

// TestManifestsImageOverride renders what `make manifests IMAGE=...` renders: an overlay
// of config/default that sets the image by the name config/manager gives it.
func TestManifestsImageOverride(t *testing.T) {
	base, err := filepath.Abs(repoPath("config", "default"))
	require.NoError(t, err)
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, base) // kustomize wants a relative path to a base
	require.NoError(t, err)
	k := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{rel},
		Images:    []types.Image{{Name: imageRepository, NewName: "registry.example.com/pic", NewTag: "v9.9.9"}},
	}
	data, err := yaml.Marshal(k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o644))
	c := manager(t, only[appsv1.Deployment](t, kustomizeBuild(t, dir), "Deployment"))
	assert.Equal(t, "registry.example.com/pic:v9.9.9", c.Image)
}
