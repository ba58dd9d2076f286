package pangolinsim

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
)

// Admission is Pangolin's gatekeeper (badger) as the reference describes it (sections
// 11.8 and 19): it tells which requests a resource's access admits, so that tests can
// judge a state by what a visitor gets rather than by its fields.

// Decision is the gatekeeper's answer to one request (reference section 19).
type Decision int

const (
	// Denied is a refusal without a way in: blockAccess, or a DROP rule.
	Denied Decision = iota
	// LoginRequired is a refusal that a login method would turn into an admission.
	LoginRequired
	// Allowed admits the request.
	Allowed
)

func (d Decision) String() string {
	switch d {
	case Allowed:
		return "allowed"
	case LoginRequired:
		return "login required"
	}
	return "denied"
}

// Credential is a secret a resource holds, kept as a digest; the zero value is none.
type Credential struct{ digest *[32]byte }

// NewCredential is the credential made of parts: the password, or the PIN code, or the
// header-auth user and password.
func NewCredential(parts ...string) Credential {
	d := digest(parts...)
	return Credential{digest: &d}
}

// Set reports whether the resource holds the credential.
func (c Credential) Set() bool { return c.digest != nil }

func (c Credential) proves(parts ...string) bool {
	return c.digest != nil && sameDigest(*c.digest, digest(parts...))
}

// Access is what the gatekeeper reads of a resource: its blockAccess and sso columns
// and its inline policy.
type Access struct {
	BlockAccess           bool
	SSO                   bool
	RoleIDs               []int    // the roles granted besides Admin, which always is
	UserIDs               []string // the users granted
	EmailWhitelistEnabled bool
	Whitelist             []string // addresses and *@domain patterns
	Password              Credential
	Pincode               Credential
	HeaderAuth            Credential // of the user and password
	ApplyRules            bool
	Rules                 []Rule
}

// Visitor is one request: where it comes from, what it asks for, and what its visitor
// can prove.
type Visitor struct {
	IP      string // the client address
	Path    string
	Country string // ISO code; "" when unknown (no GeoIP database)
	ASN     string // such as AS15169; "" when unknown
	Region  string // UN M49 id; "" when unknown
	// UserID is the org user whose SSO session the request carries, "" for none, and
	// RoleIDs that user's roles in the org (AdminRoleID for an admin).
	UserID  string
	RoleIDs []int
	// Email is an address the visitor can receive a one-time code at; "" for none.
	Email string
	// Password, Pincode and the header-auth pair are what the visitor knows.
	Password, Pincode          string
	HeaderUser, HeaderPassword string
}

// Admit decides v against a, in the gatekeeper's order (reference section 11.8,
// confirmed by call in section 19):
//  1. blockAccess denies everything;
//  2. with applyRules, the enabled rules by ascending priority: the first that matches
//     decides, ACCEPT admitting without any login, DROP denying, PASS going on to step 3;
//  3. with no login method on (sso, password, PIN code, header auth, email whitelist),
//     the resource is public;
//  4. otherwise one method must admit the visitor: sso for a user of the Admin role or
//     of a granted role or user list, a password, PIN code or header-auth pair the
//     resource holds, or a whitelisted email.
func Admit(a Access, v Visitor) Decision {
	if a.BlockAccess {
		return Denied
	}
	if a.ApplyRules {
	rules:
		for _, r := range evaluationOrder(a.Rules) {
			if !r.Enabled || !ruleApplies(r, v) {
				continue
			}
			switch r.Action {
			case "ACCEPT":
				return Allowed
			case "DROP":
				return Denied
			}
			break rules // PASS: the login methods decide
		}
	}
	methods := a.SSO || a.Password.Set() || a.Pincode.Set() || a.HeaderAuth.Set() || a.EmailWhitelistEnabled
	if !methods {
		return Allowed
	}
	switch {
	case a.SSO && v.UserID != "" && (slices.Contains(v.RoleIDs, AdminRoleID) ||
		slices.ContainsFunc(v.RoleIDs, func(id int) bool { return slices.Contains(a.RoleIDs, id) }) ||
		slices.Contains(a.UserIDs, v.UserID)):
		return Allowed
	case v.Password != "" && a.Password.proves(v.Password),
		v.Pincode != "" && a.Pincode.proves(v.Pincode),
		v.HeaderUser != "" && a.HeaderAuth.proves(v.HeaderUser, v.HeaderPassword):
		return Allowed
	case a.EmailWhitelistEnabled && v.Email != "" && whitelisted(a.Whitelist, v.Email):
		return Allowed
	}
	return LoginRequired
}

// Admits reports whether a admits v.
func Admits(a Access, v Visitor) bool { return Admit(a, v) == Allowed }

// evaluationOrder is rules by ascending priority (reference section 12). Pangolin does
// not define the order of equal priorities; like the rule list, the fake keeps them by id.
func evaluationOrder(rules []Rule) []Rule {
	out := slices.Clone(rules)
	slices.SortStableFunc(out, func(x, y Rule) int { return cmp.Or(cmp.Compare(x.Priority, y.Priority), cmp.Compare(x.ID, y.ID)) })
	return out
}

// ruleApplies is one rule's match kind against v (reference section 12, "Value
// validation" and "GeoIP/ASN"): without a GeoIP database a visitor's country, region
// and ASN are unknown, so COUNTRY, REGION and ASN never match and COUNTRY_IS_NOT always
// does; COUNTRY ALL matches every address but private, CGNAT and loopback ones.
func ruleApplies(r Rule, v Visitor) bool {
	switch r.Match {
	case "IP":
		want, err1 := netip.ParseAddr(r.Value)
		got, err2 := netip.ParseAddr(v.IP)
		return err1 == nil && err2 == nil && want.Unmap() == got.Unmap()
	case "CIDR":
		prefix, err1 := netip.ParsePrefix(r.Value)
		got, err2 := netip.ParseAddr(v.IP)
		return err1 == nil && err2 == nil && prefix.Contains(got.Unmap())
	case "PATH":
		return pathMatches(r.Value, v.Path)
	case "COUNTRY":
		if r.Value == "ALL" {
			got, err := netip.ParseAddr(v.IP)
			return err == nil && !local(got.Unmap())
		}
		return v.Country != "" && v.Country == r.Value
	case "COUNTRY_IS_NOT":
		return v.Country != r.Value
	case "ASN":
		return v.ASN != "" && strings.EqualFold(v.ASN, r.Value)
	case "REGION":
		return v.Region != "" && v.Region == r.Value
	}
	return false
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func local(a netip.Addr) bool {
	return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || cgnat.Contains(a)
}

// pathMatches is a PATH rule's glob against a request path, segment by segment: a "*"
// segment stands for any number of segments, none included (reference section 19:
// "/public/*" matches "/public/x" and "/public" itself), and a "*" inside a segment for
// any characters of that segment.
func pathMatches(pattern, path string) bool {
	return segmentsMatch(segments(pattern), segments(path))
}

func segments(p string) []string {
	return slices.DeleteFunc(strings.Split(p, "/"), func(s string) bool { return s == "" })
}

func segmentsMatch(pattern, path []string) bool {
	switch {
	case len(pattern) == 0:
		return len(path) == 0
	case pattern[0] == "*":
		return segmentsMatch(pattern[1:], path) || len(path) > 0 && segmentsMatch(pattern, path[1:])
	case len(path) == 0:
		return false
	}
	return segmentMatches(pattern[0], path[0]) && segmentsMatch(pattern[1:], path[1:])
}

// segmentMatches matches one segment, "*" standing for any characters.
func segmentMatches(pattern, segment string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == segment
	}
	if !strings.HasPrefix(segment, parts[0]) {
		return false
	}
	rest := segment[len(parts[0]):]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// whitelisted reports whether email is on the list, as an address or by a *@domain
// pattern; emails are compared lower-cased (reference section 11.6).
func whitelisted(list []string, email string) bool {
	email = strings.ToLower(email)
	_, domain, _ := strings.Cut(email, "@")
	for _, entry := range list {
		entry = strings.ToLower(entry)
		if entry == email || strings.HasPrefix(entry, "*@") && entry[2:] == domain {
			return true
		}
	}
	return false
}

// Access returns what the gatekeeper reads of a resource; false when there is no such
// resource.
func (s *Server) Access(resourceID int) (Access, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, found := s.res[resourceID]
	if !found {
		return Access{}, false
	}
	a := &r.access
	out := Access{
		BlockAccess: r.blockAccess, SSO: r.sso, EmailWhitelistEnabled: r.emailWhitelist, ApplyRules: r.applyRules,
		RoleIDs: slices.Clone(a.roles), UserIDs: slices.Clone(a.users),
	}
	if a.passwordID != 0 {
		d := a.password
		out.Password = Credential{digest: &d}
	}
	if a.pincodeID != 0 {
		d := a.pincode
		out.Pincode = Credential{digest: &d}
	}
	if a.headerAuth != nil {
		d := a.headerAuth.digest
		out.HeaderAuth = Credential{digest: &d}
	}
	for _, e := range a.whitelist {
		out.Whitelist = append(out.Whitelist, e.email)
	}
	for _, ru := range a.rules {
		out.Rules = append(out.Rules, ru.snapshot())
	}
	return out, true
}
