package plugin

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// part is a shared part with one controller, named after it.
type part struct{ name string }

func (p *part) Declare() SharedDeclaration {
	return SharedDeclaration{Controllers: []Controller{{Name: p.name}}}
}

type otherPart struct{}

func (otherPart) Declare() SharedDeclaration { return SharedDeclaration{} }

// TestSharePartsAreBuiltOnce: every source that asks for a part gets the one the first
// built, and the core is told of each part once.
func TestSharePartsAreBuiltOnce(t *testing.T) {
	shared := NewShared()
	builds := 0
	build := func(name string) func() (*part, error) {
		return func() (*part, error) { builds++; return &part{name: name}, nil }
	}

	first, err := Share(shared, "a", build("a"))
	require.NoError(t, err)
	second, err := Share(shared, "a", build("a"))
	require.NoError(t, err)
	assert.Same(t, first, second, "a second source gets the first one's part")
	_, err = Share(shared, "b", build("b"))
	require.NoError(t, err)
	assert.Equal(t, 2, builds)

	_, err = Share(shared, "c", func() (*part, error) { return nil, errors.New("refused") })
	require.ErrorContains(t, err, "refused")
	_, err = Share(shared, "c", build("c"))
	require.NoError(t, err, "a failed build is not kept")

	var names []string
	for _, d := range shared.Declarations() {
		for _, c := range d.Controllers {
			names = append(names, c.Name)
		}
	}
	assert.Equal(t, []string{"a", "b", "c"}, names, "each part once, in the order built")

	_, err = Share(shared, "a", func() (otherPart, error) { return otherPart{}, nil })
	assert.ErrorContains(t, err, "not a", "one name, one type")
	_, err = Share(nil, "a", build("a"))
	assert.ErrorContains(t, err, "SourceDeps.Shared is not set")
}
