package pangolin

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// The org of the access tests: Admin (1), Member (2), k8s-devs (3), k8s-ops (4); alice
// and bob, and two users called carol.
func accessOrg(o *pangolinsim.Options) {
	o.Roles = []pangolinsim.Role{{ID: 2, Name: "Member"}, {ID: 3, Name: "k8s-devs"}, {ID: 4, Name: "k8s-ops"}}
	o.Users = []pangolinsim.User{
		pangolinsim.DefaultOwner,
		{ID: "alice0000000001", Email: "alice@corp.example", Username: "alice", Type: "oidc", IdpID: 1, IdpName: "corp"},
		{ID: "bob000000000001", Email: "bob@corp.example", Username: "bob"},
		{ID: "carol0000000001", Email: "carol@corp.example", Username: "carol"},
		{ID: "carol0000000002", Email: "carol@other.example", Username: "carol"},
	}
}

const (
	passwordValue = "correct-horse-battery-9z"
	pincodeValue  = "481516"
	headerUser    = "svc-robot-user"
	headerPass    = "header-pass-Qx7!"
)

func secretOf(name, key, value string) route.Secret {
	return route.NewSecret(route.SecretRef{Namespace: "shop", Name: name, Key: key}, value)
}

// protected is rt with policy p attached, sso as the merge with the annotations gives it.
func protected(rt route.Route, sso bool, p route.AccessPolicy) route.Route {
	if p.Name == (types.NamespacedName{}) {
		p.Name = types.NamespacedName{Namespace: rt.Origin.Namespace, Name: "web-access"}
	}
	for i := range p.Rules {
		p.Rules[i].Priority = i + 1
	}
	rt.Access = route.Access{SSO: ptrTo(sso), BlockAccess: ptrTo(false), Policy: &p}
	return rt
}

// everything is a policy that sets every field.
func everything() route.AccessPolicy {
	pw, pin := secretOf("web-auth", "password", passwordValue), secretOf("web-auth", "pin", pincodeValue)
	return route.AccessPolicy{
		Roles:          []string{"k8s-devs"},
		Users:          []string{"bob@corp.example"},
		AutoLoginIdP:   route.IdPRef{ID: 7},
		EmailWhitelist: []string{"*@corp.example", "dave@partner.example"},
		Rules: []route.AccessRule{
			{Action: route.RuleDrop, Match: route.MatchIP, Value: "10.1.2.3"},
			{Action: route.RuleAccept, Match: route.MatchCIDR, Value: "10.0.0.0/8"},
		},
		Password: &pw,
		PinCode:  &pin,
		HeaderAuth: &route.HeaderAuth{
			User: secretOf("web-basic", "username", headerUser), Password: secretOf("web-basic", "password", headerPass),
		},
	}
}

func (w *world) policyOn(host string) pangolinsim.Policy {
	w.t.Helper()
	p, ok := w.fake.Policy(w.resourceOn(host).ID)
	require.True(w.t, ok)
	return p
}

// requestCount is how many requests the fake received since w.fault was installed.
func (w *world) requestCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.requests)
}

func reasons(rjs []route.Rejection) []string {
	var out []string
	for _, rj := range rjs {
		out = append(out, rj.Reason)
	}
	return out
}

// ruleSummary lists p's rules as Pangolin evaluates them: by priority.
func ruleSummary(p pangolinsim.Policy) []string {
	rules := slices.Clone(p.Rules)
	slices.SortStableFunc(rules, func(a, b pangolinsim.Rule) int { return a.Priority - b.Priority })
	var out []string
	for _, r := range rules {
		out = append(out, strings.Join([]string{r.Action, r.Match, r.Value}, " ")+" @"+itoa(r.Priority))
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

func ruleSpec(action, match, value string, priority int) pangolinapi.RuleSpec {
	return pangolinapi.RuleSpec{Action: action, Match: match, Value: value, Priority: priority, Enabled: true}
}

func TestAccessPolicyIsApplied(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"

	t.Run("a role restriction grants the role, and a converged host costs no request", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		rt := protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}})
		o := w.converge(shop, rt)
		require.Len(t, o.applied.Created, 1)
		p := w.policyOn(host)
		assert.True(t, p.SSO)
		assert.Equal(t, []int{3}, p.RoleIDs)
		assert.NotEmpty(t, w.fake.Routers(), "published")

		w.fault(nil)
		o = w.converge(shop, rt)
		assert.Equal(t, 0, w.requestCount(), "a converged host sends no request")
		require.NoError(t, w.sink.Refresh(w.ctx))
		before := w.requestCount()
		o = w.converge(shop, rt)
		assert.Equal(t, before, w.requestCount(), "after a refresh either")
		assert.Empty(t, o.applied.Updated)
	})

	t.Run("every field reaches Pangolin, and nothing is written twice", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		rt := protected(web(shop, host, 8080), true, everything())
		w.converge(shop, rt)
		p := w.policyOn(host)
		r := w.resourceOn(host)
		assert.Equal(t, []int{3}, p.RoleIDs)
		assert.Equal(t, []string{"bob000000000001"}, p.UserIDs)
		assert.Equal(t, 7, p.IdpID)
		assert.True(t, p.EmailWhitelistEnabled)
		assert.ElementsMatch(t, []string{"*@corp.example", "dave@partner.example"}, p.Whitelist)
		assert.True(t, p.ApplyRules)
		assert.Equal(t, []string{"DROP IP 10.1.2.3 @1", "ACCEPT CIDR 10.0.0.0/8 @2"}, ruleSummary(p))
		assert.True(t, w.fake.CheckPassword(r.ID, passwordValue))
		assert.True(t, w.fake.CheckPincode(r.ID, pincodeValue))
		assert.True(t, w.fake.CheckHeaderAuth(r.ID, headerUser, headerPass))
		assert.Equal(t, 3, p.SecretWrites)

		writes := w.fake.Writes()
		w.converge(shop, rt)
		assert.Equal(t, writes, w.fake.Writes())
	})

	t.Run("the rules follow the policy's order", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		pol := route.AccessPolicy{Rules: []route.AccessRule{
			{Action: route.RuleDrop, Match: route.MatchIP, Value: "10.1.2.3"},
			{Action: route.RuleAccept, Match: route.MatchCIDR, Value: "10.0.0.0/8"},
		}}
		w.converge(shop, protected(web(shop, host, 8080), true, pol))
		pol.Rules = []route.AccessRule{pol.Rules[1], {Action: route.RulePass, Match: route.MatchPath, Value: "/api/*"}}
		w.converge(shop, protected(web(shop, host, 8080), true, pol))
		assert.Equal(t, []string{"ACCEPT CIDR 10.0.0.0/8 @1", "PASS PATH /api/* @2"}, ruleSummary(w.policyOn(host)))
		pol.Rules = nil
		w.converge(shop, protected(web(shop, host, 8080), true, pol))
		p := w.policyOn(host)
		assert.Empty(t, p.Rules)
		assert.False(t, p.ApplyRules)
	})
}

func TestAccessPolicySecrets(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"
	withPassword := func(value string) route.Route {
		pw := secretOf("web-auth", "password", value)
		return protected(web(shop, host, 8080), false, route.AccessPolicy{Password: &pw})
	}
	all := func() route.Route { return protected(web(shop, host, 8080), true, everything()) }

	t.Run("a password, then the Secret's value changed: one rewrite", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, withPassword(passwordValue))
		r := w.resourceOn(host)
		p := w.policyOn(host)
		assert.False(t, p.SSO, "the password alone protects it")
		assert.Equal(t, 1, p.SecretWrites)
		w.converge(shop, withPassword(passwordValue))
		assert.Equal(t, 1, w.policyOn(host).SecretWrites, "the same value is not written again")

		w.converge(shop, withPassword("a-new-password-42"))
		assert.Equal(t, 2, w.policyOn(host).SecretWrites)
		assert.True(t, w.fake.CheckPassword(r.ID, "a-new-password-42"))
	})

	t.Run("a restart with the record writes nothing", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, all())
		writes, secrets := w.fake.Writes(), w.fake.SecretWrites()
		w.restart("default")
		o := w.converge(shop, all())
		assert.Equal(t, writes, w.fake.Writes())
		assert.Equal(t, secrets, w.fake.SecretWrites())
		assert.Empty(t, o.applied.Updated)
	})

	t.Run("a restart without the record rewrites each secret once", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, all())
		secrets := w.fake.SecretWrites()
		w.accessRecords = &MemoryAccessRecords{}
		w.restart("default")
		w.converge(shop, all())
		assert.Equal(t, secrets+3, w.fake.SecretWrites(), "password, PIN code, header auth")
		w.converge(shop, all())
		assert.Equal(t, secrets+3, w.fake.SecretWrites(), "then recorded")
	})

	t.Run("a secret changed by hand in Pangolin is written again", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, all())
		r := w.resourceOn(host)
		require.NoError(t, w.api.SetResourcePassword(w.ctx, r.ID, "hand-made-pw"))
		require.NoError(t, w.sink.Refresh(w.ctx))
		assert.Contains(t, w.wake.heard().owners, route.Origin{Kind: shop.Kind, Namespace: shop.Namespace, Name: shop.Name}, "the owner is woken")
		secrets := w.fake.SecretWrites()
		w.converge(shop, all())
		assert.Equal(t, secrets+1, w.fake.SecretWrites(), "the password only")
		assert.True(t, w.fake.CheckPassword(r.ID, passwordValue))
	})

	t.Run("a secret the policy drops is removed", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, all())
		pol := everything()
		pol.PinCode = nil
		w.converge(shop, protected(web(shop, host, 8080), true, pol))
		p := w.policyOn(host)
		assert.Zero(t, p.PincodeID)
		assert.NotZero(t, p.PasswordID)
	})
}

func TestAccessPolicyDrift(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"
	rt := protected(web(shop, host, 8080), true, route.AccessPolicy{
		Roles: []string{"k8s-devs"}, Rules: []route.AccessRule{{Action: route.RuleDrop, Match: route.MatchIP, Value: "10.1.2.3"}},
	})

	t.Run("roles, users, emails and rules added by hand are removed", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, rt)
		r := w.resourceOn(host)
		require.NoError(t, w.api.SetResourceRoles(w.ctx, r.ID, []int{2, 3, 4}))
		require.NoError(t, w.api.SetResourceUsers(w.ctx, r.ID, []string{"bob000000000001"}))
		_, err := w.api.CreateResourceRule(w.ctx, r.ID, ruleSpec("ACCEPT", "CIDR", "0.0.0.0/0", 0))
		require.NoError(t, err)
		require.NoError(t, w.sink.Refresh(w.ctx))
		w.converge(shop, rt)
		p := w.policyOn(host)
		assert.Equal(t, []int{3}, p.RoleIDs)
		assert.Empty(t, p.UserIDs)
		assert.Equal(t, []string{"DROP IP 10.1.2.3 @1"}, ruleSummary(p))
	})

	t.Run("a host without a policy keeps what was set by hand", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		plain := web(shop, host, 8080)
		w.converge(shop, plain)
		r := w.resourceOn(host)
		require.NoError(t, w.api.SetResourceRoles(w.ctx, r.ID, []int{4}))
		require.NoError(t, w.api.SetResourcePassword(w.ctx, r.ID, "hand-made-pw"))
		require.NoError(t, w.sink.Refresh(w.ctx))
		w.fault(nil)
		o := w.converge(shop, plain)
		assert.True(t, o.plan.Empty())
		assert.Equal(t, 0, w.requestCount())
		p := w.policyOn(host)
		assert.Equal(t, []int{4}, p.RoleIDs)
		assert.NotZero(t, p.PasswordID)
	})
}

func TestAccessPolicyDetached(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"
	w := newWorld(t, accessOrg)
	w.converge(shop, protected(web(shop, host, 8080), true, everything()))

	plain := web(shop, host, 8080)
	plain.Access.SSO = ptrTo(true) // the annotation
	o := w.converge(shop, plain)
	assert.Len(t, o.plan.Access, 1, "governed: its access is undone")
	p := w.policyOn(host)
	assert.True(t, p.SSO, "the annotation's")
	assert.Empty(t, p.RoleIDs)
	assert.Empty(t, p.UserIDs)
	assert.Zero(t, p.IdpID)
	assert.False(t, p.EmailWhitelistEnabled)
	assert.Empty(t, p.Whitelist, "emptied before being disabled")
	assert.False(t, p.ApplyRules)
	assert.Empty(t, p.Rules)
	assert.Zero(t, p.PasswordID)
	assert.Zero(t, p.PincodeID)
	assert.Zero(t, p.HeaderAuthID)
	assert.NotEmpty(t, w.fake.Routers(), "still published")

	records, err := w.accessRecords.Load(w.ctx)
	require.NoError(t, err)
	assert.Empty(t, records, "nothing governs it any more")
	w.fault(nil)
	o = w.converge(shop, plain)
	assert.True(t, o.plan.Empty())
	assert.Equal(t, 0, w.requestCount())
}

func TestAccessPolicyFailsClosed(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"
	devs := route.AccessPolicy{Roles: []string{"k8s-devs"}}

	unknown := []struct {
		name   string
		policy route.AccessPolicy
		says   string
	}{
		{"an unknown role", route.AccessPolicy{Roles: []string{"k8s-devs", "k8s-dvs"}}, `role "k8s-dvs" does not exist`},
		{"an unknown user", route.AccessPolicy{Users: []string{"mallory@corp.example"}}, `user "mallory@corp.example"`},
		{"a username two users have", route.AccessPolicy{Users: []string{"carol"}}, `names several accounts`},
		{"an identity provider by name", route.AccessPolicy{AutoLoginIdP: route.IdPRef{Name: "corp"}}, `numeric id`},
	}
	for _, c := range unknown {
		t.Run(c.name+" publishes nothing for a new host", func(t *testing.T) {
			w := newWorld(t, accessOrg)
			w.fault(nil)
			o := w.reconcile(shop, protected(web(shop, host, 8080), true, c.policy))
			require.NoError(t, o.err)
			assert.Equal(t, []string{pic.ReasonAccessPolicyNotApplied}, reasons(o.rejections))
			assert.Contains(t, o.rejections[0].Message, c.says)
			assert.Contains(t, o.rejections[0].Message, "not published")
			assert.True(t, o.rejections[0].Retry, "a role or user may be created")
			assert.Empty(t, w.fake.Resources())
			assert.Empty(t, w.writesLogged())
		})
		t.Run(c.name+" leaves a published host as it is, with a Warning", func(t *testing.T) {
			w := newWorld(t, accessOrg)
			w.converge(shop, protected(web(shop, host, 8080), true, devs))
			w.fault(nil)
			edited := protected(web(shop, host, 9090), false, c.policy)
			o := w.reconcile(shop, edited)
			require.NoError(t, o.err)
			assert.Equal(t, []string{pic.ReasonAccessPolicyNotApplied}, reasons(o.rejections))
			assert.Contains(t, o.rejections[0].Message, "keeps the access Pangolin holds")
			assert.Empty(t, w.writesLogged(), "nothing written, the backend change included")
			p := w.policyOn(host)
			assert.True(t, p.SSO)
			assert.Equal(t, []int{3}, p.RoleIDs)
			assert.Equal(t, 8080, w.fake.Targets(w.resourceOn(host).ID)[0].Port)
		})
	}

	t.Run("Pangolin refusing part of it publishes no new host", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.fault(simtest.When(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/password") },
			func(rw http.ResponseWriter, _ *http.Request) bool {
				rw.Header().Set("Content-Type", "application/json")
				rw.WriteHeader(http.StatusForbidden)
				_, _ = rw.Write([]byte(`{"data":null,"success":false,"error":true,"message":"Key does not have permission perform this action","status":403}`))
				return true
			}))
		pw := secretOf("web-auth", "password", passwordValue)
		o := w.reconcile(shop, protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}, Password: &pw}))
		require.NoError(t, o.err)
		assert.Equal(t, []string{pic.ReasonAccessPolicyNotApplied}, reasons(o.rejections))
		assert.Contains(t, o.rejections[0].Message, "403")
		assert.Empty(t, o.applied.Created)
		assert.Empty(t, w.fake.Targets(w.resourceOn(host).ID), "no target: Pangolin does not route the host")
		assert.Empty(t, w.fake.Routers())

		w.fault(nil)
		w.converge(shop, protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}, Password: &pw}))
		assert.NotEmpty(t, w.fake.Routers(), "published once the policy applies")
	})

	t.Run("Pangolin refusing part of it leaves a published host closed", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, protected(web(shop, host, 8080), true, devs))
		w.fault(simtest.When(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/password") },
			func(rw http.ResponseWriter, _ *http.Request) bool {
				rw.Header().Set("Content-Type", "application/json")
				rw.WriteHeader(http.StatusForbidden)
				_, _ = rw.Write([]byte(`{"data":null,"success":false,"error":true,"message":"Key does not have permission perform this action","status":403}`))
				return true
			}))
		pw := secretOf("web-auth", "password", passwordValue)
		o := w.reconcile(shop, protected(web(shop, host, 8080), false, route.AccessPolicy{Password: &pw}))
		require.NoError(t, o.err)
		assert.Equal(t, []string{pic.ReasonAccessPolicyNotApplied}, reasons(o.rejections))
		p := w.policyOn(host)
		assert.True(t, p.SSO, "SSO is not turned off before the password is there")
		assert.Equal(t, []int{3}, p.RoleIDs)
	})

	t.Run("an outage part-way is an error, and opens nothing", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.fault(simtest.When(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/whitelist") }, simtest.Outage(http.StatusServiceUnavailable)))
		pol := route.AccessPolicy{Roles: []string{"k8s-devs"}, EmailWhitelist: []string{"*@corp.example"}}
		o := w.reconcile(shop, protected(web(shop, host, 8080), true, pol))
		require.Error(t, o.err)
		assert.Empty(t, w.fake.Routers(), "a new host: no target, not routed")

		w.fault(nil)
		w.converge(shop, protected(web(shop, host, 8080), true, pol))
		assert.NotEmpty(t, w.fake.Routers())

		// Published: the policy turns SSO off for a password, and the password write fails.
		pw := secretOf("web-auth", "password", passwordValue)
		w.fault(simtest.When(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/password") }, simtest.Outage(http.StatusBadGateway)))
		before := w.policyOn(host)
		o = w.reconcile(shop, protected(web(shop, host, 8080), false, route.AccessPolicy{Password: &pw}))
		require.Error(t, o.err)
		after := w.policyOn(host)
		assert.Equal(t, before.SSO, after.SSO)
		assert.Equal(t, before.RoleIDs, after.RoleIDs, "the roles are not dropped before the password is there")
	})
}
