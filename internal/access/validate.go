package access

import (
	"cmp"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Secrets holds the data of the Secrets a policy references, by Secret name; all are in
// the policy's namespace. A name absent from the map is a Secret that does not exist.
type Secrets map[string]map[string][]byte

// Problem is one reason a policy cannot be applied. It never quotes a secret value.
type Problem struct {
	Field   string // the field at fault: "spec.rules[1].value"
	Reason  string // pic.ReasonAccessPolicyInvalid or pic.ReasonAccessPolicySecretNotFound
	Message string
}

func (p Problem) String() string { return p.Field + ": " + p.Message }

// Validate returns every reason p cannot be applied as written, given the data of the
// Secrets it references; none means it can.
func Validate(p *accessv1alpha1.AccessPolicy, secrets Secrets) []Problem {
	return compile(p, secrets).problems
}

// compiled is a policy in Pangolin's terms.
type compiled struct {
	policy   *route.AccessPolicy
	sso      *bool // nil: the policy does not say
	block    *bool
	problems []Problem
	geoRules []string // the rules that need GeoIP on the server, as "rule 2 (Country DE)"
}

// compile validates p as Pangolin would, and stricter where Pangolin would accept what
// cannot work (a password no visitor can type, a basic-auth user with a colon, SSO off
// with roles), and translates it.
func compile(p *accessv1alpha1.AccessPolicy, secrets Secrets) compiled {
	var c compiled
	problem := func(field, reason, format string, args ...any) {
		c.problems = append(c.problems, Problem{Field: field, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	invalid := func(field, format string, args ...any) {
		problem(field, pic.ReasonAccessPolicyInvalid, format, args...)
	}
	spec := p.Spec
	out := &route.AccessPolicy{Name: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}

	out.Roles = names(spec.Roles, "spec.roles", "role", invalid)
	out.Users = names(spec.Users, "spec.users", "user", invalid)
	if idp := spec.AutoLoginIdP; idp != "" {
		if isDigits(idp) {
			id, err := strconv.ParseInt(idp, 10, 64)
			if err != nil || id <= 0 {
				invalid("spec.autoLoginIdp", "%q is not a valid identity provider id (a positive number), nor a name", idp)
			}
			out.AutoLoginIdP.ID = id
		} else {
			out.AutoLoginIdP.Name = idp
		}
	}

	// Roles, users and the auto-login IdP act only through SSO: they turn it on unless
	// the policy turns it off, which would leave them without effect.
	c.sso, c.block = spec.SSO, spec.BlockAccess
	if needsSSO := len(spec.Roles) > 0 || len(spec.Users) > 0 || spec.AutoLoginIdP != ""; needsSSO {
		if spec.SSO != nil && !*spec.SSO {
			invalid("spec.sso", "false, but roles, users and autoLoginIdp only take effect with SSO on: set sso to true, or remove them")
		}
		on := true
		c.sso = &on
	}

	for i, email := range spec.EmailWhitelist {
		field := fmt.Sprintf("spec.emailWhitelist[%d]", i)
		if msg := emailProblem(email); msg != "" {
			invalid(field, "%q %s", email, msg)
			continue
		}
		if e := strings.ToLower(email); !slices.Contains(out.EmailWhitelist, e) {
			out.EmailWhitelist = append(out.EmailWhitelist, e) // Pangolin stores them lower-cased
		}
	}

	for i, r := range spec.Rules {
		field := fmt.Sprintf("spec.rules[%d]", i)
		action, ok := actions[r.Action]
		if !ok {
			invalid(field+".action", "%q is not one of Allow, Deny, Pass", r.Action)
		}
		match, ok := matches[r.Match]
		if !ok {
			invalid(field+".match", "%q is not one of IP, CIDR, Path, Country, CountryIsNot, ASN, Region", r.Match)
			continue
		}
		value, msg := ruleValue(match, r.Value)
		if msg != "" {
			invalid(field+".value", "%q %s", r.Value, msg)
			continue
		}
		switch match {
		case route.MatchCountry, route.MatchCountryIsNot, route.MatchRegion, route.MatchASN:
			c.geoRules = append(c.geoRules, fmt.Sprintf("rule %d (%s %s)", i+1, r.Match, r.Value))
		}
		out.Rules = append(out.Rules, route.AccessRule{Priority: i + 1, Action: action, Match: match, Value: value})
	}

	read := func(field, name, key string) (route.Secret, bool) {
		ref := route.SecretRef{Namespace: p.Namespace, Name: name, Key: key}
		data, ok := secrets[name]
		if !ok {
			problem(field, pic.ReasonAccessPolicySecretNotFound, "Secret %s/%s does not exist", p.Namespace, name)
			return route.Secret{}, false
		}
		value, ok := data[key]
		if !ok {
			problem(field, pic.ReasonAccessPolicySecretNotFound, "Secret %s/%s has no key %s", p.Namespace, name, key)
			return route.Secret{}, false
		}
		if !utf8.Valid(value) {
			invalid(field, "the value %s is not UTF-8 text", ref)
			return route.Secret{}, false
		}
		return route.NewSecret(ref, string(value)), true
	}
	// credential checks a password-like value: 4 to 100 characters as Pangolin counts
	// them (UTF-16 code units), and no line break, which no visitor can type (a Secret
	// written with echo ends with one).
	credential := func(field, what string, s route.Secret) bool {
		v := s.Reveal()
		switch n := len(utf16.Encode([]rune(v))); {
		case n == 0:
			invalid(field, "the %s %s is empty", what, s.Ref())
		case strings.ContainsAny(v, "\r\n"):
			invalid(field, "the %s %s contains a line break, which no visitor can type (a Secret written with echo ends with one: use printf or kubectl create secret --from-literal)", what, s.Ref())
		case n < 4 || n > 100:
			invalid(field, "the %s %s must have 4 to 100 characters", what, s.Ref())
		default:
			return true
		}
		return false
	}

	if pw := spec.Password; pw != nil {
		if s, ok := read("spec.password.secretRef", pw.SecretRef.Name, pw.SecretRef.Key); ok && credential("spec.password.secretRef", "password", s) {
			out.Password = &s
		}
	}
	if pin := spec.PinCode; pin != nil {
		if s, ok := read("spec.pinCode.secretRef", pin.SecretRef.Name, pin.SecretRef.Key); ok {
			if v := s.Reveal(); len(v) != 6 || !isDigits(v) {
				invalid("spec.pinCode.secretRef", "the PIN code %s must be exactly 6 digits%s", s.Ref(), newlineHint(v))
			} else {
				out.PinCode = &s
			}
		}
	}
	if ha := spec.HeaderAuth; ha != nil {
		userKey, passwordKey := cmp.Or(ha.UserKey, "username"), cmp.Or(ha.PasswordKey, "password")
		user, okUser := read("spec.headerAuth.userKey", ha.SecretRef.Name, userKey)
		okUser = okUser && credential("spec.headerAuth.userKey", "header-auth user", user)
		if okUser && strings.Contains(user.Reveal(), ":") {
			invalid("spec.headerAuth.userKey", "the header-auth user %s contains a colon, which basic authentication cannot carry", user.Ref())
			okUser = false
		}
		password, okPassword := read("spec.headerAuth.passwordKey", ha.SecretRef.Name, passwordKey)
		okPassword = okPassword && credential("spec.headerAuth.passwordKey", "header-auth password", password)
		if okUser && okPassword {
			out.HeaderAuth = &route.HeaderAuth{User: user, Password: password, ExtendedCompatibility: ha.ExtendedCompatibility}
		}
	}

	if len(c.problems) == 0 {
		c.policy = out
	}
	return c
}

// names checks a list of role or user names: not blank, at most 255 characters (as
// Pangolin's names), each once.
func names(in []string, field, what string, invalid func(string, string, ...any)) []string {
	var out []string
	for i, n := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case strings.TrimSpace(n) != n || n == "":
			invalid(f, "%q: a %s name cannot be empty or start or end with a space", n, what)
		case utf8.RuneCountInString(n) > 255:
			invalid(f, "a %s name has at most 255 characters", what)
		case slices.Contains(out, n):
			invalid(f, "%q is listed twice", n)
		default:
			out = append(out, n)
		}
	}
	return out
}

var actions = map[accessv1alpha1.RuleAction]route.RuleAction{
	accessv1alpha1.RuleAllow: route.RuleAccept,
	accessv1alpha1.RuleDeny:  route.RuleDrop,
	accessv1alpha1.RulePass:  route.RulePass,
}

var matches = map[accessv1alpha1.RuleMatch]route.RuleMatch{
	accessv1alpha1.MatchIP:           route.MatchIP,
	accessv1alpha1.MatchCIDR:         route.MatchCIDR,
	accessv1alpha1.MatchPath:         route.MatchPath,
	accessv1alpha1.MatchCountry:      route.MatchCountry,
	accessv1alpha1.MatchCountryIsNot: route.MatchCountryIsNot,
	accessv1alpha1.MatchASN:          route.MatchASN,
	accessv1alpha1.MatchRegion:       route.MatchRegion,
}

var (
	asn    = regexp.MustCompile(`^(?i:AS)([0-9]{1,10})$`)
	region = regexp.MustCompile(`^[0-9]{1,3}$`)
	// pathSegment is one segment of a path glob: Pangolin's characters (RFC 3986
	// unreserved and sub-delims, @ and :, * as a wildcard) and percent-encodings.
	pathSegment = regexp.MustCompile(`^(?:[A-Za-z0-9\-._~!$&'()*+,;=@:]|%[0-9A-Fa-f]{2})*$`)
)

// ruleValue validates a rule's value as Pangolin does (reference section 12), and
// returns it as Pangolin stores it; the message says why it is refused.
func ruleValue(match route.RuleMatch, v string) (string, string) {
	switch match {
	case route.MatchIP:
		if a, err := netip.ParseAddr(v); err != nil || a.Zone() != "" {
			return "", "is not an IP address (10.1.2.3, 2001:db8::1; a network is a CIDR rule)"
		}
	case route.MatchCIDR:
		if _, err := netip.ParsePrefix(v); err != nil {
			return "", "is not a CIDR (10.0.0.0/8; a single address is an IP rule)"
		}
	case route.MatchPath:
		if !validPathGlob(v) {
			return "", "is not a path glob: it starts with /, has no empty segment, and uses URL path characters and * (/public/*)"
		}
	case route.MatchCountry, route.MatchCountryIsNot:
		if v != "ALL" && !countries[v] {
			return "", "is not an ISO 3166 country code in upper case (DE, US), nor ALL"
		}
	case route.MatchASN:
		m := asn.FindStringSubmatch(v)
		if m == nil {
			return "", "is not an autonomous system number: AS followed by digits (AS15169)"
		}
		if n, err := strconv.ParseUint(m[1], 10, 32); err != nil || n == 0 {
			return "", "is not an autonomous system number: AS1 to AS4294967295"
		}
		return "AS" + m[1], ""
	case route.MatchRegion:
		if !region.MatchString(v) {
			return "", "is not a UN M49 region id: up to 3 digits (150 for Europe)"
		}
	}
	return v, ""
}

func validPathGlob(v string) bool {
	if v == "/" {
		return true
	}
	rest, ok := strings.CutPrefix(v, "/")
	if !ok || rest == "" {
		return false
	}
	segments := strings.Split(rest, "/")
	for i, s := range segments {
		if s == "" && i != len(segments)-1 {
			return false
		}
		if !pathSegment.MatchString(s) {
			return false
		}
	}
	return true
}

var (
	// emailLocal and emailDomain are the email address that Pangolin accepts (zod's).
	emailLocal  = regexp.MustCompile(`^[A-Za-z0-9_'+\-.]*[A-Za-z0-9_+\-]$`)
	emailDomain = regexp.MustCompile(`^(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`)
)

// emailProblem says why a whitelist entry is refused, "" if it is not.
func emailProblem(e string) string {
	local, domain, ok := strings.Cut(e, "@")
	switch {
	case !ok || strings.Contains(domain, "@"):
		return "is not an email address (alice@example.com) or pattern (*@example.com)"
	case len(e) > 254:
		return "is longer than an email address can be (254)"
	case !emailDomain.MatchString(domain):
		return "has no valid domain after the @"
	case local == "*":
		return ""
	case strings.Contains(local, "*"):
		return "has a wildcard that is not the whole part before the @ (write *@example.com)"
	case strings.HasPrefix(local, ".") || strings.Contains(local, "..") || !emailLocal.MatchString(local):
		return "is not a valid email address"
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func newlineHint(v string) string {
	if strings.HasSuffix(v, "\n") {
		return " (it ends with a line break: a Secret written with echo does; use printf or kubectl create secret --from-literal)"
	}
	return ""
}
