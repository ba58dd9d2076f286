package pangolin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Access control in direct mode (docs/access-control.md). A host with an AccessPolicy
// (engine.Resource.Policy) is brought to it whole; one that had one (governed, by the
// access record) and has none any more is brought back to what the annotations alone
// ask; any other host's roles, users, secrets, whitelist and rules are left as Pangolin
// holds them.
//
// Fail closed:
//   - every name (roles, users, identity provider) is resolved before the first write:
//     one that Pangolin does not know means no write at all;
//   - a new host's resource is created, and its access applied, before its first target:
//     Pangolin routes a host only once it has a target, so it is unreachable until its
//     access is complete, and stays so when part of it is refused;
//   - a published host's writes are planned (planAccess) so that a refusal or an outage
//     after any of them lets no one in whom neither the old nor the new access admits.

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

// roles returns the org's roles; refresh asks again when the list is older than orgTTL.
func (s *Sink) roles(ctx context.Context, refresh bool) ([]pangolinapi.Role, error) {
	return s.org.roles.get(ctx, refresh, s.now)
}

// users returns the org's users, as roles does its roles.
func (s *Sink) users(ctx context.Context, refresh bool) ([]pangolinapi.User, error) {
	return s.org.users.get(ctx, refresh, s.now)
}

// forgetOrg drops the org's lists: the next need reads them again.
func (s *Sink) forgetOrg() { s.org.forget() }

// findRole is the role named name, Admin included.
func findRole(roles []pangolinapi.Role, name string) (pangolinapi.Role, bool) {
	i := slices.IndexFunc(roles, func(r pangolinapi.Role) bool { return r.Name == name })
	if i < 0 {
		return pangolinapi.Role{}, false
	}
	return roles[i], true
}

// userMatch is what a policy's user entry finds among the org's accounts.
type userMatch int

const (
	userFound     userMatch = iota // exactly one account
	userMissing                    // none
	userAmbiguous                  // several accounts
	userLookalike                  // an email that is the username of an account it does not name
)

// findUser is the one account a policy's user entry names. An entry with "@" is an email
// and matches emails only, in any case (Pangolin stores emails lower-cased); an entry
// without is a username and matches usernames only, exactly, as Pangolin's own lookup by
// username does. Whoever creates an account chooses its username (an identity provider's
// claim), so a username can be made to look like the email of someone who has not joined
// yet: an email that is the username of any account other than the one it names is
// refused (userLookalike), never granted, and so is an entry two accounts answer to.
func findUser(users []pangolinapi.User, ref string) (pangolinapi.User, userMatch) {
	email := strings.Contains(ref, "@")
	var named []pangolinapi.User
	lookalike := false
	for _, u := range users {
		switch {
		case email && u.Email != "" && strings.EqualFold(u.Email, ref):
			named = append(named, u)
		case email && strings.EqualFold(u.Username, ref):
			lookalike = true
		case !email && u.Username == ref:
			named = append(named, u)
		}
	}
	switch {
	case lookalike:
		return pangolinapi.User{}, userLookalike
	case len(named) == 0:
		return pangolinapi.User{}, userMissing
	case len(named) > 1:
		return pangolinapi.User{}, userAmbiguous
	}
	return named[0], userFound
}

// userProblem says why a policy's user entry ref, which found match, is not granted.
func userProblem(ref string, match userMatch, org string) string {
	switch {
	case match == userLookalike:
		return fmt.Sprintf("user %q is the username of an account of the Pangolin organization %s that does not have this email: an entry with \"@\" names an email, and a username that looks like one is refused, never granted", ref, org)
	case match == userAmbiguous:
		return fmt.Sprintf("user %q names several accounts of the Pangolin organization %s: none is granted; name the account by an email or a username no other account has", ref, org)
	case strings.Contains(ref, "@"):
		return fmt.Sprintf("user %q is not the email of a user of the Pangolin organization %s (PIC never creates users)", ref, org)
	default:
		return fmt.Sprintf("user %q is not the username of a user of the Pangolin organization %s: an entry without \"@\" matches usernames only, exactly (PIC never creates users)", ref, org)
	}
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
			u, match := findUser(users, ref)
			if match != userFound {
				// The org may have changed since its list was read: the user joined, or
				// the account in the way went.
				if users, err = s.users(ctx, true); err != nil {
					return want, false, a.failed(ctx, d, "list the organization's users", err)
				}
				u, match = findUser(users, ref)
			}
			switch {
			case match != userFound:
				problems = append(problems, userProblem(ref, match, s.api.Org()))
			case !slices.ContainsFunc(want.users, func(have pangolinapi.PolicyUser) bool { return have.UserID == u.UserID }):
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
			Message: fmt.Sprintf("AccessPolicy %s cannot be applied to host %s: %s; %s", p.Name, d.ShownHost(), strings.Join(problems, "; "), failClosed(published(e))),
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

// accessRun is one syncAccess: what it wrote, for the access record and the log.
type accessRun struct {
	a       *applying
	d       engine.Resource
	w       wanted
	e       *entry
	want    accessWant
	digests secretDigests // of the secrets want sets
	wrote   int
	secret  struct{ password, pincode, headerAuth *string } // digests written
}

// syncAccess brings e's access to want, writing only the differences with what the sink
// knows Pangolin holds (e.access, read first when unknown) and the access record. ok is
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
		s.put(w.niceID, e)
	}
	if e.access.Shared {
		// Pangolin applies a shared policy that the inline one PIC writes does not show.
		a.res.Rejections = append(a.res.Rejections, route.Rejection{
			Origin: a.owner, Host: d.Host, Reason: pic.ReasonAccessPolicyNotApplied,
			Message: fmt.Sprintf("host %s: its Pangolin resource %s uses a shared access policy, which PIC does not manage: the AccessPolicy is not applied; %s",
				d.ShownHost(), w.niceID, failClosed(published(e))),
		})
		return false, nil
	}
	run := &accessRun{a: a, d: d, w: w, e: e, want: want, digests: s.secretDigests(want.policy)}
	rec, known := s.accessRecords.get(w.niceID)
	if !known || rec.ResourceID != e.res.ResourceID {
		rec = AccessRecord{ResourceID: e.res.ResourceID}
	}
	rec = rec.clone()
	if want.policy != nil && !rec.Governed {
		rec.Governed = true
		s.accessRecords.put(w.niceID, rec)
	}
	plan := planAccess(accessPlanInput{
		sso: e.res.SSO, blockAccess: e.res.BlockAccess, have: *e.access,
		want: want, wantSSO: d.SSO, wantBlockAccess: d.BlockAccess,
		rec: rec, digests: run.digests,
	})
	ok, err = run.execute(ctx, plan, &rec)
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
		s.accessRecords.drop(w.niceID) // undone: nothing governs the resource any more
		e.applied = nil
	} else {
		s.accessRecords.put(w.niceID, rec)
		if ok {
			e.applied = want.policy
		}
	}
	s.put(w.niceID, e)
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
		return false, fmt.Errorf("host %s: cannot %s: %w", d.ShownHost(), what, err)
	}
	if pangolinapi.IsNotFound(err) {
		// The resource, a role or a rule went since the last read: read again and retry.
		a.sink.forgetOrg()
		return false, fmt.Errorf("host %s: cannot %s, Pangolin no longer has what it names: %s", d.ShownHost(), what, refusal(err))
	}
	name := "what a detached AccessPolicy wrote"
	if d.Policy != nil {
		name = "AccessPolicy " + d.Policy.Name.String()
	}
	a.res.Rejections = append(a.res.Rejections, route.Rejection{
		Origin: a.owner, Host: d.Host, Reason: pic.ReasonAccessPolicyNotApplied,
		Message: fmt.Sprintf("host %s: Pangolin refused to %s, so %s is not applied whole: %s; %s; nothing that would open the host is written",
			d.ShownHost(), what, name, refusal(err), failClosed(published(run.e))),
		// A value Pangolin answers with a 500 is asked again on a slow backoff (the
		// client's); a 4xx, on the next change or resync.
		Retry: pangolinapi.IsRefused(err),
	})
	return false, nil
}

// secretDigests are the digests of the secrets p sets.
func (s *Sink) secretDigests(p *route.AccessPolicy) secretDigests {
	var out secretDigests
	if p == nil {
		return out
	}
	if p.Password != nil {
		out.password = p.Password.Digest(s.digestKey)
	}
	if p.PinCode != nil {
		out.pincode = p.PinCode.Digest(s.digestKey)
	}
	if p.HeaderAuth != nil {
		out.headerAuth = p.HeaderAuth.Digest(s.digestKey)
	}
	return out
}

// update sends u and keeps the answer.
func (run *accessRun) update(ctx context.Context, what string, u pangolinapi.ResourceUpdate) (bool, error) {
	if err := run.a.sink.updateResource(ctx, run.w.niceID, run.e, u); err != nil {
		return run.fail(ctx, what, err)
	}
	run.wrote++
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

// execute sends the plan's writes in order, and stops at the first that fails: the
// plan's order makes every prefix safe (planAccess).
func (run *accessRun) execute(ctx context.Context, plan []accessOp, rec *AccessRecord) (bool, error) {
	s, e := run.a.sink, run.e
	id := e.res.ResourceID
	var p route.AccessPolicy
	if run.want.policy != nil {
		p = *run.want.policy
	}
	logger := log.FromContext(ctx).WithName("pangolin").WithValues("host", run.d.ShownHost(), "niceId", run.w.niceID)
	for _, op := range plan {
		if len(op.removes) > 0 {
			logger.Info("removing what the AccessPolicy does not grant (added outside PIC, or by a policy since detached)", "kind", op.removing, "removed", op.removes)
		}
		var ok bool
		var err error
		switch op.kind {
		case opUpdateResource:
			ok, err = run.update(ctx, op.what, op.update)
		case opSetRoles:
			ok, err = run.call(ctx, pangolinapi.OpSetResourceRoles, op.what, s.api.SetResourceRoles(ctx, id, op.roles))
		case opSetUsers:
			ok, err = run.call(ctx, pangolinapi.OpSetResourceUsers, op.what, s.api.SetResourceUsers(ctx, id, op.users))
		case opSetWhitelist:
			ok, err = run.call(ctx, pangolinapi.OpSetResourceWhitelist, op.what, s.api.SetResourceWhitelist(ctx, id, op.emails))
		case opSetPassword:
			err = s.api.SetResourcePassword(ctx, id, pangolinapi.Secret(p.Password.Reveal()))
			if ok, err = run.call(ctx, pangolinapi.OpSetResourcePassword, op.what+" "+p.Password.String(), err); ok {
				run.secret.password = &run.digests.password
			}
		case opSetPincode:
			err = s.api.SetResourcePincode(ctx, id, pangolinapi.Secret(p.PinCode.Reveal()))
			if ok, err = run.call(ctx, pangolinapi.OpSetResourcePincode, op.what+" "+p.PinCode.String(), err); ok {
				run.secret.pincode = &run.digests.pincode
			}
		case opSetHeaderAuth:
			h := p.HeaderAuth
			err = s.api.SetResourceHeaderAuth(ctx, id, pangolinapi.HeaderAuth{
				User: pangolinapi.Secret(h.User.Reveal()), Password: pangolinapi.Secret(h.Password.Reveal()), ExtendedCompatibility: h.ExtendedCompatibility,
			})
			if ok, err = run.call(ctx, pangolinapi.OpSetResourceHeaderAuth, op.what+" ("+h.String()+")", err); ok {
				run.secret.headerAuth = &run.digests.headerAuth
			}
		case opRemovePassword:
			if ok, err = run.call(ctx, pangolinapi.OpSetResourcePassword, op.what, s.api.RemoveResourcePassword(ctx, id)); ok {
				rec.Password = nil
			}
		case opRemovePincode:
			if ok, err = run.call(ctx, pangolinapi.OpSetResourcePincode, op.what, s.api.RemoveResourcePincode(ctx, id)); ok {
				rec.Pincode = nil
			}
		case opRemoveHeaderAuth:
			if ok, err = run.call(ctx, pangolinapi.OpSetResourceHeaderAuth, op.what, s.api.RemoveResourceHeaderAuth(ctx, id)); ok {
				rec.HeaderAuth = nil
			}
		case opCreateRule:
			_, err = s.api.CreateResourceRule(ctx, id, op.rule)
			ok, err = run.call(ctx, pangolinapi.OpCreateResourceRule, op.what, err)
		case opUpdateRule:
			_, err = s.api.UpdateResourceRule(ctx, id, op.ruleID, op.rule)
			ok, err = run.call(ctx, pangolinapi.OpUpdateResourceRule, op.what, err)
		case opDeleteRule:
			err = s.api.DeleteResourceRule(ctx, id, op.ruleID)
			if pangolinapi.IsNotFound(err) {
				ok, err = true, nil // gone already
				break
			}
			ok, err = run.call(ctx, pangolinapi.OpDeleteResourceRule, op.what, err)
		default:
			panic("pangolin: an access write of unknown kind " + string(op.kind))
		}
		if !ok {
			return false, err
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

// saveAccessRecords saves the access records if an Apply changed them. A failed save
// keeps them dirty: the next Apply, whoever's, saves them again, and meanwhile the
// sink's memory holds them. It fails the Apply of owner (plan) only when a resource of
// owner's is among those whose record is not saved: a part of the record that cannot be
// written delays the resources it holds, not every object's.
func (s *Sink) saveAccessRecords(ctx context.Context, owner route.Origin, plan engine.Plan) error {
	err := s.accessRecords.save(ctx)
	if err == nil {
		return nil
	}
	var partial *AccessRecordsNotSaved
	if !errors.As(err, &partial) {
		return fmt.Errorf("save the record of the access written to Pangolin: %w", err)
	}
	for _, id := range slices.Sorted(maps.Keys(partial.ByNiceID)) {
		if s.holds(owner, plan, id) {
			// Out of reach, like Pangolin itself: retried with backoff, nothing removed,
			// and the object's owner told (SinkUnavailable).
			return plugin.Unreachable(fmt.Errorf("save the access record of the Pangolin resource %s: %w", id, partial.ByNiceID[id]))
		}
	}
	// Another object's: its own reconcile reports it; this one is not delayed.
	log.FromContext(ctx).V(1).Info("access record not saved for other objects' resources; tried again at the next reconcile", "error", err.Error())
	return nil
}

// holds reports whether the resource niceID is owner's: one it has, or one plan deletes.
func (s *Sink) holds(owner route.Origin, plan engine.Plan, niceID string) bool {
	if e, ok := s.lookup(niceID); ok && e.mark.sameObject(owner) {
		return true
	}
	return slices.ContainsFunc(plan.Delete, func(e engine.Existing) bool {
		return niceIDOf(s.ownerID, e) == niceID
	})
}

// niceIDOf is the niceId of the resource an existing one of the engine's is.
func niceIDOf(ownerID string, e engine.Existing) string {
	return niceID(ownerID, markOf(e.Origin, e.Host, ""))
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
