package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []int
		err  bool
	}{
		{name: "one CPU is a list of one", in: "1", want: []int{1}},
		{name: "a range holds both ends", in: "0-3", want: []int{0, 1, 2, 3}},
		{name: "ranges and CPUs mix, sorted", in: "6,0-1,4", want: []int{0, 1, 4, 6}},
		{name: "a CPU named twice counts once", in: "2,1-2", want: []int{1, 2}},
		{name: "spaces around parts are allowed", in: " 0 , 2 ", want: []int{0, 2}},
		{name: "a range of one CPU is that CPU", in: "3-3", want: []int{3}},
		{name: "an empty list is refused", in: "", err: true},
		{name: "a reversed range is refused", in: "3-1", err: true},
		{name: "a negative CPU is refused", in: "-1", err: true},
		{name: "a name is refused", in: "cpu0", err: true},
		{name: "an empty part is refused", in: "0,,1", err: true},
		{name: "an open range is refused", in: "2-", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPUList(tt.in)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFormatCPUList(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want string
	}{
		{name: "no CPU is an empty list", in: nil, want: ""},
		{name: "one CPU is its number", in: []int{1}, want: "1"},
		{name: "consecutive CPUs collapse into a range", in: []int{0, 1, 2, 3}, want: "0-3"},
		{name: "gaps split the ranges", in: []int{0, 1, 4, 6, 7}, want: "0-1,4,6-7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, formatCPUList(tt.in))
			if len(tt.in) > 0 {
				back, err := parseCPUList(tt.want)
				require.NoError(t, err)
				assert.Equal(t, tt.in, back, "what is written reads back")
			}
		})
	}
}

func TestNewAffinity(t *testing.T) {
	tests := []struct {
		name                string
		mode, cp, client    string
		usable              []int
		wantModes           []string
		wantCP, wantClient  []int
		wantNote, wantError bool
	}{
		{
			name:   "two cores by default: the control plane on CPU 0, the client on CPU 1, both placements",
			usable: []int{0, 1}, wantModes: []string{affinitySplit, affinityShared}, wantCP: []int{0}, wantClient: []int{1},
		},
		{
			name: "more cores: the client gets the last, the control plane the rest",
			mode: affinitySplit, usable: []int{2, 0, 3, 1}, wantModes: []string{affinitySplit}, wantCP: []int{0, 1, 2}, wantClient: []int{3},
		},
		{
			name: "the sets asked for are taken as they are",
			mode: affinityBoth, cp: "0-1", client: "2-3", usable: []int{0, 1, 2, 3},
			wantModes: []string{affinitySplit, affinityShared}, wantCP: []int{0, 1}, wantClient: []int{2, 3},
		},
		{
			name:   "one CPU: shared, and a note says why",
			usable: []int{0}, wantModes: []string{affinityShared}, wantNote: true,
		},
		{
			name: "shared asked for: no sets are needed",
			mode: affinityShared, usable: []int{0}, wantModes: []string{affinityShared},
		},
		{name: "an unknown mode is refused", mode: "apart", usable: []int{0, 1}, wantError: true},
		{name: "one set without the other is refused", cp: "0", usable: []int{0, 1}, wantError: true},
		{name: "a CPU in both sets is refused", cp: "0-1", client: "1", usable: []int{0, 1}, wantError: true},
		{name: "a CPU the bench may not use is refused", cp: "0", client: "5", usable: []int{0, 1}, wantError: true},
		{name: "a malformed set is refused", cp: "0", client: "one", usable: []int{0, 1}, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, note, err := newAffinity(tt.mode, tt.cp, tt.client, tt.usable)
			if tt.wantError {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantModes, a.Modes)
			assert.Equal(t, tt.wantCP, a.ControlPlane)
			assert.Equal(t, tt.wantClient, a.Client)
			assert.Equal(t, tt.wantNote, note != "", note)
		})
	}
}

func TestAffinityCPUs(t *testing.T) {
	a := affinity{Modes: []string{affinitySplit, affinityShared}, ControlPlane: []int{0}, Client: []int{1}, All: []int{0, 1}}
	assert.Equal(t, []int{0}, a.cpus(affinitySplit, false), "split: the control plane's")
	assert.Equal(t, []int{1}, a.cpus(affinitySplit, true), "split: the client's")
	assert.Equal(t, []int{0, 1}, a.cpus(affinityShared, false), "shared: every CPU")
	assert.Equal(t, []int{0, 1}, a.cpus(affinityShared, true), "shared: every CPU")
	assert.Equal(t, affinitySplit, a.primary())
}
