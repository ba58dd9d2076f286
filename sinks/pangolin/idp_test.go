package pangolin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// An autoLoginIdp naming no identity provider: Pangolin answers its write with a 500
// each time. It is the policy's refusal, not an outage, and it is not sent in a loop.
func TestUnknownIdentityProviderIsRefusedNotAnOutage(t *testing.T) {
	w := newWorld(t, accessOrg)
	shop := ingress("shop", "web")
	host := "app.example.com"
	rt := protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}, AutoLoginIdP: route.IdPRef{ID: 999}})
	w.fault(nil)

	// A minute of reconciles, one a second: far more than the controller's backoff
	// asks for once the refusal is known.
	for i := range 60 {
		o := w.reconcile(shop, rt)
		require.NoError(t, o.err, "reconcile %d: no SinkUnavailable", i)
		require.Equal(t, []string{pic.ReasonAccessPolicyNotApplied}, reasons(o.rejections), "reconcile %d", i)
		rj := o.rejections[0]
		assert.True(t, rj.Retry, "asked again, on a backoff")
		assert.Contains(t, rj.Message, "set the auto-login identity provider to id 999 (autoLoginIdp)")
		assert.Contains(t, rj.Message, "500 An error occurred, to this request each time while it answers others: it cannot take a value sent (skipToIdpId)")
	}
	skips := 0
	for _, r := range w.writesLogged() {
		if r == "POST /v1/resource/1" {
			skips++
		}
	}
	assert.LessOrEqual(t, skips, 3, "the resource's mark, then the refused value twice: %v", w.writesLogged())
	assert.LessOrEqual(t, w.requestCount(), 12, "a handful of requests, the publication's included")
	p := w.policyOn(host)
	assert.True(t, p.SSO, "fail-closed: the host stays behind SSO")
	assert.Zero(t, p.IdpID)
}
