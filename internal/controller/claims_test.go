package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// claimObject is an object of claimsSource: its origin, the hosts it names now, and
// whether its deletion has begun.
type claimObject struct {
	origin   route.Origin
	names    []string
	deleting bool
}

// claimsSource is a source of Ingresses answering its claims from a list of objects.
type claimsSource struct {
	namedSource
	objects []claimObject
}

func (s claimsSource) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{
		Claimants: func(_ context.Context, host string) ([]engine.Claim, error) {
			var out []engine.Claim
			for _, o := range s.objects {
				for _, h := range o.names {
					if h == host {
						out = append(out, engine.Claim{Origin: o.origin, Deleting: o.deleting})
					}
				}
			}
			return out, nil
		},
		Holder: func(_ context.Context, holder route.Origin) (engine.Claim, bool, error) {
			for _, o := range s.objects {
				if o.origin.Kind == holder.Kind && o.origin.NamespacedName() == holder.NamespacedName() &&
					(holder.UID == "" || holder.UID == o.origin.UID) {
					return engine.Claim{Origin: o.origin, Deleting: o.deleting}, true, nil
				}
			}
			return engine.Claim{}, false, nil
		},
	}}
}

// holdingSink keeps resources, by published host, for the origins it names (UID
// empty: a sink that does not know it, as direct mode).
type holdingSink struct {
	plugin.Sink
	held map[string][]route.Origin
	err  error
}

func (s holdingSink) Current(_ context.Context, owner route.Origin) ([]engine.Existing, error) {
	var out []engine.Existing
	for host, holders := range s.held {
		for _, h := range holders {
			if h.NamespacedName() == owner.NamespacedName() {
				out = append(out, engine.Existing{Resource: engine.Resource{Origin: owner, Host: host}})
			}
		}
	}
	return out, nil
}

func (s holdingSink) Holders(_ context.Context, host string) ([]route.Origin, error) {
	return s.held[host], s.err
}

// TestHostClaimsOwners: who owns a host, as the younger object asking for it sees it,
// when the sink holds resources for objects that may no longer name it.
func TestHostClaimsOwners(t *testing.T) {
	const host = "a.example.com"
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ingress := func(name string, age int) route.Origin {
		return route.Origin{Kind: "Ingress", Namespace: "shop", Name: name, UID: types.UID("uid-" + name), Created: start.Add(time.Duration(age) * time.Minute)}
	}
	older, self, younger := ingress("older", 0), ingress("self", 1), ingress("younger", 2)
	withoutUID := func(o route.Origin) route.Origin { o.UID = ""; return o }
	for _, tc := range []struct {
		name    string
		objects []claimObject
		held    []route.Origin
		sinkErr error
		want    route.Origin
		err     string
	}{
		{name: "with no other claim, the host is self's", want: self},
		{name: "an older object that names the host and keeps it owns it",
			objects: []claimObject{{origin: older, names: []string{host}}}, held: []route.Origin{older}, want: older},
		{name: "an older object that names the host and keeps nothing takes nothing",
			objects: []claimObject{{origin: older, names: []string{host}}}, want: self},
		{name: "an older object that no longer names the host but keeps its resource (a refused move) owns it",
			objects: []claimObject{{origin: older, names: []string{"b.example.com"}}}, held: []route.Origin{older}, want: older},
		{name: "an older holder the sink knows without a UID (direct mode) is the object of its name",
			objects: []claimObject{{origin: older}}, held: []route.Origin{withoutUID(older)}, want: older},
		{name: "a holder that no longer exists claims nothing",
			held: []route.Origin{older}, want: self},
		{name: "a holder whose name is now another object's (another UID) claims nothing",
			objects: []claimObject{{origin: func() route.Origin { o := older; o.UID = "uid-successor"; return o }()}}, held: []route.Origin{older}, want: self},
		{name: "an older holder being deleted claims nothing",
			objects: []claimObject{{origin: older, deleting: true}}, held: []route.Origin{older}, want: self},
		{name: "a younger holder does not take the host from self",
			objects: []claimObject{{origin: younger}}, held: []route.Origin{younger}, want: self},
		{name: "self's own resource is no other claim",
			objects: []claimObject{{origin: self, names: []string{host}}}, held: []route.Origin{withoutUID(self)}, want: self},
		{name: "a sink that cannot say who holds the host decides nothing",
			sinkErr: errors.New("the last read of Pangolin failed"), err: "the last read of Pangolin failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := holdingSink{held: map[string][]route.Origin{}, err: tc.sinkErr}
			if len(tc.held) > 0 {
				sink.held[host] = tc.held
			}
			claims := newHostClaims(plugin.DeclareAll(claimsSource{namedSource: namedSource{name: "ingress"}, objects: tc.objects}), sink)
			owners, err := claims.owners(context.Background(), self, []string{host})
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want.Key(), owners[host].Key())
		})
	}
}
