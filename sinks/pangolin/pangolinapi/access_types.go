package pangolinapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
)

// Secret is a credential the client sends and never prints: a resource's password, PIN
// code, or header-auth user and password. Every way of printing it (fmt's verbs,
// encoding/json, log/slog) shows "[redacted]", or "" for an empty one.
//
// fmt cannot call methods through unexported struct fields: a Secret held in an
// unexported field of a struct printed with %v prints raw. Keep it in exported fields,
// or give the holder its own String.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString is String, so that %#v cannot show it either.
func (s Secret) GoString() string { return s.String() }

// Format makes every fmt verb, %x and %q included, print String.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// MarshalJSON keeps it out of loggers that encode values as JSON (zap, logr). Request
// bodies are built from plain strings, never from a Secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// LogValue keeps it out of log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// HeaderAuth is a resource's basic/header authentication: the credentials a client sends
// in the Authorization header. User and Password are 4 to 100 characters.
type HeaderAuth struct {
	User     Secret
	Password Secret
	// ExtendedCompatibility is Pangolin's extendedCompatibility switch.
	ExtendedCompatibility bool
}

// String describes it without its credentials.
func (h HeaderAuth) String() string {
	return fmt.Sprintf("pangolinapi.HeaderAuth{User:%s Password:%s ExtendedCompatibility:%t}", h.User, h.Password, h.ExtendedCompatibility)
}

// GoString is String.
func (h HeaderAuth) GoString() string { return h.String() }

// Format makes every fmt verb print String.
func (h HeaderAuth) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, h.String()) }

// MarshalJSON shows the shape without the credentials.
func (h HeaderAuth) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"user": h.User.String(), "password": h.Password.String(), "extendedCompatibility": h.ExtendedCompatibility})
}

// LogValue keeps the credentials out of log/slog.
func (h HeaderAuth) LogValue() slog.Value { return slog.StringValue(h.String()) }

// Role is a role of the org. Resources name roles by RoleID; the name is unique in the
// org. The Admin role (IsAdmin) is granted to every resource and can be neither
// assigned nor removed.
type Role struct {
	RoleID      int
	Name        string
	Description string
	IsAdmin     bool
}

// User is a member of the org. Resources name users by UserID, never by email.
type User struct {
	UserID   string
	Email    string
	Username string
	Name     string
	Type     string // "internal" or "oidc"
	IdpID    int    // the identity provider of an oidc user; 0 for none
	IdpName  string
	IsOwner  bool
	RoleIDs  []int // the user's roles in the org
}

// Rule actions.
const (
	RuleAccept = "ACCEPT" // allow without any authentication
	RuleDrop   = "DROP"   // deny
	RulePass   = "PASS"   // go on to authentication
)

// Rule matches.
const (
	RuleMatchCIDR         = "CIDR"
	RuleMatchIP           = "IP"
	RuleMatchPath         = "PATH"           // a URL path glob, e.g. /public/*
	RuleMatchCountry      = "COUNTRY"        // ISO 3166-1 alpha-2, upper case, or ALL
	RuleMatchCountryIsNot = "COUNTRY_IS_NOT" // matches everyone on a server without GeoIP data
	RuleMatchASN          = "ASN"            // e.g. AS15169
	RuleMatchRegion       = "REGION"         // a UN M49 id, e.g. 150 for Europe
)

// Rule is a resource rule. With the resource's ApplyRules on, enabled rules are tried
// by ascending Priority and the first match decides.
type Rule struct {
	RuleID   int
	Action   string // RuleAccept, RuleDrop or RulePass
	Match    string // one of the RuleMatch constants
	Value    string
	Priority int // not unique; may be negative
	Enabled  bool
}

// RuleSpec is a rule to create, or what an update makes of one (every field is sent).
type RuleSpec struct {
	Action   string
	Match    string
	Value    string
	Priority int
	Enabled  bool
}

// PolicyRole is a role granted by a resource's policy.
type PolicyRole struct {
	RoleID int
	Name   string
}

// PolicyUser is a user granted by a resource's policy.
type PolicyUser struct {
	UserID   string
	Email    string
	Username string
	Name     string
	Type     string
	IdpName  string
}

// HeaderAuthState is what can be read back of a resource's header auth: never the
// credentials, only the id of the row the last write created.
type HeaderAuthState struct {
	ID                    int
	ExtendedCompatibility bool
}

// ResourcePolicy is a resource's whole access state, as GET /resource/:id/policies shows
// its inline policy. Secrets cannot be read back: only the id of the row each write
// created, which changes on every write, even of the same secret.
type ResourcePolicy struct {
	PolicyID              int
	SSO                   bool
	ApplyRules            bool
	EmailWhitelistEnabled bool
	IdpID                 int // the auto-login identity provider (skipToIdpId); 0 for none
	PasswordID            int // 0: no password
	PincodeID             int // 0: no PIN code
	HeaderAuth            *HeaderAuthState
	// Roles never holds the Admin role, which every resource grants.
	Roles []PolicyRole
	Users []PolicyUser
	// EmailWhitelist is kept while the whitelist is disabled.
	EmailWhitelist []string
	Rules          []Rule // by RuleID
	// Shared is set when the resource also uses a shared policy (resourcePolicyId),
	// which this state does not show.
	Shared bool
}

// --- wire shapes ---

type roleJSON struct {
	RoleID      int      `json:"roleId"`
	Name        string   `json:"name"`
	Description *string  `json:"description"`
	IsAdmin     flexBool `json:"isAdmin"` // true or null, never false
}

func (r roleJSON) role() Role {
	return Role{RoleID: r.RoleID, Name: r.Name, Description: str(r.Description), IsAdmin: r.IsAdmin.value}
}

type userJSON struct {
	ID       string  `json:"id"`
	Email    *string `json:"email"`
	Username string  `json:"username"`
	Name     *string `json:"name"`
	Type     string  `json:"type"`
	IdpID    *int    `json:"idpId"`
	IdpName  *string `json:"idpName"`
	IsOwner  bool    `json:"isOwner"`
	Roles    []struct {
		RoleID int `json:"roleId"`
	} `json:"roles"`
}

func (u userJSON) user() User {
	out := User{UserID: u.ID, Email: str(u.Email), Username: u.Username, Name: str(u.Name), Type: u.Type, IdpName: str(u.IdpName), IsOwner: u.IsOwner}
	if u.IdpID != nil {
		out.IdpID = *u.IdpID
	}
	for _, r := range u.Roles {
		out.RoleIDs = append(out.RoleIDs, r.RoleID)
	}
	return out
}

type ruleJSON struct {
	RuleID   int      `json:"ruleId"`
	Action   string   `json:"action"`
	Match    string   `json:"match"`
	Value    string   `json:"value"`
	Priority int      `json:"priority"`
	Enabled  flexBool `json:"enabled"`
}

func (r ruleJSON) rule() Rule {
	return Rule{RuleID: r.RuleID, Action: r.Action, Match: r.Match, Value: r.Value, Priority: r.Priority, Enabled: r.Enabled.value}
}

func intOf(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

type policyJSON struct {
	ResourcePolicyID      int      `json:"resourcePolicyId"`
	SSO                   flexBool `json:"sso"`
	ApplyRules            flexBool `json:"applyRules"`
	EmailWhitelistEnabled flexBool `json:"emailWhitelistEnabled"`
	IdpID                 *int     `json:"idpId"`
	PasswordID            *int     `json:"passwordId"`
	PincodeID             *int     `json:"pincodeId"`
	HeaderAuth            *struct {
		ID int `json:"id"`
		// The server's spelling.
		ExtendedCompability flexBool `json:"extendedCompability"`
	} `json:"headerAuth"`
	Roles []struct {
		RoleID int    `json:"roleId"`
		Name   string `json:"name"`
	} `json:"roles"`
	Users []struct {
		UserID   string  `json:"userId"`
		Email    *string `json:"email"`
		Name     *string `json:"name"`
		Username string  `json:"username"`
		Type     string  `json:"type"`
		IdpName  *string `json:"idpName"`
	} `json:"users"`
	EmailWhiteList []struct {
		Email string `json:"email"`
	} `json:"emailWhiteList"`
	Rules []ruleJSON `json:"rules"`
}

type policiesJSON struct {
	DefaultPolicy *policyJSON     `json:"defaultPolicy"`
	SharedPolicy  json.RawMessage `json:"sharedPolicy"`
}

func (p policiesJSON) policy() (ResourcePolicy, error) {
	d := p.DefaultPolicy
	if d == nil {
		return ResourcePolicy{}, fmt.Errorf("no defaultPolicy in the answer")
	}
	out := ResourcePolicy{
		PolicyID: d.ResourcePolicyID, SSO: d.SSO.value, ApplyRules: d.ApplyRules.value,
		EmailWhitelistEnabled: d.EmailWhitelistEnabled.value, IdpID: intOf(d.IdpID),
		PasswordID: intOf(d.PasswordID), PincodeID: intOf(d.PincodeID),
		Shared: len(p.SharedPolicy) > 0 && !bytes.Equal(bytes.TrimSpace(p.SharedPolicy), []byte("null")),
	}
	if d.HeaderAuth != nil {
		out.HeaderAuth = &HeaderAuthState{ID: d.HeaderAuth.ID, ExtendedCompatibility: d.HeaderAuth.ExtendedCompability.value}
	}
	for _, r := range d.Roles {
		out.Roles = append(out.Roles, PolicyRole{RoleID: r.RoleID, Name: r.Name})
	}
	for _, u := range d.Users {
		out.Users = append(out.Users, PolicyUser{UserID: u.UserID, Email: str(u.Email), Username: u.Username, Name: str(u.Name), Type: u.Type, IdpName: str(u.IdpName)})
	}
	for _, e := range d.EmailWhiteList {
		out.EmailWhitelist = append(out.EmailWhitelist, e.Email)
	}
	for _, r := range d.Rules {
		out.Rules = append(out.Rules, r.rule())
	}
	return out, nil
}
