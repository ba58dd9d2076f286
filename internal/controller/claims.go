package controller

import (
	"context"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// hostClaims settles who publishes a host that several objects name: the oldest
// managed claim wins (creation time, then namespace/name, then kind), whatever the
// source kind, the same way on every replica.
type hostClaims struct {
	sources []sources.Source
	// kept lists what an object's PangolinResources serve: a claim counts only where
	// the claimant keeps a resource for the host.
	kept func(context.Context, route.Origin) ([]engine.Existing, error)
}

// owners returns the winning claim for each of hosts. Claimants come from each
// source's host index, so the cost is the number of objects naming the same host, not
// the number of objects in the cluster; only claimants older than the best so far are
// looked at more closely.
func (h hostClaims) owners(ctx context.Context, self route.Origin, hosts []string) (map[string]route.Origin, error) {
	owners := map[string]route.Origin{}
	for _, host := range hosts {
		best := self
		for _, src := range h.sources {
			claimants, err := src.Claimants(ctx, host)
			if err != nil {
				return nil, err
			}
			for _, c := range claimants {
				if c.UID == self.UID || !c.Older(best) {
					continue
				}
				res, err := src.Routes(ctx, c.NamespacedName())
				if err != nil {
					return nil, err
				}
				if res.Origin == nil || !res.Managed || res.Deleting {
					continue
				}
				ok, err := h.claims(ctx, res, host)
				if err != nil {
					return nil, err
				}
				if ok {
					best = *res.Origin
				}
			}
		}
		owners[host] = best
	}
	return owners, nil
}

// claims reports whether an older source object stands in the way of a younger one
// for host: it publishes or holds the host (sources.Result.Held) and keeps a
// PangolinResource for it. One that could publish the host but keeps nothing for it
// (its tunnel is missing, the engine refuses the host, a typo holds it since before it
// ever published) takes no live host from anyone; the moment it creates its resource,
// the resource's watch wakes the younger claimants, which step back.
func (h hostClaims) claims(ctx context.Context, res sources.Result, host string) (bool, error) {
	if !slices.Contains(res.Held, host) && !slices.ContainsFunc(res.Routes, func(r route.Route) bool { return r.Host == host }) {
		return false, nil
	}
	kept, err := h.kept(ctx, *res.Origin)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(kept, func(e engine.Existing) bool { return e.Host == host }), nil
}
