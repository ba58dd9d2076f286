package pangolin

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// After a restart the first full read lists the org's roles and users once each, even
// when an object is reconciled, and needs them, before that read is over.
func TestRestartListsRolesAndUsersOnce(t *testing.T) {
	w := newWorld(t, accessOrg)
	pol := route.AccessPolicy{Roles: []string{"k8s-devs"}, Users: []string{"alice@corp.example"}}
	shop, blog := ingress("shop", "web"), ingress("shop", "blog")
	w.converge(shop, protected(web(shop, "app.example.com", 8080), true, pol))
	w.converge(blog, protected(web(blog, "blog.example.com", 8080), true, pol))
	blogPath := "/v1/resource/" + strconv.Itoa(w.resourceOn("blog.example.com").ID)

	// The restart's read of blog's resource waits until shop has been reconciled.
	release := make(chan struct{})
	var held sync.Once
	w.fault(func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, blogPath) {
			held.Do(func() { <-release })
		}
		return false
	})
	w.fake.ResetCounts()
	w.sink = New(w.api, Options{OwnerID: "default", APIKey: secretKey.Token(), AccessRecords: w.accessRecords})
	loaded := make(chan error, 1)
	go func() { loaded <- w.sink.Refresh(w.ctx) }()

	w.converge(shop, protected(web(shop, "app.example.com", 8080), true, pol))
	close(release)
	require.NoError(t, <-loaded)
	w.converge(blog, protected(web(blog, "blog.example.com", 8080), true, pol))

	counts := w.fake.Counts()
	assert.Equal(t, 1, counts["GET /v1/org/:orgId/roles"], "one list of roles per full read")
	assert.Equal(t, 1, counts["GET /v1/org/:orgId/users"], "one list of users per full read")
}
