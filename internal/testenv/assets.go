package testenv

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	assetsOnce sync.Once
	assetsDir  string
	assetsErr  error
)

// Assets returns the directory holding etcd, kube-apiserver and kube-controller-manager,
// getting them with hack/controlplane/build.sh on first use (a verified download, or else
// a build from source). Its progress goes to os.Stderr because a cold source build takes
// minutes and a silent test looks hung.
//
// In a test binary run with -short it fails instead: make test-unit promises to build
// nothing and to need no control plane, so a test that gets here without SkipIfShort is
// a bug to be told at once, not a 10-minute build.
func Assets() (string, error) {
	if testing.Testing() && flag.Parsed() && testing.Short() {
		return "", errors.New("a test run with -short asked for a control plane: call testenv.SkipIfShort before starting one")
	}
	assetsOnce.Do(func() {
		assetsDir, assetsErr = buildAssets()
	})
	return assetsDir, assetsErr
}

func buildAssets() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack", "controlplane", "build.sh"))
	cmd.Dir = root
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build control plane binaries: %w", err)
	}
	dir := strings.TrimSpace(out.String())
	if dir == "" {
		return "", errors.New("build control plane binaries: build.sh printed no directory")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("find control plane binary: %w", err)
		}
	}
	return dir, nil
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// RepoRoot returns the directory holding the module's go.mod.
func RepoRoot() (string, error) {
	rootOnce.Do(func() {
		rootDir, rootErr = findRepoRoot()
	})
	return rootDir, rootErr
}

func findRepoRoot() (string, error) {
	// Start from this source file so that any test package, whatever its working
	// directory, finds the same root. With -trimpath the path is not absolute: fall
	// back to the working directory, which go test sets to the package directory.
	start := ""
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		start = filepath.Dir(file)
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find repository root: %w", err)
		}
		start = wd
	}
	for dir := start; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("find repository root: no go.mod above %s", start)
		}
	}
}
