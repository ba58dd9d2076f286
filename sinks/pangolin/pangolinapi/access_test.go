package pangolinapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Distinctive secrets: finding one anywhere printed means it leaked.
const (
	leakPassword = "pw-LEAK-9f2c-hunter22"
	leakPincode  = "918273"
	leakUser     = "user-LEAK-41d7"
)

// echoBody is a server (or proxy) that puts the request body into its error, in the
// shapes the client reads: the JSON envelope, an HTML page, plain text.
func echoBody(status int, shape string) simtest.Fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		b, _ := io.ReadAll(r.Body)
		text := "refused body " + string(b)
		switch shape {
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, "<pre>%s</pre>", text)
		case "text":
			// Long enough to be cut, with the secret across the cut.
			w.WriteHeader(status)
			_, _ = fmt.Fprint(w, strings.Repeat("x", 190)+text)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"data": nil, "success": false, "error": true, "message": text, "status": status})
		}
		return true
	}
}

// TestSecretsNeverPrinted prints secrets, the types holding them and the errors of
// failed secret writes every way a log line could, and looks for the secrets.
func TestSecretsNeverPrinted(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	r, err := c.CreateResource(ctx, "a", pangolinapi.Host{DomainID: "domain1", Subdomain: "a"})
	require.NoError(t, err)

	pw := pangolinapi.Secret(leakPassword)
	ha := pangolinapi.HeaderAuth{User: leakUser, Password: pw, ExtendedCompatibility: true}
	var errs []error
	for _, f := range []simtest.Fault{
		echoBody(400, "json"), echoBody(500, "json"), echoBody(404, "html"), echoBody(502, "text"), simtest.DropConnection(),
	} {
		s.SetFault(f)
		errs = append(errs,
			c.SetResourcePassword(ctx, r.ResourceID, pw),
			c.SetResourcePincode(ctx, r.ResourceID, leakPincode),
			c.SetResourceHeaderAuth(ctx, r.ResourceID, ha))
	}
	s.SetFault(nil)
	// The server's own refusals.
	errs = append(errs,
		c.SetResourcePassword(ctx, r.ResourceID, pangolinapi.Secret(strings.Repeat("long-", 30)+leakPassword)),
		c.SetResourcePassword(ctx, 99999, pw),
		c.SetResourcePincode(ctx, r.ResourceID, "12345"), // refused before sending
	)
	var ae *pangolinapi.APIError
	require.ErrorAs(t, errs[0], &ae)
	assert.Contains(t, ae.Message, `refused body {"password":"[redacted]"}`, "the echo reached the client, so the checks below mean something")

	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("secrets", "pw", pw, "ha", ha)
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("secrets", "pw", pw, "ha", ha)
	jsonPW, err := json.Marshal(pw)
	require.NoError(t, err)
	jsonHA, err := json.Marshal(struct{ H pangolinapi.HeaderAuth }{ha})
	require.NoError(t, err)
	printed := []string{
		fmt.Sprint(pw), fmt.Sprintf("%s|%v|%+v|%#v|%q|%x|%X|%10s", pw, pw, pw, pw, pw, pw, pw, pw),
		fmt.Sprint(ha), fmt.Sprintf("%v|%+v|%#v|%s", ha, ha, ha, ha), fmt.Sprintf("%+v|%#v", &ha, &ha),
		fmt.Sprintf("%+v", struct{ H pangolinapi.HeaderAuth }{ha}), fmt.Sprintf("%#v", []pangolinapi.Secret{pw}),
		string(jsonPW), string(jsonHA), logged.String(),
	}
	for _, e := range errs {
		require.Error(t, e)
		printed = append(printed, e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
	}
	for i, p := range printed {
		for _, secret := range []string{leakPassword, leakPincode, leakUser, "LEAK"} {
			assert.NotContains(t, p, secret, "printed value %d: %s", i, p)
		}
	}
	assert.Equal(t, "[redacted]", pw.String())
	assert.Empty(t, pangolinapi.Secret("").String(), "an empty secret shows as empty")
	assert.Contains(t, ha.String(), "ExtendedCompatibility:true", "the rest is still shown")
	assert.Zero(t, s.SecretWrites(), "no write got through")
}

func TestAccessMisuseIsRefusedBeforeSending(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	rule := pangolinapi.RuleSpec{Action: pangolinapi.RuleDrop, Match: pangolinapi.RuleMatchIP, Value: "10.1.2.3", Priority: 1}
	with := func(mod func(*pangolinapi.RuleSpec)) pangolinapi.RuleSpec { r := rule; mod(&r); return r }
	neg := -1
	cases := []struct {
		name string
		call func() error
	}{
		{"a role twice (the server would say it does not exist)", func() error { return c.SetResourceRoles(ctx, 1, []int{3, 3}) }},
		{"a role id that is no id", func() error { return c.SetResourceRoles(ctx, 1, []int{0}) }},
		{"a user by email (the server would say 403)", func() error { return c.SetResourceUsers(ctx, 1, []string{"alice@corp.example"}) }},
		{"a user twice", func() error { return c.SetResourceUsers(ctx, 1, []string{"a", "a"}) }},
		{"an empty user id", func() error { return c.SetResourceUsers(ctx, 1, []string{""}) }},
		{"an empty password (removal is its own call)", func() error { return c.SetResourcePassword(ctx, 1, "") }},
		{"a PIN code of 5 digits", func() error { return c.SetResourcePincode(ctx, 1, "12345") }},
		{"a PIN code of letters", func() error { return c.SetResourcePincode(ctx, 1, "abcdef") }},
		{"a PIN code of non-ASCII digits", func() error { return c.SetResourcePincode(ctx, 1, "١٢٣٤٥٦") }},
		{"header auth without a user", func() error { return c.SetResourceHeaderAuth(ctx, 1, pangolinapi.HeaderAuth{Password: "pass"}) }},
		{"a rule with an unknown action", func() error {
			_, err := c.CreateResourceRule(ctx, 1, with(func(r *pangolinapi.RuleSpec) { r.Action = "REJECT" }))
			return err
		}},
		{"a rule with an unknown match", func() error {
			_, err := c.CreateResourceRule(ctx, 1, with(func(r *pangolinapi.RuleSpec) { r.Match = "METHOD" }))
			return err
		}},
		{"a rule update without a value", func() error {
			_, err := c.UpdateResourceRule(ctx, 1, 1, with(func(r *pangolinapi.RuleSpec) { r.Value = "" }))
			return err
		}},
		{"a negative identity provider", func() error {
			_, err := c.UpdateResource(ctx, 1, pangolinapi.ResourceUpdate{SkipToIdpID: &neg})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.ResetCounts()
			assert.Error(t, tc.call())
			assert.Empty(t, s.Counts(), "nothing was sent")
		})
	}
}

// accessOptions is an org with roles and users besides the defaults.
var accessOptions = pangolinsim.Options{
	Roles: []pangolinsim.Role{{ID: 2, Name: "Member"}, {ID: 3, Name: "k8s-devs"}, {ID: 4, Name: "k8s-ops"}},
	Users: []pangolinsim.User{
		pangolinsim.DefaultOwner,
		{ID: "fihwbfec93u7yua", Email: "alice@corp.example", Username: "alice", Type: "oidc", IdpID: 1, IdpName: "test-idp", RoleIDs: []int{3}},
		{ID: "l7lowl767jpo1y3", Email: "bob@corp.example", Username: "bob", Name: "Bob"},
	},
	IdentityProviders: []int{1, 7},
}

func TestAccessRoundTrip(t *testing.T) {
	s := newFake(t, accessOptions)
	c := newClient(t, s, func(c *pangolinapi.Config) { c.PageSize = 2 })
	ctx := context.Background()

	roles, err := c.ListRoles(ctx)
	require.NoError(t, err)
	assert.Equal(t, []pangolinapi.Role{
		{RoleID: 1, Name: "Admin", Description: "Admin role with the most permissions", IsAdmin: true},
		{RoleID: 2, Name: "Member"}, {RoleID: 3, Name: "k8s-devs"}, {RoleID: 4, Name: "k8s-ops"},
	}, roles, "paged, isAdmin null read as false")
	users, err := c.ListUsers(ctx)
	require.NoError(t, err)
	require.Len(t, users, 3)
	assert.Equal(t, pangolinapi.User{UserID: "fihwbfec93u7yua", Email: "alice@corp.example", Username: "alice", Type: "oidc", IdpID: 1, IdpName: "test-idp", RoleIDs: []int{3}}, users[1])
	assert.Equal(t, "internal", users[2].Type)

	r, err := c.CreateResource(ctx, "acl", pangolinapi.Host{DomainID: "domain1", Subdomain: "acl"})
	require.NoError(t, err)
	id := r.ResourceID
	assert.False(t, r.EmailWhitelistEnabled)
	assert.False(t, r.ApplyRules)

	pol, err := c.GetResourcePolicy(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, pangolinapi.ResourcePolicy{PolicyID: pol.PolicyID, SSO: true}, pol, "a new resource: SSO, Admin only")
	assert.NotZero(t, pol.PolicyID)

	require.NoError(t, c.SetResourceRoles(ctx, id, []int{4, 3}))
	require.NoError(t, c.SetResourceUsers(ctx, id, []string{"l7lowl767jpo1y3"}))
	require.NoError(t, c.SetResourcePassword(ctx, id, "hunter22"))
	require.NoError(t, c.SetResourcePincode(ctx, id, "123456"))
	require.NoError(t, c.SetResourceHeaderAuth(ctx, id, pangolinapi.HeaderAuth{User: "svc1", Password: "s3cr3t!", ExtendedCompatibility: true}))
	on, idp := true, 7
	upd, err := c.UpdateResource(ctx, id, pangolinapi.ResourceUpdate{EmailWhitelistEnabled: &on, ApplyRules: &on, SkipToIdpID: &idp})
	require.NoError(t, err)
	assert.True(t, upd.EmailWhitelistEnabled)
	assert.True(t, upd.ApplyRules)
	assert.True(t, upd.SSO, "the update response's effective value")
	assert.Equal(t, 7, upd.SkipToIdpID)
	require.NoError(t, c.SetResourceWhitelist(ctx, id, []string{"Alice@Corp.Example", "*@corp.example"}))
	accept, err := c.CreateResourceRule(ctx, id, pangolinapi.RuleSpec{Action: pangolinapi.RuleAccept, Match: pangolinapi.RuleMatchCIDR, Value: "10.0.0.0/8", Priority: 5, Enabled: true})
	require.NoError(t, err)
	assert.Equal(t, pangolinapi.Rule{RuleID: accept.RuleID, Action: "ACCEPT", Match: "CIDR", Value: "10.0.0.0/8", Priority: 5, Enabled: true}, accept)
	drop, err := c.CreateResourceRule(ctx, id, pangolinapi.RuleSpec{Action: pangolinapi.RuleDrop, Match: pangolinapi.RuleMatchPath, Value: "/admin/*", Priority: 1})
	require.NoError(t, err)
	assert.False(t, drop.Enabled, "enabled is sent, not left to the server's default")

	pol, err = c.GetResourcePolicy(ctx, id)
	require.NoError(t, err)
	want := pangolinapi.ResourcePolicy{
		PolicyID: pol.PolicyID, SSO: true, ApplyRules: true, EmailWhitelistEnabled: true, IdpID: 7,
		PasswordID: 1, PincodeID: 1, HeaderAuth: &pangolinapi.HeaderAuthState{ID: 1, ExtendedCompatibility: true},
		Roles:          []pangolinapi.PolicyRole{{RoleID: 3, Name: "k8s-devs"}, {RoleID: 4, Name: "k8s-ops"}},
		Users:          []pangolinapi.PolicyUser{{UserID: "l7lowl767jpo1y3", Email: "bob@corp.example", Username: "bob", Name: "Bob", Type: "internal"}},
		EmailWhitelist: []string{"alice@corp.example", "*@corp.example"},
		Rules:          []pangolinapi.Rule{accept, drop},
	}
	assert.Equal(t, want, pol)
	assert.True(t, s.CheckPassword(id, "hunter22"), "the password sent is the one stored")
	assert.True(t, s.CheckHeaderAuth(id, "svc1", "s3cr3t!"))

	listed, err := c.ListResourceRoles(ctx, id)
	require.NoError(t, err)
	require.Len(t, listed, 3)
	assert.True(t, listed[0].IsAdmin, "the Admin role is always listed")
	wl, err := c.GetResourceWhitelist(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice@corp.example", "*@corp.example"}, wl)
	rules, err := c.ListResourceRules(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []pangolinapi.Rule{drop, accept}, rules, "by priority, paged")

	moved, err := c.UpdateResourceRule(ctx, id, drop.RuleID, pangolinapi.RuleSpec{Action: pangolinapi.RuleDrop, Match: pangolinapi.RuleMatchCountry, Value: "DE", Priority: 9, Enabled: true})
	require.NoError(t, err)
	assert.Equal(t, pangolinapi.Rule{RuleID: drop.RuleID, Action: "DROP", Match: "COUNTRY", Value: "DE", Priority: 9, Enabled: true}, moved)
	require.NoError(t, c.DeleteResourceRule(ctx, id, accept.RuleID))
	err = c.DeleteResourceRule(ctx, id, accept.RuleID)
	assert.True(t, pangolinapi.IsNotFound(err), "%v", err)

	require.NoError(t, c.RemoveResourcePassword(ctx, id))
	require.NoError(t, c.RemoveResourcePincode(ctx, id))
	require.NoError(t, c.RemoveResourceHeaderAuth(ctx, id))
	require.NoError(t, c.SetResourceRoles(ctx, id, nil), "nil sends [] (null would be refused)")
	require.NoError(t, c.SetResourceUsers(ctx, id, nil))
	require.NoError(t, c.SetResourceWhitelist(ctx, id, nil))
	zero := 0
	_, err = c.UpdateResource(ctx, id, pangolinapi.ResourceUpdate{SkipToIdpID: &zero})
	require.NoError(t, err)
	pol, err = c.GetResourcePolicy(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, pangolinapi.ResourcePolicy{PolicyID: pol.PolicyID, SSO: true, ApplyRules: true, EmailWhitelistEnabled: true, Rules: []pangolinapi.Rule{moved}}, pol)
	assert.Equal(t, 6, s.SecretWrites())

	t.Run("refusals are client errors the caller can tell apart", func(t *testing.T) {
		err := c.SetResourceRoles(ctx, id, []int{1})
		var ae *pangolinapi.APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, http.StatusBadRequest, ae.Status)
		assert.Equal(t, "Admin role cannot be assigned to resources", ae.Message)
		assert.Equal(t, pangolinapi.OpSetResourceRoles, ae.Operation)
		err = c.SetResourceRoles(ctx, id, []int{999})
		assert.True(t, pangolinapi.IsNotFound(err), "an unknown role: %v", err)
		err = c.SetResourceUsers(ctx, id, []string{"nosuchuser00000"})
		assert.True(t, pangolinapi.IsClientError(err), "%v", err)
	})
}

func TestUpdateResourceTakesTheFlagsItSent(t *testing.T) {
	s := newFake(t, pangolinsim.Options{})
	c := newClient(t, s)
	ctx := context.Background()
	r, err := c.CreateResource(ctx, "a", pangolinapi.Host{DomainID: "domain1", Subdomain: "a"})
	require.NoError(t, err)
	// A server whose update response carries the raw (null) flag columns, as the
	// create response does.
	raw := simtest.When(func(r *http.Request) bool { return r.Method == http.MethodPost }, func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"data":{"resourceId":%d,"name":"a","fullDomain":"a.example.com","enabled":true,"ssl":true,"blockAccess":false,"sso":null,"emailWhitelistEnabled":null,"applyRules":null},"success":true,"error":false,"message":"HTTP resource updated successfully","status":200}`, r.ResourceID)
		return true
	})
	s.SetFault(raw)
	defer s.SetFault(nil)

	off := false
	s.ResetCounts()
	got, err := c.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{SSO: &off, ApplyRules: &off, EmailWhitelistEnabled: &off})
	require.NoError(t, err)
	assert.False(t, got.SSO)
	assert.Equal(t, 0, s.Reads(), "every flag was just written")

	s.ResetCounts()
	got, err = c.UpdateResource(ctx, r.ResourceID, pangolinapi.ResourceUpdate{Name: "renamed"})
	require.NoError(t, err)
	assert.Equal(t, 0, s.Reads(), "no read: the caller knows what it had")
	assert.False(t, got.SSOReported, "sso was neither sent nor reported")
}
