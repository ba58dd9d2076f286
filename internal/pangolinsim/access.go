package pangolinsim

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"slices"
	"sort"
)

// Role is a role of the org. The org always has the Admin role (roleId 1, isAdmin),
// which no resource call can assign or remove; Options.Roles lists the others.
type Role struct {
	ID          int // 0 takes the next free id
	Name        string
	Description string
}

// User is a member of the org. Resources name users by ID (15 lower-case letters and
// digits on a real server); an email is refused where an ID is expected.
type User struct {
	ID       string
	Email    string
	Username string
	Name     string // "" is null
	Type     string // "internal" (default) or "oidc"
	IdpID    int    // the identity provider of an oidc user; 0 for none
	IdpName  string
	IsOwner  bool
	RoleIDs  []int // the user's roles in the org, e.g. 1 for Admin
}

// AdminRoleID is the id of the org's Admin role.
const AdminRoleID = 1

// adminRole is the org's Admin role, as a new org has it.
var adminRole = Role{ID: AdminRoleID, Name: "Admin", Description: "Admin role with the most permissions"}

// DefaultOwner is the org's only user when Options.Users is nil: the owner who set the
// org up.
var DefaultOwner = User{ID: "picfakeowner001", Email: "owner@example.com", Username: "owner", Type: "internal", IsOwner: true, RoleIDs: []int{AdminRoleID}}

// accessDefaults completes the roles and users of the fixture. It panics on a fixture
// that no org could have (two roles with one id or name, two users with one id).
func (o *Options) accessDefaults() {
	if o.Roles == nil {
		o.Roles = []Role{{ID: 2, Name: "Member", Description: "Members can only view resources"}}
	}
	roles := []Role{adminRole}
	next := AdminRoleID + 1
	for _, r := range o.Roles {
		next = max(next, r.ID+1)
	}
	for _, r := range o.Roles {
		if r.ID == 0 {
			r.ID = next
			next++
		}
		for _, other := range roles {
			if other.ID == r.ID || other.Name == r.Name {
				panic(fmt.Sprintf("inmemory Pangolin: role %d %q collides with role %d %q", r.ID, r.Name, other.ID, other.Name))
			}
		}
		roles = append(roles, r)
	}
	o.Roles = roles
	if o.Users == nil {
		o.Users = []User{DefaultOwner}
	}
	users := make([]User, 0, len(o.Users))
	for _, u := range o.Users {
		if u.Type == "" {
			u.Type = "internal"
		}
		if slices.ContainsFunc(users, func(other User) bool { return other.ID == u.ID }) {
			panic(fmt.Sprintf("inmemory Pangolin: two users have the id %q", u.ID))
		}
		users = append(users, u)
	}
	o.Users = users
}

// access is a resource's inline ("default") policy besides the sso, emailWhitelist,
// applyRules and skipToIdpID columns the resource struct already holds. Secrets are kept
// only as digests, for the Check helpers: nothing ever returns them.
type access struct {
	policyID     int
	policyNiceID string
	roles        []int    // non-Admin roles, by id
	users        []string // user ids, in the order set
	passwordID   int      // 0: none
	password     [32]byte
	pincodeID    int
	pincode      [32]byte
	headerAuth   *headerAuth
	whitelist    []whitelistEntry
	rules        []*rule // by ruleId
	secretWrites int
}

type headerAuth struct {
	id       int
	extended bool
	digest   [32]byte
}

type whitelistEntry struct {
	id    int
	email string
}

// rule is a stored resource rule.
type rule struct {
	id       int
	action   string
	match    string
	value    string
	priority int
	enabled  bool
}

// Policy is a resource's access state as the fake holds it, for assertions that do not
// go through the API. Like the API, it shows no secret: only the ids each write minted.
type Policy struct {
	SSO                   bool
	ApplyRules            bool
	EmailWhitelistEnabled bool
	IdpID                 int      // skipToIdpId; 0 for none
	RoleIDs               []int    // without the Admin role, which is always granted
	UserIDs               []string // in the order set
	PasswordID            int      // 0: no password
	PincodeID             int      // 0: no PIN code
	HeaderAuthID          int      // 0: no header auth
	HeaderAuthExtended    bool     // extendedCompatibility of the header auth
	Whitelist             []string // lower case, kept while the whitelist is disabled
	Rules                 []Rule   // by id
	// SecretWrites counts the password, PIN code and header-auth writes (removals
	// included) that succeeded on this resource: each one logs its visitors out.
	SecretWrites int
}

// Rule is a resource rule as the fake stores it.
type Rule struct {
	ID       int
	Action   string // ACCEPT, DROP or PASS
	Match    string // CIDR, IP, PATH, COUNTRY, COUNTRY_IS_NOT, ASN or REGION
	Value    string
	Priority int
	Enabled  bool
}

func (r *rule) snapshot() Rule {
	return Rule{ID: r.id, Action: r.action, Match: r.match, Value: r.value, Priority: r.priority, Enabled: r.enabled}
}

// newPolicy gives a new resource its inline policy. s.mu must be held.
func (s *Server) newPolicy() access {
	a := access{policyID: s.nextPolicy}
	s.nextPolicy++
	a.policyNiceID = niceAdjectives[s.policyRng.IntN(len(niceAdjectives))] + "-" +
		niceNouns[s.policyRng.IntN(len(niceNouns))] + fmt.Sprintf("-%d", a.policyID)
	return a
}

// Policy returns a resource's access state; false when there is no such resource.
func (s *Server) Policy(resourceID int) (Policy, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, found := s.res[resourceID]
	if !found {
		return Policy{}, false
	}
	a := &r.access
	p := Policy{
		SSO: r.sso, ApplyRules: r.applyRules, EmailWhitelistEnabled: r.emailWhitelist,
		RoleIDs: slices.Clone(a.roles), UserIDs: slices.Clone(a.users),
		PasswordID: a.passwordID, PincodeID: a.pincodeID, SecretWrites: a.secretWrites,
	}
	if r.skipToIdpID != nil {
		p.IdpID = *r.skipToIdpID
	}
	if a.headerAuth != nil {
		p.HeaderAuthID, p.HeaderAuthExtended = a.headerAuth.id, a.headerAuth.extended
	}
	for _, e := range a.whitelist {
		p.Whitelist = append(p.Whitelist, e.email)
	}
	for _, ru := range a.rules {
		p.Rules = append(p.Rules, ru.snapshot())
	}
	return p, true
}

// SecretWrites counts the password, PIN code and header-auth writes that succeeded, on
// every resource, deleted ones included.
func (s *Server) SecretWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.secretWrites
}

func digest(parts ...string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		_, _ = fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func sameDigest(a, b [32]byte) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }

// CheckPassword reports whether the resource has a password and it is this one, as the
// visitors' login endpoint would.
func (s *Server) CheckPassword(resourceID int, password string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, found := s.res[resourceID]
	return found && r.access.passwordID != 0 && sameDigest(r.access.password, digest(password))
}

// CheckPincode reports whether the resource has a PIN code and it is this one.
func (s *Server) CheckPincode(resourceID int, pincode string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, found := s.res[resourceID]
	return found && r.access.pincodeID != 0 && sameDigest(r.access.pincode, digest(pincode))
}

// CheckHeaderAuth reports whether the resource has header auth with these credentials.
func (s *Server) CheckHeaderAuth(resourceID int, user, password string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, found := s.res[resourceID]
	return found && r.access.headerAuth != nil && sameDigest(r.access.headerAuth.digest, digest(user, password))
}

// role returns the org's role with that id. s.mu must be held.
func (s *Server) role(id int) (Role, bool) {
	for _, r := range s.opts.Roles {
		if r.ID == id {
			return r, true
		}
	}
	return Role{}, false
}

func (s *Server) user(id string) (User, bool) {
	for _, u := range s.opts.Users {
		if u.ID == id {
			return u, true
		}
	}
	return User{}, false
}

// sortedRules returns a resource's rules by priority, equal priorities by id.
func sortedRules(a *access) []*rule {
	out := slices.Clone(a.rules)
	sort.SliceStable(out, func(i, j int) bool { return out[i].priority < out[j].priority })
	return out
}

// SeedRole adds a role to the org, as its admins would, and returns it with its id; a
// role of that name already there is returned as is. PIC never creates roles: this is
// for tests and for `render`, whose simulated org has every role a policy names.
func (s *Server) SeedRole(name string) Role {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := AdminRoleID + 1
	for _, r := range s.opts.Roles {
		if r.Name == name {
			return r
		}
		next = max(next, r.ID+1)
	}
	r := Role{ID: next, Name: name}
	s.opts.Roles = append(s.opts.Roles, r)
	return r
}

// SeedUser adds a member to the org and returns it; u.ID "" takes a new id. A user with
// that id already there is returned as is.
func (s *Server) SeedUser(u User) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.ID == "" {
		u.ID = fmt.Sprintf("picseeduser%04d", len(s.opts.Users)+1)
	}
	if i := slices.IndexFunc(s.opts.Users, func(have User) bool { return have.ID == u.ID }); i >= 0 {
		return s.opts.Users[i]
	}
	if u.Type == "" {
		u.Type = "internal"
	}
	s.opts.Users = append(s.opts.Users, u)
	return u
}
