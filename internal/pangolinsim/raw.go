package pangolinsim

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
)

// Raw (TCP and UDP) resources, as the reference's section 15 observed them: a public
// port of the server forwarded to the targets, no host, no access control, allowed only
// with flags.allow_raw_resources (Options.DenyRawResources), and no check that a port
// is free.

// createRawResource is a create whose body carries a numeric proxyPort: the server's
// raw-resource schema, strict, which knows no subdomain, domainId nor enableProxy.
func (s *Server) createRawResource(q *request) response {
	if s.opts.DenyRawResources {
		// Checked before the body: the fake's choice, the reference shows only a valid
		// body refused.
		return fail(http.StatusBadRequest, "Raw resources are not allowed")
	}
	v := newValidator(q.body)
	name, _ := v.str("name", true, false)
	if name != nil {
		lengthIssue(v, "name", *name, 1, 255)
	}
	httpFlag, _ := v.boolean("http", false)
	protocol, _ := v.enum("protocol", false, "tcp", "udp")
	mode, _ := v.enum("mode", false, "tcp", "udp")
	port, _ := v.integer("proxyPort", true, false, 1, 65535)
	v.strict()
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	m, msg := resourceMode(mode, httpFlag, protocol, false)
	if msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	org := q.params["orgId"]
	if !s.orgs[org] {
		return fail(http.StatusNotFound, "Organization with ID %s not found", org)
	}
	// Another resource on the same port and mode is accepted: Traefik then holds two
	// routers on one entry point.
	r := &resource{
		id: s.nextRes, org: org, niceID: s.newNiceID(org), name: *name, mode: m, proxyPort: port,
		enabled: true, sso: true, access: s.newPolicy(), proxyProtocolVersion: 1,
	}
	s.nextRes++
	s.res[r.id] = r
	return ok(http.StatusCreated, "Non-http resource created successfully", r.json(false))
}

// updateRawResource takes the few fields a raw resource has; sso, blockAccess, a host
// and the rest of the HTTP fields are unrecognized keys.
func (s *Server) updateRawResource(q *request, res *resource) response {
	v := newValidator(q.body)
	name, _ := v.str("name", false, false)
	if name != nil {
		lengthIssue(v, "name", *name, 1, 255)
	}
	// The raw schema checks the niceId's length only, not its characters.
	nice, _ := v.str("niceId", false, false)
	if nice != nil {
		lengthIssue(v, "niceId", *nice, 1, 255)
	}
	port, portSent := v.integer("proxyPort", false, false, 1, 65535)
	sticky, _ := v.boolean("stickySession", false)
	enabled, _ := v.boolean("enabled", false)
	proxyProtocol, _ := v.boolean("proxyProtocol", false)
	ppVersion, _ := v.integer("proxyProtocolVersion", false, false, 1, math.MaxInt32)
	v.any("resourcePolicyId") // accepted; shared policies are not modelled
	v.strict()
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	if len(q.body.keys) == 0 {
		return fail(http.StatusBadRequest, "Validation error: At least one field must be provided for update")
	}
	if portSent && s.opts.DenyRawResources {
		return fail(http.StatusBadRequest, "Validation error: Cannot update proxyPort")
	}
	if nice != nil {
		if other := s.resourceByNiceID(res.org, *nice); other != nil && other.id != res.id {
			return fail(http.StatusConflict, "A resource with niceId %q already exists", *nice)
		}
	}
	if name != nil {
		res.name = *name
	}
	if nice != nil {
		res.niceID = *nice
	}
	if port != nil {
		res.proxyPort = port // onto a port in use too
	}
	setBool(&res.stickySession, sticky)
	setBool(&res.enabled, enabled)
	setBool(&res.proxyProtocol, proxyProtocol)
	if ppVersion != nil {
		res.proxyProtocolVersion = *ppVersion
	}
	// The answer is the updated row: the resource's own (null) access columns.
	return ok(http.StatusOK, "Non-http Resource updated successfully", res.json(false))
}

// RawRouter is a TCP or UDP router of the Traefik configuration Pangolin would serve:
// no badger middleware, no TLS.
type RawRouter struct {
	// Name is "<key>-<name>-router", as for HTTP routers; a target's path, which
	// Pangolin stores on a raw resource too, enters the key.
	Name       string
	ResourceID int
	Protocol   string // "tcp" or "udp"
	// EntryPoint is "tcp-<proxyPort>" or "udp-<proxyPort>": Traefik's static
	// configuration must define it, Pangolin does not.
	EntryPoint string
	// Rule is "HostSNI(`*`)" for TCP; UDP routers have none.
	Rule string
	// Servers are "<ip>:<port>", de-duplicated, in target order; unhealthy targets are
	// left out. No method is needed.
	Servers []string
	// ServersTransport is "pp-transport-v<version>@file" with proxyProtocol, for the
	// file provider to define; "" without.
	ServersTransport string
}

// RawRouters derives the TCP and UDP routers from the stored state: enabled raw
// resources, one router per group of enabled targets (grouped as HTTP targets are).
// Several resources on one port each get their router on the same entry point. Sorted
// by name.
func (s *Server) RawRouters() []RawRouter {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RawRouter
	for _, r := range s.res {
		if !r.enabled || !r.raw() || r.proxyPort == nil {
			continue
		}
		byKey := map[string]*RawRouter{}
		var order []string
		for _, t := range s.targetsOf(r.id) {
			if !t.enabled {
				continue
			}
			key := sanitize(groupString(r.id, t))
			rt, seen := byKey[key]
			if !seen {
				rt = &RawRouter{
					Name: key + "-" + sanitize(r.name) + "-router", ResourceID: r.id, Protocol: r.mode,
					EntryPoint: fmt.Sprintf("%s-%d", r.mode, *r.proxyPort), Servers: []string{},
				}
				if r.mode == "tcp" {
					rt.Rule = "HostSNI(`*`)"
				}
				if r.proxyProtocol {
					rt.ServersTransport = fmt.Sprintf("pp-transport-v%d@file", r.proxyProtocolVersion)
				}
				byKey[key] = rt
				order = append(order, key)
			}
			if t.health == healthUnhealthy {
				continue
			}
			if addr := fmt.Sprintf("%s:%d", t.ip, t.port); !contains(rt.Servers, addr) {
				rt.Servers = append(rt.Servers, addr)
			}
		}
		for _, key := range order {
			out = append(out, *byKey[key])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// rawTraefikConfig is the "tcp" and "udp" sections of the Traefik configuration, those
// that have a router.
func rawTraefikConfig(routers []RawRouter) map[string]any {
	type server struct {
		Address string `json:"address"`
	}
	type loadBalancer struct {
		Servers          []server `json:"servers"`
		ServersTransport string   `json:"serversTransport,omitempty"`
	}
	out := map[string]any{}
	for _, proto := range []string{"tcp", "udp"} {
		rts, svcs := map[string]any{}, map[string]any{}
		for _, r := range routers {
			if r.Protocol != proto {
				continue
			}
			service := strings.TrimSuffix(r.Name, "-router") + "-service"
			rt := map[string]any{"entryPoints": []string{r.EntryPoint}, "service": service}
			if r.Rule != "" {
				rt["rule"] = r.Rule
			}
			rts[r.Name] = rt
			lb := loadBalancer{Servers: []server{}, ServersTransport: r.ServersTransport}
			for _, a := range r.Servers {
				lb.Servers = append(lb.Servers, server{Address: a})
			}
			svcs[service] = map[string]any{"loadBalancer": lb}
		}
		if len(rts) > 0 {
			out[proto] = map[string]any{"routers": rts, "services": svcs}
		}
	}
	return out
}

// resourceMode is a new resource's mode: mode when sent, else what the deprecated http
// and protocol fields say (http true with protocol tcp is an HTTP resource, which only
// the HTTP create takes: httpAllowed), or the server's refusal.
func resourceMode(mode *string, httpFlag *bool, protocol *string, httpAllowed bool) (m, refusal string) {
	switch {
	case mode != nil:
		return *mode, ""
	case httpFlag == nil && protocol == nil:
		return "", "mode is required when deprecated fields are not provided"
	case httpAllowed && httpFlag != nil && *httpFlag && protocol != nil && *protocol == "tcp":
		return "http", ""
	case httpFlag != nil && !*httpFlag && protocol != nil:
		return *protocol, ""
	}
	return "", "Invalid deprecated http/protocol combination"
}
