package pangolinsim

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
)

// siteRoutes are the site writes: creating a Newt site with its agent's credentials, and
// deleting a site. They follow Pangolin 1.22's createSite and deleteSite (the facts are
// listed in docs/direct-mode.md, "Managed sites").
var siteRoutes = []route{
	{method: http.MethodPut, pattern: "/v1/org/:orgId/site", action: "createSite", handle: (*Server).createSite},
	{method: http.MethodDelete, pattern: "/v1/site/:siteId", action: "deleteSite", object: siteObject, handle: (*Server).deleteSite},
}

func init() { routes = append(routes, siteRoutes...) }

// createdSiteJSON is the create answer: the site, and for a Newt site the credentials it
// accepts, the secret in clear (the only time the server shows it).
type createdSiteJSON struct {
	siteJSON
	NewtID string `json:"newtId,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// Lengths of the credentials the server mints for a Newt site created without them.
const (
	mintedNewtIDLength     = 15
	mintedNewtSecretLength = 48
)

func (s *Server) createSite(q *request) response {
	if r := needObject(q); r != nil {
		return *r
	}
	v := newValidator(q.body)
	name, _ := v.str("name", true, false)
	if name != nil {
		lengthIssue(v, "name", *name, 1, 255)
	}
	niceID, _ := v.str("niceId", false, false)
	if niceID != nil {
		lengthIssue(v, "niceId", *niceID, 1, 255)
	}
	siteType, _ := v.enum("type", false, "newt", "wireguard", "local")
	newtID, _ := v.str("newtId", false, false)
	secret, _ := v.str("secret", false, false)
	v.str("pubKey", false, false)
	v.str("subnet", false, false)
	v.str("address", false, false)
	v.integer("exitNodeId", false, false, 1, 1<<31-1)
	v.strict()
	if siteType == nil && v.err() == "" {
		v.issue("Invalid option: expected one of \"newt\"|\"wireguard\"|\"local\"", "type")
	}
	if msg := v.err(); msg != "" {
		return fail(http.StatusBadRequest, "%s", msg)
	}
	org := q.params["orgId"]
	if !s.orgs[org] {
		return fail(http.StatusNotFound, "Organization with ID %s not found", org)
	}
	if *siteType == "wireguard" {
		return fail(http.StatusBadRequest, "inmemory Pangolin: site type wireguard is not implemented")
	}
	st := Site{ID: 1, Name: *name, Type: *siteType}
	for _, other := range s.opts.Sites {
		st.ID = max(st.ID, other.ID+1)
	}
	if niceID != nil {
		if _, taken := s.siteByNiceID(*niceID); taken {
			return fail(http.StatusConflict, "Nice ID %s already exists. Please choose a different one.", *niceID)
		}
		st.NiceID = *niceID
	} else {
		st.NiceID = s.newSiteNiceID()
	}
	out := createdSiteJSON{}
	if st.Type == "newt" {
		// A Newt site is offline until its agent connects; the test says when
		// (SetSiteOnline).
		st.Offline = true
		st.NewtID, out.Secret = s.mint(newtID, mintedNewtIDLength), s.mint(secret, mintedNewtSecretLength)
		st.newtSecretHash = sha256.Sum256([]byte(out.Secret))
		out.NewtID = st.NewtID
	}
	s.opts.Sites = append(s.opts.Sites, st)
	out.siteJSON = s.siteJSON(st)
	if st.Type == "newt" {
		out.siteJSON.NewtID = &st.NewtID
	}
	return ok(http.StatusCreated, "Site created successfully", out)
}

// mint returns given, or a fresh id of n lower-case letters and digits when none was.
func (s *Server) mint(given *string, n int) string {
	if given != nil {
		return *given
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// newSiteNiceID draws an unused site niceId. s.mu must be held.
func (s *Server) newSiteNiceID() string {
	for {
		id := s.newNiceID(s.opts.Org)
		if _, taken := s.siteByNiceID(id); !taken {
			return id
		}
	}
}

// siteByNiceID finds a site of the org. s.mu must be held.
func (s *Server) siteByNiceID(niceID string) (Site, bool) {
	for _, st := range s.opts.Sites {
		if st.NiceID == niceID {
			return st, true
		}
	}
	return Site{}, false
}

// deleteSite removes a site, and with it the targets on it (they reference it), as
// Pangolin's database does; the resources stay, without those targets.
func (s *Server) deleteSite(q *request) response {
	id, _ := strconv.Atoi(q.params["siteId"])
	for i, st := range s.opts.Sites {
		if st.ID == id {
			s.opts.Sites = append(s.opts.Sites[:i:i], s.opts.Sites[i+1:]...)
			break
		}
	}
	for tid, t := range s.targets {
		if t.siteID == id {
			s.dropTarget(tid)
		}
	}
	return ok(http.StatusOK, "Site deleted successfully", nil)
}

// NewtCredentialsMatch reports whether a Newt agent presenting these credentials would
// be accepted for the site with that niceId: what a test checks instead of running Newt.
func (s *Server) NewtCredentialsMatch(niceID, newtID, secret string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, found := s.siteByNiceID(niceID)
	if !found || st.Type != "newt" || st.NewtID == "" {
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	return st.NewtID == newtID && subtle.ConstantTimeCompare(sum[:], st.newtSecretHash[:]) == 1
}
