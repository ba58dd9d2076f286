package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two test binaries of a -coverpkg run report the same blocks; b.go's second block is
// covered by the second binary only.
const profile = `mode: set
example.com/m/a/a.go:1.1,2.2 3 1
example.com/m/a/a.go:3.1,4.2 1 0
example.com/m/b/b.go:1.1,2.2 2 0
example.com/m/b/b.go:3.1,4.2 8 0
example.com/m/a/a.go:1.1,2.2 3 0
example.com/m/a/a.go:3.1,4.2 1 0
example.com/m/b/b.go:1.1,2.2 2 0
example.com/m/b/b.go:3.1,4.2 8 1
`

func TestPerPackage(t *testing.T) {
	pkgs, err := perPackage(strings.NewReader(profile))
	require.NoError(t, err)
	assert.Equal(t, map[string]counts{
		"example.com/m/a": {covered: 3, total: 4},
		"example.com/m/b": {covered: 8, total: 10},
	}, pkgs, "a block is counted once, covered if any binary covered it")
}

func TestReport(t *testing.T) {
	pkgs := map[string]counts{"example.com/m/a": {3, 4}, "example.com/m/b": {8, 10}}
	cases := []struct {
		name      string
		min       float64
		wantBelow []string
	}{
		{"no threshold fails nothing", 0, nil},
		{"a package exactly at the threshold passes", 75, nil},
		{"a package under the threshold is named", 80, []string{"example.com/m/a"}},
		{"every package under the threshold is named, sorted", 90, []string{"example.com/m/a", "example.com/m/b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			assert.Equal(t, c.wantBelow, report(&out, pkgs, c.min))
			assert.Contains(t, out.String(), "total")
			assert.Contains(t, out.String(), "78.6%", "the total counts statements, not packages: 11 of 14")
		})
	}
}
