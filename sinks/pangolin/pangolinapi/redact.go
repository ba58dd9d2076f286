package pangolinapi

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A redactor removes secrets from text a server or the transport returns: whatever a
// server or a proxy says may quote the request, in any encoding. A secret is found
//
//   - in any mix, character by character, of: the raw character; a JSON or JavaScript
//     escape (\" \\ \/ \' \n \uXXXX with surrogate pairs, \u{X}, \xXX, hex in either
//     case); percent-encoding (query or path escaping, UTF-8 bytes) and + for a space;
//     an HTML entity (&amp; &#38; &#x26;); with each letter in either case;
//   - in base64 (standard and URL alphabets, padded or not, at any alignment inside a
//     longer base64 text, so also inside an encoded "user:password" or request body);
//   - truncated: every run of at least a pattern's min consecutive characters of a
//     secret is removed, wherever it starts, so an echo cut short (or cut by this
//     package) shows fewer than min characters of it in a row.
//
// Layered encodings are undone only for the form the request body itself carries
// (encoding/json's escaping, then any of the above). Each match becomes "[redacted]".
// Redaction only ever removes text: a false match costs a word of a message, never a
// secret.
type redactor struct {
	patterns []pattern
	// starts indexes every character of every pattern by its case-folded form, so that
	// a character of the text is compared only with the characters it may be.
	starts map[rune][]start
}

// pattern is one text to remove, by runs of at least min characters.
type pattern struct {
	runes []rune
	min   int
}

// start is the character at index at of pattern p.
type start struct{ p, at int }

// minRun is the shortest run of a secret's characters that is removed. A request's
// secrets (password, PIN, header-auth user and password) are short and chosen by
// people: any four of their characters in a row go. The API key's secret is long and
// random and its redaction applies to every message of every request: half of it in a
// row goes, so that its short runs cannot cut words out of the messages the sink reads
// (apply.go matches some).
const minRun = 4

// minRunKey is the shortest run of the API key's secret that is removed.
func minRunKey(secret string) int { return max(minRun, (utf8.RuneCountInString(secret)+1)/2) }

// newRedactor is a redactor with the patterns of base.
func newRedactor(base *redactor) *redactor {
	r := &redactor{starts: map[rune][]start{}}
	if base != nil {
		for _, p := range base.patterns {
			r.addPattern(p)
		}
	}
	return r
}

// add makes r remove secret, and its base64 forms, by runs of at least run characters
// (the whole secret when it is shorter).
func (r *redactor) add(secret string, run int) {
	if secret == "" {
		return
	}
	// The secret as the request body carries it (JSON-escaped by encoding/json) too: a
	// server may quote the whole body, itself escaped or encoded once more.
	forms := []string{secret}
	if quoted, err := json.Marshal(secret); err == nil && string(quoted[1:len(quoted)-1]) != secret {
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	// Four base64 characters carry three bytes.
	b64Run := max(minRun, (4*run+2)/3)
	for _, form := range forms {
		r.addPattern(pattern{runes: []rune(form), min: run})
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			// Whole, with its last character and padding; and its cores, inside a longer text.
			r.addPattern(pattern{runes: []rune(enc.EncodeToString([]byte(form))), min: b64Run})
			for _, core := range base64Cores(enc.WithPadding(base64.NoPadding), []byte(form)) {
				r.addPattern(pattern{runes: []rune(core), min: b64Run})
			}
		}
	}
}

func (r *redactor) addPattern(p pattern) {
	p.min = max(1, min(p.min, len(p.runes)))
	for at, c := range p.runes {
		k := foldKey(c)
		r.starts[k] = append(r.starts[k], start{len(r.patterns), at})
	}
	r.patterns = append(r.patterns, p)
}

// base64Cores are the characters of enc's encoding of secret that depend on the secret
// alone, for each of the three alignments the secret can have inside a longer text:
// found in an encoded body or "user:password", they are the secret.
func base64Cores(enc *base64.Encoding, secret []byte) []string {
	var out []string
	for k := range 3 {
		buf := make([]byte, k, k+len(secret))
		buf = append(buf, secret...)
		s := enc.EncodeToString(buf)
		first := (8*k + 5) / 6   // the first character without filler bits
		last := 8 * len(buf) / 6 // the characters whose bits are all known
		if last > first {
			out = append(out, s[first:last])
		}
	}
	return out
}

// redact returns s without any of r's secrets.
func (r *redactor) redact(s string) string {
	if r == nil || len(r.patterns) == 0 || s == "" {
		return s
	}
	ends := r.matches(s)
	type span struct{ from, to int }
	var spans []span
	for i := 0; i < len(s); {
		if end := ends[i]; end > i {
			if k := len(spans) - 1; k >= 0 && spans[k].to >= i {
				spans[k].to = max(spans[k].to, end)
			} else {
				spans = append(spans, span{i, end})
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.from])
		b.WriteString(redacted)
		at = sp.to
	}
	b.WriteString(s[at:])
	return b.String()
}

// maxDecoded is the most bytes one decoded character takes ("\uD83D\uDE00").
const maxDecoded = 12

// reach is the longest match from some point: where it ends, how many characters.
type reach struct{ end, n int32 }

// matches returns, for each byte offset of s, where the longest run of a secret that
// starts there ends (the offset itself when none is long enough). It reads s backwards:
// the longest match of a pattern from its character at, at offset i, is one character
// (through any decoding of s at i) more than the longest from at+1 where that
// decoding ends, at most maxDecoded bytes further. So it keeps maxDecoded+1 rows of
// every pattern position, and its time is linear in s, whatever the text repeats.
func (r *redactor) matches(s string) []int {
	offset := make([]int, len(r.patterns)+1) // row index of each pattern's first character
	for p, pat := range r.patterns {
		offset[p+1] = offset[p] + len(pat.runes) + 1 // +1: past the last character, always 0
	}
	var rows [maxDecoded + 1][]reach
	for k := range rows {
		rows[k] = make([]reach, offset[len(r.patterns)])
	}
	ends := make([]int, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		row := rows[i%len(rows)]
		clear(row)
		ends[i] = i
		for _, d := range decodings(s, i) {
			next := i + d.n
			for _, st := range r.starts[foldKey(d.r)] {
				p := r.patterns[st.p]
				if !sameFolded(d.r, p.runes[st.at]) {
					continue
				}
				got := reach{end: int32(next), n: 1}
				if next < len(s) {
					if after := rows[next%len(rows)][offset[st.p]+st.at+1]; after.n > 0 {
						got = reach{end: after.end, n: after.n + 1}
					}
				}
				cell := &row[offset[st.p]+st.at]
				if got.n > cell.n {
					*cell = got
				}
				if int(got.n) >= p.min && int(got.end) > ends[i] {
					ends[i] = int(got.end)
				}
			}
		}
	}
	return ends
}

// foldKey is the same rune for every case of a letter.
func foldKey(r rune) rune {
	k := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		k = min(k, f)
	}
	return k
}

// sameFolded reports whether a and b are the same letter in some case.
func sameFolded(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// decoded is one way to read a character at some offset: the character and the number
// of bytes it takes.
type decoded struct {
	r rune
	n int
}

// decodings are the readings of s at byte offset i: the character itself, and the one
// an escape or encoding starting there stands for.
func decodings(s string, i int) []decoded {
	r, size := utf8.DecodeRuneInString(s[i:])
	out := []decoded{{r, size}}
	switch s[i] {
	case '+':
		out = append(out, decoded{' ', 1})
	case '%':
		if d, ok := percent(s[i:]); ok {
			out = append(out, d)
		}
	case '\\':
		if d, ok := backslash(s[i:]); ok {
			out = append(out, d)
		}
	case '&':
		if d, ok := entity(s[i:]); ok {
			out = append(out, d)
		}
	}
	return out
}

// percent reads one character of percent-encoded UTF-8 ("%26", "%C3%A9").
func percent(s string) (decoded, bool) {
	var buf []byte
	for n := 0; len(buf) < utf8.UTFMax && n+3 <= len(s) && s[n] == '%'; n += 3 {
		b, err := strconv.ParseUint(s[n+1:n+3], 16, 8)
		if err != nil {
			break
		}
		buf = append(buf, byte(b))
		if utf8.FullRune(buf) {
			r, size := utf8.DecodeRune(buf)
			if r == utf8.RuneError && size <= 1 {
				return decoded{}, false
			}
			return decoded{r, n + 3}, true
		}
	}
	return decoded{}, false
}

var simpleEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '0': 0}

// backslash reads one JSON or JavaScript escape.
func backslash(s string) (decoded, bool) {
	if len(s) < 2 {
		return decoded{}, false
	}
	if r, ok := simpleEscapes[s[1]]; ok {
		return decoded{r, 2}, true
	}
	switch s[1] {
	case 'x':
		if len(s) >= 4 {
			if v, err := strconv.ParseUint(s[2:4], 16, 8); err == nil {
				return decoded{rune(v), 4}, true
			}
		}
	case 'u':
		if strings.HasPrefix(s[2:], "{") {
			if end := strings.IndexByte(s, '}'); end > 3 && end <= 10 {
				if v, err := strconv.ParseUint(s[3:end], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
					return decoded{rune(v), end + 1}, true
				}
			}
			return decoded{}, false
		}
		if len(s) < 6 {
			return decoded{}, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		if err != nil {
			return decoded{}, false
		}
		r := rune(v)
		if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, err := strconv.ParseUint(s[8:12], 16, 16); err == nil && lo >= 0xDC00 && lo < 0xE000 {
				return decoded{(r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000, 12}, true
			}
		}
		return decoded{r, 6}, true
	}
	return decoded{}, false
}

var namedEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": ' '}

// entity reads one HTML character reference ("&amp;", "&#38;", "&#x26;").
func entity(s string) (decoded, bool) {
	end := strings.IndexByte(s, ';')
	if end < 2 || end > 10 {
		return decoded{}, false
	}
	name := s[1:end]
	if r, ok := namedEntities[strings.ToLower(name)]; ok {
		return decoded{r, end + 1}, true
	}
	if name[0] != '#' {
		return decoded{}, false
	}
	num, base := name[1:], 10
	if len(num) > 0 && (num[0] == 'x' || num[0] == 'X') {
		num, base = num[1:], 16
	}
	v, err := strconv.ParseUint(num, base, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return decoded{}, false
	}
	return decoded{rune(v), end + 1}, true
}
