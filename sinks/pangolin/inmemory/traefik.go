package inmemory

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Router is one router of the Traefik configuration Pangolin would serve at
// GET /api/v1/traefik-config: what the world would reach. Only the websecure router of
// each group is listed; Pangolin adds a twin "-redirect" router on web with the same
// rule and priority.
type Router struct {
	Name       string // "<resourceId>-<hex path>-<match>-<name>-router", or "<resourceId>-<name>-router"
	ResourceID int
	Host       string // the resource's full domain, the rule's Host
	Rule       string // "Host(`h`) && PathPrefix(`/p`)"
	Priority   int
	// Servers are "<method>://<ip>:<port>", de-duplicated, in target order. Targets
	// without a method and unhealthy ones are left out, which can leave none.
	Servers []string
}

var routerNameJunk = regexp.MustCompile(`[^A-Za-z0-9]+`)

// Routers derives the routers from the stored state, following the reference's
// section 7: enabled resources; per resource, one router per group of enabled targets
// sharing path, match type and rewrite; rule by match type; priority explicit unless it
// is 100 or empty. Sorted by name.
func (s *Server) Routers() []Router {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Router
	for _, r := range s.res {
		if !r.enabled {
			continue
		}
		type group struct {
			first   *target
			servers []string
		}
		var order []string
		groups := map[string]*group{}
		for _, t := range s.targetsOf(r.id) {
			if !t.enabled {
				continue
			}
			key := strings.Join([]string{deref(t.path), deref(t.pathMatchType), deref(t.rewritePath), deref(t.rewritePathType)}, "\x00")
			g, seen := groups[key]
			if !seen {
				g = &group{first: t, servers: []string{}}
				groups[key] = g
				order = append(order, key)
			}
			if t.method == nil || *t.method == "" || t.hcHealth() == "unhealthy" {
				continue
			}
			u := fmt.Sprintf("%s://%s:%d", *t.method, t.ip, t.port)
			if !contains(g.servers, u) {
				g.servers = append(g.servers, u)
			}
		}
		for _, key := range order {
			g := groups[key]
			out = append(out, router(r, g.first, g.servers))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Served is what the world reaches: each host Pangolin routes, with the servers of all
// its routers.
func (s *Server) Served() map[string][]string {
	out := map[string][]string{}
	for _, r := range s.Routers() {
		out[r.Host] = append(out[r.Host], r.Servers...)
	}
	return out
}

// router builds the router of the group whose first target (lowest id) is t. Which
// target's priority a mixed group takes was not observed; the first one's is used.
func router(r *resource, t *target, servers []string) Router {
	name := strings.Trim(routerNameJunk.ReplaceAllString(r.name, "-"), "-")
	rt := Router{ResourceID: r.id, Host: r.fullDomain, Servers: servers, Rule: fmt.Sprintf("Host(`%s`)", r.fullDomain)}
	path, match := deref(t.path), deref(t.pathMatchType)
	if path == "" || match == "" {
		rt.Name = fmt.Sprintf("%d-%s-router", r.id, name)
	} else {
		rt.Name = fmt.Sprintf("%d-%s-%s-%s-router", r.id, encodePath(path), match, name)
		if match != "regex" && !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		switch match {
		case "exact":
			rt.Rule += fmt.Sprintf(" && Path(`%s`)", path)
		case "prefix":
			rt.Rule += fmt.Sprintf(" && PathPrefix(`%s`)", path)
		case "regex":
			rt.Rule += fmt.Sprintf(" && PathRegexp(`%s`)", path)
		}
	}
	rt.Priority = routerPriority(t.priority, path, match)
	return rt
}

// encodePath keeps letters and digits and hex-encodes every other byte, as observed:
// "^/api(/.*)?$" gives "5e2fapi282f2e2a293f24".
func encodePath(p string) string {
	var b strings.Builder
	for i := range len(p) {
		c := p[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			b.WriteByte(c)
		} else {
			b.WriteString(hex.EncodeToString([]byte{c}))
		}
	}
	return b.String()
}

// routerPriority keeps an explicit priority, except 100 (the default) which cannot be
// told from "none" and is derived from the path like an empty one.
func routerPriority(explicit *int, path, match string) int {
	if explicit != nil && *explicit != 100 {
		return *explicit
	}
	switch {
	case path == "" || match == "":
		return 100
	case path == "/":
		return 1
	case match == "exact":
		return 115
	case match == "prefix":
		return 113
	}
	return 112 // regex
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
