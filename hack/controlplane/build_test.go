// Tests of build.sh, the step that fills the control-plane cache: from the official
// release files when it can, verified, and from source when it cannot. No test here
// reaches the internet: a local HTTP server (127.0.0.1) serves a stand-in release in the
// official layout, made of the binaries already in the cache, and the source build is
// replaced by a stub that only says it ran.
package controlplane_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager"}

// release is a stand-in for dl.k8s.io and etcd's GitHub releases: root holds
// kubernetes/<v>/bin/linux/<arch>/<binary>(.sha256) and etcd/<v>/<archive> with SHA256SUMS.
type release struct {
	root, k8sVersion, etcdVersion, arch string
	// digest of each served binary (etcd: of the binary inside the archive), and of the archive.
	digest        map[string]string
	archiveDigest string
}

func (r *release) k8sPath(name string) string {
	return fmt.Sprintf("/kubernetes/%s/bin/linux/%s/%s", r.k8sVersion, r.arch, name)
}

func (r *release) etcdArchive() string {
	return fmt.Sprintf("etcd-%s-linux-%s.tar.gz", r.etcdVersion, r.arch)
}

func (r *release) etcdPath(name string) string {
	return fmt.Sprintf("/etcd/%s/%s", r.etcdVersion, name)
}

// server serves the release, with some paths answering 404 and others other bytes.
func (r *release) server(t *testing.T, missing []string, replaced map[string][]byte) string {
	files := http.FileServer(http.Dir(r.root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, m := range missing {
			if req.URL.Path == m {
				http.NotFound(w, req)
				return
			}
		}
		if b, ok := replaced[req.URL.Path]; ok {
			_, _ = w.Write(b)
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestBuildScript(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Kubernetes publishes kube-apiserver for Linux only: elsewhere build.sh always builds from source")
	}
	rel := newRelease(t, cachedBinaries(t))
	stub := writeStub(t)

	// An address nothing listens on: a connection there is refused at once, as on a
	// machine whose network leads nowhere.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	unreachable := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	recorded := recordChecksums(t, rel, stub)
	wrongPin := strings.Replace(recorded, rel.archiveDigest, strings.Repeat("0", 64), 1)
	require.NotEqual(t, recorded, wrongPin)

	tests := []struct {
		name     string
		missing  []string
		replaced map[string][]byte
		// unreachable points both release roots at a closed port.
		unreachable bool
		pinned      string
		// wantOrigin is what ORIGIN says of a download; empty when the stub must run.
		wantOrigin string
		wantError  string
		wantReason string
	}{
		{
			name:       "it downloads the release and checks it against the published checksums when none is pinned",
			wantOrigin: "verified against the published SHA-256 (release-checksums pins 0 of the 3 files",
		},
		{
			name:       "it downloads the release and checks it against the pinned checksums too",
			pinned:     recorded,
			wantOrigin: "verified against the published and pinned SHA-256",
		},
		{
			name:      "it refuses a binary whose published checksum does not match",
			replaced:  map[string][]byte{rel.k8sPath("kube-apiserver"): []byte("not the published kube-apiserver")},
			wantError: "checksum mismatch for kubernetes/" + rel.k8sVersion + "/bin/linux/" + rel.arch + "/kube-apiserver",
		},
		{
			name:      "it refuses an archive whose pinned checksum does not match, though the published one does",
			pinned:    wrongPin,
			wantError: "checksums pins " + strings.Repeat("0", 64),
		},
		{
			name:        "it falls back to the source build when the release host is unreachable",
			unreachable: true,
			wantReason:  "connect",
		},
		{
			name:       "it falls back to the source build when a release file is missing",
			missing:    []string{rel.etcdPath(rel.etcdArchive())},
			wantReason: rel.etcdArchive() + ": (22) The requested URL returned error: 404",
		},
		{
			name:       "it falls back to the source build when etcd's SHA256SUMS does not list the archive",
			replaced:   map[string][]byte{rel.etcdPath("SHA256SUMS"): []byte(strings.Repeat("1", 64) + "  etcd-other.tar.gz\n")},
			wantReason: "SHA256SUMS lists no " + rel.etcdArchive(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := rel.server(t, tc.missing, tc.replaced)
			if tc.unreachable {
				base = unreachable
			}
			cache := t.TempDir()
			marker := filepath.Join(t.TempDir(), "source-build-ran")
			env := map[string]string{
				"PIC_CACHE_DIR":                 cache,
				"PIC_CONTROLPLANE_K8S_URL":      base + "/kubernetes",
				"PIC_CONTROLPLANE_ETCD_URL":     base + "/etcd",
				"PIC_CONTROLPLANE_CHECKSUMS":    writeFile(t, "release-checksums", "# pinned\n"+tc.pinned),
				"PIC_CONTROLPLANE_SOURCE_BUILD": stub,
				"STUB_MARKER":                   marker,
			}

			start := time.Now()
			stdout, stderr, err := runScript(t, env)
			elapsed := time.Since(start)
			dest := filepath.Join(cache, "controlplane", "k8s-"+rel.k8sVersion+"-etcd-"+rel.etcdVersion)

			leftovers, _ := filepath.Glob(filepath.Join(cache, "controlplane", ".build.*"))
			assert.Empty(t, leftovers, "no partial download stays in the cache")

			if tc.wantError != "" {
				require.Error(t, err, stderr)
				assert.Contains(t, stderr, tc.wantError)
				assert.NoDirExists(t, dest, "a refused download is not cached")
				assert.NoFileExists(t, marker, "a checksum mismatch is an error, not a reason to build from source")
				return
			}
			require.NoError(t, err, stderr)
			assert.Equal(t, dest, strings.TrimSpace(stdout), "the same cache directory whichever way the binaries came")
			origin, err := os.ReadFile(filepath.Join(dest, "ORIGIN"))
			require.NoError(t, err)

			if tc.wantOrigin != "" {
				assert.NoFileExists(t, marker, "a download needs no source build")
				assert.Contains(t, string(origin), tc.wantOrigin)
				for _, b := range binaries {
					info, err := os.Stat(filepath.Join(dest, b))
					require.NoError(t, err)
					assert.NotZero(t, info.Mode()&0o111, "%s is executable", b)
					assert.Equal(t, rel.digest[b], fileDigest(t, filepath.Join(dest, b)), "%s is the served one", b)
				}
				return
			}

			assert.FileExists(t, marker, "the source build ran")
			assert.Contains(t, string(origin), "built from source")
			var fallback []string
			for _, line := range strings.Split(stderr, "\n") {
				if strings.Contains(line, "falling back to the source build") {
					fallback = append(fallback, line)
				}
			}
			require.Len(t, fallback, 1, "one line says why it falls back:\n%s", stderr)
			assert.Contains(t, fallback[0], tc.wantReason)
			assert.Less(t, elapsed, 10*time.Second, "the fallback is decided within seconds")
		})
	}
}

// TestRecordChecksumsRefusesAChangedDigest: a release file must never change once
// published, so make controlplane-checksums does not overwrite a pin that differs.
func TestRecordChecksumsRefusesAChangedDigest(t *testing.T) {
	k8s, etcd := pinnedVersions(t)
	sum := strings.Repeat("a", 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/SHA256SUMS") {
			_, _ = fmt.Fprintf(w, "%s  etcd-%s-linux-amd64.tar.gz\n", sum, etcd)
			return
		}
		_, _ = fmt.Fprintln(w, sum)
	}))
	t.Cleanup(srv.Close)
	old := fmt.Sprintf("# header\n%s  kubernetes/%s/bin/linux/amd64/kube-apiserver\n", strings.Repeat("b", 64), k8s)
	table := writeFile(t, "release-checksums", old)

	_, stderr, err := runScript(t, map[string]string{
		"PIC_CONTROLPLANE_K8S_URL":   srv.URL + "/kubernetes",
		"PIC_CONTROLPLANE_ETCD_URL":  srv.URL + "/etcd",
		"PIC_CONTROLPLANE_CHECKSUMS": table,
		"PIC_CONTROLPLANE_ARCHES":    "amd64",
	}, "--record-checksums")

	require.Error(t, err)
	assert.Contains(t, stderr, "was recorded as "+strings.Repeat("b", 64))
	got, err := os.ReadFile(table)
	require.NoError(t, err)
	assert.Equal(t, old, string(got), "the table is left as it was")
}

// TestPinnedChecksumsAreForThePinnedVersions: release-checksums and the go.mod files
// change together, so a version bump without `make controlplane-checksums` is caught
// (empty the table where the release hosts are out of reach).
func TestPinnedChecksumsAreForThePinnedVersions(t *testing.T) {
	k8s, etcd := pinnedVersions(t)
	table, err := os.ReadFile("release-checksums")
	require.NoError(t, err)
	for _, line := range strings.Split(string(table), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		require.Len(t, fields, 2, "%q: want <sha256>  <path>", line)
		assert.Regexp(t, `^[0-9a-f]{64}$`, fields[0])
		assert.Regexp(t, `^(kubernetes/`+k8s+`/bin/linux/[a-z0-9]+/kube-(apiserver|controller-manager)|etcd/`+etcd+`/etcd-`+etcd+`-linux-[a-z0-9]+\.tar\.gz)$`,
			fields[1], "a line for a version that is not pinned: run make controlplane-checksums")
	}
}

// cachedBinaries returns the directory of the control plane already on this machine. The
// test serves those files as the release: without them it builds them, as every other
// test needing a control plane does, except under -short, where it skips.
func cachedBinaries(t *testing.T) string {
	t.Helper()
	complete := func(dir string) bool {
		for _, b := range binaries {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return false
			}
		}
		return dir != ""
	}
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); complete(dir) {
		return dir
	}
	where, stderr, err := runScript(t, map[string]string{"PIC_CACHE_DIR": os.Getenv("PIC_CACHE_DIR")}, "--where")
	require.NoError(t, err, stderr)
	if dir := strings.TrimSpace(where); complete(dir) {
		return dir
	}
	if testing.Short() {
		t.Skip("serves the cached control plane as a release, and none is cached; skipped with -short")
	}
	dir, err := testenv.Assets()
	require.NoError(t, err)
	require.True(t, complete(dir), "%s lacks one of %v", dir, binaries)
	return dir
}

// newRelease lays out the stand-in release from the binaries in dir: the Kubernetes
// binaries as symbolic links beside their .sha256, etcd in its archive beside SHA256SUMS.
func newRelease(t *testing.T, dir string) *release {
	t.Helper()
	k8s, etcd := pinnedVersions(t)
	r := &release{root: t.TempDir(), k8sVersion: k8s, etcdVersion: etcd, arch: runtime.GOARCH, digest: map[string]string{}}
	for _, b := range binaries {
		r.digest[b] = fileDigest(t, filepath.Join(dir, b))
	}
	for _, b := range []string{"kube-apiserver", "kube-controller-manager"} {
		p := filepath.Join(r.root, filepath.FromSlash(r.k8sPath(b)))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(dir, b), p))
		require.NoError(t, os.WriteFile(p+".sha256", []byte(r.digest[b]), 0o644))
	}

	// etcd's archives hold one directory named like the archive, with etcd, etcdctl,
	// etcdutl and documentation: etcd and a README are enough to show that only etcd is
	// taken out.
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	require.NoError(t, err)
	tw := tar.NewWriter(gz)
	top := strings.TrimSuffix(r.etcdArchive(), ".tar.gz")
	etcdBin, err := os.ReadFile(filepath.Join(dir, "etcd"))
	require.NoError(t, err)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{{top + "/README.md", 0o644, []byte("etcd\n")}, {top + "/etcd", 0o755, etcdBin}} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(f.body)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	archive := filepath.Join(r.root, filepath.FromSlash(r.etcdPath(r.etcdArchive())))
	require.NoError(t, os.MkdirAll(filepath.Dir(archive), 0o755))
	require.NoError(t, os.WriteFile(archive, buf.Bytes(), 0o644))
	r.archiveDigest = fileDigest(t, archive)
	sums := fmt.Sprintf("%s  etcd-%s-linux-other.tar.gz\n%s  %s\n", strings.Repeat("2", 64), etcd, r.archiveDigest, r.etcdArchive())
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(archive), "SHA256SUMS"), []byte(sums), 0o644))
	return r
}

// recordChecksums runs build.sh --record-checksums against the stand-in and returns the
// lines it records, which are then the pinned table of a download.
func recordChecksums(t *testing.T, rel *release, stub string) string {
	t.Helper()
	srv := rel.server(t, nil, nil)
	table := writeFile(t, "release-checksums", "# header kept\n")
	_, stderr, err := runScript(t, map[string]string{
		"PIC_CONTROLPLANE_K8S_URL":      srv + "/kubernetes",
		"PIC_CONTROLPLANE_ETCD_URL":     srv + "/etcd",
		"PIC_CONTROLPLANE_CHECKSUMS":    table,
		"PIC_CONTROLPLANE_ARCHES":       rel.arch,
		"PIC_CONTROLPLANE_SOURCE_BUILD": stub,
	}, "--record-checksums")
	require.NoError(t, err, stderr)
	got, err := os.ReadFile(table)
	require.NoError(t, err)
	want := fmt.Sprintf("# header kept\n%s  kubernetes/%s/bin/linux/%s/kube-apiserver\n%s  kubernetes/%s/bin/linux/%s/kube-controller-manager\n%s  etcd/%s/%s\n",
		rel.digest["kube-apiserver"], rel.k8sVersion, rel.arch,
		rel.digest["kube-controller-manager"], rel.k8sVersion, rel.arch,
		rel.archiveDigest, rel.etcdVersion, rel.etcdArchive())
	require.Equal(t, want, string(got))
	return strings.TrimPrefix(string(got), "# header kept\n")
}

// runScript runs build.sh with args, in an environment cleared of every variable that
// steers it (KUBEBUILDER_ASSETS would short-circuit it under make test) and set to env.
func runScript(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./build.sh", args...)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "KUBEBUILDER_ASSETS" || k == "PIC_CACHE_DIR" || strings.HasPrefix(k, "PIC_CONTROLPLANE_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	for k, v := range env {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func pinnedVersions(t *testing.T) (k8s, etcd string) {
	t.Helper()
	out, stderr, err := runScript(t, nil, "--versions")
	require.NoError(t, err, stderr)
	_, err = fmt.Sscanf(strings.TrimSpace(out), "kubernetes=%s etcd=%s", &k8s, &etcd)
	require.NoError(t, err, out)
	return k8s, etcd
}

// writeStub writes the stand-in for the source build: it fills the directory it is given
// as build.sh expects and leaves a mark at $STUB_MARKER.
func writeStub(t *testing.T) string {
	t.Helper()
	p := writeFile(t, "source-build", `#!/usr/bin/env bash
set -euo pipefail
for b in etcd kube-apiserver kube-controller-manager; do printf '#!/bin/sh\n' >"$1/$b"; chmod +x "$1/$b"; done
touch "${STUB_MARKER:-/dev/null}"
`)
	require.NoError(t, os.Chmod(p, 0o755))
	return p
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}
