package pangolin

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// The property of planAccess: after every prefix of a plan, every request Pangolin
// admits is admitted by the old access or by the new one, judged by the in-repo
// Pangolin's evaluator (pangolinsim.Admit) over sample visitors.

// simAccess is a resource's access as a plan's writes change it: the fake's store, as
// small as the writes need.
type simAccess struct {
	block, sso, applyRules, whitelistEnabled bool
	roles                                    []int
	users                                    []string
	whitelist                                []string
	password, pincode, headerAuth            string // values, "" for none
	passwordID, pincodeID, headerAuthID      int
	rules                                    []pangolinsim.Rule
	nextID                                   int
}

func (a simAccess) clone() simAccess {
	a.roles, a.users, a.whitelist, a.rules = slices.Clone(a.roles), slices.Clone(a.users), slices.Clone(a.whitelist), slices.Clone(a.rules)
	return a
}

// gate is what Pangolin's gatekeeper reads of a.
func (a simAccess) gate() pangolinsim.Access {
	out := pangolinsim.Access{
		BlockAccess: a.block, SSO: a.sso, RoleIDs: a.roles, UserIDs: a.users,
		EmailWhitelistEnabled: a.whitelistEnabled, Whitelist: a.whitelist, ApplyRules: a.applyRules, Rules: a.rules,
	}
	if a.password != "" {
		out.Password = pangolinsim.NewCredential(a.password)
	}
	if a.pincode != "" {
		out.Pincode = pangolinsim.NewCredential(a.pincode)
	}
	if a.headerAuth != "" {
		user, pass, _ := strings.Cut(a.headerAuth, ":")
		out.HeaderAuth = pangolinsim.NewCredential(user, pass)
	}
	return out
}

// policy is what GET /resource/:id/policies shows of a.
func (a simAccess) policy() pangolinapi.ResourcePolicy {
	p := pangolinapi.ResourcePolicy{
		SSO: a.sso, ApplyRules: a.applyRules, EmailWhitelistEnabled: a.whitelistEnabled,
		PasswordID: a.passwordID, PincodeID: a.pincodeID, EmailWhitelist: slices.Clone(a.whitelist),
	}
	if a.headerAuthID != 0 {
		p.HeaderAuth = &pangolinapi.HeaderAuthState{ID: a.headerAuthID}
	}
	for _, id := range a.roles {
		p.Roles = append(p.Roles, pangolinapi.PolicyRole{RoleID: id, Name: "role-" + strconv.Itoa(id)})
	}
	for _, id := range a.users {
		p.Users = append(p.Users, pangolinapi.PolicyUser{UserID: id})
	}
	for _, r := range a.rules {
		p.Rules = append(p.Rules, pangolinapi.Rule{RuleID: r.ID, Action: r.Action, Match: r.Match, Value: r.Value, Priority: r.Priority, Enabled: r.Enabled})
	}
	return p
}

// apply is one write as Pangolin does it; an error is a write Pangolin would refuse,
// which a plan must never contain.
func (a *simAccess) apply(op accessOp, want simAccess) error {
	a.nextID++
	switch op.kind {
	case opUpdateResource:
		u := op.update
		for _, f := range []struct {
			to   *bool
			from *bool
		}{{&a.sso, u.SSO}, {&a.block, u.BlockAccess}, {&a.applyRules, u.ApplyRules}, {&a.whitelistEnabled, u.EmailWhitelistEnabled}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
	case opSetRoles:
		a.roles = slices.Clone(op.roles)
	case opSetUsers:
		a.users = slices.Clone(op.users)
	case opSetWhitelist:
		if !a.whitelistEnabled {
			return fmt.Errorf("400 Email whitelist is not enabled for this resource")
		}
		a.whitelist = slices.Clone(op.emails)
	case opSetPassword:
		a.password, a.passwordID = want.password, a.nextID
	case opRemovePassword:
		a.password, a.passwordID = "", 0
	case opSetPincode:
		a.pincode, a.pincodeID = want.pincode, a.nextID
	case opRemovePincode:
		a.pincode, a.pincodeID = "", 0
	case opSetHeaderAuth:
		a.headerAuth, a.headerAuthID = want.headerAuth, a.nextID
	case opRemoveHeaderAuth:
		a.headerAuth, a.headerAuthID = "", 0
	case opCreateRule:
		r := op.rule
		a.rules = append(a.rules, pangolinsim.Rule{ID: a.nextID, Action: r.Action, Match: r.Match, Value: r.Value, Priority: r.Priority, Enabled: r.Enabled})
	case opUpdateRule, opDeleteRule:
		i := slices.IndexFunc(a.rules, func(r pangolinsim.Rule) bool { return r.ID == op.ruleID })
		if i < 0 {
			return fmt.Errorf("404 Resource rule with ID %d not found", op.ruleID)
		}
		if op.kind == opDeleteRule {
			a.rules = slices.Delete(a.rules, i, i+1)
			break
		}
		r := op.rule
		a.rules[i] = pangolinsim.Rule{ID: op.ruleID, Action: r.Action, Match: r.Match, Value: r.Value, Priority: r.Priority, Enabled: r.Enabled}
	default:
		return fmt.Errorf("unknown write %s", op.kind)
	}
	return nil
}

// Sample values: rule values that the sample visitors match, and what they know.
var (
	ruleValues = map[string][]string{
		"IP": {"203.0.113.66", "10.1.2.3"}, "CIDR": {"203.0.113.0/24", "10.0.0.0/8"}, "PATH": {"/health", "/api/*"},
		"COUNTRY": {"RU", "ALL"}, "COUNTRY_IS_NOT": {"DE"}, "ASN": {"AS64500"}, "REGION": {"150"},
	}
	ruleMatchKinds = []string{"IP", "CIDR", "PATH", "COUNTRY", "COUNTRY_IS_NOT", "ASN", "REGION"}
	ruleActions    = []string{"ACCEPT", "DROP", "PASS"}
	sampleEmails   = []string{"*@corp.example", "dave@partner.example", "erin@corp.example"}
	passwords      = []string{"pw-alpha-1", "pw-bravo-2"}
	pincodes       = []string{"111111", "222222"}
	headerPairs    = []string{"svc:alpha-1", "svc:bravo-2"}
)

const (
	roleDevs, roleOps = 3, 4
)

// sampleVisitors are where requests come from crossed with who makes them.
func sampleVisitors() []pangolinsim.Visitor {
	networks := []pangolinsim.Visitor{
		{IP: "203.0.113.66", Path: "/", Country: "RU", ASN: "AS64500", Region: "150"},
		{IP: "203.0.113.9", Path: "/health", Country: "DE"},
		{IP: "10.1.2.3", Path: "/api/v1"},
		{IP: "198.51.100.7", Path: "/", Country: "FR", Region: "150"},
		{IP: "198.51.100.7", Path: "/api", Country: "DE", ASN: "AS64500"},
	}
	who := []pangolinsim.Visitor{
		{},
		{UserID: "devuser00000001", RoleIDs: []int{roleDevs}},
		{UserID: "opsuser00000001", RoleIDs: []int{roleOps}},
		{UserID: "alice0000000001"},
		{UserID: "bob000000000001", RoleIDs: []int{2}},
		{UserID: "picfakeowner001", RoleIDs: []int{pangolinsim.AdminRoleID}},
		{Email: "dave@partner.example"},
		{Email: "erin@corp.example"},
		{Email: "zed@corp.example"},
		{Password: passwords[0]}, {Password: passwords[1]},
		{Pincode: pincodes[0]}, {Pincode: pincodes[1]},
		{HeaderUser: "svc", HeaderPassword: "alpha-1"}, {HeaderUser: "svc", HeaderPassword: "bravo-2"},
	}
	var out []pangolinsim.Visitor
	for _, n := range networks {
		for _, w := range who {
			v := w
			v.IP, v.Path, v.Country, v.ASN, v.Region = n.IP, n.Path, n.Country, n.ASN, n.Region
			out = append(out, v)
		}
	}
	return out
}

func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

func some[T any](r *rand.Rand, from []T) []T {
	var out []T
	for _, v := range from {
		if r.IntN(2) == 0 {
			out = append(out, v)
		}
	}
	return out
}

func maybe(r *rand.Rand, from []string) string {
	if r.IntN(2) == 0 {
		return ""
	}
	return pick(r, from)
}

func randomRules(r *rand.Rand, max int) []pangolinsim.Rule {
	n := r.IntN(max + 1)
	out := make([]pangolinsim.Rule, 0, n)
	for range n {
		m := pick(r, ruleMatchKinds)
		out = append(out, pangolinsim.Rule{Action: pick(r, ruleActions), Match: m, Value: pick(r, ruleValues[m]), Enabled: true})
	}
	return out
}

// randomOld is an access as Pangolin may hold it: set by PIC or by hand, rules at any
// priority (ties and disabled ones included), a whitelist kept while disabled.
func randomOld(r *rand.Rand) simAccess {
	a := simAccess{
		block: r.IntN(8) == 0, sso: r.IntN(2) == 0, applyRules: r.IntN(4) != 0, whitelistEnabled: r.IntN(3) == 0,
		roles: some(r, []int{2, roleDevs, roleOps}), users: some(r, []string{"alice0000000001", "bob000000000001"}),
		whitelist: some(r, sampleEmails),
		password:  maybe(r, passwords), pincode: maybe(r, pincodes), headerAuth: maybe(r, headerPairs),
		nextID: 100,
	}
	a.passwordID, a.pincodeID, a.headerAuthID = secretID(a.password, 11), secretID(a.pincode, 12), secretID(a.headerAuth, 13)
	for i, ru := range randomRules(r, 4) {
		ru.ID = 50 - i // ids do not follow priorities
		ru.Priority = i + 1
		switch r.IntN(6) {
		case 0:
			ru.Priority = r.IntN(4) // ties, and 0
		case 1:
			ru.Enabled = false
		}
		a.rules = append(a.rules, ru)
	}
	return a
}

func secretID(value string, id int) int {
	if value == "" {
		return 0
	}
	return id
}

// randomNew is what a policy asks, with the sso and blockAccess of the annotations.
func randomNew(r *rand.Rand) (simAccess, accessWant, *bool, *bool) {
	a := simAccess{
		sso:       r.IntN(2) == 0,
		roles:     some(r, []int{roleDevs, roleOps}),
		users:     some(r, []string{"alice0000000001", "bob000000000001"}),
		whitelist: some(r, sampleEmails),
		password:  maybe(r, passwords), pincode: maybe(r, pincodes), headerAuth: maybe(r, headerPairs),
	}
	slices.Sort(a.whitelist)
	a.whitelistEnabled = len(a.whitelist) > 0
	want := accessWant{policy: &route.AccessPolicy{}, whitelist: a.whitelist}
	for _, id := range a.roles {
		want.roles = append(want.roles, pangolinapi.PolicyRole{RoleID: id})
	}
	for _, id := range a.users {
		want.users = append(want.users, pangolinapi.PolicyUser{UserID: id})
	}
	for i, ru := range randomRules(r, 4) {
		ru.Priority = i + 1
		a.rules = append(a.rules, ru)
		want.rules = append(want.rules, route.AccessRule{Priority: ru.Priority, Action: route.RuleAction(ru.Action), Match: route.RuleMatch(ru.Match), Value: ru.Value})
	}
	a.applyRules = len(a.rules) > 0
	var sso, block *bool
	if r.IntN(5) != 0 {
		sso = &a.sso
	}
	if r.IntN(5) != 0 {
		b := r.IntN(8) == 0
		block = &b
	}
	return a, want, sso, block
}

func fakeDigest(value string) string {
	if value == "" {
		return ""
	}
	return "digest:" + value
}

// record is what PIC recorded of old's secrets: mostly what it wrote, sometimes nothing.
func randomRecord(r *rand.Rand, old simAccess) AccessRecord {
	var rec AccessRecord
	for _, s := range []struct {
		to    **SecretRecord
		value string
		id    int
	}{{&rec.Password, old.password, old.passwordID}, {&rec.Pincode, old.pincode, old.pincodeID}, {&rec.HeaderAuth, old.headerAuth, old.headerAuthID}} {
		if s.value != "" && r.IntN(4) != 0 {
			*s.to = &SecretRecord{Digest: fakeDigest(s.value), ID: s.id}
		}
	}
	return rec
}

// accessCase is one pair of accesses and the plan between them.
type accessCase struct {
	old, new          simAccess
	want              accessWant
	wantSSO, wantBlck *bool
	rec               AccessRecord
}

func (c accessCase) input() accessPlanInput {
	return accessPlanInput{
		sso: c.old.sso, blockAccess: c.old.block, have: c.old.policy(),
		want: c.want, wantSSO: c.wantSSO, wantBlockAccess: c.wantBlck, rec: c.rec,
		digests: secretDigests{password: fakeDigest(c.new.password), pincode: fakeDigest(c.new.pincode), headerAuth: fakeDigest(c.new.headerAuth)},
	}
}

// newGate is the access the plan must reach: sso and blockAccess as they are when the
// annotations leave them.
func (c accessCase) newGate() pangolinsim.Access {
	n := c.new.clone()
	n.sso = boolOr(c.wantSSO, c.old.sso)
	n.block = boolOr(c.wantBlck, c.old.block)
	return n.gate()
}

// check runs c's plan one write at a time and returns the first violation.
func (c accessCase) check(visitors []pangolinsim.Visitor) error {
	plan := planAccess(c.input())
	oldGate, newGate := c.old.gate(), c.newGate()
	state := c.old.clone()
	for i, op := range plan {
		if err := state.apply(op, c.new); err != nil {
			return fmt.Errorf("write %d (%s): %v\nplan: %v", i+1, op, err, plan)
		}
		gate := state.gate()
		for _, v := range visitors {
			if pangolinsim.Admits(gate, v) && !pangolinsim.Admits(oldGate, v) && !pangolinsim.Admits(newGate, v) {
				return fmt.Errorf("after write %d of %d (%s), %+v is admitted, which neither the old nor the new access admits\nplan: %v", i+1, len(plan), op, v, plan)
			}
		}
	}
	for _, v := range visitors {
		if pangolinsim.Admits(state.gate(), v) != pangolinsim.Admits(newGate, v) {
			return fmt.Errorf("the plan ends where the new access does not: %+v\nplan: %v", v, plan)
		}
	}
	again := c
	again.old = state
	again.rec = AccessRecord{}
	for _, s := range []struct {
		to    **SecretRecord
		value string
		id    int
	}{{&again.rec.Password, state.password, state.passwordID}, {&again.rec.Pincode, state.pincode, state.pincodeID}, {&again.rec.HeaderAuth, state.headerAuth, state.headerAuthID}} {
		if s.value != "" {
			*s.to = &SecretRecord{Digest: fakeDigest(s.value), ID: s.id}
		}
	}
	if rest := planAccess(again.input()); len(rest) > 0 {
		return fmt.Errorf("a second plan from the state reached is not empty: %v\nfirst plan: %v", rest, plan)
	}
	return nil
}

func TestPlanAccessNeverAdmitsWhomNeitherAccessAdmits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PIC_ACCESS_PLAN_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	cases := 3000
	if testing.Short() {
		cases = 300
	}
	if s := os.Getenv("PIC_ACCESS_PLAN_CASES"); s != "" {
		var err error
		cases, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	visitors := sampleVisitors()
	for i := range cases {
		old := randomOld(r)
		newAccess, want, sso, block := randomNew(r)
		c := accessCase{old: old, new: newAccess, want: want, wantSSO: sso, wantBlck: block, rec: randomRecord(r, old)}
		if err := c.check(visitors); err != nil {
			t.Fatalf("case %d of seed %d (rerun with PIC_ACCESS_PLAN_SEED=%d): %v\nold: %+v\nnew: %+v sso=%v block=%v", i, seed, seed, err, old, newAccess, ptrString(sso), ptrString(block))
		}
	}
	t.Logf("%d random pairs of accesses, %d visitors each, seed %d", cases, len(visitors), seed)
}

func ptrString(b *bool) string {
	if b == nil {
		return "unset"
	}
	return strconv.FormatBool(*b)
}

func TestPlanAccess(t *testing.T) {
	visitors := sampleVisitors()
	drop := pangolinsim.Rule{ID: 7, Action: "DROP", Match: "IP", Value: "203.0.113.66", Priority: 1, Enabled: true}
	cases := []struct {
		name  string
		c     accessCase
		kinds []accessOpKind
	}{
		{
			name: "a Deny kept while an Allow is added in front is moved, never rewritten into the Allow",
			c: accessCase{
				old: simAccess{applyRules: true, rules: []pangolinsim.Rule{drop}},
				new: simAccess{applyRules: true, rules: []pangolinsim.Rule{{Action: "ACCEPT", Match: "PATH", Value: "/health", Priority: 1, Enabled: true}, {Action: "DROP", Match: "IP", Value: "203.0.113.66", Priority: 2, Enabled: true}}},
				want: accessWant{policy: &route.AccessPolicy{}, rules: []route.AccessRule{
					{Priority: 1, Action: route.RuleAccept, Match: route.MatchPath, Value: "/health"},
					{Priority: 2, Action: route.RuleDrop, Match: route.MatchIP, Value: "203.0.113.66"},
				}},
			},
			kinds: []accessOpKind{opUpdateRule, opCreateRule},
		},
		{
			name: "roles changed with a new Deny: the Deny comes before the roles",
			c: accessCase{
				old: simAccess{sso: true, roles: []int{roleDevs}},
				new: simAccess{sso: true, roles: []int{roleOps}, applyRules: true, rules: []pangolinsim.Rule{{Action: "DROP", Match: "COUNTRY", Value: "RU", Priority: 1, Enabled: true}}},
				want: accessWant{policy: &route.AccessPolicy{}, roles: []pangolinapi.PolicyRole{{RoleID: roleOps}},
					rules: []route.AccessRule{{Priority: 1, Action: route.RuleDrop, Match: route.MatchCountry, Value: "RU"}}},
			},
			kinds: []accessOpKind{opCreateRule, opUpdateResource, opSetRoles},
		},
		{
			name: "an unchanged access writes nothing",
			c: accessCase{
				old:  simAccess{sso: true, roles: []int{roleDevs}, password: passwords[0], passwordID: 9, applyRules: true, rules: []pangolinsim.Rule{drop}},
				new:  simAccess{sso: true, roles: []int{roleDevs}, password: passwords[0], applyRules: true, rules: []pangolinsim.Rule{drop}},
				want: accessWant{policy: &route.AccessPolicy{}, roles: []pangolinapi.PolicyRole{{RoleID: roleDevs}}, rules: []route.AccessRule{{Priority: 1, Action: route.RuleDrop, Match: route.MatchIP, Value: "203.0.113.66"}}},
				rec:  AccessRecord{Password: &SecretRecord{Digest: fakeDigest(passwords[0]), ID: 9}},
			},
		},
		{
			name: "a whitelist enabled again over a list kept from before goes through blockAccess",
			c: accessCase{
				old:  simAccess{password: passwords[0], passwordID: 9, whitelist: []string{"erin@corp.example"}},
				new:  simAccess{password: passwords[0], whitelistEnabled: true, whitelist: []string{"dave@partner.example"}},
				want: accessWant{policy: &route.AccessPolicy{}, whitelist: []string{"dave@partner.example"}},
				rec:  AccessRecord{Password: &SecretRecord{Digest: fakeDigest(passwords[0]), ID: 9}},
			},
			kinds: []accessOpKind{opUpdateResource, opUpdateResource, opSetWhitelist, opUpdateResource},
		},
		{
			name: "SSO turned off for a password: the password first, SSO off after",
			c: accessCase{
				old:     simAccess{sso: true, roles: []int{roleDevs}},
				new:     simAccess{password: passwords[1]},
				want:    accessWant{policy: &route.AccessPolicy{}},
				wantSSO: ptrTo(false),
			},
			kinds: []accessOpKind{opSetPassword, opUpdateResource, opSetRoles},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.c.check(visitors))
			var kinds []accessOpKind
			for _, op := range planAccess(c.c.input()) {
				kinds = append(kinds, op.kind)
			}
			assert.Equal(t, c.kinds, kinds)
		})
	}
}
