package controller

import (
	"context"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// hostClaims settles who publishes a host that several objects name: the oldest
// managed claim wins (creation time, then namespace/name, then kind), whatever the
// source kind, the same way on every replica.
type hostClaims struct {
	sources []plugin.Source
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
				// What it keeps first: an indexed read, and most claimants keep nothing.
				kept, err := h.kept(ctx, c)
				if err != nil {
					return nil, err
				}
				if !slices.ContainsFunc(kept, func(e engine.Existing) bool { return e.Host == host }) {
					continue
				}
				res, err := src.Routes(ctx, c.NamespacedName())
				if err != nil {
					return nil, err
				}
				if res.Origin != nil && res.Managed && claims(res, host) {
					best = *res.Origin
				}
			}
		}
		owners[host] = best
	}
	return owners, nil
}

// claims reports whether a source object that keeps a PangolinResource for host still
// claims it: it publishes it, or holds it while a problem that keeps what exists lasts
// (plugin.Result.Held). One that could publish the host but keeps nothing for it (its
// tunnel is missing, the engine refuses the host, a typo holds it since before it ever
// published) takes no live host from anyone: owners looks at kept resources first. The
// moment it creates its resource, the resource's watch wakes the younger claimants,
// which step back.
func claims(res plugin.Result, host string) bool {
	return slices.Contains(res.Held, host) || slices.ContainsFunc(res.Routes, func(r route.Route) bool { return r.Host == host })
}
