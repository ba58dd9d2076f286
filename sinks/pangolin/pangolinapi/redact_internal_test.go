package pangolinapi

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRedactor(t *testing.T) {
	cases := []struct {
		name, secret, text, want string
	}{
		{"a raw secret goes", "Tom&Jerry", "bad Tom&Jerry here", "bad [redacted] here"},
		{"a JSON-escaped secret goes with its escapes", "Tom&Jerry<3", `bad "Tom\u0026Jerry\u003C3" here`, `bad "[redacted]" here`},
		{"a query-escaped secret goes", "a b&c/d", "q=a+b%26c%2Fd&x", "q=[redacted]&x"},
		{"a secret in another case goes", "Tom&Jerry", "TOM&JERRY", "[redacted]"},
		{"an HTML-escaped secret goes", "Tom&Jerry", "Tom&amp;Jerry", "[redacted]"},
		{"four characters of a secret in a row go", "Tom&Jerry", "cut: Tom&…", "cut: [redacted]…"},
		{"three characters stay", "Tom&Jerry", "cut: Tom…", "cut: Tom…"},
		{"base64 of user:password goes", "user:pass-word", "Basic dXNlcjpwYXNzLXdvcmQ=", "Basic [redacted]"},
		{"text without the secret is untouched", "Tom&Jerry", "Resource with ID 999 not found", "Resource with ID 999 not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRedactor(nil)
			r.add(tc.secret, minRun)
			assert.Equal(t, tc.want, r.redact(tc.text))
		})
	}
}

func TestKeyRedactionSparesShortRuns(t *testing.T) {
	c := newCredential("keyid.abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz")
	assert.Equal(t, "resource abcd not found", c.redact("resource abcd not found"), "a quarter of the key is not enough to remove")
	assert.Equal(t, "token [redacted]", c.redact("token keyid.abcdefghijklmnopqrstuvwxyz"), "the id goes with the key")
	assert.Equal(t, "[redacted]…", c.redact("abcdefghijklm…"), "half of the key goes")
}

func TestRedactionTimeIsBounded(t *testing.T) {
	r := newRedactor(nil)
	r.add(strings.Repeat(`\`, 100), minRun)
	r.add(strings.Repeat("a%", 50), minRun)
	text := strings.Repeat(`\`, maxMessage/2) + strings.Repeat("a%25", maxMessage/8) + "a%"
	start := time.Now()
	out := r.redact(text)
	assert.Equal(t, "[redacted]", out)
	assert.Less(t, time.Since(start), 5*time.Second)
}
