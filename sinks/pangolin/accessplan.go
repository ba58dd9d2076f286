package pangolin

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// An access change is planned as data, then executed (accessRun.execute). The plan is a
// pure function of what Pangolin holds, what the policy wants and the access record, so
// that its order can be checked without a server: see planAccess for the guarantee.

// accessOpKind is what one access write does; each is one request.
type accessOpKind string

const (
	opUpdateResource   accessOpKind = "updateResource" // sso, blockAccess, applyRules, emailWhitelistEnabled, skipToIdpId
	opSetRoles         accessOpKind = "setRoles"
	opSetUsers         accessOpKind = "setUsers"
	opSetWhitelist     accessOpKind = "setWhitelist"
	opSetPassword      accessOpKind = "setPassword"
	opRemovePassword   accessOpKind = "removePassword"
	opSetPincode       accessOpKind = "setPincode"
	opRemovePincode    accessOpKind = "removePincode"
	opSetHeaderAuth    accessOpKind = "setHeaderAuth"
	opRemoveHeaderAuth accessOpKind = "removeHeaderAuth"
	opCreateRule       accessOpKind = "createRule"
	opUpdateRule       accessOpKind = "updateRule"
	opDeleteRule       accessOpKind = "deleteRule"
)

// accessOp is one access write. It never holds a secret: a set of the password, PIN
// code or header auth takes its value from the policy when it is sent.
type accessOp struct {
	kind accessOpKind
	// what names the write in errors and refusals: "set the roles".
	what   string
	update pangolinapi.ResourceUpdate // opUpdateResource
	roles  []int                      // opSetRoles
	users  []string                   // opSetUsers
	emails []string                   // opSetWhitelist
	ruleID int                        // opUpdateRule, opDeleteRule
	rule   pangolinapi.RuleSpec       // opCreateRule, opUpdateRule
	// removes lists what the write takes away that the policy does not grant (added
	// outside PIC, or by a policy since detached), for the log; removing names its kind:
	// "roles", "users", "emails", "rules" or "secret".
	removing string
	removes  []string
}

func (op accessOp) String() string {
	switch op.kind {
	case opSetRoles:
		return fmt.Sprintf("%s %v", op.kind, op.roles)
	case opSetUsers:
		return fmt.Sprintf("%s %v", op.kind, op.users)
	case opSetWhitelist:
		return fmt.Sprintf("%s %v", op.kind, op.emails)
	case opCreateRule:
		return fmt.Sprintf("%s %s", op.kind, describeSpec(op.rule))
	case opUpdateRule:
		return fmt.Sprintf("%s %d to %s", op.kind, op.ruleID, describeSpec(op.rule))
	case opDeleteRule:
		return fmt.Sprintf("%s %d", op.kind, op.ruleID)
	}
	return string(op.kind) + " (" + op.what + ")"
}

func describeSpec(r pangolinapi.RuleSpec) string {
	return fmt.Sprintf("%d %s %s %s", r.Priority, r.Action, r.Match, r.Value)
}

func describeRule(r pangolinapi.Rule) string {
	return fmt.Sprintf("%d %s %s %s", r.Priority, r.Action, r.Match, r.Value)
}

// secretDigests are the digests of the secrets the policy sets, "" for one it does not.
type secretDigests struct{ password, pincode, headerAuth string }

// accessPlanInput is what a plan is made from.
type accessPlanInput struct {
	// sso and blockAccess are the resource's; have is its inline policy.
	sso, blockAccess bool
	have             pangolinapi.ResourcePolicy
	// want is the access asked for; wantSSO and wantBlockAccess are nil to leave them.
	want                     accessWant
	wantSSO, wantBlockAccess *bool
	// rec is the access record of the secrets PIC wrote, and digests those the policy
	// sets: a secret is written again only when its value or its id in Pangolin
	// changed.
	rec     AccessRecord
	digests secretDigests
}

// planAccess is the ordered list of writes that brings a resource's access from what
// Pangolin holds (old) to what is wanted (new); nothing when they agree, so a restart
// writes nothing and no secret is rewritten needlessly.
//
// Invariant: after every prefix of the plan, every request Pangolin admits is admitted
// by the old access or by the new one. An execution that stops at any write, refused
// or failed, leaves no one in whom neither the old nor the new access lets in. Pangolin
// admits in this order (reference 11.8, 19): blockAccess, then the first enabled rule
// by priority (ACCEPT admits, DROP refuses, PASS goes on), then the login methods (sso
// with its roles and users, password, PIN code, header auth, whitelisted emails), one of
// which must admit unless none is on. The plan has five phases:
//
//  1. Close: blockAccess on first when the new access blocks, or when no order avoids an
//     open intermediate state (below); it is turned off last.
//  2. Rules, restricting: from the old rules to a middle list that decides no request
//     better than either the old or the new list (DROP < PASS < ACCEPT): the common
//     prefix of both lists, then DROP rules only (every DROP of both). New DROPs are
//     created first, at their priority (a DROP added anywhere only restricts), then the
//     old ACCEPTs deleted, then the old PASSes (with no ACCEPT left after them, deleting
//     one only restricts). Each write restricts, so each state is within the old one.
//  3. Login methods, between them: while the rules stand in the middle, a request
//     reaches the login methods only where both old and new lists let it, so any state
//     whose methods admit no one but old or new visitors is safe. Each method is moved
//     whole from its old setting to its new one, grants first (a list set while sso is
//     off, before sso is turned on; a secret set; a whitelist enabled, then set), then
//     removals (sso off, a whitelist emptied then disabled, secrets removed): some method
//     of the old or the new access stays on throughout, so the host is never public
//     unless the old or the new access makes it so. Enabling a whitelist brings back the
//     list Pangolin kept while it was disabled (reference 11.6): when that list holds
//     emails the new one lacks and both accesses are protected, no order is safe, and
//     the plan goes through the closed state of phase 1.
//  4. Rules, granting: from the middle list to the new one, each state deciding no
//     request better than the new list: old DROPs that the new list lacks deleted, the
//     ones it keeps moved to their new priority, then the new PASSes created, then the
//     new ACCEPTs (an ACCEPT created before a PASS in front of it would admit without
//     login a request the new list sends to the login methods).
//  5. Open: blockAccess off when the new access does not block.
//
// Old rules of equal priority, whose order Pangolin does not define, hold whatever order
// Pangolin gives them: the common prefix ends before a tie, and the rest of the argument
// does not depend on their order. Not covered: a state changed in Pangolin by someone
// else during the plan, and sessions: a visitor logged in under the old access keeps the
// session until its method changes.
func planAccess(in accessPlanInput) []accessOp {
	p := &planner{in: in}
	return p.plan()
}

type planner struct {
	in  accessPlanInput
	ops []accessOp
}

func (p *planner) add(op accessOp) { p.ops = append(p.ops, op) }

func (p *planner) updateResource(what string, u pangolinapi.ResourceUpdate) {
	p.add(accessOp{kind: opUpdateResource, what: what, update: u})
}

// loginOn reports whether an access has a login method on (reference 11.8 step 3).
func loginOn(sso, password, pincode, headerAuth, whitelist bool) bool {
	return sso || password || pincode || headerAuth || whitelist
}

func (p *planner) plan() []accessOp {
	in, have, want := p.in, p.in.have, p.in.want
	newSSO, newBlock := boolOr(in.wantSSO, in.sso), boolOr(in.wantBlockAccess, in.blockAccess)
	newWhitelist := len(want.whitelist) > 0

	// The secrets: written when the value changed (digest) or someone changed it in
	// Pangolin (id); every write logs the secret's visitors out.
	headerID := 0
	if have.HeaderAuth != nil {
		headerID = have.HeaderAuth.ID
	}
	setPassword := in.digests.password != "" && secretStale(in.rec.Password, in.digests.password, have.PasswordID)
	setPincode := in.digests.pincode != "" && secretStale(in.rec.Pincode, in.digests.pincode, have.PincodeID)
	setHeader := in.digests.headerAuth != "" && secretStale(in.rec.HeaderAuth, in.digests.headerAuth, headerID)

	oldLogin := loginOn(in.sso, have.PasswordID != 0, have.PincodeID != 0, have.HeaderAuth != nil, have.EmailWhitelistEnabled)
	newLogin := loginOn(newSSO, in.digests.password != "", in.digests.pincode != "", in.digests.headerAuth != "", newWhitelist)
	// A whitelist enabled again brings back the list kept while it was disabled.
	revived := newWhitelist && !have.EmailWhitelistEnabled && len(without(lowerAll(have.EmailWhitelist), want.whitelist)) > 0
	closing := !in.blockAccess && (newBlock || revived && oldLogin && newLogin)

	// 1. Close.
	if closing {
		p.updateResource("block access while the access changes", pangolinapi.ResourceUpdate{BlockAccess: ptrTo(true)})
	}
	// 2. Rules, restricting.
	rules := newRulePlan(have, want)
	rules.restrict(p)
	// 3. Login methods: grants, then removals.
	if have.IdpID != want.idp {
		p.updateResource(fmt.Sprintf("set the auto-login identity provider to id %d (autoLoginIdp)", want.idp), pangolinapi.ResourceUpdate{SkipToIdpID: ptrTo(want.idp)})
	}
	if !in.sso {
		p.lists() // inert while sso is off
	}
	if newWhitelist {
		if !have.EmailWhitelistEnabled {
			p.updateResource("enable the email whitelist", pangolinapi.ResourceUpdate{EmailWhitelistEnabled: ptrTo(true)})
		}
		if !sameStrings(lowerAll(have.EmailWhitelist), want.whitelist) {
			p.add(accessOp{kind: opSetWhitelist, what: "set the email whitelist", emails: want.whitelist,
				removing: "emails", removes: without(lowerAll(have.EmailWhitelist), want.whitelist)})
		}
	}
	if setPassword {
		p.add(accessOp{kind: opSetPassword, what: "set the password"})
	}
	if setPincode {
		p.add(accessOp{kind: opSetPincode, what: "set the PIN code"})
	}
	if setHeader {
		p.add(accessOp{kind: opSetHeaderAuth, what: "set the header authentication"})
	}
	if newSSO && !in.sso {
		p.updateResource("turn SSO on", pangolinapi.ResourceUpdate{SSO: ptrTo(true)})
	}
	if in.sso && newSSO {
		p.lists()
	}
	if in.sso && !newSSO {
		p.updateResource("turn SSO off", pangolinapi.ResourceUpdate{SSO: ptrTo(false)})
		p.lists() // inert from now on
	}
	if !newWhitelist && have.EmailWhitelistEnabled {
		// Emptied before it is disabled: disabling keeps the list, and enabling it again
		// would bring it back.
		if len(have.EmailWhitelist) > 0 {
			p.add(accessOp{kind: opSetWhitelist, what: "empty the email whitelist", removing: "emails", removes: lowerAll(have.EmailWhitelist)})
		}
		p.updateResource("disable the email whitelist", pangolinapi.ResourceUpdate{EmailWhitelistEnabled: ptrTo(false)})
	}
	if in.digests.password == "" && have.PasswordID != 0 {
		p.add(accessOp{kind: opRemovePassword, what: "remove the password", removing: "secret", removes: []string{"password"}})
	}
	if in.digests.pincode == "" && have.PincodeID != 0 {
		p.add(accessOp{kind: opRemovePincode, what: "remove the PIN code", removing: "secret", removes: []string{"PIN code"}})
	}
	if in.digests.headerAuth == "" && have.HeaderAuth != nil {
		p.add(accessOp{kind: opRemoveHeaderAuth, what: "remove the header authentication", removing: "secret", removes: []string{"header authentication"}})
	}
	// 4. Rules, granting.
	rules.grant(p)
	// 5. Open.
	if (closing || in.blockAccess) && !newBlock {
		p.updateResource("unblock access", pangolinapi.ResourceUpdate{BlockAccess: ptrTo(false)})
	}
	return p.ops
}

// lists sets the roles and users the policy grants, each replaced in one request.
func (p *planner) lists() {
	have, want := p.in.have, p.in.want
	haveRoles := make([]string, 0, len(have.Roles))
	for _, r := range have.Roles {
		haveRoles = append(haveRoles, strconv.Itoa(r.RoleID))
	}
	wantRoles := make([]string, 0, len(want.roles))
	ids := make([]int, 0, len(want.roles))
	for _, r := range want.roles {
		wantRoles, ids = append(wantRoles, strconv.Itoa(r.RoleID)), append(ids, r.RoleID)
	}
	if !sameStrings(haveRoles, wantRoles) {
		var gone []string
		for _, r := range have.Roles {
			if !slices.Contains(ids, r.RoleID) {
				gone = append(gone, r.Name)
			}
		}
		p.add(accessOp{kind: opSetRoles, what: "set the roles", roles: ids, removing: "roles", removes: gone})
	}
	haveUsers := make([]string, 0, len(have.Users))
	for _, u := range have.Users {
		haveUsers = append(haveUsers, u.UserID)
	}
	wantUsers := make([]string, 0, len(want.users))
	for _, u := range want.users {
		wantUsers = append(wantUsers, u.UserID)
	}
	if !sameStrings(haveUsers, wantUsers) {
		var gone []string
		for _, u := range have.Users {
			if !slices.Contains(wantUsers, u.UserID) {
				gone = append(gone, cmp.Or(u.Email, u.Username, u.UserID))
			}
		}
		p.add(accessOp{kind: opSetUsers, what: "set the users", users: wantUsers, removing: "users", removes: gone})
	}
}

// secretStale reports whether a secret must be written: never recorded, of another value, or
// changed in Pangolin since PIC wrote it.
func secretStale(rec *SecretRecord, digest string, id int) bool {
	return rec == nil || rec.Digest != digest || rec.ID != id || id == 0
}

// boolOr is *p, or otherwise when p is nil.
func boolOr(p *bool, otherwise bool) bool {
	if p == nil {
		return otherwise
	}
	return *p
}

// lowerAll is emails lower-cased, as Pangolin stores them.
func lowerAll(emails []string) []string {
	out := make([]string, 0, len(emails))
	for _, e := range emails {
		out = append(out, strings.ToLower(e))
	}
	return out
}

// rulePlan is the rule part of a plan (phases 2 and 4 of planAccess).
type rulePlan struct {
	applyRules, wantRules bool
	// inert are stored rules that decide nothing (disabled, or all of them while
	// applyRules is off): deleted.
	inert []pangolinapi.Rule
	// tail is the old rules past the common prefix, in evaluation order.
	tail []pangolinapi.Rule
	// wantTail is the new rules past the common prefix.
	wantTail []pangolinapi.RuleSpec
	// kept pairs an old DROP of the tail with the new DROP it becomes (wantTail index).
	kept map[int]int // tail index -> wantTail index
}

func newRulePlan(have pangolinapi.ResourcePolicy, want accessWant) *rulePlan {
	rp := &rulePlan{applyRules: have.ApplyRules, wantRules: len(want.rules) > 0, kept: map[int]int{}}
	var live []pangolinapi.Rule
	for _, r := range have.Rules {
		if have.ApplyRules && r.Enabled {
			live = append(live, r)
		} else {
			rp.inert = append(rp.inert, r)
		}
	}
	slices.SortStableFunc(live, func(a, b pangolinapi.Rule) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.RuleID, b.RuleID))
	})
	wanted := make([]pangolinapi.RuleSpec, 0, len(want.rules))
	for _, r := range want.rules {
		wanted = append(wanted, pangolinapi.RuleSpec{Action: string(r.Action), Match: string(r.Match), Value: r.Value, Priority: r.Priority, Enabled: true})
	}
	slices.SortStableFunc(wanted, func(a, b pangolinapi.RuleSpec) int { return cmp.Compare(a.Priority, b.Priority) })
	// The common prefix decides the same requests before and after; a rule whose
	// priority ties with the next has no defined place and ends it.
	k := 0
	for k < len(live) && k < len(wanted) && sameRule(live[k], wanted[k]) {
		k++
	}
	for k > 0 && k < len(live) && live[k-1].Priority == live[k].Priority {
		k--
	}
	rp.tail, rp.wantTail = live[k:], wanted[k:]
	used := make([]bool, len(rp.wantTail))
	for i, r := range rp.tail {
		if r.Action != pangolinapi.RuleDrop {
			continue
		}
		for j, w := range rp.wantTail {
			if !used[j] && w.Action == pangolinapi.RuleDrop && w.Match == r.Match && w.Value == r.Value {
				used[j], rp.kept[i] = true, j
				break
			}
		}
	}
	return rp
}

func sameRule(h pangolinapi.Rule, w pangolinapi.RuleSpec) bool {
	return h.Enabled && h.Action == w.Action && h.Match == w.Match && h.Value == w.Value && h.Priority == w.Priority
}

// keptTarget reports whether new DROP j is an old one moved.
func (rp *rulePlan) keptTarget(j int) bool {
	for _, t := range rp.kept {
		if t == j {
			return true
		}
	}
	return false
}

func (rp *rulePlan) deleteOp(r pangolinapi.Rule) accessOp {
	return accessOp{kind: opDeleteRule, what: "delete rule " + describeRule(r), ruleID: r.RuleID, removing: "rules", removes: []string{describeRule(r)}}
}

// restrict is phase 2: new DROPs created, old ACCEPTs then PASSes deleted, and rules
// turned on once only DROPs stand.
func (rp *rulePlan) restrict(p *planner) {
	for _, r := range rp.inert {
		p.add(rp.deleteOp(r)) // decides nothing
	}
	for j, w := range rp.wantTail {
		if w.Action == pangolinapi.RuleDrop && !rp.keptTarget(j) {
			p.add(accessOp{kind: opCreateRule, what: "create rule " + describeSpec(w), rule: w})
		}
	}
	for _, action := range []string{pangolinapi.RuleAccept, pangolinapi.RulePass} {
		for _, r := range rp.tail {
			if r.Action == action {
				p.add(rp.deleteOp(r))
			}
		}
	}
	if !rp.applyRules && rp.wantRules {
		p.updateResource("turn rules on", pangolinapi.ResourceUpdate{ApplyRules: ptrTo(true)})
	}
}

// grant is phase 4: old DROPs the new list lacks deleted, the others moved, then the new
// PASSes and ACCEPTs created; rules turned off when the new list is empty.
func (rp *rulePlan) grant(p *planner) {
	if rp.applyRules && !rp.wantRules {
		p.updateResource("turn rules off", pangolinapi.ResourceUpdate{ApplyRules: ptrTo(false)})
	}
	for i, r := range rp.tail {
		if _, ok := rp.kept[i]; r.Action == pangolinapi.RuleDrop && !ok {
			p.add(rp.deleteOp(r))
		}
	}
	for i, r := range rp.tail {
		if j, ok := rp.kept[i]; ok && r.Priority != rp.wantTail[j].Priority {
			w := rp.wantTail[j]
			p.add(accessOp{kind: opUpdateRule, what: "update rule " + describeSpec(w), ruleID: r.RuleID, rule: w})
		}
	}
	for _, action := range []string{pangolinapi.RulePass, pangolinapi.RuleAccept} {
		for _, w := range rp.wantTail {
			if w.Action == action {
				p.add(accessOp{kind: opCreateRule, what: "create rule " + describeSpec(w), rule: w})
			}
		}
	}
}
