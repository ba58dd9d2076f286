package route

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// AccessPolicy is the access an attached AccessPolicy asks for one host, in Pangolin's
// terms, already validated and with its Secrets read (internal/access decides it). A
// sink that holds a host with a policy brings every list below to exactly this; one
// without (Access.Policy nil) leaves them as Pangolin holds them.
//
// The effective sso and blockAccess, the policy's merged with the annotations, are in
// Access.SSO and Access.BlockAccess, not here.
type AccessPolicy struct {
	// Name is the AccessPolicy's namespace and name, for events, logs and render.
	Name types.NamespacedName
	// Roles are role names; the sink resolves them to ids and never creates one.
	Roles []string
	// Users are emails or usernames; the sink resolves them to user ids.
	Users []string
	// AutoLoginIdP is the identity provider visitors are sent to; zero for none.
	AutoLoginIdP IdPRef
	// EmailWhitelist holds lower-cased addresses and *@domain patterns. Not empty means
	// emailWhitelistEnabled.
	EmailWhitelist []string
	// Rules in order; Priority is the position, from 1. Not empty means applyRules.
	Rules []AccessRule
	// Password, PinCode and HeaderAuth are nil when the policy sets none: the sink
	// removes one Pangolin holds.
	Password   *Secret
	PinCode    *Secret
	HeaderAuth *HeaderAuth
}

// IdPRef names an identity provider by id or by name: exactly one is set, or neither.
type IdPRef struct {
	ID   int64
	Name string
}

// IsZero reports whether no identity provider is named.
func (r IdPRef) IsZero() bool { return r.ID == 0 && r.Name == "" }

func (r IdPRef) String() string {
	if r.Name != "" {
		return r.Name
	}
	if r.ID != 0 {
		return "id " + strconv.FormatInt(r.ID, 10)
	}
	return ""
}

// RuleAction is a rule's action in Pangolin's terms.
type RuleAction string

// Rule actions as Pangolin names them.
const (
	RuleAccept RuleAction = "ACCEPT" // in without any authentication
	RuleDrop   RuleAction = "DROP"
	RulePass   RuleAction = "PASS" // on to the login methods
)

// RuleMatch is what a rule compares, in Pangolin's terms.
type RuleMatch string

// Rule matches as Pangolin names them.
const (
	MatchIP           RuleMatch = "IP"
	MatchCIDR         RuleMatch = "CIDR"
	MatchPath         RuleMatch = "PATH"
	MatchCountry      RuleMatch = "COUNTRY"
	MatchCountryIsNot RuleMatch = "COUNTRY_IS_NOT"
	MatchASN          RuleMatch = "ASN"
	MatchRegion       RuleMatch = "REGION"
)

// AccessRule is one of a resource's rules.
type AccessRule struct {
	Priority int // the position in the policy, from 1: Pangolin evaluates ascending
	Action   RuleAction
	Match    RuleMatch
	Value    string
}

func (r AccessRule) String() string {
	return fmt.Sprintf("%d %s %s %s", r.Priority, r.Action, r.Match, r.Value)
}

// HeaderAuth is basic/header authentication.
type HeaderAuth struct {
	User                  Secret
	Password              Secret
	ExtendedCompatibility bool
}

// Digest is the durable record of the credentials; see Secret.Digest.
func (h HeaderAuth) Digest(key []byte) string {
	compat := byte(0)
	if h.ExtendedCompatibility {
		compat = 1
	}
	return digest(key, "header-auth", []byte(h.User.Reveal()), []byte(h.Password.Reveal()), []byte{compat})
}

func (h HeaderAuth) String() string {
	return fmt.Sprintf("user %s, password %s, extendedCompatibility %t", h.User, h.Password, h.ExtendedCompatibility)
}

// SecretRef says where a secret value was read: a key of a Secret.
type SecretRef struct {
	Namespace string
	Name      string
	Key       string
}

// String is what logs, events and render show instead of the value.
func (r SecretRef) String() string {
	return fmt.Sprintf("from Secret %s/%s key %s", r.Namespace, r.Name, r.Key)
}

// Secret is a secret value (a password, a PIN code, a header-auth credential) with the
// reference it was read from. Every way Go prints or encodes it (fmt verbs, JSON, text,
// YAML, logr, slog) gives the reference only; Reveal is the one way to the value, for the
// sink's write to Pangolin. Reflection-based dumpers that ignore methods (spew with
// DisableMethods) still see the field: never hand a Secret to one.
type Secret struct {
	ref SecretRef
	// value is a pointer to a string because fmt prints such a pointer as an address,
	// at any depth and for any verb: a struct holding a Secret printed with a verb it
	// does not support (%s on a struct without String), or in an unexported field,
	// makes fmt skip every method, Format included, and print the fields by reflection.
	// (A pointer to a struct would be followed at the top level of that reflection.)
	value *string
}

// NewSecret holds value, read from ref.
func NewSecret(ref SecretRef, value string) Secret {
	return Secret{ref: ref, value: &value}
}

// Ref is where the value was read.
func (s Secret) Ref() SecretRef { return s.ref }

// Reveal returns the value itself: only for the request that writes it to Pangolin.
func (s Secret) Reveal() string {
	if s.value == nil {
		return ""
	}
	return *s.value
}

// String returns the reference, never the value.
func (s Secret) String() string { return s.ref.String() }

// GoString is %#v: the reference, never the value.
func (s Secret) GoString() string { return "route.Secret(" + strconv.Quote(s.ref.String()) + ")" }

// Format prints the reference for every verb (%v, %+v, %s, %q, %x, %d ...), never the
// value.
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'q':
		_, _ = io.WriteString(f, strconv.Quote(s.String()))
	case 'v':
		if f.Flag('#') {
			_, _ = io.WriteString(f, s.GoString())
			return
		}
		_, _ = io.WriteString(f, s.String())
	default:
		_, _ = io.WriteString(f, s.String())
	}
}

// MarshalJSON encodes the reference as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// MarshalText encodes the reference (YAML encoders and map keys use it).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalLog is what logr sinks (zapr) print.
func (s Secret) MarshalLog() any { return s.String() }

// LogValue is what log/slog prints.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Digest is the durable record of the value that a sink keeps, to know after a restart
// whether Pangolin already holds this secret without rewriting it (a rewrite logs every
// visitor out): the hex HMAC-SHA256, under key, of a domain-separation prefix and the
// value. Without the key it cannot be reversed, not even for a 6-digit PIN, whose
// plain hash is found by trying the million candidates; key is DigestKey of the
// Pangolin API key, which a reader of the record does not have.
func (s Secret) Digest(key []byte) string {
	return digest(key, "secret", []byte(s.Reveal()))
}

// DigestKey derives the HMAC key of Digest from the Pangolin API key, so that the
// record is worthless without the credential that can already write the secrets. A new
// API key gives new digests: each secret is then rewritten once.
func DigestKey(apiKey string) []byte {
	mac := hmac.New(sha256.New, []byte(apiKey))
	_, _ = mac.Write([]byte("pangolin-ingress-controller access-secret-digest key v1"))
	return mac.Sum(nil)
}

// digest is HMAC-SHA256(key, prefix, kind, parts...), each part length-prefixed so that
// no two inputs encode alike.
func digest(key []byte, kind string, parts ...[]byte) string {
	mac := hmac.New(sha256.New, key)
	_, _ = mac.Write([]byte("pangolin-ingress-controller access-secret-digest v1\x00" + kind + "\x00"))
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		_, _ = mac.Write(n[:])
		_, _ = mac.Write(p)
	}
	return hex.EncodeToString(mac.Sum(nil))
}
