package pangolinapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/internal/echotest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Secrets with every character some encoding changes: JSON and HTML specials, a
// backslash, a space, URL specials, letters outside ASCII and outside the BMP.
const (
	echoPassword = "Tøm&Jerry<3\"x\\ 🐱+/=?"
	echoPincode  = "918273"
	echoUser     = "Ünï&cøde<usr"
	echoUserPass = "q@ss:w\"rd/+= 9"
)

// TestSecretEchoesAreRedacted has a server quote each request's secrets, its body and
// its key back in every encoding (echotest.Encodings), and looks for them, decoded
// every way, in the error.
func TestSecretEchoesAreRedacted(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	r, err := c.CreateResource(ctx, "a", pangolinapi.Host{DomainID: "domain1", Subdomain: "a"})
	require.NoError(t, err)

	newt := pangolinapi.NewNewtCredentials()
	secrets := []echotest.Secret{
		{Value: echoPassword, Run: echotest.MinRun}, {Value: echoPincode, Run: echotest.MinRun},
		{Value: echoUser, Run: echotest.MinRun}, {Value: echoUserPass, Run: echotest.MinRun},
		{Value: secretKey.Secret, Run: echotest.KeyRun(secretKey.Secret)},
		{Value: string(newt.Secret), Run: echotest.MinRun},
	}
	writes := []struct {
		name string
		call func() error
	}{
		{"a password", func() error { return c.SetResourcePassword(ctx, r.ResourceID, echoPassword) }},
		{"a PIN code", func() error { return c.SetResourcePincode(ctx, r.ResourceID, echoPincode) }},
		{"header auth", func() error {
			return c.SetResourceHeaderAuth(ctx, r.ResourceID, pangolinapi.HeaderAuth{User: echoUser, Password: echoUserPass})
		}},
		{"a Newt site's secret", func() error {
			_, err := c.CreateNewtSite(ctx, pangolinapi.NewtSite{NiceID: "edge", Name: "edge", Credentials: newt})
			return err
		}},
	}
	answers := []struct {
		shape  string
		status int
		echo   func(int, echotest.Encoding) simtest.Fault
	}{
		{"Pangolin's JSON message", http.StatusBadRequest, echotest.Echo},
		{"Pangolin's JSON message", http.StatusBadGateway, echotest.Echo},
		{"Express's HTML page", http.StatusNotFound, echotest.EchoPage},
	}
	for _, enc := range echotest.Encodings() {
		for _, a := range answers {
			for _, w := range writes {
				t.Run(fmt.Sprintf("%s echoed in %s in %s with %d", w.name, enc.Name, a.shape, a.status), func(t *testing.T) {
					s.SetFault(a.echo(a.status, enc))
					defer s.SetFault(nil)
					err := w.call()
					require.Error(t, err)
					var ae *pangolinapi.APIError
					require.ErrorAs(t, err, &ae)
					assert.Equal(t, a.status, ae.Status)
					assert.Contains(t, ae.Message, "refused "+enc.Name, "Pangolin's message is kept")
					assert.Contains(t, ae.Message, "[redacted]", "the echo reached the client, so the check below means something")
					for _, printed := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
						assert.Empty(t, echotest.Leaks(printed, secrets), "in %s", printed)
					}
				})
			}
		}
	}
}

// TestBodiesThatAreNotPangolinsAreNotShown: a body that is not Pangolin's JSON (a
// proxy's page, an echo) never reaches an error, whatever it holds.
func TestBodiesThatAreNotPangolinsAreNotShown(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	s.SetFault(func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("upstream said: my-private-note"))
		return true
	})
	defer s.SetFault(nil)
	err := c.SetResourcePassword(ctx, 1, echoPassword)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "my-private-note")
	assert.Contains(t, err.Error(), "502 Bad Gateway", "the status is shown")
	assert.True(t, pangolinapi.IsTransient(err))
}

// TestRedactionKeepsPangolinsWords: Pangolin's own messages pass whole when they hold
// no secret, with the key's short runs left alone.
func TestRedactionKeepsPangolinsWords(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	_, err := c.GetResource(context.Background(), 999)
	var ae *pangolinapi.APIError
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, "Resource with ID 999 not found", ae.Message)
	assert.False(t, strings.Contains(ae.Message, "[redacted]"))
}
