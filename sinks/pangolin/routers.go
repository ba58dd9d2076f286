package pangolin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Router names. Pangolin groups a resource's targets by path and match type, and names
// each group's Traefik router and service after a key: the group string
// "<resourceId>-<encoded path>-<match>" cut to its first 50 characters (the reference's
// section 7). Two groups whose strings agree on those 50 characters get one router: the
// one Pangolin reads later overwrites the other, whose path then goes to the host's other
// routers, with no error anywhere. Before it writes a host's targets the sink computes
// every group's key as Pangolin will and, when two would meet, writes the later group in
// an equivalent form whose key differs (alternative); when none is left, it refuses
// that path with a PathNotRoutable Warning and publishes the rest. The key is computed
// by Pangolin 1.22's rule: a server that names routers otherwise (a release that adds a
// hash to long keys) routes the equivalent forms all the same.

// routerKeyLength is how much of the group string Pangolin keeps.
const routerKeyLength = 50

// maxAlternatives bounds the equivalent forms tried for one path group: each costs 8
// encoded characters of the 50, so no more than about six can differ inside them.
const maxAlternatives = 8

// emptyGroup is the regular expression that matches the empty string: a no-op at the
// start of a pattern, which makes the pattern's encoding differ from its first character.
const emptyGroup = "(?:)"

// RouterKey is the key PIC expects Pangolin to name a path group's router after (the
// contract suite checks it against a real server's Traefik configuration).
func RouterKey(resourceID int, path, match string) string { return routerKey(resourceID, path, match) }

// routerKey is the key Pangolin names a path group's router after.
func routerKey(resourceID int, path, match string) string {
	group := strconv.Itoa(resourceID)
	if enc := encodedPath(path); enc != "" {
		group += "-" + enc
	}
	if match != "" {
		group += "-" + match
	}
	return sanitizedKey(group)
}

// encodedPath writes every UTF-16 code unit other than an ASCII letter or digit as its
// code in lower-case hex, unpadded, as Pangolin's encodePath does.
func encodedPath(path string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(path)) {
		switch {
		case 'a' <= u && u <= 'z', 'A' <= u && u <= 'Z', '0' <= u && u <= '9':
			b.WriteByte(byte(u))
		default:
			b.WriteString(strconv.FormatUint(uint64(u), 16))
		}
	}
	return b.String()
}

// sanitizedKey cuts s to routerKeyLength UTF-16 code units, then collapses every run of
// characters other than ASCII letters, digits and '-' into one '-' and trims '-' at both
// ends, as Pangolin's sanitize does.
func sanitizedKey(s string) string {
	units := utf16.Encode([]rune(s))
	if len(units) > routerKeyLength {
		units = units[:routerKeyLength]
	}
	var b strings.Builder
	for _, u := range units {
		keep := 'a' <= u && u <= 'z' || 'A' <= u && u <= 'Z' || '0' <= u && u <= '9'
		switch {
		case keep:
			b.WriteByte(byte(u))
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// alternative is the n-th form of a path match (0: itself). The others are regular
// expressions Traefik matches exactly as the original: n empty groups at the start of a
// regular expression, or after the anchor of the literal a prefix or exact path becomes.
// A prefix or exact path Pangolin prefixes with '/' when it lacks one.
func alternative(path, match string, n int) (string, string) {
	if n == 0 {
		return path, match
	}
	marks := strings.Repeat(emptyGroup, n)
	if match == "regex" {
		return marks + path, "regex"
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	literal := "^" + marks + regexp.QuoteMeta(path)
	if match == "exact" {
		literal += "$"
	}
	return literal, "regex"
}

// original reads a form alternative wrote back into the path match it stands for; any
// other path match is its own.
func original(path, match string) (string, string) {
	if match != "regex" {
		return path, match
	}
	if strings.HasPrefix(path, emptyGroup) {
		return trimAll(path, emptyGroup), "regex"
	}
	body, ok := strings.CutPrefix(path, "^"+emptyGroup)
	if !ok {
		return path, match
	}
	body = trimAll(body, emptyGroup)
	if exact, ok := strings.CutSuffix(body, "$"); ok {
		if lit, ok := unquoteMeta(exact); ok {
			return lit, "exact"
		}
	}
	if lit, ok := unquoteMeta(body); ok {
		return lit, "prefix"
	}
	return path, match
}

func trimAll(s, prefix string) string {
	for strings.HasPrefix(s, prefix) {
		s = s[len(prefix):]
	}
	return s
}

// unquoteMeta undoes regexp.QuoteMeta: ok is false when s is not a quoted literal.
func unquoteMeta(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			b.WriteByte(s[i])
			continue
		}
		b.WriteByte(c)
	}
	lit := b.String()
	return lit, regexp.QuoteMeta(lit) == s
}

// elementPrefix matches the regular expression the engine writes for a Kubernetes
// Prefix path: "^<quoted path>(/.*)?$".
var elementPrefix = regexp.MustCompile(`^\^(.*)\(/\.\*\)\?\$$`)

// shownPath is a path match as the user wrote it, for messages: a Kubernetes Prefix
// path rather than the regular expression it became.
func shownPath(path, match string) string {
	if m := elementPrefix.FindStringSubmatch(path); match == "regex" && m != nil {
		if lit, ok := unquoteMeta(m[1]); ok {
			return lit + " (Prefix)"
		}
	}
	switch match {
	case "regex":
		return path + " (regular expression)"
	case "exact":
		return path + " (Exact)"
	}
	return path
}

// pathGroup is the targets of w that share a path and match type.
type pathGroup struct {
	path, match string
	targets     []int // indexes in w.targets
}

// routable gives every path group of d a router key of its own in resource e: a group
// keeps the form Pangolin holds when its key is free, else takes the first form whose
// key is; a group left without one is refused (a PathNotRoutable rejection naming it),
// and its targets are not written. It returns the targets to write.
func (a *applying) routable(d engine.Resource, w wanted, e *entry) []target {
	var groups []pathGroup
	for i, t := range w.targets {
		found := false
		for g := range groups {
			if groups[g].path == t.path && groups[g].match == t.match {
				groups[g].targets = append(groups[g].targets, i)
				found = true
			}
		}
		if !found {
			groups = append(groups, pathGroup{path: t.path, match: t.match, targets: []int{i}})
		}
	}
	id := e.res.ResourceID
	type form struct{ path, match string }
	chosen := make([]*form, len(groups))
	owner := map[string]int{} // key -> group
	// What Pangolin holds keeps its form while its key is its own: no rewrite, no churn.
	for g, grp := range groups {
		for _, have := range e.targets {
			if p, m := original(have.Path, have.PathMatchType); p != grp.path || m != grp.match {
				continue
			}
			if _, taken := owner[routerKey(id, have.Path, have.PathMatchType)]; !taken {
				owner[routerKey(id, have.Path, have.PathMatchType)] = g
				chosen[g] = &form{have.Path, have.PathMatchType}
				break
			}
		}
	}
	var out []target
	for g, grp := range groups {
		for n := 0; chosen[g] == nil && n <= maxAlternatives; n++ {
			p, m := alternative(grp.path, grp.match, n)
			if _, taken := owner[routerKey(id, p, m)]; !taken {
				owner[routerKey(id, p, m)] = g
				chosen[g] = &form{p, m}
			}
		}
		if chosen[g] == nil {
			other := groups[owner[routerKey(id, grp.path, grp.match)]]
			a.res.Rejections = append(a.res.Rejections, route.Rejection{
				Origin: a.owner, Host: d.Host, Path: grp.path, Reason: pic.ReasonPathNotRoutable,
				Message: fmt.Sprintf(
					"path %s of host %s is not published: Pangolin names the router of each path after the first %d characters of the resource id and the hex-encoded path, and this path's name would be that of %s, which would take its requests; no equivalent form of it gets a name of its own: shorten the paths, or publish this one on another host",
					shownPath(grp.path, grp.match), d.PublicHost(), routerKeyLength, shownPath(other.path, other.match)),
			})
			continue
		}
		for _, i := range grp.targets {
			t := w.targets[i]
			t.path, t.match = chosen[g].path, chosen[g].match
			out = append(out, t)
		}
	}
	return out
}
