package pangolinsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContainsFold(t *testing.T) {
	cases := []struct {
		name   string
		field  string
		query  string
		expect bool
	}{
		{"the same text", "app.example.com", "app.example.com", true},
		{"a part of it", "app.example.com", "example", true},
		{"whatever the case of the field", "Ingress apps/Web", "ingress apps/web", true},
		{"whatever the case of the query", "app.example.com", "APP.Example", true},
		{"at the end", "app.example.com", ".com", true},
		{"an empty query matches", "app.example.com", "", true},
		{"a longer query does not", "app", "app.example.com", false},
		{"another text does not", "app.example.com", "api", false},
		{"non-ASCII, case folded", "Café.example.com", "CAFÉ", true},
		{"non-ASCII, absent", "Café.example.com", "thé", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.expect, containsFold(tc.query, tc.field))
		})
	}
}

// A resource's search sees its fields as they are now, after a rename.
func TestResourceMatchesItsFieldsAsTheyAre(t *testing.T) {
	r := &resource{name: "app.example.com (Ingress shop/Web)", niceID: "pic-1234", fullDomain: "app.example.com"}
	assert.True(t, r.matches("ingress shop/web"))
	assert.True(t, r.matches("pic-12"))
	assert.False(t, r.matches("api.example.com"))

	r.name, r.fullDomain = "api.example.com (Ingress shop/api)", "api.example.com"
	assert.True(t, r.matches("api.example.com"))
	assert.False(t, r.matches("shop/web"), "the old name is no longer searched")
}
