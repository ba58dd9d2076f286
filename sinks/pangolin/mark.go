package pangolin

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// mark is what a resource's niceId and name say about where it came from: the source
// object, the host as the object names it, and the host Pangolin serves (they differ
// when the domain or subdomain annotations override the split).
type mark struct {
	Kind, Namespace, Name string
	Host                  string // the source host
	PublishedHost         string
}

// maxNameLength is Pangolin's limit on a resource's name.
const maxNameLength = 255

// niceIDHashLength is how much of the hash a niceId keeps: 64 bits, so that two hosts
// of one owner id never meet by chance.
const niceIDHashLength = 16

// niceIDPrefix starts the niceId of every resource this owner id creates.
func niceIDPrefix(ownerID string) string { return "pic-" + ownerID + "-" }

// niceID is the niceId of the resource of one host of one object: deterministic, so a
// restarted PIC, or a replica, finds what it created, and distinct per owner id, so that
// several clusters can share one org, like external-dns's owner id.
func niceID(ownerID string, m mark) string {
	sum := sha256.Sum256([]byte(m.Kind + "/" + m.Namespace + "/" + m.Name + "/" + m.Host))
	return niceIDPrefix(ownerID) + hex.EncodeToString(sum[:])[:niceIDHashLength]
}

// resourceName is the name users read in Pangolin's dashboard, which says where the
// resource came from: "app.example.com (Ingress shop/web)", with ", host <source host>"
// inside the brackets when the object names another host than the one published.
func resourceName(m mark) string {
	inner := m.Kind + " " + m.Namespace + "/" + m.Name
	if m.Host != m.PublishedHost {
		inner += ", host " + m.Host
	}
	return m.PublishedHost + " (" + inner + ")"
}

// parseName reads a name resourceName wrote. Hosts, kinds, namespaces and object names
// hold no spaces, brackets or commas, so the reading is unambiguous.
func parseName(name string) (mark, bool) {
	body, ok := strings.CutSuffix(name, ")")
	if !ok {
		return mark{}, false
	}
	public, inner, ok := strings.Cut(body, " (")
	if !ok || public == "" {
		return mark{}, false
	}
	inner, host, overridden := strings.Cut(inner, ", host ")
	kind, key, ok := strings.Cut(inner, " ")
	if !ok {
		return mark{}, false
	}
	ns, objName, ok := strings.Cut(key, "/")
	m := mark{Kind: kind, Namespace: ns, Name: objName, Host: public, PublishedHost: public}
	if overridden {
		m.Host = host
	}
	for _, part := range []string{m.Kind, m.Namespace, m.Name, m.Host, m.PublishedHost} {
		if part == "" || strings.ContainsAny(part, " ()/,") {
			return mark{}, false
		}
	}
	if !ok || (overridden && m.Host == m.PublishedHost) {
		return mark{}, false
	}
	return m, true
}

// owned reads the marks of a resource and says whether it is this owner id's: its niceId
// has the owner's prefix, its name parses, and the niceId is the one the parsed origin
// and host give. Anything else (another owner id, a hand-made resource, a name edited
// by hand) is never modified or deleted.
func owned(ownerID, nice, name string) (mark, bool) {
	if !strings.HasPrefix(nice, niceIDPrefix(ownerID)) {
		return mark{}, false
	}
	m, ok := parseName(name)
	if !ok || niceID(ownerID, m) != nice {
		return mark{}, false
	}
	return m, true
}

// markOf is the mark of the resource PIC writes for a host of origin.
func markOf(origin route.Origin, host, publishedHost string) mark {
	return mark{Kind: origin.Kind, Namespace: origin.Namespace, Name: origin.Name, Host: host, PublishedHost: publishedHost}
}

// sameObject reports whether m was written for origin, whatever its UID: Pangolin keeps
// no UID, and an object deleted and created again under the same name takes over what
// its predecessor published.
func (m mark) sameObject(origin route.Origin) bool {
	return m.Kind == origin.Kind && m.Namespace == origin.Namespace && m.Name == origin.Name
}

// origin is the source object the mark names, as far as Pangolin can tell: no UID.
func (m mark) origin() route.Origin {
	return route.Origin{Kind: m.Kind, Namespace: m.Namespace, Name: m.Name}
}
