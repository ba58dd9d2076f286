package pangolinsim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// accessFixture is the reference's second-session org: Admin, Member, k8s-devs and
// k8s-ops, the owner and an OIDC user alice.
var accessFixture = pangolinsim.Options{
	Roles: []pangolinsim.Role{
		{ID: 2, Name: "Member", Description: "Members can only view resources"},
		{Name: "k8s-devs", Description: "ctrl test"}, // 3
		{Name: "k8s-ops"}, // 4
	},
	Users: []pangolinsim.User{
		pangolinsim.DefaultOwner,
		{ID: "fihwbfec93u7yua", Email: "alice@corp.example", Username: "alice", Type: "oidc", IdpID: 1, IdpName: "test-idp", RoleIDs: []int{3}},
		{ID: "l7lowl767jpo1y3", Email: "bob@corp.example", Username: "bob", Type: "oidc", IdpID: 1, IdpName: "test-idp"},
	},
}

func policyOf(t *testing.T, s *simtest.Server, id int) map[string]any {
	t.Helper()
	r := do(t, s, "GET", "/v1/resource/"+itoa(id)+"/policies", "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.Nil(t, r.data()["sharedPolicy"])
	return r.data()["defaultPolicy"].(map[string]any)
}

func TestAccessDefaults(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "acl-test", "acl")

	get := do(t, s, "GET", "/v1/resource/"+itoa(id), "").data()
	assert.Equal(t, true, get["sso"])
	assert.Equal(t, false, get["emailWhitelistEnabled"])
	assert.Equal(t, false, get["applyRules"])

	roles := do(t, s, "GET", "/v1/resource/"+itoa(id)+"/roles", "")
	require.Equal(t, 200, roles.Status, roles.Body)
	assert.Equal(t, []any{map[string]any{"roleId": float64(1), "name": "Admin", "description": "Admin role with the most permissions", "isAdmin": true}}, roles.data()["roles"])
	assert.Equal(t, []any{}, do(t, s, "GET", "/v1/resource/"+itoa(id)+"/users", "").data()["users"])
	assert.Equal(t, []any{}, do(t, s, "GET", "/v1/resource/"+itoa(id)+"/whitelist", "").data()["whitelist"])
	rules := do(t, s, "GET", "/v1/resource/"+itoa(id)+"/rules", "").data()
	assert.Equal(t, []any{}, rules["rules"])
	assert.Equal(t, map[string]any{"total": float64(0), "limit": float64(1000), "offset": float64(0)}, rules["pagination"])

	p := policyOf(t, s, id)
	for k, want := range map[string]any{
		"sso": true, "applyRules": false, "emailWhitelistEnabled": false, "idpId": nil,
		"passwordId": nil, "pincodeId": nil, "headerAuth": nil,
		"roles": []any{}, "users": []any{}, "emailWhiteList": []any{}, "rules": []any{},
	} {
		assert.Equal(t, want, p[k], k)
	}
	assert.Equal(t, get["defaultResourcePolicyId"], p["resourcePolicyId"])
	assert.Nil(t, get["resourcePolicyId"], "no shared policy")

	pol, found := s.Policy(id)
	require.True(t, found)
	assert.Equal(t, pangolinsim.Policy{SSO: true}, pol)

	require.Equal(t, 200, do(t, s, "DELETE", "/v1/resource/"+itoa(id), "").Status)
	_, found = s.Policy(id)
	assert.False(t, found, "the inline policy goes with its resource")
}

func TestOrgRolesAndUsers(t *testing.T) {
	s := newServer(t, accessFixture)
	r := do(t, s, "GET", "/v1/org/interop/roles", "")
	require.Equal(t, 200, r.Status, r.Body)
	assert.Equal(t, "Roles retrieved successfully", r.message())
	roles := r.data()["roles"].([]any)
	require.Len(t, roles, 4)
	admin, devs := roles[0].(map[string]any), roles[2].(map[string]any)
	assert.Equal(t, true, admin["isAdmin"])
	assert.Equal(t, "k8s-devs", devs["name"])
	assert.Equal(t, float64(3), devs["roleId"], "an id-less role takes the next id")
	assert.Nil(t, devs["isAdmin"], "null, never false")

	page := do(t, s, "GET", "/v1/org/interop/roles?page=2&pageSize=3", "").data()
	assert.Len(t, page["roles"], 1)
	assert.Equal(t, map[string]any{"total": float64(4), "page": float64(2), "pageSize": float64(3)}, page["pagination"])
	assert.Equal(t, 400, do(t, s, "GET", "/v1/org/interop/roles?limit=1", "").Status)

	users := do(t, s, "GET", "/v1/org/interop/users?pageSize=2", "").data()
	list := users["users"].([]any)
	require.Len(t, list, 2)
	alice := list[1].(map[string]any)
	assert.Equal(t, "fihwbfec93u7yua", alice["id"])
	assert.Equal(t, "alice@corp.example", alice["email"])
	assert.Equal(t, "oidc", alice["type"])
	assert.Equal(t, []any{map[string]any{"roleId": float64(3), "roleName": "k8s-devs"}}, alice["roles"])
	assert.Equal(t, float64(3), users["pagination"].(map[string]any)["total"])

	defaults := newServer(t, pangolinsim.Options{})
	names := []string{}
	for _, r := range do(t, defaults, "GET", "/v1/org/interop/roles", "").data()["roles"].([]any) {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	assert.Equal(t, []string{"Admin", "Member"}, names, "a new org's roles")
	assert.Len(t, do(t, defaults, "GET", "/v1/org/interop/users", "").data()["users"], 1, "the owner")

	assert.Panics(t, func() { pangolinsim.New(pangolinsim.Options{Roles: []pangolinsim.Role{{ID: 1, Name: "Again"}}}) }, "a second role 1")
	assert.Panics(t, func() { pangolinsim.New(pangolinsim.Options{Roles: []pangolinsim.Role{{Name: "Admin"}}}) }, "a second Admin")
}

func TestResourceRoles(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "acl", "acl")
	path := "/v1/resource/" + itoa(id) + "/roles"
	cases := []struct {
		name, body  string
		wantStatus  int
		wantMessage string
		wantRoles   []int
	}{
		{"a role is set", `{"roleIds":[3]}`, 201, "Roles set for resource successfully", []int{3}},
		{"the set replaces", `{"roleIds":[4,3]}`, 201, "Roles set for resource successfully", []int{3, 4}},
		{"the Admin role is refused", `{"roleIds":[1,3]}`, 400, "Admin role cannot be assigned to resources", []int{3, 4}},
		{"an unknown role is not found", `{"roleIds":[999]}`, 404, "One or more roles not found", []int{3, 4}},
		{"a duplicate reads as not found and changes nothing", `{"roleIds":[3,3]}`, 404, "One or more roles not found", []int{3, 4}},
		{"a string id is refused", `{"roleIds":["3"]}`, 400, `Validation error: Invalid input: expected number, received string at "roleIds[0]"`, []int{3, 4}},
		{"roleIds is required", `{}`, 400, `Validation error: Invalid input: expected array, received undefined at "roleIds"`, []int{3, 4}},
		{"an unknown key is refused", `{"roleIds":[],"x":1}`, 400, `Validation error: Unrecognized key: "x"`, []int{3, 4}},
		{"an empty list leaves Admin only", `{"roleIds":[]}`, 201, "Roles set for resource successfully", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "POST", path, tc.body)
			assert.Equal(t, tc.wantStatus, r.Status, r.Body)
			assert.Equal(t, tc.wantMessage, r.message())
			if r.Status == 201 {
				assert.Equal(t, map[string]any{}, r.data())
			}
			pol, _ := s.Policy(id)
			assert.Equal(t, tc.wantRoles, pol.RoleIDs)
		})
	}
	require.Equal(t, 201, do(t, s, "POST", path, `{"roleIds":[3]}`).Status)
	listed := do(t, s, "GET", path, "").data()["roles"].([]any)
	require.Len(t, listed, 2, "Admin and k8s-devs")
	assert.Equal(t, float64(1), listed[0].(map[string]any)["roleId"])
	assert.Equal(t, []any{map[string]any{"roleId": float64(3), "name": "k8s-devs"}}, policyOf(t, s, id)["roles"], "the policy has no Admin")
}

func TestResourceUsers(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "acl", "acl")
	path := "/v1/resource/" + itoa(id) + "/users"
	r := do(t, s, "POST", path, `{"userIds":["fihwbfec93u7yua"]}`)
	require.Equal(t, 201, r.Status, r.Body)
	assert.Equal(t, "Users set for resource successfully", r.message())
	assert.Equal(t, []any{map[string]any{
		"userId": "fihwbfec93u7yua", "email": "alice@corp.example", "name": nil, "username": "alice", "type": "oidc", "idpName": "test-idp",
	}}, policyOf(t, s, id)["users"])
	assert.Equal(t, []any{}, do(t, s, "GET", path, "").data()["users"], "the defect: always empty")

	for _, body := range []string{`{"userIds":["alice@corp.example"]}`, `{"userIds":["nosuchuser00000"]}`} {
		r := do(t, s, "POST", path, body)
		assert.Equal(t, 403, r.Status, body)
		assert.Equal(t, "Key does not have access to one or more specified users", r.message(), body)
	}
	pol, _ := s.Policy(id)
	assert.Equal(t, []string{"fihwbfec93u7yua"}, pol.UserIDs, "a refused set changes nothing")
	assert.Equal(t, `Validation error: Invalid input: expected array, received undefined at "userIds"`, do(t, s, "POST", path, `{}`).message())

	require.Equal(t, 201, do(t, s, "POST", path, `{"userIds":["l7lowl767jpo1y3","fihwbfec93u7yua"]}`).Status)
	pol, _ = s.Policy(id)
	assert.Equal(t, []string{"l7lowl767jpo1y3", "fihwbfec93u7yua"}, pol.UserIDs)
	require.Equal(t, 201, do(t, s, "POST", path, `{"userIds":[]}`).Status)
	assert.Equal(t, []any{}, policyOf(t, s, id)["users"])
}

func TestResourceSecrets(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "acl", "acl")
	other := createApp(t, s, "other", "other")
	res := "/v1/resource/" + itoa(id)

	t.Run("every password write mints a new id, never reused", func(t *testing.T) {
		steps := []struct {
			body   string
			wantID any
		}{
			{`{"password":"hunter22"}`, float64(1)},
			{`{"password":"hunter22"}`, float64(2)},
			{`{"password":"other-pw"}`, float64(3)},
			{`{"password":null}`, nil},
			{`{"password":"hunter22"}`, float64(4)},
		}
		for _, st := range steps {
			r := do(t, s, "POST", res+"/password", st.body)
			require.Equal(t, 201, r.Status, r.Body)
			assert.Equal(t, "Resource password set successfully", r.message())
			assert.Equal(t, st.wantID, policyOf(t, s, id)["passwordId"], st.body)
		}
		assert.True(t, s.CheckPassword(id, "hunter22"))
		assert.False(t, s.CheckPassword(id, "other-pw"))
		assert.False(t, s.CheckPassword(other, "hunter22"))
		require.Equal(t, 201, do(t, s, "POST", "/v1/resource/"+itoa(other)+"/password", `{"password":"hunter22"}`).Status)
		p, _ := s.Policy(other)
		assert.Equal(t, 5, p.PasswordID, "one sequence for every resource")
		p, _ = s.Policy(id)
		assert.Equal(t, 5, p.SecretWrites)
	})

	t.Run("pincodes have their own sequence", func(t *testing.T) {
		for want := 1; want <= 2; want++ {
			r := do(t, s, "POST", res+"/pincode", `{"pincode":"123456"}`)
			require.Equal(t, 201, r.Status, r.Body)
			assert.Equal(t, "Resource PIN code set successfully", r.message())
			assert.Equal(t, float64(want), policyOf(t, s, id)["pincodeId"])
		}
		assert.True(t, s.CheckPincode(id, "123456"))
		require.Equal(t, 201, do(t, s, "POST", res+"/pincode", `{"pincode":null}`).Status)
		assert.Nil(t, policyOf(t, s, id)["pincodeId"])
		assert.False(t, s.CheckPincode(id, "123456"))
	})

	t.Run("header auth is set, replaced and removed by any null", func(t *testing.T) {
		body := `{"user":"svc1","password":"s3cr3t!","extendedCompatibility":false}`
		for want := 1; want <= 2; want++ {
			r := do(t, s, "POST", res+"/header-auth", body)
			require.Equal(t, 201, r.Status, r.Body)
			assert.Equal(t, "Header Authentication set successfully", r.message())
			assert.Equal(t, map[string]any{"id": float64(want), "extendedCompability": false}, policyOf(t, s, id)["headerAuth"])
		}
		require.Equal(t, 201, do(t, s, "POST", res+"/header-auth", `{"user":"svc1","password":"s3cr3t!","extendedCompatibility":true}`).Status)
		assert.Equal(t, map[string]any{"id": float64(3), "extendedCompability": true}, policyOf(t, s, id)["headerAuth"])
		assert.True(t, s.CheckHeaderAuth(id, "svc1", "s3cr3t!"))
		assert.False(t, s.CheckHeaderAuth(id, "svc1", "wrong"))
		list := do(t, s, "GET", "/v1/org/interop/resources?query=acl", "").data()["resources"].([]any)[0].(map[string]any)
		assert.Equal(t, float64(3), list["headerAuthId"], "the list shows the ids too")
		assert.Equal(t, float64(4), list["passwordId"])

		r := do(t, s, "POST", res+"/header-auth", `{"user":"svc1","password":null,"extendedCompatibility":null}`)
		require.Equal(t, 201, r.Status, r.Body)
		assert.Nil(t, policyOf(t, s, id)["headerAuth"])
		assert.False(t, s.CheckHeaderAuth(id, "svc1", "s3cr3t!"))
	})

	t.Run("validation", func(t *testing.T) {
		before := s.SecretWrites()
		cases := []struct{ path, body, want string }{
			{"/password", `{"password":"abc"}`, `Validation error: Too small: expected string to have >=4 characters at "password"`},
			{"/password", `{}`, `Validation error: Invalid input: expected string, received undefined at "password"`},
			{"/password", `{"password":"` + strings.Repeat("x", 101) + `"}`, `Validation error: Too big: expected string to have <=100 characters at "password"`},
			{"/pincode", `{"pincode":"12345"}`, `Validation error: Invalid string: must match pattern /^\d{6}$/ at "pincode"`},
			{"/pincode", `{"pincode":"abcdef"}`, `Validation error: Invalid string: must match pattern /^\d{6}$/ at "pincode"`},
			{"/pincode", `{"pincode":123456}`, `Validation error: Invalid input: expected string, received number at "pincode"`},
			{"/header-auth", `{"user":"svc1","password":"s3cr3t!"}`, `Validation error: Invalid input: expected boolean, received undefined at "extendedCompatibility"`},
			{"/header-auth", `{"user":"abc","password":"s3cr3t!","extendedCompatibility":false}`, `Validation error: Too small: expected string to have >=4 characters at "user"`},
		}
		for _, tc := range cases {
			r := do(t, s, "POST", res+tc.path, tc.body)
			assert.Equal(t, 400, r.Status, tc.body)
			assert.Equal(t, tc.want, r.message(), tc.body)
		}
		assert.Equal(t, before, s.SecretWrites(), "a refused write writes nothing")
	})
}

func TestResourceWhitelist(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "acl", "acl")
	res := "/v1/resource/" + itoa(id)
	for _, body := range []string{`{"emails":["alice@corp.example"]}`, `{"emails":[]}`} {
		r := do(t, s, "POST", res+"/whitelist", body)
		assert.Equal(t, 400, r.Status)
		assert.Equal(t, "Email whitelist is not enabled for this resource", r.message(), body)
	}
	upd := do(t, s, "POST", res, `{"emailWhitelistEnabled":true}`)
	require.Equal(t, 200, upd.Status, upd.Body)
	assert.Equal(t, true, upd.data()["emailWhitelistEnabled"], "the update response shows the effective value")

	r := do(t, s, "POST", res+"/whitelist", `{"emails":["ALICE@Corp.Example","*@corp.example"]}`)
	require.Equal(t, 201, r.Status, r.Body)
	assert.Equal(t, "Whitelist set for resource successfully", r.message())
	assert.Equal(t, []any{map[string]any{"email": "alice@corp.example"}, map[string]any{"email": "*@corp.example"}},
		do(t, s, "GET", res+"/whitelist", "").data()["whitelist"], "lower-cased")

	require.Equal(t, 201, do(t, s, "POST", res+"/whitelist", `{"emails":["*@corp.example","bob@x.example"]}`).Status)
	assert.Equal(t, []any{
		map[string]any{"whiteListId": float64(2), "email": "*@corp.example"},
		map[string]any{"whiteListId": float64(3), "email": "bob@x.example"},
	}, policyOf(t, s, id)["emailWhiteList"], "a diff: the kept entry keeps its id")

	for i, bad := range []string{"a*@corp.example", "not-an-email"} {
		r := do(t, s, "POST", res+"/whitelist", `{"emails":["ok@corp.example","`+bad+`"]}`)
		assert.Equal(t, 400, r.Status, bad)
		assert.Equal(t, `Validation error: Invalid email address at "emails[1]" or Invalid email address. Wildcard (*) must be the entire local part. at "emails[1]"`, r.message(), "%d %s", i, bad)
	}

	require.Equal(t, 200, do(t, s, "POST", res, `{"emailWhitelistEnabled":false}`).Status)
	assert.Len(t, do(t, s, "GET", res+"/whitelist", "").data()["whitelist"], 2, "disabling keeps the list")
	assert.Equal(t, 400, do(t, s, "POST", res+"/whitelist", `{"emails":[]}`).Status, "and it cannot be cleared")
	p, _ := s.Policy(id)
	assert.Equal(t, []string{"*@corp.example", "bob@x.example"}, p.Whitelist)
	assert.False(t, p.EmailWhitelistEnabled)
}

func TestResourceRules(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "acl", "acl")
	res := "/v1/resource/" + itoa(id)
	policyID := do(t, s, "GET", res, "").data()["defaultResourcePolicyId"]

	r := do(t, s, "PUT", res+"/rule", `{"action":"ACCEPT","match":"CIDR","value":"10.0.0.0/8","priority":1}`)
	require.Equal(t, 201, r.Status, r.Body)
	assert.Equal(t, "Resource rule created successfully", r.message())
	assert.Equal(t, map[string]any{"ruleId": float64(1), "resourcePolicyId": policyID, "enabled": true, "priority": float64(1),
		"action": "ACCEPT", "match": "CIDR", "value": "10.0.0.0/8"}, r.data())
	require.Equal(t, 201, do(t, s, "PUT", res+"/rule", `{"action":"DROP","match":"IP","value":"10.1.2.3","priority":-5,"enabled":false}`).Status)
	require.Equal(t, 201, do(t, s, "PUT", res+"/rule", `{"action":"PASS","match":"PATH","value":"/public/*","priority":1}`).Status)

	list := do(t, s, "GET", res+"/rules", "")
	require.Equal(t, 200, list.Status, list.Body)
	var order []float64
	for _, it := range list.data()["rules"].([]any) {
		m := it.(map[string]any)
		assert.Nil(t, m["resourceId"])
		order = append(order, m["ruleId"].(float64))
	}
	assert.Equal(t, []float64{2, 1, 3}, order, "by priority; a negative one first")
	var byID []float64
	for _, it := range policyOf(t, s, id)["rules"].([]any) {
		byID = append(byID, it.(map[string]any)["ruleId"].(float64))
	}
	assert.Equal(t, []float64{1, 2, 3}, byID, "/policies lists them by id")

	t.Run("update needs a priority every time", func(t *testing.T) {
		r := do(t, s, "POST", res+"/rule/1", `{"value":"192.168.0.0/16"}`)
		assert.Equal(t, 400, r.Status)
		assert.Equal(t, `Validation error: Invalid input: expected number, received undefined at "priority"`, r.message())
		r = do(t, s, "POST", res+"/rule/1", `{"value":"192.168.0.0/16","priority":1}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Equal(t, "Resource rule updated successfully", r.message())
		assert.Equal(t, "192.168.0.0/16", r.data()["value"])
		assert.Equal(t, 400, do(t, s, "POST", res+"/rule/1", `{"value":"10.0.0.1","priority":1}`).Status, "a value is checked against the match")
		r = do(t, s, "POST", res+"/rule/1", `{"match":"IP","priority":1}`)
		require.Equal(t, 200, r.Status, "the defect: a match alone is not checked against the stored value")
		assert.Equal(t, "IP", r.data()["match"])
		assert.Equal(t, "192.168.0.0/16", r.data()["value"])
		r = do(t, s, "POST", res+"/rule/999", `{"priority":1}`)
		assert.Equal(t, 404, r.Status)
		assert.Equal(t, "Resource rule with ID 999 not found", r.message())
	})

	t.Run("a rule of another resource is not found", func(t *testing.T) {
		other := createApp(t, s, "other", "other")
		assert.Equal(t, 404, do(t, s, "DELETE", "/v1/resource/"+itoa(other)+"/rule/1", "").Status)
	})

	t.Run("delete", func(t *testing.T) {
		r := do(t, s, "DELETE", res+"/rule/3", "")
		require.Equal(t, 200, r.Status, r.Body)
		assert.Equal(t, "Resource rule deleted successfully", r.message())
		assert.Nil(t, r.Env["data"])
		r = do(t, s, "DELETE", res+"/rule/3", "")
		assert.Equal(t, 404, r.Status)
		assert.Equal(t, "Resource rule with ID 3 not found", r.message())
		p, _ := s.Policy(id)
		assert.Len(t, p.Rules, 2)
	})

	t.Run("values and fields are validated", func(t *testing.T) {
		cases := []struct{ match, value, want string }{
			{"CIDR", "10.0.0.0/33", "Invalid CIDR provided"},
			{"CIDR", "10.0.0.1", "Invalid CIDR provided"},
			{"IP", "10.0.0.0/8", "Invalid IP provided"},
			{"PATH", "no slash", "Invalid URL glob pattern provided"},
			{"COUNTRY", "XX", "Invalid country code provided"},
			{"COUNTRY_IS_NOT", "de", "Invalid country code provided"},
			{"ASN", "15169", "Invalid ASN provided"},
			{"REGION", "eu", "Invalid region ID provided"},
			{"IP", "2001:db8::1", ""},
			{"COUNTRY", "DE", ""},
			{"COUNTRY", "ALL", ""},
			{"COUNTRY_IS_NOT", "US", ""},
			{"ASN", "as15169", ""},
			{"REGION", "150", ""},
		}
		for _, tc := range cases {
			r := do(t, s, "PUT", res+"/rule", `{"action":"DROP","match":"`+tc.match+`","value":"`+tc.value+`","priority":10}`)
			if tc.want == "" {
				assert.Equal(t, 201, r.Status, "%s %s: %s", tc.match, tc.value, r.Body)
				assert.Equal(t, tc.value, r.data()["value"], "stored as sent")
				continue
			}
			assert.Equal(t, 400, r.Status, "%s %s", tc.match, tc.value)
			assert.Equal(t, tc.want, r.message(), "%s %s", tc.match, tc.value)
		}
		for body, want := range map[string]string{
			`{"action":"REJECT","match":"IP","value":"10.1.2.3","priority":1}`: `Validation error: Invalid option: expected one of "ACCEPT"|"DROP"|"PASS" at "action"`,
			`{"action":"DROP","match":"IP","value":"10.1.2.3","priority":1.5}`: `Validation error: Invalid input: expected int, received number at "priority"`,
			`{"action":"DROP","match":"IP","value":"10.1.2.3"}`:                `Validation error: Invalid input: expected number, received undefined at "priority"`,
		} {
			r := do(t, s, "PUT", res+"/rule", body)
			assert.Equal(t, 400, r.Status, body)
			assert.Equal(t, want, r.message(), body)
		}
	})

	t.Run("applyRules is written by update", func(t *testing.T) {
		r := do(t, s, "POST", res, `{"applyRules":true,"sso":false}`)
		require.Equal(t, 200, r.Status, r.Body)
		assert.Equal(t, true, r.data()["applyRules"])
		assert.Equal(t, false, r.data()["sso"])
		assert.Equal(t, true, policyOf(t, s, id)["applyRules"])
	})
}

// TestAccessActions gives a key every action but one and checks that the one route
// needing it is refused.
func TestAccessActions(t *testing.T) {
	all := []string{"getResource", "listRoles", "listUsers", "listResourceRoles", "setResourceRoles", "listResourceUsers",
		"setResourceUsers", "setResourcePassword", "setResourcePincode", "setResourceHeaderAuth", "getResourceWhitelist",
		"setResourceWhitelist", "getResourcePolicy", "listResourceRules", "createResourceRule", "updateResourceRule", "deleteResourceRule"}
	calls := map[string][3]string{
		"listRoles":             {"GET", "/v1/org/interop/roles", ""},
		"listUsers":             {"GET", "/v1/org/interop/users", ""},
		"listResourceRoles":     {"GET", "/roles", ""},
		"setResourceRoles":      {"POST", "/roles", `{"roleIds":[]}`},
		"listResourceUsers":     {"GET", "/users", ""},
		"setResourceUsers":      {"POST", "/users", `{"userIds":[]}`},
		"setResourcePassword":   {"POST", "/password", `{"password":null}`},
		"setResourcePincode":    {"POST", "/pincode", `{"pincode":null}`},
		"setResourceHeaderAuth": {"POST", "/header-auth", `{"user":null,"password":null,"extendedCompatibility":null}`},
		"getResourceWhitelist":  {"GET", "/whitelist", ""},
		"setResourceWhitelist":  {"POST", "/whitelist", `{"emails":[]}`},
		"getResourcePolicy":     {"GET", "/policies", ""},
		"listResourceRules":     {"GET", "/rules", ""},
		"createResourceRule":    {"PUT", "/rule", `{"action":"DROP","match":"IP","value":"10.1.2.3","priority":1}`},
		"updateResourceRule":    {"POST", "/rule/1", `{"priority":2}`},
		"deleteResourceRule":    {"DELETE", "/rule/1", ""},
	}
	full := pangolinsim.Key{ID: "accesskey000001", Secret: "s", Org: "interop", Actions: all}
	keys := []pangolinsim.Key{pangolinsim.RootKey, full}
	lacking := map[string]pangolinsim.Key{}
	for i, action := range all[1:] {
		k := pangolinsim.Key{ID: "lacking" + itoa(100000000+i), Secret: "s", Org: "interop"}
		for _, a := range all {
			if a != action {
				k.Actions = append(k.Actions, a)
			}
		}
		lacking[action] = k
		keys = append(keys, k)
	}
	s := newServer(t, pangolinsim.Options{Keys: keys})
	id := createApp(t, s, "acl", "acl")
	require.Equal(t, 200, do(t, s, "POST", "/v1/resource/"+itoa(id), `{"emailWhitelistEnabled":true}`).Status)
	require.Equal(t, 201, do(t, s, "PUT", "/v1/resource/"+itoa(id)+"/rule", `{"action":"DROP","match":"IP","value":"10.1.2.3","priority":1}`).Status)

	for _, action := range all[1:] {
		c := calls[action]
		path := c[1]
		if !strings.HasPrefix(path, "/v1/") {
			path = "/v1/resource/" + itoa(id) + path
		}
		r := do(t, s, c[0], path, c[2], withToken(lacking[action].Token()))
		assert.Equal(t, 403, r.Status, action)
		assert.Equal(t, "Key does not have permission perform this action", r.message(), action)
	}
	// With every access action the key reaches each route; the rule's delete comes last.
	for _, action := range all[1:] {
		c := calls[action]
		path := c[1]
		if !strings.HasPrefix(path, "/v1/") {
			path = "/v1/resource/" + itoa(id) + path
		}
		r := do(t, s, c[0], path, c[2], withToken(full.Token()))
		assert.Less(t, r.Status, 300, "%s: %s", action, r.Body)
	}
	r := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"applyRules":true}`, withToken(full.Token()))
	assert.Equal(t, 403, r.Status, "the access actions do not include updateResource")
}

// The reference (section 18): skipToIdpId naming no identity provider is answered with a
// 500, not a 4xx, and the update writes nothing.
func TestSkipToUnknownIdentityProviderIs500(t *testing.T) {
	s := newServer(t, accessFixture)
	id := createApp(t, s, "idp-test", "idp")

	known := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"skipToIdpId":1}`)
	require.Equal(t, http.StatusOK, known.Status, known.Body)
	assert.Equal(t, float64(1), policyOf(t, s, id)["idpId"])

	unknown := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"skipToIdpId":999,"applyRules":true}`)
	assert.Equal(t, http.StatusInternalServerError, unknown.Status, unknown.Body)
	p := policyOf(t, s, id)
	assert.Equal(t, float64(1), p["idpId"], "the update fails whole")
	assert.Equal(t, false, p["applyRules"])

	cleared := do(t, s, "POST", "/v1/resource/"+itoa(id), `{"skipToIdpId":null}`)
	require.Equal(t, http.StatusOK, cleared.Status, cleared.Body)
	assert.Nil(t, policyOf(t, s, id)["idpId"])
}
