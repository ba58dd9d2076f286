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
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Router names. Pangolin groups a resource's targets by path, match type and rewrite,
// and names each group's Traefik router and service after a key: the group string
// "<resourceId>-<encoded path>-<match>-<rewrite path>-<rewrite type>" cut to its first
// 50 characters (the reference's section 7). Two groups whose strings agree on those 50 characters get one router: the
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
func RouterKey(resourceID int, path, match, rewritePath, rewriteType string) string {
	return routerKey(resourceID, form{path, match, rewritePath, rewriteType})
}

// form is how a path group is written to Pangolin: its path match and its rewrite.
// Pangolin groups targets by all four, and names the group's router after them.
type form struct{ path, match, rewrite, rewriteType string }

func formOf(t pangolinapi.Target) form {
	return form{t.Path, t.PathMatchType, t.RewritePath, t.RewritePathType}
}

// routerKey is the key Pangolin names a path group's router after: the resource id,
// then the non-empty parts of the encoded path, the match type, the raw rewrite path
// and the rewrite type.
func routerKey(resourceID int, f form) string {
	group := strconv.Itoa(resourceID)
	for _, part := range []string{encodedPath(f.path), f.match, f.rewrite, f.rewriteType} {
		if part != "" {
			group += "-" + part
		}
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

// alternative is the n-th form of a path group (0: itself), ok false when there is
// none. The others are regular expressions Traefik matches exactly as the original: n
// empty groups at the start of a regular expression, or after the anchor of the
// literal a prefix or exact path becomes. A prefix or exact path Pangolin prefixes
// with '/' when it lacks one. An exact path's rewrite, a replacement of the whole
// path, becomes a regex rewrite, the same replacement of what the expression matches;
// a prefix path's rewrite depends on Pangolin's prefix match, and has no alternative.
func alternative(f form, n int) (form, bool) {
	if n == 0 {
		return f, true
	}
	marks := strings.Repeat(emptyGroup, n)
	if f.match == "regex" {
		f.path = marks + f.path
		return f, true
	}
	if f.rewriteType != "" && (f.match != "exact" || f.rewriteType != "exact" && f.rewriteType != "regex") {
		return f, false
	}
	path := f.path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	literal := "^" + marks + regexp.QuoteMeta(path)
	if f.match == "exact" {
		literal += "$"
	}
	f.path, f.match = literal, "regex"
	if f.rewriteType != "" {
		f.rewriteType = "regex"
	}
	return f, true
}

// original reads a form alternative wrote back into the path group it stands for; any
// other form is its own.
func original(f form) form {
	if f.match != "regex" {
		return f
	}
	if strings.HasPrefix(f.path, emptyGroup) {
		f.path = trimAll(f.path, emptyGroup)
		return f
	}
	body, ok := strings.CutPrefix(f.path, "^"+emptyGroup)
	if !ok {
		return f
	}
	body = trimAll(body, emptyGroup)
	if exact, ok := strings.CutSuffix(body, "$"); ok {
		if lit, ok := unquoteMeta(exact); ok {
			f.path, f.match = lit, "exact"
			if f.rewriteType == "regex" {
				f.rewriteType = "exact"
			}
			return f
		}
	}
	if lit, ok := unquoteMeta(body); ok && f.rewriteType == "" {
		f.path, f.match = lit, "prefix"
	}
	return f
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

// pathGroup is the targets of w that share a path match and a rewrite.
type pathGroup struct {
	form
	targets []int // indexes in w.targets
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
			if groups[g].form == t.form {
				groups[g].targets = append(groups[g].targets, i)
				found = true
			}
		}
		if !found {
			groups = append(groups, pathGroup{form: t.form, targets: []int{i}})
		}
	}
	id := e.res.ResourceID
	chosen := make([]*form, len(groups))
	owner := map[string]int{} // key -> group
	// What Pangolin holds keeps its form while its key is its own: no rewrite, no churn.
	for g, grp := range groups {
		for _, have := range e.targets {
			held := formOf(have)
			if original(held) != grp.form {
				continue
			}
			if _, taken := owner[routerKey(id, held)]; !taken {
				owner[routerKey(id, held)] = g
				chosen[g] = &held
				break
			}
		}
	}
	var out []target
	for g, grp := range groups {
		for n := 0; chosen[g] == nil && n <= maxAlternatives; n++ {
			f, ok := alternative(grp.form, n)
			if !ok {
				break
			}
			if _, taken := owner[routerKey(id, f)]; !taken {
				owner[routerKey(id, f)] = g
				chosen[g] = &f
			}
		}
		if chosen[g] == nil {
			other := groups[owner[routerKey(id, grp.form)]]
			a.res.Rejections = append(a.res.Rejections, route.Rejection{
				Origin: a.owner, Host: d.Host, Path: grp.path, Reason: pic.ReasonPathNotRoutable,
				Message: fmt.Sprintf(
					"path %s of host %s is not published: Pangolin names the router of each path after the first %d characters of the resource id, the hex-encoded path and its rewrite, and this path's name would be that of %s, which would take its requests; no equivalent form of it gets a name of its own: shorten the paths, or publish this one on another host",
					shownPath(grp.path, grp.match), d.PublishedHost(), routerKeyLength, shownPath(other.path, other.match)),
			})
			continue
		}
		for _, i := range grp.targets {
			t := w.targets[i]
			t.form = *chosen[g]
			out = append(out, t)
		}
	}
	return out
}
