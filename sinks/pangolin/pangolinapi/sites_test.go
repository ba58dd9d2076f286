package pangolinapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

func TestNewNewtCredentials(t *testing.T) {
	a, b := pangolinapi.NewNewtCredentials(), pangolinapi.NewNewtCredentials()
	assert.Regexp(t, regexp.MustCompile(`^[a-z0-9]{15}$`), a.ID, "Pangolin's own id shape")
	assert.Regexp(t, regexp.MustCompile(`^[a-z0-9]{48}$`), string(a.Secret), "Pangolin's own secret shape")
	assert.NotEqual(t, a.ID, b.ID)
	assert.NotEqual(t, a.Secret, b.Secret)
}

func TestNewtCredentialsNeverPrintTheSecret(t *testing.T) {
	c := pangolinapi.NewNewtCredentials()
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, c)
		assert.NotContains(t, out, string(c.Secret), format)
		assert.Contains(t, out, c.ID, format)
	}
}

func TestCreateNewtSiteRedactsAnEchoedSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		// A proxy that answers with the request it refused, as text.
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	cl, err := pangolinapi.New(pangolinapi.Config{BaseURL: srv.URL + "/v1", Org: "o", APIKey: "keyid.keysecret"})
	require.NoError(t, err)
	creds := pangolinapi.NewNewtCredentials()
	_, err = cl.CreateNewtSite(context.Background(), pangolinapi.NewtSite{NiceID: "edge", Name: "edge", Credentials: creds})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), string(creds.Secret))
	assert.True(t, pangolinapi.IsTransient(err), "a 502 is retried: %v", err)
}
