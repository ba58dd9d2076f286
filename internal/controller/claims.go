package controller

import (
	"context"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sources"
)

// hostClaims settles who publishes a host that several objects name: the oldest
// managed claim wins (creation time, then namespace/name, then kind), whatever the
// source kind, the same way on every replica.
type hostClaims struct {
	sources []sources.Source
}

// owners returns the winning claim for each host of routes. Claimants come from each
// source's host index, so the cost is the number of objects naming the same host, not
// the number of objects in the cluster; only claimants older than the best so far are
// looked at more closely.
func (h hostClaims) owners(ctx context.Context, self route.Origin, routes []route.Route) (map[string]route.Origin, error) {
	owners := map[string]route.Origin{}
	for _, rt := range routes {
		best := self
		for _, src := range h.sources {
			claimants, err := src.Claimants(ctx, rt.Host)
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
				if res.Origin != nil && res.Managed && claims(res, rt.Host) {
					best = *res.Origin
				}
			}
		}
		owners[rt.Host] = best
	}
	return owners, nil
}

// claims reports whether a source object publishes host, or holds it while a problem
// that keeps what exists lasts (sources.Result.Held). A held host is not handed to a
// younger claimant, which would publish it beside what the holder keeps.
func claims(res sources.Result, host string) bool {
	return slices.Contains(res.Held, host) || slices.ContainsFunc(res.Routes, func(r route.Route) bool { return r.Host == host })
}
