package pangolin

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// TestResyncDuringWrites: a resync that reads Pangolin while reconciles write must not
// lose their writes (a mirror without them would create duplicates) nor resurrect what
// they deleted.
func TestResyncDuringWrites(t *testing.T) {
	w := newWorld(t)
	const n = 12
	origins := make([]route.Origin, n)
	for i := range origins {
		origins[i] = ingress("shop", fmt.Sprintf("web-%d", i))
	}
	routes := func(i int, port int32) route.Route {
		return web(origins[i], fmt.Sprintf("app-%d.example.com", i), port)
	}
	for i := 0; i < n; i += 2 {
		w.converge(origins[i], routes(i, 8080)) // half exist, to be updated or deleted
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				assert.NoError(t, w.sink.Refresh(w.ctx))
			}
		}
	}()
	var writers sync.WaitGroup
	for i := range origins {
		writers.Add(1)
		go func() {
			defer writers.Done()
			switch i % 4 {
			case 0: // exists, deleted
				assert.NoError(t, w.reconcile(origins[i]).err)
			case 2: // exists, updated
				assert.NoError(t, w.reconcile(origins[i], routes(i, 9090)).err)
			default: // created
				assert.NoError(t, w.reconcile(origins[i], routes(i, 8080)).err)
			}
		}()
	}
	writers.Wait()
	close(stop)
	wg.Wait()

	require.NoError(t, w.sink.Refresh(w.ctx))
	writes := w.fake.Writes()
	for i := range origins {
		want := []route.Route{routes(i, 8080)}
		switch i % 4 {
		case 0:
			want = nil
		case 2:
			want = []route.Route{routes(i, 9090)}
		}
		o := w.converge(origins[i], want...)
		assert.True(t, o.plan.Empty(), "origin %d converged: %+v", i, o.plan)
	}
	assert.Equal(t, writes, w.fake.Writes())
	seen := map[string]int{}
	for _, r := range w.fake.Resources() {
		seen[r.FullDomain]++
	}
	for host, count := range seen {
		assert.Equal(t, 1, count, "resources on %s", host)
	}
	assert.Len(t, seen, n-n/4, "all but the deleted quarter")
}
