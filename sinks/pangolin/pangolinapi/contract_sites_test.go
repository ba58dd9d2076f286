package pangolinapi_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// TestContractSites holds the facts a managed site relies on (docs/direct-mode.md,
// "Managed sites"). Against a real Pangolin the key needs createSite and deleteSite.
func TestContractSites(t *testing.T) {
	c := newContract(t)
	ctx := context.Background()
	cl := c.client

	create := func(t *testing.T, niceID string, creds pangolinapi.NewtCredentials) (pangolinapi.Site, error) {
		t.Helper()
		s, err := cl.CreateNewtSite(ctx, pangolinapi.NewtSite{NiceID: niceID, Name: niceID, Credentials: creds})
		if err == nil {
			t.Cleanup(func() {
				if err := cl.DeleteSite(context.Background(), s.SiteID); err != nil && !pangolinapi.IsNotFound(err) {
					t.Errorf("cleanup: %v", err)
				}
			})
		}
		return s, err
	}

	t.Run("a Newt site is created with the niceId and credentials the client chose, offline", func(t *testing.T) {
		niceID := c.sub("site")
		s, err := create(t, niceID, pangolinapi.NewNewtCredentials())
		require.NoError(t, err)
		assert.Equal(t, niceID, s.NiceID)
		assert.Equal(t, pangolinapi.SiteTypeNewt, s.Type)
		assert.Positive(t, s.SiteID)

		got, err := cl.GetSiteByNiceID(ctx, niceID)
		require.NoError(t, err)
		assert.Equal(t, s.SiteID, got.SiteID)
		assert.Equal(t, pangolinapi.SiteTypeNewt, got.Type)
		assert.False(t, got.Online, "no Newt agent has connected")
		assert.Empty(t, got.NewtVersion, "no agent has reported a version (newtVersion null)")
	})

	t.Run("a taken niceId is a client error that does not echo the secret", func(t *testing.T) {
		niceID := c.sub("site-dup")
		_, err := create(t, niceID, pangolinapi.NewNewtCredentials())
		require.NoError(t, err)
		second := pangolinapi.NewNewtCredentials()
		_, err = create(t, niceID, second)
		require.Error(t, err)
		assert.True(t, pangolinapi.IsClientError(err), "%v", err)
		assert.False(t, pangolinapi.IsTransient(err), "%v", err)
		assert.NotContains(t, err.Error(), string(second.Secret))
	})

	t.Run("the site list counts the resources with a target on a site", func(t *testing.T) {
		niceID := c.sub("site-count")
		s, err := create(t, niceID, pangolinapi.NewNewtCredentials())
		require.NoError(t, err)
		count := func() int {
			sites, err := cl.ListSites(ctx)
			require.NoError(t, err)
			for _, listed := range sites {
				if listed.SiteID == s.SiteID {
					return listed.ResourceCount
				}
			}
			t.Fatalf("site %s is not listed", niceID)
			return 0
		}
		assert.Zero(t, count())
		r := c.create(t, "site-count")
		_, err = cl.CreateTarget(ctx, r.ResourceID, pangolinapi.TargetSpec{SiteID: s.SiteID, IP: "web.count.svc", Port: 80, Method: "http", Enabled: true})
		require.NoError(t, err)
		assert.Equal(t, 1, count(), "PIC keeps a site it no longer manages while this is not 0")
	})

	t.Run("a deleted site is gone, and deleting it again is not found", func(t *testing.T) {
		niceID := c.sub("site-del")
		s, err := create(t, niceID, pangolinapi.NewNewtCredentials())
		require.NoError(t, err)
		require.NoError(t, cl.DeleteSite(ctx, s.SiteID))
		_, err = cl.GetSiteByNiceID(ctx, niceID)
		assert.True(t, pangolinapi.IsNotFound(err), "%v", err)
		err = cl.DeleteSite(ctx, s.SiteID)
		assert.True(t, pangolinapi.IsNotFound(err), "%v", err)
	})
}
