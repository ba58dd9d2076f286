// Package echotest is a server fault that quotes the secrets of each request back in
// every encoding a server or a proxy may use, and an oracle that finds a secret in a
// text whatever its encoding. Tests of the client and of the sink share it; it holds no
// product code.
package echotest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// Encoding is one way of quoting a text.
type Encoding struct {
	Name   string
	Encode func(string) string
}

// MinRun is the shortest run of a request secret's characters the client must remove;
// KeyRun is the API key's (pangolinapi/redact.go).
const MinRun = 4

// KeyRun is the shortest run of the API key's secret the client must remove.
func KeyRun(secret string) int { return max(MinRun, (utf8.RuneCountInString(secret)+1)/2) }

// Encodings are the ways a server or a proxy may quote a secret.
func Encodings() []Encoding {
	return []Encoding{
		{"raw", func(s string) string { return s }},
		{"upper case", strings.ToUpper},
		{"lower case", strings.ToLower},
		{"Go's JSON escaping", func(s string) string { return jsonInner(s, true) }},
		{"JSON escaping without HTML escapes (JavaScript's JSON.stringify)", func(s string) string { return jsonInner(s, false) }},
		{"ASCII-only JSON with upper-case hex and escaped slashes", asciiJSON},
		{"JavaScript string literal with \\x escapes", jsHex},
		{"query escaping", url.QueryEscape},
		{"path escaping", url.PathEscape},
		{"percent-encoding with lower-case hex and %20", func(s string) string {
			return strings.ToLower(strings.ReplaceAll(url.QueryEscape(s), "+", "%20"))
		}},
		{"HTML escaping", html.EscapeString},
		{"standard base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
		{"unpadded URL base64", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
		{"base64 after one byte of something else", func(s string) string {
			return base64.StdEncoding.EncodeToString([]byte("x" + s))
		}},
		{"base64 after two bytes of something else", func(s string) string {
			return base64.URLEncoding.EncodeToString([]byte("xy" + s))
		}},
		{"query-escaped base64", func(s string) string { return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(s))) }},
		{"truncated to its first four characters", func(s string) string { return firstRunes(s, MinRun) }},
		{"truncated and JSON-escaped", func(s string) string { return jsonInner(firstRunes(s, utf8.RuneCountInString(s)/2+2), true) }},
		{"its last four characters, query-escaped", func(s string) string {
			r := []rune(s)
			return url.QueryEscape(string(r[max(0, len(r)-MinRun):]))
		}},
	}
}

func firstRunes(s string, n int) string {
	r := []rune(s)
	return string(r[:min(n, len(r))])
}

func jsonInner(s string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s)
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '/':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func jsHex(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r < '0' || r > 'z') {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		if r >= 0x80 {
			fmt.Fprintf(&b, `\u{%x}`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// An echo shows each quoted text between these.
const (
	quoteOpen  = "«"
	quoteClose = "»"
)

// Echo answers every request with status and Pangolin's JSON error envelope whose
// message quotes, through enc, each string of the request's JSON body, "user:password"
// when the body has both, the whole body, and the token of its Authorization header.
func Echo(status int, enc Encoding) simtest.Fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"data": nil, "success": false, "error": true, "message": quote(r, enc), "status": status})
		return true
	}
}

// EchoPage is Echo in the shape of Express's HTML error page, the message in <pre>.
func EchoPage(status int, enc Encoding) simtest.Fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, "<!DOCTYPE html><html><body><pre>%s</pre></body></html>", html.EscapeString(quote(r, enc)))
		return true
	}
}

// quote is the message of an echo of r through enc.
func quote(r *http.Request, enc Encoding) string {
	var quoted []string
	b, _ := io.ReadAll(r.Body)
	var fields map[string]any
	if json.Unmarshal(b, &fields) == nil {
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			if v, ok := fields[k].(string); ok && v != "" {
				quoted = append(quoted, v)
			}
		}
		if u, ok := fields["user"].(string); ok {
			if p, ok := fields["password"].(string); ok {
				quoted = append(quoted, u+":"+p)
			}
		}
	}
	if len(b) > 0 {
		quoted = append(quoted, string(b))
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		quoted = append(quoted, token)
	}
	var msg strings.Builder
	msg.WriteString("refused " + enc.Name + ":")
	for _, q := range quoted {
		msg.WriteString(" " + quoteOpen + enc.Encode(q) + quoteClose)
	}
	return msg.String()
}

// Secret is a value to look for, and the shortest run of it that counts as a leak.
type Secret struct {
	Value string
	Run   int
}

// Leaks are the secrets found in text, read raw and through every decoding this
// package knows (JSON and JavaScript escapes, percent-encoding, HTML entities, base64
// at every alignment, and combinations of two), in any case.
func Leaks(text string, secrets []Secret) []string {
	seen := map[string]bool{}
	var readings []string
	for _, rd := range readingsOf(text) {
		if low := strings.ToLower(rd); !seen[low] {
			seen[low] = true
			readings = append(readings, low)
		}
	}
	var found []string
	for _, s := range secrets {
		runes := []rune(strings.ToLower(s.Value))
		n := min(s.Run, len(runes))
		var runs []string
		for i := 0; i+n <= len(runes); i++ {
			runs = append(runs, string(runes[i:i+n]))
		}
		for _, rd := range readings {
			for _, run := range runs {
				if strings.Contains(rd, run) {
					found = append(found, fmt.Sprintf("%q of a secret in %q", run, rd))
					break
				}
			}
		}
	}
	return found
}

func readingsOf(text string) []string {
	decoders := []func(string) string{unescapeJS, unescapePercent(false), unescapePercent(true), html.UnescapeString}
	out := []string{text}
	for _, d := range decoders {
		out = append(out, d(text))
	}
	for _, t := range slices.Clone(out) {
		for _, b := range decodeBase64(t) {
			out = append(out, b)
			for _, d := range decoders {
				out = append(out, d(b))
			}
		}
	}
	for _, t := range slices.Clone(out) {
		for _, d := range decoders {
			out = append(out, d(t))
		}
	}
	return out
}

var jsEscape = regexp.MustCompile(`\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)`)

func unescapeJS(s string) string {
	var pendingHigh rune
	return jsEscape.ReplaceAllStringFunc(s, func(m string) string {
		body := m[1:]
		var r rune
		switch {
		case strings.HasPrefix(body, "u{"):
			v, _ := strconv.ParseUint(body[2:len(body)-1], 16, 32)
			r = rune(v)
		case body[0] == 'u' && len(body) == 5:
			v, _ := strconv.ParseUint(body[1:], 16, 16)
			r = rune(v)
			if utf16.IsSurrogate(r) {
				if pendingHigh != 0 {
					c := utf16.DecodeRune(pendingHigh, r)
					pendingHigh = 0
					return string(c)
				}
				pendingHigh = r
				return ""
			}
		case body[0] == 'x' && len(body) == 3:
			v, _ := strconv.ParseUint(body[1:], 16, 8)
			r = rune(v)
		default:
			r = map[byte]rune{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[body[0]]
			if r == 0 {
				r, _ = utf8.DecodeRuneInString(body)
			}
		}
		return string(r)
	})
}

var percentRun = regexp.MustCompile(`(%[0-9a-fA-F]{2})+`)

func unescapePercent(plusIsSpace bool) func(string) string {
	return func(s string) string {
		if plusIsSpace {
			s = strings.ReplaceAll(s, "+", " ")
		}
		return percentRun.ReplaceAllStringFunc(s, func(m string) string {
			v, err := url.PathUnescape(m)
			if err != nil {
				return m
			}
			return v
		})
	}
}

var base64Token = regexp.MustCompile(`[A-Za-z0-9+/_-]{4,}`)

// decodeBase64 decodes every base64-looking token of s at every alignment.
func decodeBase64(s string) []string {
	var out []string
	for _, tok := range base64Token.FindAllString(s, -1) {
		tok = strings.NewReplacer("-", "+", "_", "/").Replace(tok)
		for shift := range 4 {
			t := tok[shift:]
			t = t[:len(t)-len(t)%4]
			if b, err := base64.StdEncoding.DecodeString(t); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return out
}
