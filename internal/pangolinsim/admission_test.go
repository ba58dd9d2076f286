package pangolinsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAdmit checks the evaluator against shared/reference/pangolin-integration-api.md,
// sections 11.8, 12 and 19: each case is a sentence of the reference.
func TestAdmit(t *testing.T) {
	const devs, ops = 3, 4
	anonymous := Visitor{IP: "198.51.100.7", Path: "/"}
	dev := Visitor{IP: "198.51.100.7", Path: "/", UserID: "alice0000000001", RoleIDs: []int{devs}}
	admin := Visitor{IP: "198.51.100.7", Path: "/", UserID: "picfakeowner001", RoleIDs: []int{AdminRoleID}}
	rule := func(action, match, value string, priority int) Rule {
		return Rule{ID: priority, Action: action, Match: match, Value: value, Priority: priority, Enabled: true}
	}
	with := func(v Visitor, edit func(*Visitor)) Visitor { edit(&v); return v }

	cases := []struct {
		name    string
		access  Access
		visitor Visitor
		want    Decision
	}{
		{"a resource with no login method is public (11.8 step 3)", Access{}, anonymous, Allowed},
		{"blockAccess denies whatever else is set (11.8 step 1)", Access{BlockAccess: true, ApplyRules: true, Rules: []Rule{rule("ACCEPT", "CIDR", "0.0.0.0/0", 1)}}, anonymous, Denied},
		{"an ACCEPT rule admits without any authentication (11.8 step 2)", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("ACCEPT", "PATH", "/health", 1)}}, with(anonymous, func(v *Visitor) { v.Path = "/health" }), Allowed},
		{"a DROP rule denies, a login notwithstanding", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("DROP", "IP", "198.51.100.7", 1)}}, admin, Denied},
		{"a PASS rule stops rule evaluation and goes on to the login methods (19)", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("PASS", "PATH", "/*", 1), rule("ACCEPT", "CIDR", "0.0.0.0/0", 2)}}, anonymous, LoginRequired},
		{"the first rule by ascending priority decides", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "CIDR", "198.51.100.0/24", 5), rule("ACCEPT", "IP", "198.51.100.7", 2)}}, anonymous, Allowed},
		{"rules count only with applyRules (12)", Access{SSO: true, Rules: []Rule{rule("ACCEPT", "CIDR", "0.0.0.0/0", 1)}}, anonymous, LoginRequired},
		{"disabled rules are skipped (12)", Access{ApplyRules: true, Rules: []Rule{{ID: 1, Action: "DROP", Match: "CIDR", Value: "0.0.0.0/0", Priority: 1}}}, anonymous, Allowed},
		{"no matching rule goes on to the login methods", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("ACCEPT", "IP", "203.0.113.1", 1)}}, anonymous, LoginRequired},
		{"sso admits a user of a granted role", Access{SSO: true, RoleIDs: []int{devs}}, dev, Allowed},
		{"sso refuses a user of another role", Access{SSO: true, RoleIDs: []int{ops}}, dev, LoginRequired},
		{"sso admits a user of the list", Access{SSO: true, UserIDs: []string{"alice0000000001"}}, dev, Allowed},
		{"the Admin role always has access (19)", Access{SSO: true}, admin, Allowed},
		{"without sso a role grants nothing", Access{RoleIDs: []int{devs}, Password: NewCredential("pw-1234")}, dev, LoginRequired},
		{"a password the resource holds admits", Access{SSO: true, Password: NewCredential("pw-1234")}, with(anonymous, func(v *Visitor) { v.Password = "pw-1234" }), Allowed},
		{"another password does not", Access{Password: NewCredential("pw-1234")}, with(anonymous, func(v *Visitor) { v.Password = "pw-9999" }), LoginRequired},
		{"a PIN code admits", Access{Pincode: NewCredential("123456")}, with(anonymous, func(v *Visitor) { v.Pincode = "123456" }), Allowed},
		{"header auth admits with both values", Access{HeaderAuth: NewCredential("svc", "secret")}, with(anonymous, func(v *Visitor) { v.HeaderUser, v.HeaderPassword = "svc", "secret" }), Allowed},
		{"a whitelisted email admits, by a *@domain pattern (11.6)", Access{EmailWhitelistEnabled: true, Whitelist: []string{"*@corp.example"}}, with(anonymous, func(v *Visitor) { v.Email = "Dave@Corp.Example" }), Allowed},
		{"an enabled whitelist is a login method even when empty", Access{EmailWhitelistEnabled: true}, anonymous, LoginRequired},
		{"a disabled whitelist's kept list admits no one (11.6)", Access{Password: NewCredential("pw-1234"), Whitelist: []string{"*@corp.example"}}, with(anonymous, func(v *Visitor) { v.Email = "dave@corp.example" }), LoginRequired},
		{"a CIDR rule matches an address inside", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "CIDR", "198.51.100.0/24", 1)}}, anonymous, Denied},
		{"a path glob matches below it (19)", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("ACCEPT", "PATH", "/public/*", 1)}}, with(anonymous, func(v *Visitor) { v.Path = "/public/x/y" }), Allowed},
		{"a path glob matches the path itself (19)", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("ACCEPT", "PATH", "/public/*", 1)}}, with(anonymous, func(v *Visitor) { v.Path = "/public" }), Allowed},
		{"a path glob does not match a sibling", Access{SSO: true, ApplyRules: true, Rules: []Rule{rule("ACCEPT", "PATH", "/public/*", 1)}}, with(anonymous, func(v *Visitor) { v.Path = "/publication" }), LoginRequired},
		{"a country rule matches the visitor's country", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "COUNTRY", "RU", 1)}}, with(anonymous, func(v *Visitor) { v.Country = "RU" }), Denied},
		{"a country rule never matches an unknown country (12, GeoIP)", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "COUNTRY", "RU", 1)}}, anonymous, Allowed},
		{"COUNTRY_IS_NOT always matches an unknown country (12, GeoIP)", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "COUNTRY_IS_NOT", "DE", 1)}}, anonymous, Denied},
		{"COUNTRY ALL matches a public address", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "COUNTRY", "ALL", 1)}}, anonymous, Denied},
		{"COUNTRY ALL spares private addresses (12, GeoIP)", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "COUNTRY", "ALL", 1)}}, with(anonymous, func(v *Visitor) { v.IP = "10.1.2.3" }), Allowed},
		{"an ASN rule matches in any case (12)", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "ASN", "as15169", 1)}}, with(anonymous, func(v *Visitor) { v.ASN = "AS15169" }), Denied},
		{"a region rule matches the visitor's region", Access{ApplyRules: true, Rules: []Rule{rule("DROP", "REGION", "150", 1)}}, with(anonymous, func(v *Visitor) { v.Region = "150" }), Denied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Admit(c.access, c.visitor))
		})
	}
}

func TestServerAccessIsWhatTheGatekeeperReads(t *testing.T) {
	s := New(Options{})
	r := s.SeedResource(Resource{Name: "web", DomainID: "domain1", SSO: true, Enabled: true})
	a, ok := s.Access(r.ID)
	assert.True(t, ok)
	assert.Equal(t, LoginRequired, Admit(a, Visitor{IP: "198.51.100.7"}), "a new resource: sso, Admin only (11.2)")
	assert.Equal(t, Allowed, Admit(a, Visitor{IP: "198.51.100.7", UserID: DefaultOwner.ID, RoleIDs: DefaultOwner.RoleIDs}))
}
