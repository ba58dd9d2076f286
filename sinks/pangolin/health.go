package pangolin

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Health checks. A target's check is written whole on create and on every update, and
// read back exactly: Pangolin stores what it is sent and fills in no default, so a
// target whose stored check is the one PIC would send is converged, and written no
// more. Two kinds of check the engine asks are not written, and the mirror keeps them
// (entry.unsent) so that the target still reads back as asked:
//
//   - on a site that is not a Newt site: Pangolin marks a target created with a check
//     unhealthy, and only a Newt agent ever reports it healthy, so the target would be
//     left out of Traefik until its next update (the reference's section 13). It is
//     published without the check, and an info log line says so once per change.
//   - a check Pangolin would refuse (pangolinapi.HealthCheck.Validate): a Warning
//     HealthCheckUnsupported, and the backend published without it.

// targetKey names an engine target apart from its health check.
type targetKey struct {
	host        string
	port        int32
	scheme      string
	path, match string
}

func keyOf(t engine.Target) targetKey {
	return targetKey{host: t.Backend.Host, port: t.Backend.Port, scheme: t.Backend.Scheme, path: t.Path, match: t.Match}
}

// healthCheckOf is the check PIC writes for backend b: the probe's own fields, the
// target's address as hcHostname, and GET for an http check. The zero HealthCheck
// for none.
func healthCheckOf(b route.Backend) pangolinapi.HealthCheck {
	h := b.Health
	if !h.Enabled() {
		return pangolinapi.HealthCheck{}
	}
	out := pangolinapi.HealthCheck{
		Enabled: true, Hostname: b.Host, Port: int(h.Port), Mode: h.Mode,
		Interval: int(h.IntervalSeconds), Timeout: int(h.TimeoutSeconds),
		HealthyThreshold: int(h.HealthyThreshold), UnhealthyThreshold: int(h.UnhealthyThreshold),
	}
	if h.Mode == pangolinapi.HealthModeHTTP {
		out.Scheme, out.Path, out.Method = h.Scheme, h.Path, "GET"
	}
	return out
}

// healthCheckFrom is the check a stored one stands for, on a target of host. same is
// false when PIC would not have written it so (edited in Pangolin): the target then
// drifted, and is written again.
func healthCheckFrom(host string, stored pangolinapi.HealthCheck) (h route.HealthCheck, same bool) {
	if !stored.Enabled {
		return route.HealthCheck{}, true
	}
	h = route.HealthCheck{
		Mode: stored.Mode, Scheme: stored.Scheme, Path: stored.Path, Port: int32(stored.Port),
		IntervalSeconds: int32(stored.Interval), TimeoutSeconds: int32(stored.Timeout),
		HealthyThreshold: int32(stored.HealthyThreshold), UnhealthyThreshold: int32(stored.UnhealthyThreshold),
	}
	return h, healthCheckOf(route.Backend{Host: host, Health: h}) == stored
}

// sameHealth reports whether a target holding have needs no write for want: without a
// check, only that none is on; with one, every field PIC writes.
func sameHealth(have, want pangolinapi.HealthCheck) bool {
	if !want.Enabled {
		return !have.Enabled
	}
	return have == want
}

// healthRead is the check target (read from t) has in the engine's model: the one
// stored, or, when none is, the one asked and knowingly not written. false: the
// stored check is not one PIC writes. s.mu is held.
func (s *Sink) healthRead(e *entry, target engine.Target, t pangolinapi.Target) (route.HealthCheck, bool) {
	if !t.Health.Enabled {
		if asked, ok := e.unsent[keyOf(target)]; ok {
			return asked, true
		}
	}
	return healthCheckFrom(t.IP, t.Health)
}

// healthToWrite is the check to write for t of d, on a Newt site or not; a check not
// written goes into unsent, and one Pangolin would refuse is a Warning.
func (a *applying) healthToWrite(d engine.Resource, t engine.Target, newt bool, unsent map[targetKey]route.HealthCheck) pangolinapi.HealthCheck {
	hc := healthCheckOf(t.Backend)
	if !hc.Enabled {
		return hc
	}
	if err := hc.Validate(); err != nil {
		unsent[keyOf(t)] = t.Backend.Health
		// The path names the rule whose backend lost its check: the host is published,
		// and a rejection without one would say it is not.
		a.res.Rejections = append(a.res.Rejections, route.Rejection{
			Origin: a.owner, Host: d.Host, Path: cmp.Or(t.Path, "/"), Reason: pic.ReasonHealthCheckUnsupported,
			Message: fmt.Sprintf("%s: backend %s is published without its health check (%s): Pangolin would refuse it: %v",
				subject(d), t.Backend, t.Backend.Health, err),
		})
		return pangolinapi.HealthCheck{}
	}
	if !newt {
		unsent[keyOf(t)] = t.Backend.Health
		return pangolinapi.HealthCheck{}
	}
	return hc
}

// noteUnsent notes in e the checks w leaves unwritten, and logs those dropped for
// the site once per change: at the first write after a start, and when they change. It
// reports whether e changed, and must then be put in the mirror.
func (a *applying) noteUnsent(ctx context.Context, d engine.Resource, w wanted, e *entry) (changed bool) {
	if maps.Equal(e.unsent, w.unsent) {
		return false
	}
	e.unsent = w.unsent
	if w.newt || len(w.unsent) == 0 {
		return true
	}
	var backends []string
	for k := range w.unsent {
		backends = append(backends, fmt.Sprintf("%s:%d", k.host, k.port))
	}
	slices.Sort(backends)
	log.FromContext(ctx).WithName("pangolin").Info(
		"health checks not written: the site is not a Newt site, where Pangolin leaves a target created with a check out of Traefik until its next update and nothing probes it; see docs/direct-mode.md",
		"resource", w.niceID, "claim", subject(d), "site", d.Tunnel.Name, "backends", slices.Compact(backends))
	return true
}
