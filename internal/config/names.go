package config

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// suggest returns `; did you mean "x"?` when one of known is close to s, else "".
func suggest(s string, known []string) string {
	if best := closest(s, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// closest returns the known word nearest to s, if it is near enough to be a typo. Case,
// '-', '_' and a PIC_ prefix are ignored, so that backend-scheme and PIC_BACKEND_SCHEME
// both find backendScheme.
func closest(s string, known []string) string {
	norm := func(w string) string {
		w = strings.ToLower(w)
		w = strings.TrimPrefix(w, "pic_")
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return -1
		}, w)
	}
	target := norm(s)
	best, bestDist := "", -1
	for _, k := range known {
		d := distance(target, norm(k))
		if short, long := min(target, norm(k)), max(target, norm(k)); len(short) >= 3 && strings.HasPrefix(long, short) {
			d = min(d, 1) // warning for warn, httproutes for httproute
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	// Allow about one typo per four letters, at least one, at most three.
	limit := min(max(len(target)/4, 1), 3)
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// formatValue shows a value as the user gave it: strings quoted, lists in brackets.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "(empty)"
	case string:
		return fmt.Sprintf("%q", v)
	case time.Duration:
		return fmt.Sprintf("%q", v.String())
	case []string:
		items := make([]string, len(v))
		for i, s := range v {
			items[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case []any:
		items := make([]string, len(v))
		for i, s := range v {
			items[i] = formatValue(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		return "(a mapping)"
	}
	return fmt.Sprint(v)
}
