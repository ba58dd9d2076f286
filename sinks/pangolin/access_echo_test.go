package pangolin

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/internal/echotest"
)

// Secrets with characters every encoding changes (JSON and HTML specials, a backslash,
// URL specials, letters outside ASCII), within what a policy accepts.
const (
	echoPassword   = "Tøm&Jerry<3\"x\\ +/=?"
	echoPincode    = "918273"
	echoHeaderUser = "Ünï&cøde<usr"
	echoHeaderPass = "q@ss:w\"rd/+= 9"
)

// TestSecretEchoesNeverShow has Pangolin refuse (400) or fail (502) each secret write
// while quoting the request's secrets, its body and the key back in every encoding
// (echotest.Encodings), and looks for them, decoded every way, where the sink speaks:
// the rejections (the controller's Warning events and status conditions), the errors
// (what the controller logs and retries) and the sink's own log.
func TestSecretEchoesNeverShow(t *testing.T) {
	secrets := []echotest.Secret{
		{Value: echoPassword, Run: echotest.MinRun}, {Value: echoPincode, Run: echotest.MinRun},
		{Value: echoHeaderUser, Run: echotest.MinRun}, {Value: echoHeaderPass, Run: echotest.MinRun},
		{Value: secretKey.Secret, Run: echotest.KeyRun(secretKey.Secret)},
	}
	secretWrite := func(r *http.Request) bool {
		for _, suffix := range []string{"/password", "/pincode", "/header-auth"} {
			if strings.HasSuffix(r.URL.Path, suffix) {
				return true
			}
		}
		return false
	}
	shop := ingress("shop", "web")
	const host = "app.example.com"
	pw, pin := secretOf("web-auth", "password", echoPassword), secretOf("web-auth", "pin", echoPincode)
	// The first failed write stops the run: one policy per kind of secret.
	policies := []struct {
		name string
		pol  route.AccessPolicy
	}{
		{"a password", route.AccessPolicy{Roles: []string{"k8s-devs"}, Password: &pw}},
		{"a PIN code", route.AccessPolicy{Roles: []string{"k8s-devs"}, PinCode: &pin}},
		{"header auth", route.AccessPolicy{Roles: []string{"k8s-devs"}, HeaderAuth: &route.HeaderAuth{
			User: secretOf("web-basic", "username", echoHeaderUser), Password: secretOf("web-basic", "password", echoHeaderPass),
		}}},
	}

	for _, enc := range echotest.Encodings() {
		for _, status := range []int{http.StatusBadRequest, http.StatusBadGateway} {
			for _, p := range policies {
				t.Run(fmt.Sprintf("%s echoed in %s with %d", p.name, enc.Name, status), func(t *testing.T) {
					w := newWorld(t, accessOrg)
					var logs lines
					w.ctx = log.IntoContext(context.Background(), logs.logger())
					w.fault(simtest.When(secretWrite, echotest.Echo(status, enc)))
					o := w.reconcile(shop, protected(web(shop, host, 8080), true, p.pol))

					var said []string
					for _, rj := range o.rejections {
						said = append(said, rj.Message, fmt.Sprintf("%v %+v %#v", rj, rj, rj))
					}
					if o.err != nil {
						said = append(said, o.err.Error(), fmt.Sprintf("%+v", o.err))
					}
					said = append(said, logs.text())
					all := strings.Join(said, "\n")
					require.Contains(t, all, "refused "+enc.Name, "Pangolin's message reached the sink, so the check below means something")
					assert.Contains(t, all, "[redacted]")
					assert.Empty(t, echotest.Leaks(all, secrets))
				})
			}
		}
	}
}
