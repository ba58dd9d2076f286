package pangolinapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// TestContractAccess is what PIC relies on from a resource's access control (reference
// sections 11 and 12), against the fake or a real server like TestContract. It changes
// only the resources it creates, which take their access state with them when they are
// deleted; it grants the org's existing roles and users and creates none.
func TestContractAccess(t *testing.T) {
	c := newContract(t)
	ctx := context.Background()
	cl := c.client

	// The org's roles besides Admin, and its users: PIC resolves names to these ids.
	all, err := cl.ListRoles(ctx)
	require.NoError(t, err)
	var admin pangolinapi.Role
	var roles []pangolinapi.Role
	for _, r := range all {
		if r.IsAdmin {
			admin = r
		} else {
			roles = append(roles, r)
		}
	}
	require.NotZero(t, admin.RoleID, "the org has an Admin role: %v", all)
	users, err := cl.ListUsers(ctx)
	require.NoError(t, err)

	policy := func(t *testing.T, id int) pangolinapi.ResourcePolicy {
		t.Helper()
		p, err := cl.GetResourcePolicy(ctx, id)
		require.NoError(t, err)
		return p
	}
	roleIDs := func(p pangolinapi.ResourcePolicy) []int {
		ids := []int{}
		for _, r := range p.Roles {
			ids = append(ids, r.RoleID)
		}
		return ids
	}

	t.Run("a new resource is reachable by the Admin role only, after SSO", func(t *testing.T) {
		r := c.create(t, "acl-default")
		// PIC must grant roles or users, or turn SSO off, for anyone else to get in.
		p := policy(t, r.ResourceID)
		assert.True(t, p.SSO)
		assert.False(t, p.ApplyRules)
		assert.False(t, p.EmailWhitelistEnabled)
		assert.False(t, p.Shared, "the resource's own policy applies")
		assert.Zero(t, p.IdpID)
		assert.Zero(t, p.PasswordID)
		assert.Zero(t, p.PincodeID)
		assert.Nil(t, p.HeaderAuth)
		assert.Empty(t, p.Roles, "/policies never shows the Admin role")
		assert.Empty(t, p.Users)
		assert.Empty(t, p.EmailWhitelist)
		assert.Empty(t, p.Rules)
		listed, err := cl.ListResourceRoles(ctx, r.ResourceID)
		require.NoError(t, err)
		if assert.Len(t, listed, 1, "/roles shows the Admin role alone") {
			assert.Equal(t, admin.RoleID, listed[0].RoleID)
			assert.True(t, listed[0].IsAdmin)
		}

		got, err := cl.GetResource(ctx, r.ResourceID)
		require.NoError(t, err)
		assert.True(t, got.SSO)
		assert.False(t, got.EmailWhitelistEnabled)
		assert.False(t, got.ApplyRules)
		assert.Equal(t, got.EmailWhitelistEnabled, r.EmailWhitelistEnabled, "what create reports without a read")
		assert.Equal(t, got.ApplyRules, r.ApplyRules)
	})

	t.Run("roles are replaced as a whole and read back from /policies", func(t *testing.T) {
		if len(roles) == 0 {
			t.Skip("the org has no role besides Admin")
		}
		r := c.create(t, "acl-roles")
		want := []int{roles[0].RoleID}
		if len(roles) > 1 {
			want = append(want, roles[1].RoleID)
		}
		require.NoError(t, cl.SetResourceRoles(ctx, r.ResourceID, want))
		assert.ElementsMatch(t, want, roleIDs(policy(t, r.ResourceID)))
		listed, err := cl.ListResourceRoles(ctx, r.ResourceID)
		require.NoError(t, err)
		var ids []int
		for _, l := range listed {
			ids = append(ids, l.RoleID)
		}
		assert.ElementsMatch(t, append([]int{admin.RoleID}, want...), ids, "/roles adds Admin")

		// A set replaces: what is left out goes.
		require.NoError(t, cl.SetResourceRoles(ctx, r.ResourceID, want[len(want)-1:]))
		assert.Equal(t, want[len(want)-1:], roleIDs(policy(t, r.ResourceID)))
		require.NoError(t, cl.SetResourceRoles(ctx, r.ResourceID, nil))
		assert.Empty(t, policy(t, r.ResourceID).Roles, "back to Admin only")
	})

	t.Run("the Admin role and unknown roles are refused and change nothing", func(t *testing.T) {
		r := c.create(t, "acl-admin")
		var before []int
		if len(roles) > 0 {
			before = []int{roles[0].RoleID}
			require.NoError(t, cl.SetResourceRoles(ctx, r.ResourceID, before))
		}
		// PIC never sends the Admin role; if it did, it must be told so, not ignored.
		err := cl.SetResourceRoles(ctx, r.ResourceID, append([]int{admin.RoleID}, before...))
		var ae *pangolinapi.APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, http.StatusBadRequest, ae.Status, ae.Message)
		assert.False(t, pangolinapi.IsTransient(err))
		// A role deleted in Pangolin after PIC resolved its name: a refusal, not a
		// partial grant.
		err = cl.SetResourceRoles(ctx, r.ResourceID, []int{1 << 30})
		assert.True(t, pangolinapi.IsClientError(err), "%v", err)
		assert.ElementsMatch(t, before, roleIDs(policy(t, r.ResourceID)))
	})

	t.Run("users are set by user id and read back from /policies", func(t *testing.T) {
		if len(users) == 0 {
			t.Skip("the org has no user")
		}
		r := c.create(t, "acl-users")
		u := users[0]
		require.NoError(t, cl.SetResourceUsers(ctx, r.ResourceID, []string{u.UserID}))
		p := policy(t, r.ResourceID)
		require.Len(t, p.Users, 1)
		assert.Equal(t, u.UserID, p.Users[0].UserID)
		assert.Equal(t, u.Email, p.Users[0].Email, "PIC matches policy users to emails")

		// An email where a user id belongs is refused (PIC resolves emails first).
		if u.Email != "" {
			rep := c.raw(t, http.MethodPost, "/resource/"+strconv.Itoa(r.ResourceID)+"/users", `{"userIds":["`+u.Email+`"]}`, true)
			assert.GreaterOrEqual(t, rep.Status, 400, rep.Body)
			assert.Less(t, rep.Status, 500, rep.Body)
		}
		err := cl.SetResourceUsers(ctx, r.ResourceID, []string{c.prefix + "-nouser"})
		assert.True(t, pangolinapi.IsClientError(err), "an unknown user: %v", err)
		assert.Len(t, policy(t, r.ResourceID).Users, 1, "a refused set changes nothing")

		// Not relied upon: PIC reads users from /policies only.
		rep := c.raw(t, http.MethodGet, "/resource/"+strconv.Itoa(r.ResourceID)+"/users", "", true)
		t.Logf("GET /resource/:id/users with one user set: %d %s (the defect answers [])", rep.Status, rep.Body)

		require.NoError(t, cl.SetResourceUsers(ctx, r.ResourceID, nil))
		assert.Empty(t, policy(t, r.ResourceID).Users)
	})

	t.Run("secrets are set and removed, and every write mints a new id", func(t *testing.T) {
		r := c.create(t, "acl-secrets")
		id := r.ResourceID
		// PIC cannot read a secret back: it knows Pangolin still holds what it wrote by
		// the id it saw after writing. So the id must change on every write, even of
		// the same value, and only then.
		pw := pangolinapi.Secret(c.prefix + "-pw")
		require.NoError(t, cl.SetResourcePassword(ctx, id, pw))
		first := policy(t, id).PasswordID
		assert.NotZero(t, first)
		assert.Equal(t, first, policy(t, id).PasswordID, "a read changes nothing")
		require.NoError(t, cl.SetResourcePassword(ctx, id, pw))
		second := policy(t, id).PasswordID
		assert.NotZero(t, second)
		assert.NotEqual(t, first, second, "the same password again: a new id")
		require.NoError(t, cl.RemoveResourcePassword(ctx, id))
		assert.Zero(t, policy(t, id).PasswordID)
		require.NoError(t, cl.SetResourcePassword(ctx, id, pw))
		third := policy(t, id).PasswordID
		assert.NotContains(t, []int{0, first, second}, third, "ids are never reused")

		require.NoError(t, cl.SetResourcePincode(ctx, id, "123456"))
		pin := policy(t, id).PincodeID
		assert.NotZero(t, pin)
		require.NoError(t, cl.SetResourcePincode(ctx, id, "123456"))
		assert.NotEqual(t, pin, policy(t, id).PincodeID)
		require.NoError(t, cl.RemoveResourcePincode(ctx, id))
		assert.Zero(t, policy(t, id).PincodeID)

		ha := pangolinapi.HeaderAuth{User: pangolinapi.Secret(c.prefix), Password: pw}
		require.NoError(t, cl.SetResourceHeaderAuth(ctx, id, ha))
		h1 := policy(t, id).HeaderAuth
		require.NotNil(t, h1)
		assert.False(t, h1.ExtendedCompatibility)
		ha.ExtendedCompatibility = true
		require.NoError(t, cl.SetResourceHeaderAuth(ctx, id, ha))
		h2 := policy(t, id).HeaderAuth
		require.NotNil(t, h2)
		assert.NotEqual(t, h1.ID, h2.ID)
		assert.True(t, h2.ExtendedCompatibility, "the switch is read back")
		require.NoError(t, cl.RemoveResourceHeaderAuth(ctx, id))
		assert.Nil(t, policy(t, id).HeaderAuth)
		assert.Equal(t, third, policy(t, id).PasswordID, "each secret has its own row")

		// Refusals name no secret.
		err := cl.SetResourcePassword(ctx, id, "abc")
		assert.True(t, pangolinapi.IsClientError(err), "a 3-character password: %v", err)
		assert.NotContains(t, err.Error(), `"abc"`)
	})

	t.Run("the whitelist is enabled first, then set, and disabling keeps it", func(t *testing.T) {
		r := c.create(t, "acl-whitelist")
		id := r.ResourceID
		err := cl.SetResourceWhitelist(ctx, id, []string{"alice@corp.example"})
		assert.True(t, pangolinapi.IsClientError(err), "while disabled: %v", err)
		err = cl.SetResourceWhitelist(ctx, id, nil)
		assert.True(t, pangolinapi.IsClientError(err), "even an empty list while disabled: %v", err)

		on, off := true, false
		upd, err := cl.UpdateResource(ctx, id, pangolinapi.ResourceUpdate{EmailWhitelistEnabled: &on})
		require.NoError(t, err)
		assert.True(t, upd.EmailWhitelistEnabled)
		// PIC compares lower-case emails: the server must store them so.
		require.NoError(t, cl.SetResourceWhitelist(ctx, id, []string{"ALICE@Corp.Example", "*@corp.example"}))
		want := []string{"alice@corp.example", "*@corp.example"}
		p := policy(t, id)
		assert.True(t, p.EmailWhitelistEnabled)
		assert.ElementsMatch(t, want, p.EmailWhitelist)
		got, err := cl.GetResourceWhitelist(ctx, id)
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got)
		err = cl.SetResourceWhitelist(ctx, id, []string{"a*@corp.example"})
		assert.True(t, pangolinapi.IsClientError(err), "a wildcard inside the local part: %v", err)

		// A set replaces.
		require.NoError(t, cl.SetResourceWhitelist(ctx, id, []string{"*@corp.example"}))
		assert.Equal(t, []string{"*@corp.example"}, policy(t, id).EmailWhitelist)

		// Why PIC empties the list before it disables the whitelist.
		_, err = cl.UpdateResource(ctx, id, pangolinapi.ResourceUpdate{EmailWhitelistEnabled: &off})
		require.NoError(t, err)
		p = policy(t, id)
		assert.False(t, p.EmailWhitelistEnabled)
		assert.Equal(t, []string{"*@corp.example"}, p.EmailWhitelist, "disabling keeps the list")
		_, err = cl.UpdateResource(ctx, id, pangolinapi.ResourceUpdate{EmailWhitelistEnabled: &on})
		require.NoError(t, err)
		require.NoError(t, cl.SetResourceWhitelist(ctx, id, nil))
		assert.Empty(t, policy(t, id).EmailWhitelist)
	})

	t.Run("rules are created, listed by priority, updated and deleted; applyRules turns them on", func(t *testing.T) {
		r := c.create(t, "acl-rules")
		id := r.ResourceID
		drop, err := cl.CreateResourceRule(ctx, id, pangolinapi.RuleSpec{Action: pangolinapi.RuleDrop, Match: pangolinapi.RuleMatchIP, Value: "10.1.2.3", Priority: 20, Enabled: true})
		require.NoError(t, err)
		assert.Equal(t, pangolinapi.Rule{RuleID: drop.RuleID, Action: "DROP", Match: "IP", Value: "10.1.2.3", Priority: 20, Enabled: true}, drop)
		accept, err := cl.CreateResourceRule(ctx, id, pangolinapi.RuleSpec{Action: pangolinapi.RuleAccept, Match: pangolinapi.RuleMatchPath, Value: "/public/*", Priority: 10, Enabled: true})
		require.NoError(t, err)
		pass, err := cl.CreateResourceRule(ctx, id, pangolinapi.RuleSpec{Action: pangolinapi.RulePass, Match: pangolinapi.RuleMatchCIDR, Value: "192.168.0.0/16", Priority: -5})
		require.NoError(t, err)
		assert.False(t, pass.Enabled, "a disabled rule stays disabled")
		assert.Equal(t, -5, pass.Priority, "a negative priority is kept")

		list, err := cl.ListResourceRules(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, []pangolinapi.Rule{pass, accept, drop}, list, "by priority")
		p := policy(t, id)
		assert.ElementsMatch(t, []pangolinapi.Rule{pass, accept, drop}, p.Rules, "/policies shows them too")
		assert.False(t, p.ApplyRules, "stored, but not applied")

		// PIC rewrites a rule in place when its order or value changes.
		moved, err := cl.UpdateResourceRule(ctx, id, drop.RuleID, pangolinapi.RuleSpec{Action: pangolinapi.RuleDrop, Match: pangolinapi.RuleMatchCIDR, Value: "10.0.0.0/8", Priority: 1, Enabled: true})
		require.NoError(t, err)
		assert.Equal(t, pangolinapi.Rule{RuleID: drop.RuleID, Action: "DROP", Match: "CIDR", Value: "10.0.0.0/8", Priority: 1, Enabled: true}, moved)
		list, err = cl.ListResourceRules(ctx, id)
		require.NoError(t, err)
		require.Len(t, list, 3)
		assert.Equal(t, drop.RuleID, list[1].RuleID, "reordered")
		// Not relied upon (the client sends every field): is priority still required?
		rep := c.raw(t, http.MethodPost, "/resource/"+strconv.Itoa(id)+"/rule/"+strconv.Itoa(drop.RuleID), `{"value":"10.0.0.0/16"}`, true)
		t.Logf("rule update without priority: %d %s", rep.Status, rep.Message)

		require.NoError(t, cl.DeleteResourceRule(ctx, id, accept.RuleID))
		err = cl.DeleteResourceRule(ctx, id, accept.RuleID)
		assert.True(t, pangolinapi.IsNotFound(err), "second delete: %v", err)
		_, err = cl.UpdateResourceRule(ctx, id, accept.RuleID, pangolinapi.RuleSpec{Action: pangolinapi.RuleDrop, Match: pangolinapi.RuleMatchIP, Value: "10.1.2.3", Priority: 1})
		assert.True(t, pangolinapi.IsNotFound(err), "update of a deleted rule: %v", err)

		on := true
		upd, err := cl.UpdateResource(ctx, id, pangolinapi.ResourceUpdate{ApplyRules: &on})
		require.NoError(t, err)
		assert.True(t, upd.ApplyRules)
		assert.True(t, policy(t, id).ApplyRules)
		got, err := cl.GetResource(ctx, id)
		require.NoError(t, err)
		assert.True(t, got.ApplyRules)
	})

	t.Run("rule values are checked by the server", func(t *testing.T) {
		r := c.create(t, "acl-rule-values")
		// PIC validates values itself, but a value that slips through must be refused,
		// not stored as a rule that never matches.
		for _, s := range []pangolinapi.RuleSpec{
			{Match: pangolinapi.RuleMatchCIDR, Value: "10.0.0.0/33"},
			{Match: pangolinapi.RuleMatchCIDR, Value: "10.0.0.1"},
			{Match: pangolinapi.RuleMatchIP, Value: "10.0.0.0/8"},
			{Match: pangolinapi.RuleMatchCountry, Value: "de"},
			{Match: pangolinapi.RuleMatchASN, Value: "15169"},
		} {
			s.Action, s.Priority = pangolinapi.RuleDrop, 1
			_, err := cl.CreateResourceRule(ctx, r.ResourceID, s)
			assert.True(t, pangolinapi.IsClientError(err), "%s %s: %v", s.Match, s.Value, err)
		}
		for _, s := range []pangolinapi.RuleSpec{
			{Match: pangolinapi.RuleMatchIP, Value: "2001:db8::1"},
			{Match: pangolinapi.RuleMatchCountry, Value: "DE"},
			{Match: pangolinapi.RuleMatchASN, Value: "AS15169"},
			{Match: pangolinapi.RuleMatchRegion, Value: "150"},
		} {
			s.Action, s.Priority = pangolinapi.RuleDrop, 1
			got, err := cl.CreateResourceRule(ctx, r.ResourceID, s)
			if assert.NoError(t, err, "%s %s", s.Match, s.Value) {
				assert.Equal(t, s.Value, got.Value, "stored as sent")
			}
		}
		assert.Len(t, policy(t, r.ResourceID).Rules, 4, "only the accepted values were stored")
	})

	t.Run("an auto-login identity provider that does not exist is answered with a 500, and changes nothing", func(t *testing.T) {
		r := c.create(t, "acl-idp")
		// No org has this many identity providers; the key cannot list them (/idp is
		// for root keys), so PIC cannot check the id before sending it.
		const unknown = 2147483000
		reply := c.raw(t, http.MethodPost, "/resource/"+strconv.Itoa(r.ResourceID), `{"skipToIdpId":`+strconv.Itoa(unknown)+`}`, true)
		assert.Equal(t, http.StatusInternalServerError, reply.Status, "not a 4xx: %s", reply.Body)
		assert.Zero(t, policy(t, r.ResourceID).IdpID)

		// The client tells it from an outage: the same 500 again while reads answer.
		idp := unknown
		_, err := cl.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{SkipToIdpID: &idp})
		require.Error(t, err)
		assert.True(t, pangolinapi.IsRefused(err), "%v", err)
		assert.False(t, pangolinapi.IsTransient(err))
		assert.Zero(t, policy(t, r.ResourceID).IdpID)
	})
}
