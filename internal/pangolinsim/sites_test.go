package pangolinsim_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
)

func TestCreateSite(t *testing.T) {
	cases := []struct {
		name        string
		body        string
		wantStatus  int
		wantMessage string
	}{
		{"a Newt site with a niceId and credentials is created", `{"name":"edge","niceId":"edge","type":"newt","newtId":"abcdefghijklmno","secret":"s3cret"}`, http.StatusCreated, "Site created successfully"},
		{"a Newt site without credentials gets minted ones", `{"name":"edge","type":"newt"}`, http.StatusCreated, "Site created successfully"},
		{"a taken niceId is a conflict", `{"name":"x","niceId":"murky-merriams-shrew","type":"newt"}`, http.StatusConflict, "Nice ID murky-merriams-shrew already exists. Please choose a different one."},
		{"a missing name is refused", `{"niceId":"edge","type":"newt"}`, http.StatusBadRequest, ""},
		{"a missing type is refused", `{"name":"edge"}`, http.StatusBadRequest, ""},
		{"an unknown key is refused, the schema being strict", `{"name":"edge","type":"newt","labels":[]}`, http.StatusBadRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, pangolinsim.Options{})
			r := do(t, s, "PUT", "/v1/org/interop/site", tc.body)
			require.Equal(t, tc.wantStatus, r.Status, r.Body)
			if tc.wantMessage != "" {
				assert.Equal(t, tc.wantMessage, r.message())
			}
		})
	}
}

func TestNewtSiteCredentialsAndOnlineState(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	r := do(t, s, "PUT", "/v1/org/interop/site", `{"name":"edge","niceId":"edge","type":"newt","newtId":"abcdefghijklmno","secret":"s3cret"}`)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	assert.Equal(t, "abcdefghijklmno", r.data()["newtId"])
	assert.Equal(t, "s3cret", r.data()["secret"], "the create answer is the only place the secret shows")
	assert.Equal(t, false, r.data()["online"])

	assert.True(t, s.NewtCredentialsMatch("edge", "abcdefghijklmno", "s3cret"))
	assert.False(t, s.NewtCredentialsMatch("edge", "abcdefghijklmno", "other"), "a wrong secret")
	assert.False(t, s.NewtCredentialsMatch("murky-merriams-shrew", "abcdefghijklmno", "s3cret"), "a local site has no agent")

	got := do(t, s, "GET", "/v1/org/interop/site/edge", "")
	assert.Equal(t, false, got.data()["online"], "offline until the agent connects")
	assert.Equal(t, "newt", got.data()["type"])
	assert.NotContains(t, got.Body, "s3cret", "a read never shows the secret")
	assert.Nil(t, got.data()["newtVersion"], "null until an agent connects")
	s.SetSiteOnline("edge", true)
	s.SetNewtVersion("edge", "1.15.0")
	got = do(t, s, "GET", "/v1/org/interop/site/edge", "")
	assert.Equal(t, true, got.data()["online"])
	assert.Equal(t, "1.15.0", got.data()["newtVersion"], "the version the agent reported")
	listed := do(t, s, "GET", "/v1/org/interop/sites", "").data()["sites"].([]any)
	require.NotEmpty(t, listed)
	assert.Equal(t, "1.15.0", listed[0].(map[string]any)["newtVersion"], "the list reports it too (sorted by name: edge first)")
}

func TestDeleteSite(t *testing.T) {
	s := newServer(t, pangolinsim.Options{})
	r := do(t, s, "PUT", "/v1/org/interop/site", `{"name":"edge","niceId":"edge","type":"newt"}`)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	siteID := int(r.data()["siteId"].(float64))
	app := createApp(t, s, "app.example.com", "app")
	s.SeedTarget(pangolinsim.Target{ResourceID: app, SiteID: siteID, IP: "web.svc", Port: 80, Enabled: true})

	del := do(t, s, "DELETE", "/v1/site/"+itoa(siteID), "")
	require.Equal(t, http.StatusOK, del.Status, del.Body)
	assert.Equal(t, "Site deleted successfully", del.message())
	assert.Empty(t, s.Targets(app), "the site's targets go with it")
	assert.Len(t, s.Resources(), 1, "its resources stay")
	assert.Equal(t, http.StatusNotFound, do(t, s, "GET", "/v1/org/interop/site/edge", "").Status)
	assert.Equal(t, http.StatusNotFound, do(t, s, "DELETE", "/v1/site/"+itoa(siteID), "").Status)
}
