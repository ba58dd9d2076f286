package pangolinapi

import (
	"context"
	"crypto/rand"
	"net/http"
	"strconv"
	"strings"
)

// Operations of the site calls, which only a managed site uses (docs/direct-mode.md,
// "Managed sites"). A Newt site's credentials are minted by the caller: the server keeps
// only the secret's hash, so a create whose answer is lost would otherwise lose them.
const (
	OpCreateSite = "createSite"
	OpDeleteSite = "deleteSite"
)

// SiteTypeNewt is the type of a site served by a Newt agent.
const SiteTypeNewt = "newt"

// NewtCredentials are what a Newt agent presents to Pangolin. Printing them shows the id
// only.
type NewtCredentials struct {
	ID     string
	Secret Secret
}

// String hides the secret from fmt.
func (c NewtCredentials) String() string {
	return "NewtCredentials{ID: " + c.ID + ", Secret: " + redacted + "}"
}

// GoString hides the secret from %#v.
func (c NewtCredentials) GoString() string { return c.String() }

// credentialAlphabet is the alphabet of the ids Pangolin mints itself (lower-case letters
// and digits), so that minted credentials look like the dashboard's.
const credentialAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// Lengths of the credentials Pangolin mints when the create request carries none: a
// 15-character Newt id and a 48-character secret.
const (
	newtIDLength     = 15
	newtSecretLength = 48
)

// NewNewtCredentials draws fresh credentials from crypto/rand.
func NewNewtCredentials() NewtCredentials {
	return NewtCredentials{ID: randomString(newtIDLength), Secret: Secret(randomString(newtSecretLength))}
}

func randomString(n int) string {
	var b strings.Builder
	buf := make([]byte, n)
	_, _ = rand.Read(buf) // crypto/rand.Read never fails (Go 1.24+)
	for _, x := range buf {
		// 256 is not a multiple of the alphabet's 36 letters: reject the top values so
		// that every letter is equally likely.
		for int(x) >= 252 {
			var one [1]byte
			_, _ = rand.Read(one[:])
			x = one[0]
		}
		b.WriteByte(credentialAlphabet[int(x)%len(credentialAlphabet)])
	}
	return b.String()
}

// NewtSite is a Newt site to create.
type NewtSite struct {
	NiceID      string
	Name        string
	Credentials NewtCredentials
}

// CreateNewtSite creates a site of type newt with the given niceId and credentials
// (PUT /org/:orgId/site, action createSite). A niceId already taken answers 409. The
// secret is removed from whatever the server says, as for every write that carries one.
func (c *Client) CreateNewtSite(ctx context.Context, s NewtSite) (Site, error) {
	body := struct {
		Name   string `json:"name"`
		NiceID string `json:"niceId"`
		Type   string `json:"type"`
		NewtID string `json:"newtId"`
		Secret string `json:"secret"`
	}{Name: s.Name, NiceID: s.NiceID, Type: SiteTypeNewt, NewtID: s.Credentials.ID, Secret: string(s.Credentials.Secret)}
	// The Newt secret is removed as a password is, in every encoding and by short runs
	// (minRun): a server or proxy echoing the body, whole, encoded or cut, cannot carry
	// it into an error. It applies to this request's messages only, so its short runs
	// cannot cut words out of the messages of others.
	r := newRedactor(c.cred.key)
	r.add(string(s.Credentials.Secret), minRun)
	var out Site
	err := c.exchange(ctx, OpCreateSite, http.MethodPut, c.orgPath("/site"), nil, body, &out, r.redact)
	return out, err
}

// DeleteSite deletes a site by its numeric id (DELETE /site/:siteId, action deleteSite).
func (c *Client) DeleteSite(ctx context.Context, siteID int) error {
	return c.do(ctx, OpDeleteSite, http.MethodDelete, "/site/"+strconv.Itoa(siteID), nil, nil, nil)
}
