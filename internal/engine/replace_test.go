package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func hostResource(host string) Resource {
	return Resource{Name: "pic-" + host, Origin: prod, Host: host + ".example.com", Subdomain: host, Domain: "example.com", Targets: []Target{{Backend: web}}}
}

func tcpResource(port int32) Resource {
	return Resource{Name: fmt.Sprintf("pic-tcp-%d", port), Origin: prod, Host: route.PortKey(route.ProtocolTCP, port), Protocol: route.ProtocolTCP, ProxyPort: port, Targets: []Target{{Backend: web}}}
}

func TestCalculateMakeBeforeBreak(t *testing.T) {
	a, b, c := hostResource("a"), hostResource("b"), hostResource("c")
	bOnOtherBackend := hostResource("b")
	bOnOtherBackend.Targets = []Target{{Backend: route.Backend{Scheme: "http", Host: "other.prod.svc.cluster.local", Port: 8080}}}
	bWithAPI := hostResource("b")
	bWithAPI.Targets = append(slices.Clone(b.Targets), Target{Backend: web, Path: "/api"})
	p1, p2 := tcpResource(45432), tcpResource(45441)
	refused := func(host, reason string) route.Rejection {
		return route.Rejection{Origin: prod, Host: host, Reason: reason}
	}
	refusedOpen := func(host, reason string) route.Rejection {
		rj := refused(host, reason)
		rj.AccessUnsupported = true
		return rj
	}
	revoked := func(host string) route.Rejection {
		return route.Rejection{Origin: prod, Host: host, Reason: pic.ReasonHostNotAllowed, Revoked: true}
	}
	heldWhole := route.Rejection{Origin: prod, Reason: pic.ReasonInvalidAnnotation, Hold: true}
	older := route.Origin{Kind: "Ingress", Namespace: "prod", Name: "older", UID: "uid-older"}
	cases := []struct {
		name       string
		desired    []Resource
		existing   []Resource
		rejections []route.Rejection
		owners     map[string]route.Origin
		// notServing are the existing resources not Ready (the others are).
		notServing []string
		delete     []string
		after      map[string][]string
		kept       []string
	}{
		{name: "a renamed host is deleted after its replacement lands",
			desired: []Resource{b}, existing: []Resource{a},
			delete: []string{"pic-a"}, after: map[string][]string{"pic-a": {"pic-b"}}},
		{name: "a moved port is deleted after the new port lands",
			desired: []Resource{p2}, existing: []Resource{p1},
			delete: []string{"pic-tcp-45432"}, after: map[string][]string{"pic-tcp-45432": {"pic-tcp-45441"}}},
		{name: "a renamed host waits for a replacement that exists and does not serve yet",
			desired: []Resource{b}, existing: []Resource{a, b}, notServing: []string{"pic-b"},
			delete: []string{"pic-a"}, after: map[string][]string{"pic-a": {"pic-b"}}},
		{name: "a moved port waits for the new port that exists and does not serve yet",
			desired: []Resource{p2}, existing: []Resource{p1, p2}, notServing: []string{"pic-tcp-45441"},
			delete: []string{"pic-tcp-45432"}, after: map[string][]string{"pic-tcp-45432": {"pic-tcp-45441"}}},
		{name: "a host removed waits for every arrival of its kind, created or not serving yet",
			desired: []Resource{b, c}, existing: []Resource{a, c}, notServing: []string{"pic-c"},
			delete: []string{"pic-a"}, after: map[string][]string{"pic-a": {"pic-b", "pic-c"}}},
		{name: "a host removed while another changes its backend is deleted at once: the other serves as it did",
			desired: []Resource{bOnOtherBackend}, existing: []Resource{a, b},
			delete: []string{"pic-a"}},
		{name: "a host removed waits for another that serves short of a target it asks for",
			desired: []Resource{bWithAPI}, existing: []Resource{a, b},
			delete: []string{"pic-a"}, after: map[string][]string{"pic-a": {"pic-b"}}},
		{name: "a host that does not serve is deleted all the same once nothing arrives",
			desired: []Resource{b}, existing: []Resource{a, b}, notServing: []string{"pic-a"},
			delete: []string{"pic-a"}},
		{name: "a host renamed to one PIC refuses is kept",
			existing: []Resource{a}, rejections: []route.Rejection{refused("b.example.com", pic.ReasonInvalidHost)},
			kept: []string{"a.example.com"}},
		{name: "a host renamed to one an older object owns is kept",
			existing: []Resource{a}, rejections: []route.Rejection{refused("b.example.com", pic.ReasonHostConflict)},
			kept: []string{"a.example.com"}},
		{name: "a port moved to one that is refused is kept",
			existing: []Resource{p1}, rejections: []route.Rejection{refused("tcp:45441", pic.ReasonPortConflict)},
			kept: []string{"tcp:45432"}},
		{name: "a host removed while nothing arrives is deleted at once",
			desired: []Resource{b}, existing: []Resource{a, b},
			delete: []string{"pic-a"}},
		{name: "an HTTP host removed does not wait for a port that arrives",
			desired: []Resource{p1}, existing: []Resource{a},
			delete: []string{"pic-a"}},
		{name: "a refused port does not keep an HTTP host removed",
			existing: []Resource{a}, rejections: []route.Rejection{refused("tcp:45441", pic.ReasonPortConflict)},
			delete: []string{"pic-a"}},
		{name: "a refusal of a host still published, degraded, keeps nothing",
			desired: []Resource{c}, existing: []Resource{a, c}, rejections: []route.Rejection{refused("c.example.com", pic.ReasonPathRoutingUnsupported)},
			delete: []string{"pic-a"}},
		{name: "a refusal of the leaving host itself keeps nothing",
			existing: []Resource{a}, rejections: []route.Rejection{refused("a.example.com", pic.ReasonWildcardHost)},
			delete: []string{"pic-a"}},
		{name: "a host renamed to one whose AccessPolicy the sink cannot carry is not kept",
			existing: []Resource{a}, rejections: []route.Rejection{refusedOpen("b.example.com", pic.ReasonAccessPolicyUnsupported)},
			delete: []string{"pic-a"}},
		{name: "a port moved under a policy Pangolin cannot apply to ports is not kept",
			existing: []Resource{p1}, rejections: []route.Rejection{refusedOpen("tcp:45441", pic.ReasonAccessControlUnsupported)},
			delete: []string{"pic-tcp-45432"}},
		{name: "a host the policy revoked is deleted though the whole object is held",
			existing: []Resource{a, c}, rejections: []route.Rejection{heldWhole, revoked("a.example.com")},
			delete: []string{"pic-a"}},
		{name: "a host the policy revoked is not kept by a refused move",
			existing: []Resource{a}, rejections: []route.Rejection{refused("b.example.com", pic.ReasonInvalidHost), revoked("a.example.com")},
			delete: []string{"pic-a"}},
		{name: "a host the policy revoked is not kept by another revoked host",
			existing: []Resource{a}, rejections: []route.Rejection{revoked("b.example.com"), revoked("a.example.com")},
			delete: []string{"pic-a"}},
		{name: "a host renamed to one the policy refuses is kept while it is allowed",
			existing: []Resource{a}, rejections: []route.Rejection{revoked("b.example.com")},
			kept: []string{"a.example.com"}},
		{name: "a kept host another object owns is deleted all the same",
			existing: []Resource{a}, rejections: []route.Rejection{refused("b.example.com", pic.ReasonInvalidHost)},
			owners: map[string]route.Origin{"a.example.com": older},
			delete: []string{"pic-a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var existing []Existing
			for _, r := range tc.existing {
				phase := PhaseReady
				if slices.Contains(tc.notServing, r.Name) {
					phase = PhasePending
				}
				existing = append(existing, Existing{Resource: r, Status: Status{Phase: phase}})
			}
			plan := Calculate(prod, tc.desired, existing, tc.rejections, tc.owners)
			var deleted, kept []string
			for _, e := range plan.Delete {
				deleted = append(deleted, e.Name)
			}
			for _, rj := range plan.Kept {
				assert.Equal(t, pic.ReasonReplacementRefused, rj.Reason)
				assert.True(t, rj.Kept, "the old one stays published")
				assert.Contains(t, rj.Message, "stays published as it is", "the Warning says the old one is kept")
				kept = append(kept, rj.Host)
			}
			var after map[string][]string
			for name, waits := range plan.After {
				if after == nil {
					after = map[string][]string{}
				}
				after[name] = names(waits)
			}
			assert.Equal(t, tc.delete, deleted)
			assert.Equal(t, tc.after, after)
			assert.Equal(t, tc.kept, kept)
		})
	}
}

// TestPlanNeverLeavesLess runs every plan over a small world, with every mix of existing
// resources that serve as asked, that are not Ready, and that serve short of a target
// (both left by a create of an earlier pass that fell short), every set of the pass's
// arrivals failing to land, and the pass stopped after every step. It checks make
// before break: at no point does the object serve as asked fewer resources of a kind
// than it did before and than it asks for.
func TestPlanNeverLeavesLess(t *testing.T) {
	universe := []Resource{hostResource("a"), hostResource("b"), hostResource("c"), tcpResource(1), tcpResource(2)}
	engineRefusals := [][]route.Rejection{
		nil,
		{{Origin: prod, Host: "d.example.com", Reason: pic.ReasonInvalidHost}},
		{{Origin: prod, Host: "tcp:3", Reason: pic.ReasonPortConflict}},
	}
	const (
		complete = iota // Ready, with every target it asks for
		notReady        // exists, Pangolin does not serve it
		short           // Ready, without a target it asks for
	)
	states := func(code int) []int {
		out := make([]int, len(universe))
		for i := range out {
			out[i], code = code%3, code/3
		}
		return out
	}
	subset := func(mask int) []Resource {
		var out []Resource
		for i, r := range universe {
			if mask&(1<<i) != 0 {
				out = append(out, r)
			}
		}
		return out
	}
	countOf := func(rs []Resource, raw bool) int {
		return len(slices.DeleteFunc(slices.Clone(rs), func(r Resource) bool { return r.Raw() != raw }))
	}
	combinations := 1
	for range universe {
		combinations *= 3
	}
	for before := range 1 << len(universe) {
		for code := range combinations {
			state := states(code)
			var existing []Existing
			var completeBefore []Resource
			incomplete := 0 // mask of the existing resources that do not serve as asked
			valid := true
			for i, r := range universe {
				if before&(1<<i) == 0 {
					valid = valid && state[i] == complete
					continue
				}
				e := Existing{Resource: r, Status: Status{Phase: PhaseReady}}
				switch state[i] {
				case complete:
					completeBefore = append(completeBefore, r)
				case notReady:
					e.Status.Phase = PhasePending
					incomplete |= 1 << i
				case short:
					e.Targets = nil
					incomplete |= 1 << i
				}
				existing = append(existing, e)
			}
			if !valid {
				continue // only what exists has a state
			}
			for after := range 1 << len(universe) {
				for _, rejections := range engineRefusals {
					desired := subset(after)
					plan := Calculate(prod, desired, existing, rejections, nil)
					// What the pass may bring to serve as asked: its creates, and the
					// desired resources that exist and do not serve as asked, which it
					// writes.
					arriving := append(slices.Clone(plan.Create), subset(after&incomplete)...)
					for name, waits := range plan.After {
						for _, d := range waits {
							if !slices.ContainsFunc(arriving, func(r Resource) bool { return r.Name == d.Name }) {
								t.Fatalf("from %v (states %v) to %v: %s waits for %s, which serves as asked already: it would be kept for ever",
									names(subset(before)), state, names(desired), name, d.Name)
							}
						}
					}
					steps := len(arriving) + len(plan.Delete)
					for failedMask := range 1 << len(arriving) {
						for stop := 0; stop <= steps; stop++ {
							serving := slices.Clone(completeBefore)
							landed := map[string]bool{}
							step := 0
							for i, d := range arriving {
								if step == stop {
									break
								}
								step++
								if failedMask&(1<<i) == 0 {
									serving, landed[d.Name] = append(serving, d), true
								}
							}
							for _, e := range plan.Delete {
								if step == stop {
									break
								}
								step++
								if !slices.ContainsFunc(plan.After[e.Name], func(d Resource) bool { return !landed[d.Name] }) {
									serving = slices.DeleteFunc(serving, func(r Resource) bool { return r.Name == e.Name })
								}
							}
							for _, raw := range []bool{false, true} {
								floor := min(countOf(completeBefore, raw), countOf(desired, raw))
								if countOf(serving, raw) < floor {
									t.Fatalf("from %v (states %v: 0 complete, 1 not Ready, 2 short) to %v (engine refusals %v), arrivals failed %b, stopped after %d steps: %d resources of a kind serve as asked, fewer than %d",
										names(subset(before)), state, names(desired), rejections, failedMask, stop, countOf(serving, raw), floor)
								}
							}
						}
					}
				}
			}
		}
	}
}

func names(rs []Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// TestOverrideOntoAnOwnedHostKeepsTheLiveHost: a subdomain override changed to a host
// an older object owns is that host's conflict, and what the object publishes for its
// host stays as it is until the override names a host it may have: the refusal holds
// it, as a renamed rule host's does.
func TestOverrideOntoAnOwnedHostKeepsTheLiveHost(t *testing.T) {
	older := route.Origin{Kind: "Ingress", Namespace: "other", Name: "first", UID: "uid-first"}
	live := Resource{Name: ResourceName(prod, "x.example.com"), Origin: prod, Host: "x.example.com", Subdomain: "x", Domain: "example.com", Targets: []Target{{Backend: web}}}
	moved := route.Route{Origin: prod, Host: "x.example.com", Tunnel: tunnel, Paths: []route.PathRule{prefix("/", web)}, SubdomainOverride: "app"}
	owners := map[string]route.Origin{"app.example.com": older, "x.example.com": prod}

	desired, rejections := Desired(Input{Routes: []route.Route{moved}, Features: fork, Owners: owners})
	assert.Empty(t, desired)
	assert.Equal(t, []string{pic.ReasonHostConflict}, reasons(rejections))

	plan := Calculate(prod, desired, []Existing{{Resource: live}}, rejections, owners)
	assert.Empty(t, plan.Delete, "the live host is held while its move is refused")
	assert.Empty(t, plan.Update)
}

// TestAHostWhoseDomainTheOrgNoLongerListsIsKept: the org's domains dropping the host's
// (a domain unverified for a while, a read of the org taken too early) refuse the host
// as DomainNotFound, and keep what is published for it: a refusal never deletes what
// is live.
func TestAHostWhoseDomainTheOrgNoLongerListsIsKept(t *testing.T) {
	live := Resource{Name: ResourceName(prod, "app.example.com"), Origin: prod, Host: "app.example.com", Subdomain: "app", Domain: "example.com", Targets: []Target{{Backend: web}}}
	routes := []route.Route{rt("app.example.com", prefix("/", web))}
	withoutTheDomain := Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, Domains: []string{"example.org"}}

	desired, rejections := Desired(Input{Routes: routes, Features: withoutTheDomain})
	assert.Empty(t, desired)
	assert.Equal(t, []string{pic.ReasonDomainNotFound}, reasons(rejections))

	plan := Calculate(prod, desired, []Existing{{Resource: live}}, rejections, nil)
	assert.Empty(t, plan.Delete, "the published host is deleted because the org's domains no longer list its domain")
	assert.Empty(t, plan.Create)
	assert.Empty(t, plan.Update)
}
