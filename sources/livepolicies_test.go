package sources

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
)

// countingReader counts the lists it serves.
type countingReader struct {
	client.Reader
	lists atomic.Int32
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists.Add(1)
	return c.Reader.List(ctx, list, opts...)
}

func TestLiveReadsAreSharedByObjectsCreatedBeforeThem(t *testing.T) {
	policy := &accessv1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "guard"}}
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		created []time.Duration // each object's creation, from start; reads happen at start+10s
		lists   int32
	}{
		{name: "objects created well before the read share it", created: []time.Duration{0, time.Second, 3 * time.Second}, lists: 1},
		{name: "an object stamped a second and the clock margin before the read shares it", created: []time.Duration{0, 4 * time.Second}, lists: 1},
		{name: "an object stamped within the margin and a second of the read reads again: PIC's clock may run ahead", created: []time.Duration{0, 5 * time.Second}, lists: 2},
		{name: "an object stamped with the second the read began in reads again", created: []time.Duration{0, 10200 * time.Millisecond}, lists: 2},
		{name: "an object created after the last read reads again", created: []time.Duration{0, 11 * time.Second}, lists: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reader := &countingReader{Reader: fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(policy.DeepCopy()).Build()}
			reads := newLiveReads(reader)
			now := start.Add(10 * time.Second)
			reads.now = func() time.Time { return now }
			for _, created := range tc.created {
				// A creation timestamp has one-second resolution.
				stamp := start.Add(created).Truncate(time.Second)
				if created >= 10*time.Second {
					now = start.Add(created + 2*time.Second)
				}
				got, err := reads.policies(context.Background(), "shop", stamp)
				require.NoError(t, err)
				require.Len(t, got, 1, "the read sees the policy")
			}
			assert.Equal(t, tc.lists, reader.lists.Load())
		})
	}
}

func TestAFailedLiveReadIsNotShared(t *testing.T) {
	reader := &countingReader{Reader: fake.NewClientBuilder().WithScheme(apis.Scheme()).Build()}
	reads := newLiveReads(reader)
	reads.reader = failingReader{}
	_, err := reads.policies(context.Background(), "shop", time.Time{}.Add(time.Hour))
	require.Error(t, err)
	reads.reader = reader
	_, err = reads.policies(context.Background(), "shop", time.Time{}.Add(time.Hour))
	require.NoError(t, err, "the next confirmation reads again")
	assert.Equal(t, int32(1), reader.lists.Load())
}

type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return context.Canceled
}
