package controller

import (
	"context"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// hostClaims gathers the facts engine.Decide settles host ownership with: who names a
// host (each source's host index) and what the sink keeps for them (its owner index).
// No claimant is translated again, so a reconcile costs the number of objects naming
// the same host, not the number of objects in the cluster.
type hostClaims struct {
	// sources are every running source, each with its claimants.
	sources   []plugin.Source
	claimants []func(ctx context.Context, host string) ([]engine.Claim, error)
	sink      plugin.Sink
}

func newHostClaims(sources []plugin.Source, sink plugin.Sink) hostClaims {
	h := hostClaims{sources: sources, sink: sink}
	for _, src := range sources {
		h.claimants = append(h.claimants, src.Declare().Claims.Claimants)
	}
	return h
}

// owners returns the owner of each of hosts (published hosts, engine.PublishedHost),
// as self sees it.
func (h hostClaims) owners(ctx context.Context, self route.Origin, hosts []string) (map[string]route.Origin, error) {
	owners := make(map[string]route.Origin, len(hosts))
	for _, host := range hosts {
		var others []engine.Claim
		for _, claimants := range h.claimants {
			claims, err := claimants(ctx, host)
			if err != nil {
				return nil, err
			}
			for _, c := range claims {
				// Only an older claim can take the host from self: what a younger one
				// keeps is not worth a read.
				if c.Origin.UID == self.UID || c.Deleting || !c.Origin.Older(self) {
					continue
				}
				if c.Keeps, err = h.keeps(ctx, c.Origin, host); err != nil {
					return nil, err
				}
				others = append(others, c)
			}
		}
		owners[host] = engine.Decide(engine.Claim{Origin: self}, others).Owner
	}
	return owners, nil
}

// keeps reports whether the sink keeps a resource of owner's published on host: what
// it holds, whatever host owner writes, since the indexes over-approximate the hosts an
// override may give (hostname.Claimable).
func (h hostClaims) keeps(ctx context.Context, owner route.Origin, host string) (bool, error) {
	kept, err := h.sink.Current(ctx, owner)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(kept, func(e engine.Existing) bool { return e.ClaimKey() == host }), nil
}
