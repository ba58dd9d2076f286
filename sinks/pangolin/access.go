package pangolin

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Access control in direct mode (docs/access-control.md). A host with an AccessPolicy
// (engine.Resource.Policy) is brought to it whole; one that had one (governed, by the
// record) and has none any more is brought back to what the annotations alone ask; any
// other host's roles, users, secrets, whitelist and rules are left as Pangolin holds them.
//
// Fail closed:
//   - every name (roles, users, identity provider) is resolved before the first write:
//     one that Pangolin does not know means no write at all;
//   - a new host's resource is created, and its access applied, before its first target:
//     Pangolin routes a host only once it has a target, so it is unreachable until its
//     access is complete, and stays so when part of it is refused;
//   - the writes that can open a published host (sso off, blockAccess off, a login
//     method removed) come after every other, so a refusal or an outage part-way
//     stops before them.

// orgTTL is how long a list of the org's roles or users answers for a name it lacks: a
// name missing from an older list is asked again, once.
const orgTTL = 30 * time.Second

// orgLists are the org's roles and users, read at a refresh when a resource is governed,
// or when a policy first needs them.
type orgLists struct {
	roles   []pangolinapi.Role
	rolesAt time.Time
	users   []pangolinapi.User
	usersAt time.Time
}

// accessWant is what a host's access must become in Pangolin, names resolved.
type accessWant struct {
	// policy is nil to undo what a detached policy wrote.
	policy    *route.AccessPolicy
	roles     []pangolinapi.PolicyRole // by id
	users     []pangolinapi.PolicyUser // by id
	idp       int
	whitelist []string // sorted
	rules     []route.AccessRule
}

// governed reports whether the record says a policy governs the resource. s.mu is held.
func (s *Sink) governedLocked(niceID string, resourceID int) bool {
	r, ok := s.records[niceID]
	return ok && r.Governed && r.ResourceID == resourceID
}

func (s *Sink) governed(niceID string, resourceID int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.governedLocked(niceID, resourceID)
}

// roles returns the org's roles; refresh asks again when the list is older than orgTTL.
func (s *Sink) roles(ctx context.Context, refresh bool) ([]pangolinapi.Role, error) {
	s.mu.Lock()
	have, at := s.org.roles, s.org.rolesAt
	s.mu.Unlock()
	if have != nil && !(refresh && s.now().Sub(at) >= orgTTL) {
		return have, nil
	}
	got, err, _ := s.orgReads.Do("roles", func() (any, error) { return s.api.ListRoles(ctx) })
	if err != nil {
		return nil, err
	}
	roles := got.([]pangolinapi.Role)
	s.mu.Lock()
	s.org.roles, s.org.rolesAt = roles, s.now()
	s.mu.Unlock()
	return roles, nil
}

// users returns the org's users, as roles does its roles.
func (s *Sink) users(ctx context.Context, refresh bool) ([]pangolinapi.User, error) {
	s.mu.Lock()
	have, at := s.org.users, s.org.usersAt
	s.mu.Unlock()
	if have != nil && !(refresh && s.now().Sub(at) >= orgTTL) {
		return have, nil
	}
	got, err, _ := s.orgReads.Do("users", func() (any, error) { return s.api.ListUsers(ctx) })
	if err != nil {
		return nil, err
	}
	users := got.([]pangolinapi.User)
	if users == nil {
		users = []pangolinapi.User{}
	}
	s.mu.Lock()
	s.org.users, s.org.usersAt = users, s.now()
	s.mu.Unlock()
	return users, nil
}

// forgetOrg drops the org's lists: the next need reads them again.
func (s *Sink) forgetOrg() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.org = orgLists{}
}

// findRole is the role named name, Admin included.
func findRole(roles []pangolinapi.Role, name string) (pangolinapi.Role, bool) {
	i := slices.IndexFunc(roles, func(r pangolinapi.Role) bool { return r.Name == name })
	if i < 0 {
		return pangolinapi.Role{}, false
	}
	return roles[i], true
}

// findUsers are the users whose email (any case) or username is ref.
func findUsers(users []pangolinapi.User, ref string) []pangolinapi.User {
	var out []pangolinapi.User
	for _, u := range users {
		if u.Email != "" && strings.EqualFold(u.Email, ref) || u.Username == ref {
			out = append(out, u)
		}
	}
	return out
}

// published reports whether Pangolin routes e's host: it has an enabled target with a
// method (reference section 7).
func published(e *entry) bool {
	return e != nil && status(e).Phase == engine.PhaseReady
}

// failClosed says what becomes of a host whose policy cannot be applied.
func failClosed(published bool) string {
	if published {
		return "the host keeps the access Pangolin holds for it now"
	}
	return "the host is not published until it can be"
}

// resolveAccess is what d's access must become, names resolved against the org's lists.
// A name Pangolin does not know is an AccessPolicyNotApplied rejection (ok false), and
// nothing is written; err is a failed request.
func (a *applying) resolveAccess(ctx context.Context, d engine.Resource, e *entry) (want accessWant, ok bool, err error) {
	s := a.sink
	p := d.Policy
	if p == nil {
		return accessWant{}, true, nil // undo: nothing to resolve
	}
	want.policy = p
	var problems []string
	if len(p.Roles) > 0 {
		roles, err := s.roles(ctx, false)
		if err != nil {
			return want, false, a.failed(ctx, d, "list the organization's roles", err)
		}
		for _, name := range p.Roles {
			r, found := findRole(roles, name)
			if !found {
				if roles, err = s.roles(ctx, true); err != nil {
					return want, false, a.failed(ctx, d, "list the organization's roles", err)
				}
				r, found = findRole(roles, name)
			}
			switch {
			case !found:
				problems = append(problems, fmt.Sprintf("role %q does not exist in the Pangolin organization %s (PIC never creates roles)", name, s.api.Org()))
			case r.IsAdmin:
				// The Admin role reaches every resource and is never sent.
			case !slices.ContainsFunc(want.roles, func(have pangolinapi.PolicyRole) bool { return have.RoleID == r.RoleID }):
				want.roles = append(want.roles, pangolinapi.PolicyRole{RoleID: r.RoleID, Name: r.Name})
			}
		}
	}
	if len(p.Users) > 0 {
		users, err := s.users(ctx, false)
		if err != nil {
			return want, false, a.failed(ctx, d, "list the organization's users", err)
		}
		for _, ref := range p.Users {
			found := findUsers(users, ref)
			if len(found) == 0 {
				if users, err = s.users(ctx, true); err != nil {
					return want, false, a.failed(ctx, d, "list the organization's users", err)
				}
				found = findUsers(users, ref)
			}
			switch {
			case len(found) == 0:
				problems = append(problems, fmt.Sprintf("user %q is neither the email nor the username of a user of the Pangolin organization %s (PIC never creates users)", ref, s.api.Org()))
			case len(found) > 1:
				problems = append(problems, fmt.Sprintf("user %q names %d users of the Pangolin organization %s: give the email", ref, len(found), s.api.Org()))
			case !slices.ContainsFunc(want.users, func(have pangolinapi.PolicyUser) bool { return have.UserID == found[0].UserID }):
				u := found[0]
				want.users = append(want.users, pangolinapi.PolicyUser{UserID: u.UserID, Email: u.Email, Username: u.Username})
			}
		}
	}
	switch {
	case p.AutoLoginIdP.Name != "":
		problems = append(problems, fmt.Sprintf("autoLoginIdp %q is a name: Pangolin lists identity providers to root keys only, so PIC cannot resolve it; give the identity provider's numeric id", p.AutoLoginIdP.Name))
	case p.AutoLoginIdP.ID > 0:
		want.idp = int(p.AutoLoginIdP.ID)
	}
	if len(problems) > 0 {
		a.res.Rejections = append(a.res.Rejections, route.Rejection{
			Origin: a.owner, Host: d.Host, Reason: pic.ReasonAccessPolicyNotApplied, Retry: true,
			Message: fmt.Sprintf("AccessPolicy %s cannot be applied to host %s: %s; %s", p.Name, hostOf(d), strings.Join(problems, "; "), failClosed(published(e))),
		})
		return want, false, nil
	}
	slices.SortFunc(want.roles, func(x, y pangolinapi.PolicyRole) int { return cmp.Compare(x.RoleID, y.RoleID) })
	slices.SortFunc(want.users, func(x, y pangolinapi.PolicyUser) int { return strings.Compare(x.UserID, y.UserID) })
	want.whitelist = slices.Sorted(slices.Values(p.EmailWhitelist))
	want.whitelist = slices.Compact(want.whitelist)
	want.rules = p.Rules
	return want, true, nil
}

// accessRun is one syncAccess: what it wrote, for the record and the log.
type accessRun struct {
	a      *applying
	d      engine.Resource
	w      wanted
	e      *entry
	wrote  int
	secret struct{ password, pincode, headerAuth *string } // digests written
}

// syncAccess brings e's access to want, writing only the differences with what the
// sink knows Pangolin holds (e.access, read first when unknown) and the record. ok is
// false when Pangolin refused part of it (a rejection was recorded); err is a failed
// request, after which the state is read again.
func (a *applying) syncAccess(ctx context.Context, d engine.Resource, w wanted, e *entry, want accessWant) (ok bool, err error) {
	s := a.sink
	if e.access == nil {
		p, err := s.api.GetResourcePolicy(ctx, e.res.ResourceID)
		if err != nil {
			return false, a.lost(ctx, d, w, "read the resource's access", err)
		}
		e.access = &p
		s.record(w.niceID, e)
	}
	if e.access.Shared {
		// Pangolin applies a shared policy that the inline one PIC writes does not show.
		a.res.Rejections = append(a.res.Rejections, route.Rejection{
			Origin: a.owner, Host: d.Host, Reason: pic.ReasonAccessPolicyNotApplied,
			Message: fmt.Sprintf("host %s: its Pangolin resource %s uses a shared access policy, which PIC does not manage: the AccessPolicy is not applied; %s",
				hostOf(d), w.niceID, failClosed(published(e))),
		})
		return false, nil
	}
	run := &accessRun{a: a, d: d, w: w, e: e}
	s.mu.Lock()
	rec, known := s.records[w.niceID]
	s.mu.Unlock()
	if !known || rec.ResourceID != e.res.ResourceID {
		rec = AccessRecord{ResourceID: e.res.ResourceID}
	}
	rec = rec.clone()
	if want.policy != nil && !rec.Governed {
		rec.Governed = true
		s.putRecord(w.niceID, rec)
	}
	ok, err = run.writes(ctx, want, &rec)
	if run.wrote > 0 {
		a.accessWrites += run.wrote
		// The ids of the secrets just written, and the state as it now is.
		p, readErr := s.api.GetResourcePolicy(ctx, e.res.ResourceID)
		if readErr != nil {
			e.access = nil // read again next time
			run.remember(&rec, nil)
			if err == nil {
				ok, err = false, a.failed(ctx, d, "read the resource's access after writing it", readErr)
			}
		} else {
			e.access = &p
			run.remember(&rec, &p)
		}
	}
	if err != nil {
		e.access = nil
	}
	if ok && want.policy == nil {
		s.dropRecord(w.niceID) // undone: nothing governs the resource any more
		e.applied = nil
	} else {
		s.putRecord(w.niceID, rec)
		if ok {
			e.applied = want.policy
		}
	}
	s.record(w.niceID, e)
	return ok, err
}

// remember records the secrets written with the ids p shows (0 when unknown).
func (run *accessRun) remember(rec *AccessRecord, p *pangolinapi.ResourcePolicy) {
	id := func(get func(*pangolinapi.ResourcePolicy) int) int {
		if p == nil {
			return 0
		}
		return get(p)
	}
	if run.secret.password != nil {
		rec.Password = &SecretRecord{Digest: *run.secret.password, ID: id(func(p *pangolinapi.ResourcePolicy) int { return p.PasswordID })}
	}
	if run.secret.pincode != nil {
		rec.Pincode = &SecretRecord{Digest: *run.secret.pincode, ID: id(func(p *pangolinapi.ResourcePolicy) int { return p.PincodeID })}
	}
	if run.secret.headerAuth != nil {
		rec.HeaderAuth = &SecretRecord{Digest: *run.secret.headerAuth, ID: id(func(p *pangolinapi.ResourcePolicy) int {
			if p.HeaderAuth == nil {
				return 0
			}
			return p.HeaderAuth.ID
		})}
	}
}

// fail sorts a failed access write: transient, an error; refused, a rejection.
func (run *accessRun) fail(ctx context.Context, what string, err error) (bool, error) {
	a, d := run.a, run.d
	if ctx.Err() != nil || pangolinapi.IsTransient(err) {
		return false, fmt.Errorf("host %s: cannot %s: %w", hostOf(d), what, err)
	}
	if pangolinapi.IsNotFound(err) {
		// The resource, a role or a rule went since the last read: read again and retry.
		a.sink.forgetOrg()
		return false, fmt.Errorf("host %s: cannot %s, Pangolin no longer has what it names: %s", hostOf(d), what, refusal(err))
	}
	name := "what a detached AccessPolicy wrote"
	if d.Policy != nil {
		name = "AccessPolicy " + d.Policy.Name.String()
	}
	a.res.Rejections = append(a.res.Rejections, route.Rejection{
		Origin: a.owner, Host: d.Host, Reason: pic.ReasonAccessPolicyNotApplied,
		Message: fmt.Sprintf("host %s: Pangolin refused to %s, so %s is not applied whole: %s; %s; nothing that would open the host is written",
			hostOf(d), what, name, refusal(err), failClosed(published(run.e))),
		// A value Pangolin answers with a 500 is asked again on a slow backoff (the
		// client's); a 4xx, on the next change or resync.
		Retry: pangolinapi.IsRefused(err),
	})
	return false, nil
}

// update sends u and keeps the answer.
func (run *accessRun) update(ctx context.Context, what string, u pangolinapi.ResourceUpdate) (bool, error) {
	e := run.e
	updated, err := run.a.sink.api.UpdateResource(ctx, e.res.ResourceID, u)
	countWrite(pangolinapi.OpUpdateResource, err)
	if err != nil {
		return run.fail(ctx, what, err)
	}
	run.wrote++
	e.res = keepSSO(updated, e.res, nil)
	return true, nil
}

// call counts one access write and sorts its failure.
func (run *accessRun) call(ctx context.Context, op, what string, err error) (bool, error) {
	countWrite(op, err)
	if err != nil {
		return run.fail(ctx, what, err)
	}
	run.wrote++
	return true, nil
}

// writes brings Pangolin to want, in the order that never opens the host before the
// end: secrets and login methods the policy adds, whitelist, roles, users, identity
// provider, rules, then what the policy removes. It stops at the first failure.
func (run *accessRun) writes(ctx context.Context, want accessWant, rec *AccessRecord) (bool, error) {
	s, e := run.a.sink, run.e
	id := e.res.ResourceID
	cur := *e.access
	var p route.AccessPolicy
	if want.policy != nil {
		p = *want.policy
	}
	logger := log.FromContext(ctx).WithName("pangolin").WithValues("host", hostOf(run.d), "niceId", run.w.niceID)
	removed := func(what string, items []string) {
		if len(items) > 0 {
			logger.Info("removing "+what+" that the AccessPolicy does not grant (added outside PIC, or by a policy since detached)", what, items)
		}
	}

	// Secrets: written when the value changed (digest) or someone changed it in Pangolin
	// (id); every write logs the secret's visitors out.
	if p.Password != nil {
		digest := p.Password.Digest(s.digestKey)
		if rec.Password == nil || rec.Password.Digest != digest || rec.Password.ID != cur.PasswordID || cur.PasswordID == 0 {
			err := s.api.SetResourcePassword(ctx, id, pangolinapi.Secret(p.Password.Reveal()))
			if ok, err := run.call(ctx, pangolinapi.OpSetResourcePassword, "set the password "+p.Password.String(), err); !ok {
				return false, err
			}
			run.secret.password = &digest
		}
	}
	if p.PinCode != nil {
		digest := p.PinCode.Digest(s.digestKey)
		if rec.Pincode == nil || rec.Pincode.Digest != digest || rec.Pincode.ID != cur.PincodeID || cur.PincodeID == 0 {
			err := s.api.SetResourcePincode(ctx, id, pangolinapi.Secret(p.PinCode.Reveal()))
			if ok, err := run.call(ctx, pangolinapi.OpSetResourcePincode, "set the PIN code "+p.PinCode.String(), err); !ok {
				return false, err
			}
			run.secret.pincode = &digest
		}
	}
	if h := p.HeaderAuth; h != nil {
		digest := h.Digest(s.digestKey)
		curID := 0
		if cur.HeaderAuth != nil {
			curID = cur.HeaderAuth.ID
		}
		if rec.HeaderAuth == nil || rec.HeaderAuth.Digest != digest || rec.HeaderAuth.ID != curID || curID == 0 {
			err := s.api.SetResourceHeaderAuth(ctx, id, pangolinapi.HeaderAuth{
				User: pangolinapi.Secret(h.User.Reveal()), Password: pangolinapi.Secret(h.Password.Reveal()), ExtendedCompatibility: h.ExtendedCompatibility,
			})
			if ok, err := run.call(ctx, pangolinapi.OpSetResourceHeaderAuth, "set the header authentication ("+h.String()+")", err); !ok {
				return false, err
			}
			run.secret.headerAuth = &digest
		}
	}

	// The email whitelist: enabled before it can be set.
	if len(want.whitelist) > 0 {
		if !cur.EmailWhitelistEnabled {
			if ok, err := run.update(ctx, "enable the email whitelist", pangolinapi.ResourceUpdate{EmailWhitelistEnabled: ptrTo(true)}); !ok {
				return false, err
			}
		}
		if !sameStrings(cur.EmailWhitelist, want.whitelist) || !cur.EmailWhitelistEnabled {
			removed("emails", without(cur.EmailWhitelist, want.whitelist))
			err := s.api.SetResourceWhitelist(ctx, id, want.whitelist)
			if ok, err := run.call(ctx, pangolinapi.OpSetResourceWhitelist, "set the email whitelist", err); !ok {
				return false, err
			}
		}
	}

	// Roles and users: each list replaced in one request.
	curRoles := make([]string, 0, len(cur.Roles))
	for _, r := range cur.Roles {
		curRoles = append(curRoles, strconv.Itoa(r.RoleID))
	}
	wantRoles := make([]string, 0, len(want.roles))
	ids := make([]int, 0, len(want.roles))
	for _, r := range want.roles {
		wantRoles, ids = append(wantRoles, strconv.Itoa(r.RoleID)), append(ids, r.RoleID)
	}
	if !sameStrings(curRoles, wantRoles) {
		var gone []string
		for _, r := range cur.Roles {
			if !slices.Contains(ids, r.RoleID) {
				gone = append(gone, r.Name)
			}
		}
		removed("roles", gone)
		err := s.api.SetResourceRoles(ctx, id, ids)
		if ok, err := run.call(ctx, pangolinapi.OpSetResourceRoles, "set the roles", err); !ok {
			return false, err
		}
	}
	curUsers := make([]string, 0, len(cur.Users))
	for _, u := range cur.Users {
		curUsers = append(curUsers, u.UserID)
	}
	wantUsers := make([]string, 0, len(want.users))
	for _, u := range want.users {
		wantUsers = append(wantUsers, u.UserID)
	}
	if !sameStrings(curUsers, wantUsers) {
		var gone []string
		for _, u := range cur.Users {
			if !slices.Contains(wantUsers, u.UserID) {
				gone = append(gone, cmp.Or(u.Email, u.Username, u.UserID))
			}
		}
		removed("users", gone)
		err := s.api.SetResourceUsers(ctx, id, wantUsers)
		if ok, err := run.call(ctx, pangolinapi.OpSetResourceUsers, "set the users", err); !ok {
			return false, err
		}
	}
	if cur.IdpID != want.idp {
		if ok, err := run.update(ctx, fmt.Sprintf("set the auto-login identity provider to id %d (autoLoginIdp)", want.idp), pangolinapi.ResourceUpdate{SkipToIdpID: ptrTo(want.idp)}); !ok {
			return false, err
		}
	}

	// Rules.
	if len(want.rules) == 0 && cur.ApplyRules {
		if ok, err := run.update(ctx, "turn rules off", pangolinapi.ResourceUpdate{ApplyRules: ptrTo(false)}); !ok {
			return false, err
		}
	}
	if ok, err := run.rules(ctx, cur.Rules, want.rules, removed); !ok {
		return false, err
	}
	if len(want.rules) > 0 && !cur.ApplyRules {
		if ok, err := run.update(ctx, "turn rules on", pangolinapi.ResourceUpdate{ApplyRules: ptrTo(true)}); !ok {
			return false, err
		}
	}

	// What the policy removes: a whitelist emptied before it is disabled (disabling keeps
	// the list, and enabling it again would bring it back), then the secrets.
	if len(want.whitelist) == 0 && cur.EmailWhitelistEnabled {
		if len(cur.EmailWhitelist) > 0 {
			removed("emails", cur.EmailWhitelist)
			err := s.api.SetResourceWhitelist(ctx, id, nil)
			if ok, err := run.call(ctx, pangolinapi.OpSetResourceWhitelist, "empty the email whitelist", err); !ok {
				return false, err
			}
		}
		if ok, err := run.update(ctx, "disable the email whitelist", pangolinapi.ResourceUpdate{EmailWhitelistEnabled: ptrTo(false)}); !ok {
			return false, err
		}
	}
	if p.Password == nil && cur.PasswordID != 0 {
		logger.Info("removing the password, which the AccessPolicy does not set")
		err := s.api.RemoveResourcePassword(ctx, id)
		if ok, err := run.call(ctx, pangolinapi.OpSetResourcePassword, "remove the password", err); !ok {
			return false, err
		}
		rec.Password = nil
	}
	if p.PinCode == nil && cur.PincodeID != 0 {
		logger.Info("removing the PIN code, which the AccessPolicy does not set")
		err := s.api.RemoveResourcePincode(ctx, id)
		if ok, err := run.call(ctx, pangolinapi.OpSetResourcePincode, "remove the PIN code", err); !ok {
			return false, err
		}
		rec.Pincode = nil
	}
	if p.HeaderAuth == nil && cur.HeaderAuth != nil {
		logger.Info("removing the header authentication, which the AccessPolicy does not set")
		err := s.api.RemoveResourceHeaderAuth(ctx, id)
		if ok, err := run.call(ctx, pangolinapi.OpSetResourceHeaderAuth, "remove the header authentication", err); !ok {
			return false, err
		}
		rec.HeaderAuth = nil
	}
	return true, nil
}

// rules brings the resource's rules to want: priority = position. A rule that matches
// stays; the others are rewritten in place or created, and those left over deleted,
// the ACCEPT ones (holes past every login) first.
func (run *accessRun) rules(ctx context.Context, have []pangolinapi.Rule, want []route.AccessRule, removed func(string, []string)) (bool, error) {
	s, id := run.a.sink, run.e.res.ResourceID
	have = slices.Clone(have)
	slices.SortStableFunc(have, func(a, b pangolinapi.Rule) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.RuleID, b.RuleID))
	})
	spec := func(r route.AccessRule) pangolinapi.RuleSpec {
		return pangolinapi.RuleSpec{Action: string(r.Action), Match: string(r.Match), Value: r.Value, Priority: r.Priority, Enabled: true}
	}
	same := func(h pangolinapi.Rule, r route.AccessRule) bool {
		return h.Enabled && h.Action == string(r.Action) && h.Match == string(r.Match) && h.Value == r.Value && h.Priority == r.Priority
	}
	used := make([]bool, len(have))
	var todo []route.AccessRule
	for _, r := range want {
		if i := slices.IndexFunc(have, func(h pangolinapi.Rule) bool { return same(h, r) }); i >= 0 && !used[i] {
			used[i] = true
			continue
		}
		todo = append(todo, r)
	}
	var leftover []int
	for i := range have {
		if !used[i] {
			leftover = append(leftover, i)
		}
	}
	// ACCEPT rules first: rewriting or deleting them closes holes past every login.
	accept := func(i int) bool { return have[i].Action == pangolinapi.RuleAccept }
	slices.SortStableFunc(leftover, func(x, y int) int {
		switch {
		case accept(x) == accept(y):
			return 0
		case accept(x):
			return -1
		}
		return 1
	})
	reuse := leftover[:min(len(todo), len(leftover))]
	drop := leftover[len(reuse):]
	describe := func(h pangolinapi.Rule) string {
		return fmt.Sprintf("%d %s %s %s", h.Priority, h.Action, h.Match, h.Value)
	}
	var gone []string
	for _, i := range drop {
		gone = append(gone, describe(have[i]))
	}
	removed("rules", gone)
	del := func(i int) (bool, error) {
		err := s.api.DeleteResourceRule(ctx, id, have[i].RuleID)
		if pangolinapi.IsNotFound(err) {
			return true, nil // gone already
		}
		return run.call(ctx, pangolinapi.OpDeleteResourceRule, "delete rule "+describe(have[i]), err)
	}
	for _, i := range drop {
		if accept(i) {
			if ok, err := del(i); !ok {
				return false, err
			}
		}
	}
	for k, r := range todo {
		if k < len(reuse) {
			_, err := s.api.UpdateResourceRule(ctx, id, have[reuse[k]].RuleID, spec(r))
			if ok, err := run.call(ctx, pangolinapi.OpUpdateResourceRule, "update rule "+r.String(), err); !ok {
				return false, err
			}
			continue
		}
		_, err := s.api.CreateResourceRule(ctx, id, spec(r))
		if ok, err := run.call(ctx, pangolinapi.OpCreateResourceRule, "create rule "+r.String(), err); !ok {
			return false, err
		}
	}
	for _, i := range drop {
		if !accept(i) {
			if ok, err := del(i); !ok {
				return false, err
			}
		}
	}
	return true, nil
}

func sameStrings(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// without is what a holds and b does not.
func without(a, b []string) []string {
	var out []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}

// putRecord stores a resource's access record, to be saved. dropRecord removes it.
func (s *Sink) putRecord(niceID string, r AccessRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if have, ok := s.records[niceID]; ok && reflect.DeepEqual(have, r) {
		return // unchanged: nothing to save
	}
	s.records[niceID] = r.clone()
	s.recordsDirty = true
}

func (s *Sink) dropRecord(niceID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[niceID]; ok {
		delete(s.records, niceID)
		s.recordsDirty = true
	}
}

// saveRecords saves the records if an Apply changed them. A failed save keeps them
// dirty: the next Apply saves them again, and meanwhile the sink's memory holds them.
func (s *Sink) saveRecords(ctx context.Context) error {
	s.saving.Lock()
	defer s.saving.Unlock()
	s.mu.Lock()
	if !s.recordsDirty {
		s.mu.Unlock()
		return nil
	}
	snapshot := cloneRecords(s.records)
	s.recordsDirty = false
	s.mu.Unlock()
	if err := s.store.Save(ctx, snapshot); err != nil {
		s.mu.Lock()
		s.recordsDirty = true
		s.mu.Unlock()
		return fmt.Errorf("save the record of the secrets written to Pangolin: %w", err)
	}
	return nil
}

// loadRecords loads the records once, before the first refresh reads Pangolin.
func (s *Sink) loadRecords(ctx context.Context) error {
	s.mu.Lock()
	loaded := s.recordsLoaded
	s.mu.Unlock()
	if loaded {
		return nil
	}
	records, err := s.store.Load(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.records { // written before the load finished: this process's win
		records[k] = v
	}
	s.records, s.recordsLoaded = records, true
	return nil
}

func clonePolicy(p *pangolinapi.ResourcePolicy) *pangolinapi.ResourcePolicy {
	if p == nil {
		return nil
	}
	c := *p
	if p.HeaderAuth != nil {
		h := *p.HeaderAuth
		c.HeaderAuth = &h
	}
	c.Roles, c.Users = slices.Clone(p.Roles), slices.Clone(p.Users)
	c.EmailWhitelist, c.Rules = slices.Clone(p.EmailWhitelist), slices.Clone(p.Rules)
	return &c
}
