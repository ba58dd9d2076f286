package pangolinsim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// Router is one router of the Traefik configuration Pangolin would serve at
// GET /api/v1/traefik-config: what the world would reach. Only the websecure router of
// each group is listed; Pangolin adds a twin "-redirect" router on web with the same
// rule and priority.
type Router struct {
	// Name is "<key>-<name>-router", key and name as RouterKey and sanitize make them:
	// "71-5e2fapi282f2e2a293f24-regex-app-example-com-router".
	Name       string
	ResourceID int
	Host       string // the resource's full domain, the rule's Host
	Rule       string // "Host(`h`) && PathPrefix(`/p`)"
	Priority   int
	// Servers are "<method>://<ip>:<port>", de-duplicated, in target order. Targets
	// without a method and unhealthy ones are left out, which can leave none.
	Servers []string
	// Middlewares are the router's, in order: "badger", then the group's rewrite
	// ("rewrite-r<resourceId>-<key>", and "addprefix-r<resourceId>-<key>" after a
	// stripPrefix with a path to add), then "<key>-headers-middleware" when the
	// resource has headers or a host header.
	Middlewares []string
	// Rewrite is the group's path rewrite; nil for none.
	Rewrite *Rewrite
	// RequestHeaders are the headers middleware's customRequestHeaders: the resource's
	// headers, and Host from its setHostHeader. Nil for none.
	RequestHeaders map[string]string
}

// Rewrite is the Traefik middleware (or pair) Pangolin makes of a target's rewrite
// (the reference's section 14).
type Rewrite struct {
	// ReplacePathRegex is set for a replacePathRegex middleware: Regex, Replacement.
	ReplacePathRegex bool
	Regex            string
	Replacement      string
	// StripPrefix is set for a stripPrefix middleware (prefix match with a stripPrefix
	// rewrite); AddPrefix, when set, is the addPrefix middleware chained after it.
	StripPrefix string
	AddPrefix   string
}

func (r Rewrite) String() string {
	if r.ReplacePathRegex {
		return fmt.Sprintf("replacePathRegex %s -> %s", r.Regex, r.Replacement)
	}
	if r.AddPrefix != "" {
		return fmt.Sprintf("stripPrefix %s, addPrefix %s", r.StripPrefix, r.AddPrefix)
	}
	return "stripPrefix " + r.StripPrefix
}

// traefik is the middleware's Traefik configuration, by middleware name.
func (r Rewrite) traefik(name string) (map[string]any, []string) {
	if r.ReplacePathRegex {
		return map[string]any{name: map[string]any{"replacePathRegex": map[string]string{"regex": r.Regex, "replacement": r.Replacement}}}, []string{name}
	}
	out := map[string]any{name: map[string]any{"stripPrefix": map[string][]string{"prefixes": {r.StripPrefix}}}}
	if r.AddPrefix == "" {
		return out, []string{name}
	}
	add := "addprefix-" + strings.TrimPrefix(name, "rewrite-")
	out[add] = map[string]any{"addPrefix": map[string]string{"prefix": r.AddPrefix}}
	return out, []string{name, add}
}

// Routers derives the routers from the stored state, following the reference's
// section 7: enabled resources; per resource, one router per group of enabled targets
// sharing path, match type and rewrite; rule by match type; priority explicit unless it
// is 100 or empty. Router and service names are cut as Pangolin cuts them (RouterKey):
// two groups of one resource whose keys agree write to the same name, and the group
// whose first target comes later (by id) overwrites the other, which is then served
// nowhere, as on a real server. Sorted by name.
func (s *Server) Routers() []Router {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Router
	for _, r := range s.res {
		if !r.enabled || r.raw() {
			continue // raw resources have TCP and UDP routers: RawRouters
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
			key := groupString(r.id, t)
			g, seen := groups[key]
			if !seen {
				g = &group{first: t, servers: []string{}}
				groups[key] = g
				order = append(order, key)
			}
			if t.method == nil || *t.method == "" || t.health == healthUnhealthy {
				continue
			}
			u := fmt.Sprintf("%s://%s:%d", *t.method, t.ip, t.port)
			if !contains(g.servers, u) {
				g.servers = append(g.servers, u)
			}
		}
		byName := map[string]Router{}
		headers := requestHeaders(r)
		for _, key := range order {
			g := groups[key]
			if !validRewrite(g.first) {
				// Pangolin logs "Path rewriting requires path matching to be
				// configured" (or the like) and leaves the group out: no router, no
				// service, no error to the client.
				continue
			}
			rt := router(r, g.first, g.servers)
			rt.Middlewares = []string{"badger"}
			if rw := rewriteOf(g.first); rw != nil {
				rt.Rewrite = rw
				_, chain := rw.traefik(rewriteName(r.id, g.first))
				rt.Middlewares = append(rt.Middlewares, chain...)
			}
			if headers != nil {
				rt.RequestHeaders = headers
				rt.Middlewares = append(rt.Middlewares, sanitize(groupString(r.id, g.first))+"-headers-middleware")
			}
			byName[rt.Name] = rt // a later group with the same name overwrites
		}
		for _, rt := range byName {
			out = append(out, rt)
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

// TraefikConfigPath is where Pangolin serves the Traefik configuration (on its internal
// port, 3001, without authentication); the fake serves it beside the API, at its root.
const TraefikConfigPath = "/api/v1/traefik-config"

// traefikConfig is the part of Pangolin's Traefik configuration Routers and RawRouters
// model: the websecure routers and their services, the TCP and UDP routers and theirs,
// or {} when nothing is routed.
func (s *Server) traefikConfig() any {
	routers := s.Routers()
	config := rawTraefikConfig(s.RawRouters())
	if len(routers) == 0 {
		return config
	}
	type server struct {
		URL string `json:"url"`
	}
	type loadBalancer struct {
		Servers []server `json:"servers"`
	}
	rts, svcs, mws := map[string]any{}, map[string]any{}, map[string]any{}
	for _, r := range routers {
		service := strings.TrimSuffix(r.Name, "-router") + "-service"
		rts[r.Name] = map[string]any{
			"entryPoints": []string{"websecure"}, "middlewares": r.Middlewares,
			"service": service, "rule": r.Rule, "priority": r.Priority,
		}
		for _, name := range r.Middlewares {
			switch {
			case strings.HasPrefix(name, "rewrite-") && r.Rewrite != nil:
				defs, _ := r.Rewrite.traefik(name)
				for k, v := range defs {
					mws[k] = v
				}
			case strings.HasSuffix(name, "-headers-middleware"):
				mws[name] = map[string]any{"headers": map[string]any{"customRequestHeaders": r.RequestHeaders}}
			}
		}
		lb := loadBalancer{Servers: []server{}}
		for _, u := range r.Servers {
			lb.Servers = append(lb.Servers, server{URL: u})
		}
		svcs[service] = map[string]any{"loadBalancer": lb}
	}
	out := map[string]any{"routers": rts, "services": svcs}
	if len(mws) > 0 {
		out["middlewares"] = mws
	}
	config["http"] = out
	return config
}

// validRewrite is Pangolin's check of a group's rewrite (validatePathRewriteConfig):
// a rewrite needs a path match, and, except for stripPrefix, a rewrite path and its
// type come together. Empty strings count as unset, as in JavaScript.
func validRewrite(t *target) bool {
	path, match, rw, rwType := deref(t.path), deref(t.pathMatchType), deref(t.rewritePath), deref(t.rewritePathType)
	if path == "" || match == "" {
		return rw == "" && rwType == ""
	}
	if rwType != "stripPrefix" && (rw == "") != (rwType == "") {
		return false
	}
	return true
}

func rewriteName(resourceID int, t *target) string {
	return fmt.Sprintf("rewrite-r%d-%s", resourceID, sanitize(groupString(resourceID, t)))
}

// rewriteOf is the middleware Pangolin makes of a group's rewrite
// (createPathRewriteMiddleware): none without a rewrite path (null) or a type. A
// missing leading '/' is added to non-regex paths and, for rewrite types other than
// regex, to a non-empty rewrite path; Pangolin escapes a literal path with
// [.*+?^${}()|[\]\\].
func rewriteOf(t *target) *Rewrite {
	if t.rewritePath == nil || t.path == nil || deref(t.pathMatchType) == "" || deref(t.rewritePathType) == "" {
		return nil
	}
	path, match, rw, rwType := *t.path, *t.pathMatchType, *t.rewritePath, *t.rewritePathType
	if match != "regex" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if rwType != "regex" && rw != "" && !strings.HasPrefix(rw, "/") {
		rw = "/" + rw
	}
	literal := jsEscapeRegex(path)
	replace := func(regex, replacement string) *Rewrite {
		return &Rewrite{ReplacePathRegex: true, Regex: regex, Replacement: replacement}
	}
	switch rwType {
	case "exact":
		return replace("^"+literal+"$", rw)
	case "prefix":
		switch match {
		case "prefix":
			return replace("^"+literal+"(.*)", rw+"$1")
		case "exact":
			return replace("^"+literal+"$", rw)
		}
		return replace(path, rw)
	case "regex":
		switch match {
		case "regex":
			return replace(path, rw)
		case "prefix":
			return replace("^"+literal+"(.*)", rw)
		}
		return replace("^"+literal+"$", rw)
	case "stripPrefix":
		switch match {
		case "prefix":
			out := &Rewrite{StripPrefix: path}
			if rw != "" && rw != "/" {
				out.AddPrefix = rw
			}
			return out
		case "exact":
			return replace("^"+literal+"$", cmpOr(rw, "/"))
		}
		return replace(path, cmpOr(rw, "/"))
	}
	return nil // Pangolin logs the unknown type and writes no middleware
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// jsEscapeRegex escapes what Pangolin's escapeRegex escapes: . * + ? ^ $ { } ( ) | [ ] \
func jsEscapeRegex(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`.*+?^${}()|[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// requestHeaders is the customRequestHeaders of a resource's headers middleware: its
// headers, then Host from setHostHeader; nil when it has neither.
func requestHeaders(r *resource) map[string]string {
	var list []struct{ Name, Value string }
	if len(r.headers) > 0 {
		_ = json.Unmarshal(r.headers, &list) // validated on the way in
	}
	if len(list) == 0 && deref(r.setHostHeader) == "" {
		return nil
	}
	out := map[string]string{}
	for _, h := range list {
		out[h.Name] = h.Value
	}
	if host := deref(r.setHostHeader); host != "" {
		out["Host"] = host
	}
	return out
}

// groupString is the full key Pangolin groups a resource's targets by: the resource id
// and, when set, the encoded path, the match type, the raw rewrite path and its type,
// joined with "-".
func groupString(resourceID int, t *target) string {
	parts := []string{strconv.Itoa(resourceID)}
	for _, p := range []string{encodePath(deref(t.path)), deref(t.pathMatchType), deref(t.rewritePath), deref(t.rewritePathType)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "-")
}

// RouterKey is the key Pangolin 1.22 names a path group's router, service and
// middlewares after: the group string (resource id, encoded path, match type, rewrite)
// through sanitize, which keeps only its first 50 characters. Two groups whose strings
// agree on those get one key. Exported for tests that check the rule itself.
func RouterKey(resourceID int, path, pathMatchType, rewritePath, rewritePathType string) string {
	t := &target{path: strp(path), pathMatchType: strp(pathMatchType), rewritePath: strp(rewritePath), rewritePathType: strp(rewritePathType)}
	return sanitize(groupString(resourceID, t))
}

// sanitize cuts text to its first 50 UTF-16 code units, then turns every run of
// characters other than ASCII letters, digits and '-' into one '-', and trims '-' at
// both ends.
func sanitize(text string) string {
	units := utf16.Encode([]rune(text))
	if len(units) > 50 {
		units = units[:50]
	}
	var b strings.Builder
	dash := false
	for _, u := range units {
		ok := u < 0x80 && (unicode.IsLetter(rune(u)) || unicode.IsDigit(rune(u)))
		if ok {
			b.WriteRune(rune(u))
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// router builds the router of the group whose first target (lowest id) is t. Which
// target's priority a mixed group takes was not observed; the first one's is used.
func router(r *resource, t *target, servers []string) Router {
	key := sanitize(groupString(r.id, t))
	rt := Router{ResourceID: r.id, Host: r.fullDomain, Servers: servers, Rule: fmt.Sprintf("Host(`%s`)", r.fullDomain)}
	rt.Name = key + "-" + sanitize(r.name) + "-router"
	path, match := deref(t.path), deref(t.pathMatchType)
	if path != "" && match != "" {
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

// encodePath keeps ASCII letters and digits and writes every other UTF-16 code unit as
// its code in lower-case hex, unpadded, as observed: "^/api(/.*)?$" gives
// "5e2fapi282f2e2a293f24".
func encodePath(p string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(p)) {
		if u < 0x80 && (unicode.IsLetter(rune(u)) || unicode.IsDigit(rune(u))) {
			b.WriteRune(rune(u))
		} else {
			b.WriteString(strconv.FormatUint(uint64(u), 16))
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
