package pangolinapi

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

const (
	updates = "POST /v1/resource/:resourceId"
	creates = "PUT /v1/org/:orgId/resource"
	probes  = "GET /v1/org/:orgId/domains"
)

// refusalWorld is a fake Pangolin, a client on it whose clock the test moves, and one
// resource.
type refusalWorld struct {
	fake   *simtest.Server
	client *Client
	now    time.Time
	id     int
}

func newRefusalWorld(t *testing.T) *refusalWorld {
	t.Helper()
	fake := simtest.NewServer(pangolinsim.Options{Keys: []pangolinsim.Key{pangolinsim.RootKey}})
	t.Cleanup(fake.Close)
	c, err := New(Config{BaseURL: fake.BaseURL(), Org: "interop", APIKey: pangolinsim.RootKey.Token()})
	require.NoError(t, err)
	w := &refusalWorld{fake: fake, client: c, now: time.Unix(1800000000, 0)}
	c.refusals.now = func() time.Time { return w.now }
	r, err := c.CreateResource(context.Background(), "app.example.com", Host{DomainID: "domain1", Subdomain: "app"})
	require.NoError(t, err)
	w.id = r.ResourceID
	fake.ResetCounts()
	return w
}

func (w *refusalWorld) skipTo(idp int) error {
	_, err := w.client.UpdateResource(context.Background(), w.id, ResourceUpdate{SkipToIdpID: &idp})
	return err
}

func TestRepeated500IsARefusal(t *testing.T) {
	t.Run("a value Pangolin answers with a 500 each time, while it answers reads, is refused", func(t *testing.T) {
		w := newRefusalWorld(t)
		err := w.skipTo(999)
		require.Error(t, err)
		assert.True(t, IsRefused(err))
		assert.False(t, IsTransient(err), "not an outage: no hot retry, no SinkUnavailable")
		var ae *APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, http.StatusInternalServerError, ae.Status)
		assert.Equal(t, []string{"skipToIdpId"}, ae.Fields, "the field, never its value")
		assert.Equal(t, map[string]int{updates: 2, probes: 1}, w.fake.Counts(), "sent twice, with a read between")
	})

	t.Run("a refused request is sent again only after a slow backoff, which doubles", func(t *testing.T) {
		w := newRefusalWorld(t)
		require.True(t, IsRefused(w.skipTo(999)))
		for range 59 {
			w.now = w.now.Add(time.Second)
			assert.True(t, IsRefused(w.skipTo(999)), "answered from memory")
		}
		assert.Equal(t, 2, w.fake.Counts()[updates], "nothing sent for a minute")
		w.now = w.now.Add(time.Second)
		assert.True(t, IsRefused(w.skipTo(999)))
		assert.Equal(t, 3, w.fake.Counts()[updates], "once after a minute")
		assert.Equal(t, 2, w.fake.Counts()[probes])
		w.now = w.now.Add(time.Minute)
		assert.True(t, IsRefused(w.skipTo(999)))
		assert.Equal(t, 3, w.fake.Counts()[updates], "then after two")
		require.NoError(t, w.skipTo(1), "another value is another request")
	})

	t.Run("a 500 once is passed by sending again", func(t *testing.T) {
		w := newRefusalWorld(t)
		var failed atomic.Bool
		w.fake.SetFault(func(rw http.ResponseWriter, r *http.Request) bool {
			return r.Method == http.MethodPost && !failed.Swap(true) && simtest.Outage(http.StatusInternalServerError)(rw, r)
		})
		require.NoError(t, w.skipTo(1))
		assert.Equal(t, map[string]int{updates: 2, probes: 1}, w.fake.Counts())
	})

	t.Run("a 500 while Pangolin answers nothing is an outage", func(t *testing.T) {
		w := newRefusalWorld(t)
		w.fake.SetFault(simtest.Outage(http.StatusInternalServerError))
		for range 3 {
			err := w.skipTo(1)
			assert.True(t, IsTransient(err))
			assert.False(t, IsRefused(err))
		}
		assert.Equal(t, map[string]int{updates: 3, probes: 3}, w.fake.Counts(), "never sent twice in a call")
	})

	t.Run("a 503 is an outage, whatever else answers", func(t *testing.T) {
		w := newRefusalWorld(t)
		w.fake.SetFault(simtest.When(simtest.IsWrite, simtest.Outage(http.StatusServiceUnavailable)))
		for range 3 {
			assert.True(t, IsTransient(w.skipTo(1)))
		}
		assert.Equal(t, map[string]int{updates: 3}, w.fake.Counts())
	})

	t.Run("a create is not sent twice in a row: its repeat is the next call's", func(t *testing.T) {
		w := newRefusalWorld(t)
		w.fake.SetFault(simtest.When(func(r *http.Request) bool { return r.Method == http.MethodPut }, simtest.Outage(http.StatusInternalServerError)))
		create := func() error {
			_, err := w.client.CreateResource(context.Background(), "www.example.com", Host{DomainID: "domain1", Subdomain: "www"})
			return err
		}
		assert.True(t, IsTransient(create()))
		assert.Equal(t, map[string]int{creates: 1}, w.fake.Counts())
		assert.True(t, IsRefused(create()))
		assert.Equal(t, map[string]int{creates: 2, probes: 1}, w.fake.Counts())
	})
}
