package pangolinsim_test

import (
	"go/parser"
	"go/token"
	"os"
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
