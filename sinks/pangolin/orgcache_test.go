package pangolin

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countedList is an orgList of strings whose reads are counted, each answering the
// read's number, on a clock the test moves.
func countedList() (*orgList[string], *atomic.Int32, *time.Time) {
	var reads atomic.Int32
	l := &orgList[string]{read: func(context.Context) ([]string, error) {
		n := reads.Add(1)
		return []string{string(rune('0' + n))}, nil
	}}
	now := time.Unix(1700000000, 0)
	return l, &reads, &now
}

func TestOrgListKeepsWhatItRead(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		refresh   bool
		after     time.Duration
		wantReads int32
	}{
		{"a list held answers without a read", false, 0, 1},
		{"a list held answers without a read however old it is, unless asked to refresh", false, 10 * orgTTL, 1},
		{"a refresh of a list younger than orgTTL does not read", true, orgTTL - time.Second, 1},
		{"a refresh of a list as old as orgTTL reads again", true, orgTTL, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, reads, now := countedList()
			clock := func() time.Time { return *now }
			_, err := l.get(ctx, false, clock)
			require.NoError(t, err)
			*now = now.Add(c.after)
			got, err := l.get(ctx, c.refresh, clock)
			require.NoError(t, err)
			assert.Equal(t, c.wantReads, reads.Load())
			assert.Equal(t, []string{string(rune('0' + c.wantReads))}, got, "the list last read")
		})
	}
}

func TestOrgListReadSinceKeepsNothing(t *testing.T) {
	ctx := context.Background()
	l, reads, now := countedList()
	clock := func() time.Time { return *now }
	_, err := l.get(ctx, false, clock)
	require.NoError(t, err)

	got, at, err := l.readSince(ctx, *now, clock)
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, got, "a list read since answers")
	assert.Equal(t, *now, at)

	*now = now.Add(time.Second)
	got, _, err = l.readSince(ctx, *now, clock)
	require.NoError(t, err)
	assert.Equal(t, []string{"2"}, got, "a list read before is read again")
	held, _ := l.held()
	assert.Equal(t, []string{"1"}, held, "what readSince read is not kept until set")
	assert.EqualValues(t, 2, reads.Load())
}
