package pangolin

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// accessOrgVisitors are requests to the access tests' org (accessOrg): from where the
// rules look, by whom the login methods admit.
func accessOrgVisitors() []pangolinsim.Visitor {
	networks := []pangolinsim.Visitor{
		{IP: "203.0.113.66", Path: "/", Country: "FR"},
		{IP: "203.0.113.66", Path: "/health", Country: "FR"},
		{IP: "198.51.100.7", Path: "/", Country: "RU"},
		{IP: "198.51.100.7", Path: "/health", Country: "DE"},
	}
	who := []pangolinsim.Visitor{
		{},
		{UserID: "devuser00000001", RoleIDs: []int{3}},
		{UserID: "opsuser00000001", RoleIDs: []int{4}},
		{UserID: "alice0000000001"},
		{UserID: "bob000000000001", RoleIDs: []int{2}},
		{UserID: pangolinsim.DefaultOwner.ID, RoleIDs: pangolinsim.DefaultOwner.RoleIDs},
		{Email: "dave@partner.example"},
		{Email: "eve@corp.example"},
		{Password: passwordValue},
		{Pincode: pincodeValue},
		{HeaderUser: headerUser, HeaderPassword: headerPass},
	}
	var out []pangolinsim.Visitor
	for _, n := range networks {
		for _, w := range who {
			v := w
			v.IP, v.Path, v.Country = n.IP, n.Path, n.Country
			out = append(out, v)
		}
	}
	return out
}

// failingWrite answers the n-th write it sees with fail, and counts them all.
type failingWrite struct {
	mu     sync.Mutex
	n      int
	writes int
	fail   simtest.Fault
}

func (f *failingWrite) fault(rw http.ResponseWriter, r *http.Request) bool {
	if !simtest.IsWrite(r) {
		return false
	}
	f.mu.Lock()
	f.writes++
	hit := f.writes == f.n
	f.mu.Unlock()
	return hit && f.fail(rw, r)
}

func refused(rw http.ResponseWriter, _ *http.Request) bool {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusForbidden)
	_, _ = rw.Write([]byte(`{"data":null,"success":false,"error":true,"message":"Key does not have permission perform this action","status":403}`))
	return true
}

// TestAccessChangeStoppedAtAnyWrite changes a published host's access with the n-th
// write refused or failed, for every n: whatever Pangolin then holds admits no visitor
// whom neither the old nor the new access admits (issue #36, points 2 and 3), and the
// next reconcile completes the change.
// writeFailure is a way a write of a change is stopped.
type writeFailure struct {
	name string
	f    simtest.Fault
}

// writeFailures: Pangolin refusing the write, or not answering.
func writeFailures() []writeFailure {
	return []writeFailure{
		{"refused", refused},
		{"an outage", simtest.Outage(http.StatusServiceUnavailable)},
	}
}

// assertCompleted fails when the access Pangolin holds for resource id, after the
// change stopped at write n was completed by a reconcile, admits a visitor otherwise
// than want.
func assertCompleted(t *testing.T, w *world, id int, want pangolinsim.Access, visitors []pangolinsim.Visitor, n int) {
	t.Helper()
	done, _ := w.fake.Access(id)
	for _, v := range visitors {
		if pangolinsim.Admits(done, v) != pangolinsim.Admits(want, v) {
			assert.Fail(t, "the change is not completed", "after a stop at write %d and a reconcile: %+v", n, v)
			return
		}
	}
}

func TestAccessChangeStoppedAtAnyWrite(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"
	pw := secretOf("web-auth", "password", passwordValue)
	denyIP := route.AccessRule{Action: route.RuleDrop, Match: route.MatchIP, Value: "203.0.113.66"}
	// keptWhitelist leaves a whitelist disabled with an email in it, as a hand edit
	// does: Pangolin keeps the list, and enabling it again brings it back.
	keptWhitelist := func(w *world, id int) {
		_, err := w.api.UpdateResource(w.ctx, id, pangolinapi.ResourceUpdate{EmailWhitelistEnabled: ptrTo(true)})
		require.NoError(w.t, err)
		require.NoError(w.t, w.api.SetResourceWhitelist(w.ctx, id, []string{"eve@corp.example"}))
		_, err = w.api.UpdateResource(w.ctx, id, pangolinapi.ResourceUpdate{EmailWhitelistEnabled: ptrTo(false)})
		require.NoError(w.t, err)
		require.NoError(w.t, w.sink.Refresh(w.ctx))
	}
	cases := []struct {
		name     string
		old, new route.Route
		setup    func(w *world, id int) // after old converged
	}{
		{
			name: "a Deny IP kept while an Allow Path is added in front of it",
			old:  protected(web(shop, host, 8080), false, route.AccessPolicy{Rules: []route.AccessRule{denyIP}}),
			new: protected(web(shop, host, 8080), false, route.AccessPolicy{Rules: []route.AccessRule{
				{Action: route.RuleAccept, Match: route.MatchPath, Value: "/health"}, denyIP,
			}}),
		},
		{
			name: "roles devs changed to ops with a new Deny Country RU",
			old:  protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}}),
			new: protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-ops"}, Rules: []route.AccessRule{
				{Action: route.RuleDrop, Match: route.MatchCountry, Value: "RU"},
			}}),
		},
		{
			name: "SSO with a role changed to a password alone, and the rules reordered",
			old: protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}, Rules: []route.AccessRule{
				denyIP, {Action: route.RuleAccept, Match: route.MatchPath, Value: "/health"},
			}}),
			new: protected(web(shop, host, 8080), false, route.AccessPolicy{Password: &pw, Rules: []route.AccessRule{
				{Action: route.RulePass, Match: route.MatchPath, Value: "/health"}, denyIP,
			}}),
		},
		{
			name:  "a whitelist enabled again over an email kept from before",
			old:   protected(web(shop, host, 8080), false, route.AccessPolicy{Password: &pw}),
			new:   protected(web(shop, host, 8080), false, route.AccessPolicy{Password: &pw, EmailWhitelist: []string{"dave@partner.example"}}),
			setup: keptWhitelist,
		},
		{
			name: "a public host given a whitelist and a user",
			old:  protected(web(shop, host, 8080), false, route.AccessPolicy{}),
			new:  protected(web(shop, host, 8080), true, route.AccessPolicy{Users: []string{"alice@corp.example"}, EmailWhitelist: []string{"dave@partner.example"}}),
		},
	}
	visitors := accessOrgVisitors()
	for _, c := range cases {
		// The accesses before and after, as Pangolin holds them.
		var oldGate, newGate pangolinsim.Access
		{
			w := newWorld(t, accessOrg)
			w.converge(shop, c.old)
			id := w.resourceOn(host).ID
			if c.setup != nil {
				c.setup(w, id)
			}
			oldGate, _ = w.fake.Access(id)
			w.converge(shop, c.new)
			newGate, _ = w.fake.Access(id)
		}
		for _, failure := range writeFailures() {
			t.Run(c.name+", write n "+failure.name, func(t *testing.T) {
				for n := 1; ; n++ {
					w := newWorld(t, accessOrg)
					w.converge(shop, c.old)
					id := w.resourceOn(host).ID
					if c.setup != nil {
						c.setup(w, id)
					}
					stop := &failingWrite{n: n, fail: failure.f}
					w.fault(stop.fault)
					w.reconcile(shop, c.new)
					gate, ok := w.fake.Access(id)
					require.True(t, ok)
					for _, v := range visitors {
						if pangolinsim.Admits(gate, v) && !pangolinsim.Admits(oldGate, v) && !pangolinsim.Admits(newGate, v) {
							assert.Fail(t, "a visitor neither access admits is admitted",
								"stopped at write %d: %+v is admitted; Pangolin holds %+v", n, v, w.policyOn(host))
							break
						}
					}
					// The next reconcile, Pangolin answering again, completes the change.
					w.fault(nil)
					w.converge(shop, c.new)
					assertCompleted(t, w, id, newGate, visitors, n)
					if t.Failed() || stop.writes < n {
						t.Logf("stopped at each of %d writes", n-1)
						return // every write was stopped at in turn
					}
				}
			})
		}
	}
}

// TestHostMovedInPlaceStoppedAtAnyWrite: a host moved in place (a subdomain override
// changed) while its AccessPolicy changes is a host published anew. Stopped after any
// write, the new host admits no one its new access does not, and the old host no one
// whom neither access admits: the move closes it, and the access plan opens it.
func TestHostMovedInPlaceStoppedAtAnyWrite(t *testing.T) {
	shop := ingress("shop", "web")
	const from, to = "app.example.com", "admin.example.com"
	public := protected(web(shop, from, 8080), false, route.AccessPolicy{})
	staff := protected(web(shop, from, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}})
	staff.SubdomainOverride = "admin"
	visitors := accessOrgVisitors()
	var oldGate, newGate pangolinsim.Access
	{
		w := newWorld(t, accessOrg)
		w.converge(shop, public)
		id := w.resourceOn(from).ID
		oldGate, _ = w.fake.Access(id)
		w.converge(shop, staff)
		require.Equal(t, id, w.resourceOn(to).ID, "moved in place")
		newGate, _ = w.fake.Access(id)
	}
	for _, failure := range writeFailures() {
		t.Run("write n "+failure.name, func(t *testing.T) {
			for n := 1; ; n++ {
				w := newWorld(t, accessOrg)
				w.converge(shop, public)
				id := w.resourceOn(from).ID
				stop := &failingWrite{n: n, fail: failure.f}
				w.fault(stop.fault)
				w.reconcile(shop, staff)
				gate, ok := w.fake.Access(id)
				require.True(t, ok)
				var at string
				for _, r := range w.fake.Resources() {
					if r.ID == id {
						at = r.FullDomain
					}
				}
				for _, v := range visitors {
					admitted := pangolinsim.Admits(gate, v)
					if at == to && admitted && !pangolinsim.Admits(newGate, v) {
						assert.Fail(t, "the new host admits a visitor its new access does not", "stopped at write %d: %+v", n, v)
						break
					}
					if at == from && admitted && !pangolinsim.Admits(oldGate, v) && !pangolinsim.Admits(newGate, v) {
						assert.Fail(t, "the old host admits a visitor neither access admits", "stopped at write %d: %+v", n, v)
						break
					}
				}
				w.fault(nil)
				w.converge(shop, staff)
				assert.Equal(t, id, w.resourceOn(to).ID)
				assertCompleted(t, w, id, newGate, visitors, n)
				if t.Failed() || stop.writes < n {
					t.Logf("stopped at each of %d writes", n-1)
					return
				}
			}
		})
	}
}
