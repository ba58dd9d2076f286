package pangolinsim_test

import (
	"bufio"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndependentOfTheClient keeps the fake from importing the client: a
// misunderstanding of the API shared by both would let every test pass.
func TestIndependentOfTheClient(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			assert.NotContains(t, imp.Path.Value, "pangolinapi", "%s imports the client", e.Name())
		}
		checked++
	}
	assert.Greater(t, checked, 3, "the package's files were found")
}

// TestTheBinaryLinksTheSimulatorNotItsHarness keeps the test harness out of the
// manager binary: `manager render` runs the simulator, and nothing that ships may reach
// the listener, faults and pace of simtest. Only the module's own packages can import an
// internal one, so the walk stays inside the module and needs no toolchain.
func TestTheBinaryLinksTheSimulatorNotItsHarness(t *testing.T) {
	root, module := moduleRoot(t)
	linked := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if linked[path] {
			return
		}
		linked[path] = true
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(path, module))), 0)
		require.NoError(t, err, path)
		for _, imp := range p.Imports { // test files' imports are apart, in TestImports
			if imp == module || strings.HasPrefix(imp, module+"/") {
				walk(imp)
			}
		}
	}
	walk(module + "/cmd/manager")

	simulator := module + "/internal/pangolinsim"
	assert.True(t, linked[simulator], "render links the simulator")
	for path := range linked {
		assert.False(t, strings.HasPrefix(path, simulator+"/"), "the manager binary links %s", path)
	}
}

// moduleRoot is the directory of the go.mod above the test and the module's path.
func moduleRoot(t *testing.T) (dir, module string) {
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer func() { _ = f.Close() }()
			lines := bufio.NewScanner(f)
			for lines.Scan() {
				if m, ok := strings.CutPrefix(lines.Text(), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test")
		dir = parent
	}
}
