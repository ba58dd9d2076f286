package pangolinsim

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"regexp"
	"strings"
)

// intArray reads a required array of integers, reporting zod-style issues per element
// ("... at "roleIds[0]"").
func (v *validator) intArray(key string) ([]int, bool) {
	raw, present, _ := v.field(key)
	items, ok := v.array(key, raw, present)
	if !ok {
		return nil, false
	}
	out := make([]int, 0, len(items))
	valid := true
	for i, it := range items {
		path := fmt.Sprintf("%s[%d]", key, i)
		if jsType(it) != "number" {
			v.typeIssue(path, "number", it)
			valid = false
			continue
		}
		var f float64
		_ = json.Unmarshal(it, &f)
		if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			v.issue("Invalid input: expected int, received number", path)
			valid = false
			continue
		}
		out = append(out, int(f))
	}
	return out, valid
}

// strArray reads a required array of strings.
func (v *validator) strArray(key string) ([]string, bool) {
	raw, present, _ := v.field(key)
	items, ok := v.array(key, raw, present)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	valid := true
	for i, it := range items {
		if jsType(it) != "string" {
			v.typeIssue(fmt.Sprintf("%s[%d]", key, i), "string", it)
			valid = false
			continue
		}
		var s string
		_ = json.Unmarshal(it, &s)
		out = append(out, s)
	}
	return out, valid
}

func (v *validator) array(key string, raw json.RawMessage, present bool) ([]json.RawMessage, bool) {
	if !present || jsType(raw) != "array" {
		if !present {
			raw = nil
		}
		v.typeIssue(key, "array", raw)
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		v.typeIssue(key, "array", raw)
		return nil, false
	}
	return items, true
}

var (
	// An address: a local part of the usual characters, not starting with or holding
	// two dots, and a domain of labels ending in a TLD of two letters or more.
	emailPattern = regexp.MustCompile(`^[A-Za-z0-9_'+-]([A-Za-z0-9_'+.-]*[A-Za-z0-9_+-])?@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$`)
	// A wildcard entry: "*" as the whole local part.
	wildcardEmailPattern = regexp.MustCompile(`^\*@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$`)
)

// emailIssue is the observed union message for a whitelist entry that is neither an
// address nor a wildcard address, or "".
func emailIssue(email, path string) string {
	if (emailPattern.MatchString(email) && !strings.Contains(email, "..")) || wildcardEmailPattern.MatchString(email) {
		return ""
	}
	return fmt.Sprintf("Invalid email address at %q or Invalid email address. Wildcard (*) must be the entire local part. at %q", path, path)
}

// Rule actions and matches, in the order the server's enums list them.
var (
	ruleActions = []string{"ACCEPT", "DROP", "PASS"}
	ruleMatches = []string{"CIDR", "IP", "PATH", "COUNTRY", "COUNTRY_IS_NOT", "ASN", "REGION"}
)

var (
	asnPattern = regexp.MustCompile(`^(?i:AS)[0-9]+$`)
	// A URL path glob: a leading slash, then path characters or "*" wildcards.
	pathGlobPattern = regexp.MustCompile(`^/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$`)
)

// ruleValueIssue is the observed 400 message for a value its match refuses, or "".
func ruleValueIssue(match, value string) string {
	switch match {
	case "CIDR":
		if _, _, err := net.ParseCIDR(value); err != nil {
			return "Invalid CIDR provided"
		}
	case "IP":
		if net.ParseIP(value) == nil {
			return "Invalid IP provided"
		}
	case "PATH":
		if !pathGlobPattern.MatchString(value) {
			return "Invalid URL glob pattern provided"
		}
	case "COUNTRY", "COUNTRY_IS_NOT":
		if value != "ALL" && !countryCodes[value] {
			return "Invalid country code provided"
		}
	case "ASN":
		if !asnPattern.MatchString(value) {
			return "Invalid ASN provided"
		}
	case "REGION":
		if !regionIDs[value] {
			return "Invalid region ID provided"
		}
	}
	return ""
}

func set(fields string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Fields(fields) {
		out[f] = true
	}
	return out
}

// countryCodes are the officially assigned ISO 3166-1 alpha-2 codes, upper case only.
var countryCodes = set(`
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ
DE DJ DK DM DO DZ
EC EE EG EH ER ES ET
FI FJ FK FM FO FR
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
HK HM HN HR HT HU
ID IE IL IM IN IO IQ IR IS IT
JE JM JO JP
KE KG KH KI KM KN KP KR KW KY KZ
LA LB LC LI LK LR LS LT LU LV LY
MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
NA NC NE NF NG NI NL NO NP NR NU NZ
OM
PA PE PF PG PH PK PL PM PN PR PS PT PW PY
QA
RE RO RS RU RW
SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
UA UG UM US UY UZ
VA VC VE VG VI VN VU
WF WS
YE YT
ZA ZM ZW`)

// regionIDs are the UN M49 ids of continents and sub-regions ("150" is Europe).
var regionIDs = set(`
002 015 202 014 017 018 011
019 419 029 013 005 021
142 143 030 035 034 145
150 151 154 039 155
009 053 054 057 061`)
