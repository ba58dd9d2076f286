package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func TestConfirmFirstPublish(t *testing.T) {
	resource := func(host string) engine.Resource { return engine.Resource{Name: "r-" + host, Host: host} }
	published := []engine.Existing{{Resource: resource("old.example.com")}}
	cases := []struct {
		name      string
		desired   []engine.Resource
		refuse    []string // hosts the source holds
		wantAsked []string
		wantKept  []string
	}{
		{name: "a published host is not asked about",
			desired: []engine.Resource{resource("old.example.com")}, wantKept: []string{"old.example.com"}},
		{name: "a new host is asked about, and kept when confirmed",
			desired:   []engine.Resource{resource("old.example.com"), resource("new.example.com")},
			wantAsked: []string{"new.example.com"}, wantKept: []string{"old.example.com", "new.example.com"}},
		{name: "a new host the source holds is dropped, the others kept",
			desired: []engine.Resource{resource("old.example.com"), resource("new.example.com"), resource("other.example.com")},
			refuse:  []string{"new.example.com"}, wantAsked: []string{"new.example.com", "other.example.com"},
			wantKept: []string{"old.example.com", "other.example.com"}},
		{name: "nothing desired, nothing asked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var asked []string
			confirm := func(_ context.Context, hosts []string) ([]route.Rejection, error) {
				asked = append(asked, hosts...)
				var out []route.Rejection
				for _, h := range c.refuse {
					out = append(out, route.Rejection{Host: h, Reason: pic.ReasonAccessPolicyPending, Hold: true, Retry: true})
				}
				return out, nil
			}
			kept, waiting, err := confirmFirstPublish(context.Background(), confirm, c.desired, published)
			require.NoError(t, err)
			assert.Equal(t, c.wantAsked, asked)
			var keptHosts []string
			for _, d := range kept {
				keptHosts = append(keptHosts, d.Host)
			}
			assert.Equal(t, c.wantKept, keptHosts)
			assert.Len(t, waiting, len(c.refuse))
		})
	}

	kept, waiting, err := confirmFirstPublish(context.Background(), nil, []engine.Resource{resource("new.example.com")}, nil)
	require.NoError(t, err)
	assert.Len(t, kept, 1, "no Confirm: nothing to wait for")
	assert.Empty(t, waiting)
}
