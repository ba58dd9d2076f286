package controller

import (
	"context"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// hostClaims gathers the facts engine.Decide settles host ownership with: who claims a
// host and what the sink keeps for them. A host's claimants are the objects that name
// it (each source's host index) and the objects the sink holds a resource on it for
// (Sink.Holders), whatever they name now: an object whose move away from the host was
// refused, or whose host is held, keeps serving it, so it still claims it and no
// younger object may publish it beside it. No claimant is translated again, so a
// reconcile costs the number of objects claiming the same host, not the number of
// objects in the cluster.
type hostClaims struct {
	// sources are every running source, each with its claimants.
	sources   []plugin.Declared
	claimants []func(ctx context.Context, host string) ([]engine.Claim, error)
	holders   []func(ctx context.Context, holder route.Origin) (engine.Claim, bool, error)
	sink      plugin.Sink
}

func newHostClaims(sources []plugin.Declared, sink plugin.Sink) hostClaims {
	h := hostClaims{sources: sources, sink: sink}
	for _, src := range sources {
		claims := src.Declaration.Claims
		h.claimants = append(h.claimants, claims.Claimants)
		if claims.Holder != nil {
			h.holders = append(h.holders, claims.Holder)
		}
	}
	return h
}

// owners returns the owner of each of hosts (published hosts, engine.ClaimKey),
// as self sees it.
func (h hostClaims) owners(ctx context.Context, self route.Origin, hosts []string) (map[string]route.Origin, error) {
	owners := make(map[string]route.Origin, len(hosts))
	for _, host := range hosts {
		var others []engine.Claim
		// Only an older claim can take the host from self: what a younger one keeps
		// is not worth a read.
		counts := func(c engine.Claim) bool {
			return c.Origin.UID != self.UID && !c.Deleting && c.Origin.Older(self) &&
				!slices.ContainsFunc(others, func(o engine.Claim) bool { return o.Origin.UID == c.Origin.UID })
		}
		for _, claimants := range h.claimants {
			claims, err := claimants(ctx, host)
			if err != nil {
				return nil, err
			}
			for _, c := range claims {
				if !counts(c) {
					continue
				}
				if c.Keeps, err = h.keeps(ctx, c.Origin, host); err != nil {
					return nil, err
				}
				others = append(others, c)
			}
		}
		holders, err := h.sink.Holders(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, holder := range holders {
			if sameObject(holder, self) || slices.ContainsFunc(others, func(o engine.Claim) bool { return sameObject(holder, o.Origin) }) {
				continue // known already: no read
			}
			c, ok, err := h.holder(ctx, holder)
			if err != nil {
				return nil, err
			}
			if ok && counts(c) {
				c.Keeps = true
				others = append(others, c)
			}
		}
		owners[host] = engine.Decide(engine.Claim{Origin: self}, others).Owner
	}
	return owners, nil
}

// holder is the claim of the object a sink names as holding a resource, from the
// source of its kind; ok is false when that object is gone (or no running source has
// its kind): a gone object claims nothing, and its resource is removed on its own
// reconcile or by the garbage collector.
func (h hostClaims) holder(ctx context.Context, holder route.Origin) (engine.Claim, bool, error) {
	for _, of := range h.holders {
		c, ok, err := of(ctx, holder)
		if err != nil || ok {
			return c, ok, err
		}
	}
	return engine.Claim{}, false, nil
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

// sameObject reports whether the holder a sink names is known, the object of that kind,
// namespace and name: the sink's UID, when it has one, may be a predecessor's, whose
// resources the garbage collector removes.
func sameObject(holder, known route.Origin) bool {
	return holder.Kind == known.Kind && holder.NamespacedName() == known.NamespacedName()
}
