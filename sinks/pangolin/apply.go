package pangolin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// Apply implements plugin.Sink. Only differences are written: a converged object costs
// no request at all. A transient failure (no answer, 5xx) stops it with an error, which
// the core retries with backoff; Pangolin refusing a request (4xx, or a 500 it gives
// the same request each time: pangolinapi.IsRefused) becomes a PangolinError rejection
// for that host, and Apply goes on with the next: the same request would be refused
// again, and the plan is tried again on the next change or resync (on a slow backoff
// for a 500). A deletion waiting for an arrival that did not land (plan.After) is kept.
func (s *Sink) Apply(ctx context.Context, owner route.Origin, plan engine.Plan) (plugin.Applied, error) {
	a := &applying{sink: s, owner: owner}
	// A host created, adopted or deleted changes who holds it: its claimants look again,
	// the owner among them: what Pangolin now serves (the status it reports) is read by
	// that reconcile, not this one.
	defer func() { s.changes.publish(ctx, plugin.Change{Hosts: a.hosts}) }()
	err := a.apply(ctx, plan)
	// The access records are saved even when Apply stopped part-way.
	if saveErr := s.saveAccessRecords(ctx, owner, plan); saveErr != nil && err == nil {
		err = saveErr
	}
	return a.res, err
}

func (a *applying) apply(ctx context.Context, plan engine.Plan) error {
	for _, d := range plan.Create {
		if err := a.create(ctx, d); err != nil {
			return unreachable(err)
		}
	}
	// Access are resources whose access alone may differ: update writes nothing else
	// for them.
	for _, d := range slices.Concat(plan.Update, plan.Access) {
		if err := a.update(ctx, d); err != nil {
			return unreachable(err)
		}
	}
	for _, e := range plan.Delete {
		// Make before break: what a replacement that did not land would leave is kept.
		if waits := slices.DeleteFunc(slices.Clone(plan.After[e.Name]), a.landed); len(waits) > 0 {
			a.keep(e, waits)
			continue
		}
		if err := a.delete(ctx, e); err != nil {
			return unreachable(err)
		}
	}
	return nil
}

// landed reports whether d, created or written by this Apply or earlier, exists in
// Pangolin with its targets: what a deletion that waits for it needs. A write Pangolin
// refused on the way (a target, its access) leaves it short of what it replaces.
func (a *applying) landed(d engine.Resource) bool {
	if a.refusedWrites[d.Host] {
		return false
	}
	s := a.sink
	id := niceID(s.ownerID, markOf(d.Origin, d.Host, d.PublishedHost()))
	e, ok := s.lookup(id)
	return ok && len(e.targets) > 0
}

// keep is a deletion not made because what replaces e did not land: e stays as it is,
// and a rejection says why, with what refused the replacement.
func (a *applying) keep(e engine.Existing, replacements []engine.Resource) {
	var what []string
	for _, d := range replacements {
		what = append(what, a.refusedAs(d))
	}
	a.res.Rejections = append(a.res.Rejections, route.Rejection{
		Origin: a.owner, Host: e.Host, Reason: pic.ReasonReplacementRefused, Kept: true,
		Message: engine.KeptMessage(subject(e.Resource), strings.Join(what, ", ")),
	})
}

// refusedAs names d and the reason it was refused for, in a ReplacementRefused message.
func (a *applying) refusedAs(d engine.Resource) string {
	why := "not published"
	for _, rj := range a.res.Rejections {
		if rj.Host == d.Host && !rj.Kept {
			why = rj.Reason
		}
	}
	return subject(d) + " (" + why + ")"
}

// keepHost says that a resource moving in place from the public host from to d's
// keeps from: the move was refused.
func (a *applying) keepHost(d engine.Resource, from string) {
	a.res.Rejections = append(a.res.Rejections, route.Rejection{
		Origin: a.owner, Host: d.Host, Reason: pic.ReasonReplacementRefused, Kept: true,
		Message: engine.KeptMessage("host "+from, a.refusedAs(d)),
	})
}

// applying is one Apply call.
type applying struct {
	sink  *Sink
	owner route.Origin
	res   plugin.Applied
	hosts []string
	// targetWrites and accessWrites count the target and access writes that succeeded,
	// to tell an update that wrote from one that found nothing to change, or whose every
	// write failed.
	targetWrites int
	accessWrites int
	// refusedWrites are the hosts Pangolin refused a write for (refuseWrite).
	refusedWrites map[string]bool
	// rawResources are the org's raw resources by mode, listed once per Apply: an
	// object with several ports creates several.
	rawResources map[string][]pangolinapi.ResourceSummary
}

// failed sorts a failed request: transient, it is returned and stops Apply; refused, it
// becomes a rejection and Apply goes on.
func (a *applying) failed(ctx context.Context, d engine.Resource, what string, err error) error {
	if ctx.Err() != nil || pangolinapi.IsTransient(err) {
		return fmt.Errorf("%s: cannot %s: %w", subject(d), what, err)
	}
	a.refuseWrite(d, "%s: Pangolin refused to %s: %s%s", subject(d), what, refusal(err), rawRefusalHint(d, err))
	if pangolinapi.IsRefused(err) {
		// A value Pangolin answers with a 500: the client sends it again only on a slow
		// backoff, and the retry is what asks it again.
		a.res.Rejections[len(a.res.Rejections)-1].Retry = true
	}
	return nil
}

// rawRefusalHint points at the server's switch when Pangolin refuses a raw resource
// because flags.allow_raw_resources is off: Pangolin's own message does not say where
// the switch is. The API has no error codes, so its words are what is matched.
func rawRefusalHint(d engine.Resource, err error) string {
	var ae *pangolinapi.APIError
	if !d.Raw() || !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		return ""
	}
	if strings.Contains(ae.Message, "Raw resources are not allowed") || strings.Contains(ae.Message, "Cannot update proxyPort") {
		return " (the Pangolin server allows TCP and UDP resources only with flags.allow_raw_resources: true in its configuration; see docs/direct-mode.md)"
	}
	return ""
}

// subject names what d publishes, in messages: "host app.example.com", or
// "public port 5432/tcp" for a raw resource.
func subject(d engine.Resource) string {
	if d.Raw() {
		return fmt.Sprintf("public port %d/%s", d.ProxyPort, d.Protocol)
	}
	return "host " + d.ShownHost()
}

// refusal is what users read of a refused request: Pangolin's status and message, and
// for a 500 that repeats (pangolinapi.IsRefused), the fields whose values it refuses.
func refusal(err error) string {
	var ae *pangolinapi.APIError
	switch {
	case errors.As(err, &ae) && ae.Refused:
		return fmt.Sprintf("%d %s, to this request each time while it answers others: it cannot take a value sent (%s); sent again after a minute at the soonest, or once the value changes",
			ae.Status, ae.Message, strings.Join(ae.Fields, ", "))
	case errors.As(err, &ae):
		return fmt.Sprintf("%d %s", ae.Status, ae.Message)
	}
	return err.Error()
}

func (a *applying) reject(d engine.Resource, reason, format string, args ...any) {
	a.res.Rejections = append(a.res.Rejections, route.Rejection{Origin: a.owner, Host: d.Host, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// refuseWrite rejects a write of d's that Pangolin refused, or would: d's create, if it
// is one, has not landed.
func (a *applying) refuseWrite(d engine.Resource, format string, args ...any) {
	a.reject(d, pic.ReasonPangolinError, format, args...)
	if a.refusedWrites == nil {
		a.refusedWrites = map[string]bool{}
	}
	a.refusedWrites[d.Host] = true
}

// target is what PIC writes for one engine target.
type target struct {
	siteID   int
	ip       string
	port     int
	method   string
	form     // path match and rewrite
	priority int
	// raw: the target of a raw resource, written as site, ip and port only. Pangolin
	// stores a priority on it all the same (100), which means nothing there.
	raw bool
	// health is the check written with it, whole on every write (health.go).
	health pangolinapi.HealthCheck
}

// wanted is what d asks of Pangolin, or why it cannot be written.
type wanted struct {
	niceID  string
	mark    mark
	name    string
	host    pangolinapi.Host
	siteID  int
	targets []target
	// newt: the site is a Newt site. unsent are the health checks asked and not
	// written (health.go).
	newt   bool
	unsent map[targetKey]route.HealthCheck
}

// want resolves d's domain and site. A problem with d itself is a rejection (ok false);
// err is a failed request.
func (a *applying) want(ctx context.Context, d engine.Resource) (w wanted, ok bool, err error) {
	s := a.sink
	w.mark = markOf(d.Origin, d.Host, d.PublishedHost())
	w.niceID, w.name = niceID(s.ownerID, w.mark), resourceName(w.mark)
	if len(w.name) > maxNameLength {
		a.refuseWrite(d,
			"the Pangolin resource for %s would be named %q, %d characters: Pangolin allows %d; shorten the %s's name or its host",
			subject(d), w.name, len(w.name), maxNameLength, d.Origin.Kind)
		return w, false, nil
	}
	if !d.Raw() {
		if ok := a.wantHost(d, &w); !ok {
			return w, false, nil
		}
	}
	siteID, err := a.siteID(ctx, d)
	if err != nil {
		return w, false, err
	}
	w.siteID = siteID
	w.newt, w.unsent = s.newtSite(siteID), map[targetKey]route.HealthCheck{}
	for _, t := range d.Targets {
		health := a.healthToWrite(d, t, w.newt, w.unsent)
		if d.Raw() {
			// A raw target forwards bytes: no method (the scheme is the resource's
			// mode), no path, no priority.
			w.targets = append(w.targets, target{siteID: siteID, ip: t.Backend.Host, port: int(t.Backend.Port), raw: true, health: health})
			continue
		}
		w.targets = append(w.targets, target{
			siteID: siteID, ip: t.Backend.Host, port: int(t.Backend.Port), method: t.Backend.Scheme,
			form: form{path: t.Path, match: t.Match, rewrite: t.Rewrite, rewriteType: t.RewriteType}, priority: int(t.Priority),
			health: health,
		})
	}
	return w, true, nil
}

// wantHost resolves the domain an HTTP resource d is served under into w.host; false
// when it cannot be, a rejection made.
func (a *applying) wantHost(d engine.Resource, w *wanted) bool {
	s := a.sink
	domain := s.verifiedDomain(d.Domain)
	switch {
	case domain == nil:
		a.reject(d, pic.ReasonDomainNotFound, "domain %s is not a verified domain of the Pangolin organization %s any more", d.Domain, s.api.Org())
		return false
	case domain.Type == "cname" && d.Subdomain != "":
		// Pangolin serves a CNAME domain at its base only, whatever subdomain it is sent.
		a.reject(d, pic.ReasonDomainNotFound,
			"host %s is under %s, a CNAME domain of the Pangolin organization: Pangolin serves only %s itself there; add a domain for %s to the organization",
			d.PublishedHost(), d.Domain, d.Domain, d.PublishedHost())
		return false
	}
	w.host = pangolinapi.Host{DomainID: domain.DomainID, Subdomain: d.Subdomain}
	return true
}

// siteID is the id of the site d's tunnel names, asked of Pangolin when not yet known.
func (a *applying) siteID(ctx context.Context, d engine.Resource) (int, error) {
	s := a.sink
	siteID, known := s.knownSite(d.Tunnel.Name)
	if known {
		return siteID, nil
	}
	if _, err := s.checkSite(ctx, d.Tunnel.Name); err != nil {
		return 0, err
	}
	siteID, known = s.knownSite(d.Tunnel.Name)
	if !known {
		return 0, fmt.Errorf("%s: Pangolin site %q disappeared while it was being read", subject(d), d.Tunnel.Name)
	}
	return siteID, nil
}

// create publishes d: first making sure no one else serves its host (Pangolin accepts
// duplicates), then the resource, its marks and access settings, then its targets.
func (a *applying) create(ctx context.Context, d engine.Resource) error {
	w, ok, err := a.want(ctx, d)
	if err != nil || !ok {
		return err
	}
	return a.createWanted(ctx, d, w)
}

// createWanted is create once d's wanted state is known: want reports what it cannot
// send (a Warning), so it runs once per resource.
func (a *applying) createWanted(ctx context.Context, d engine.Resource, w wanted) error {
	s := a.sink
	var ok bool
	var err error
	// Every name the policy gives is resolved before anything is created: one that
	// Pangolin does not know publishes nothing.
	var access accessWant
	if d.Policy != nil {
		if access, ok, err = a.resolveAccess(ctx, d, nil); err != nil || !ok {
			return err
		}
	}
	adoptable, free, err := a.hostFree(ctx, d, w, 0)
	switch {
	case err != nil || !free:
		return err
	case adoptable != nil:
		return a.adopt(ctx, d, w, *adoptable)
	}

	var created pangolinapi.Resource
	if d.Raw() {
		created, err = s.api.CreateRawResource(ctx, w.name, string(d.Protocol), int(d.ProxyPort))
	} else {
		created, err = s.api.CreateResource(ctx, w.name, w.host)
	}
	countWrite(pangolinapi.OpCreateResource, err)
	if err != nil {
		return a.failed(ctx, d, "create the resource", err)
	}
	// Pangolin picks a random niceId and takes none on create: the marks go on at once,
	// with the access settings, which the create refuses too. A raw resource has none,
	// and refuses every one of them on update (400 Unrecognized key): its mark is the
	// niceId alone.
	mark := pangolinapi.ResourceUpdate{NiceID: w.niceID}
	if !d.Raw() {
		mark.SSO, mark.BlockAccess = d.SSO, d.BlockAccess
		if len(d.Headers) > 0 {
			mark.Headers = headersOf(d.Headers)
		}
	}
	e := &entry{mark: w.mark, res: created, tunnelNS: d.Tunnel.Namespace}
	if err := s.updateResource(ctx, w.niceID, e, mark); err != nil {
		// Unmarked, the resource is no one's: remove it rather than leave a stray
		// duplicate. Should this fail too, the next create adopts it by its name.
		if delErr := s.deleteResource(ctx, created.ResourceID); delErr != nil && !pangolinapi.IsNotFound(delErr) {
			log.FromContext(ctx).Error(delErr, "cannot remove an unmarked Pangolin resource; the next create adopts it", "niceId", created.NiceID, "resourceId", created.ResourceID, "claim", d.PublishedHost())
		}
		return a.failed(ctx, d, "mark the new resource", err)
	}
	a.hosts = append(a.hosts, d.ClaimKey())
	// The access before the first target: Pangolin routes the host only once it has
	// one, so it is unreachable until its access is whole, and stays so if part of it
	// is refused (the next reconcile tries again).
	if d.Policy != nil {
		if ok, err := a.syncAccess(ctx, d, w, e, access); err != nil || !ok {
			return err
		}
	}
	a.res.Created = append(a.res.Created, d)
	return a.syncTargets(ctx, d, w, e)
}

// hostFree searches Pangolin for resources serving d's public host, or its public port
// and mode for a raw resource, other than the resource self (0 for none): it is free
// unless one is not this PIC's, which is then a HostTakenInPangolin rejection (Pangolin
// accepts duplicates of both). adoptable is a resource holding it that is d's own,
// unknown to the mirror (a resync that raced), or created by a PIC stopped between the
// create and the marking.
func (a *applying) hostFree(ctx context.Context, d engine.Resource, w wanted, self int) (adoptable *pangolinapi.ResourceSummary, free bool, err error) {
	s := a.sink
	found, err := a.holders(ctx, d)
	if err != nil {
		return nil, false, a.failed(ctx, d, "search Pangolin for the resources already serving it", err)
	}
	for _, r := range found {
		if r.ResourceID == self {
			continue
		}
		switch _, mine := owned(s.ownerID, r.NiceID, r.Name); {
		case r.NiceID == w.niceID, r.Name == w.name && !strings.HasPrefix(r.NiceID, "pic-"):
			adoptable = &r
		case mine:
			// Another object's of this owner id, on the same published host: never
			// adopted nor written. engine.Decide settled, on that published host, that
			// no older claim keeps it (the other is younger, or being deleted), and
			// the other steps back once this create wakes it (Change.Hosts).
		default:
			a.takenBy(d, r.NiceID, r.Name)
			return nil, false, nil
		}
	}
	return adoptable, true, nil
}

// holders are the Pangolin resources, whoever created them, that serve d's public
// host, or its public port and mode.
func (a *applying) holders(ctx context.Context, d engine.Resource) ([]pangolinapi.ResourceSummary, error) {
	s := a.sink
	var found []pangolinapi.ResourceSummary
	if d.Raw() {
		mode := string(d.Protocol)
		list, listed := a.rawResources[mode]
		if !listed {
			var err error
			if list, err = s.api.ListRawResources(ctx, mode); err != nil {
				return nil, err
			}
			if a.rawResources == nil {
				a.rawResources = map[string][]pangolinapi.ResourceSummary{}
			}
			a.rawResources[mode] = list
		}
		for _, r := range list {
			if r.ProxyPort == int(d.ProxyPort) {
				found = append(found, r)
			}
		}
		return found, nil
	}
	list, err := s.api.ListResources(ctx, d.PublishedHost())
	if err != nil {
		return nil, err
	}
	for _, r := range list {
		// The search matches substrings of names and hosts too.
		if strings.EqualFold(r.FullDomain, d.PublishedHost()) {
			found = append(found, r)
		}
	}
	return found, nil
}

// takenBy refuses d: a Pangolin resource PIC did not create (niceID, name) serves its
// host or port, and Pangolin would accept a duplicate.
func (a *applying) takenBy(d engine.Resource, niceID, name string) {
	a.reject(d, pic.ReasonHostTakenInPangolin,
		"%s is already served by Pangolin resource %s (%q), which PIC did not create: PIC leaves it untouched and publishes no duplicate",
		subject(d), niceID, name)
}

// adopt takes over a resource of this owner's that the mirror lacks, marks it if it is
// not yet, and brings it to d.
func (a *applying) adopt(ctx context.Context, d engine.Resource, w wanted, found pangolinapi.ResourceSummary) error {
	s := a.sink
	res, err := s.api.GetResource(ctx, found.ResourceID)
	if err != nil {
		return a.failed(ctx, d, "read the resource to adopt", err)
	}
	targets, err := s.api.ListTargets(ctx, found.ResourceID)
	if err != nil {
		return a.failed(ctx, d, "read the targets of the resource to adopt", err)
	}
	if res.NiceID != w.niceID && len(targets) > 0 {
		// PIC marks a resource before it gives it a target: one that has targets and
		// not the mark was not left by a PIC stopped between its create and its mark.
		// Its name is all it shares with d's (another PIC with another owner id, or
		// someone, named it alike): it is left untouched.
		a.takenBy(d, res.NiceID, res.Name)
		return nil
	}
	e := &entry{mark: w.mark, res: res, targets: targets}
	marked := res.NiceID != w.niceID
	if marked {
		if err := s.updateResource(ctx, w.niceID, e, pangolinapi.ResourceUpdate{NiceID: w.niceID}); err != nil {
			return a.failed(ctx, d, "mark the resource to adopt", err)
		}
	} else {
		s.put(w.niceID, e)
	}
	a.hosts = append(a.hosts, d.ClaimKey())
	return a.bring(ctx, d, w, e, marked)
}

// update brings an existing resource to d.
func (a *applying) update(ctx context.Context, d engine.Resource) error {
	s := a.sink
	w, ok, err := a.want(ctx, d)
	e, known := s.lookup(w.niceID)
	if err != nil || !ok {
		if err == nil && known && !d.Raw() && !strings.EqualFold(e.res.FullDomain, d.PublishedHost()) {
			a.keepHost(d, e.res.FullDomain) // moving to a domain, or a name, that is refused
		}
		return err
	}
	if !known {
		return a.createWanted(ctx, d, w) // gone from the mirror since Current: start again
	}
	return a.bring(ctx, d, w, e, false)
}

// bring writes the differences between e and d: resource fields, then access, then
// targets. With an AccessPolicy, or once one is detached, every name is resolved before
// the first write, and sso and blockAccess are written with the rest of the access, in
// the order of planAccess: a failure on the way lets no one in whom neither the old nor
// the new access admits, and leaves the targets untouched.
func (a *applying) bring(ctx context.Context, d engine.Resource, w wanted, e *entry, wrote bool) error {
	s := a.sink
	// Pangolin applies no access control to a raw resource and refuses every access
	// field on it: none is read or written.
	managed := !d.Raw() && (d.Policy != nil || s.accessRecords.governed(w.niceID, e.res.ResourceID))
	var access accessWant
	if managed {
		var ok bool
		var err error
		if access, ok, err = a.resolveAccess(ctx, d, e); err != nil || !ok {
			return err
		}
	}
	var u pangolinapi.ResourceUpdate
	if e.res.Name != w.name {
		u.Name = w.name
	}
	// A host moved in place (subdomain, domain-name) keeps the old one until Pangolin
	// takes the new one: one resource, one write.
	var movingFrom string
	if !d.Raw() && !strings.EqualFold(e.res.FullDomain, d.PublishedHost()) {
		movingFrom = e.res.FullDomain
	}
	if d.Raw() {
		if ok, err := a.rawFields(ctx, d, w, e, &u); err != nil || !ok {
			return err
		}
	} else if ok, err := a.httpFields(ctx, d, w, e, &u); err != nil || !ok {
		if err == nil && movingFrom != "" {
			a.keepHost(d, movingFrom)
		}
		return err
	}
	if !e.res.Enabled {
		u.Enabled = ptrTo(true) // PIC never disables: a disabled resource serves nothing
	}
	if managed {
		// sso and blockAccess are part of the access: the plan writes them in their place.
		u.SSO, u.BlockAccess = nil, nil
		if movingFrom != "" && u.Host != nil {
			// A host moved in place is a host published anew: the write that moves it
			// closes it, and the access plan opens it as far as its access admits.
			// Moved open, the new host would serve the old access until the plan ran,
			// or for good if the plan is refused.
			u.BlockAccess = ptrTo(true)
		}
	}
	if u != (pangolinapi.ResourceUpdate{}) {
		if err := s.updateResource(ctx, w.niceID, e, u); err != nil {
			err = a.lost(ctx, d, w, "update the resource", err)
			if err == nil && u.Host != nil && movingFrom != "" {
				a.keepHost(d, movingFrom)
			}
			return err
		}
		wrote = true
	}
	if managed {
		writes := a.accessWrites
		ok, err := a.syncAccess(ctx, d, w, e, access)
		if a.accessWrites > writes {
			wrote = true
		}
		if err != nil || !ok {
			if wrote {
				a.res.Updated = append(a.res.Updated, d)
			}
			return err
		}
	}
	before := len(a.res.Updated)
	if wrote {
		a.res.Updated = append(a.res.Updated, d)
	}
	e.tunnelNS = d.Tunnel.Namespace
	s.put(w.niceID, e)
	return a.syncTargetsUpdating(ctx, d, w, e, before)
}

// httpFields adds to u what differs of an HTTP resource: its host, checked like a
// create, its sso, blockAccess and headers. false: the host is taken, a rejection made.
func (a *applying) httpFields(ctx context.Context, d engine.Resource, w wanted, e *entry, u *pangolinapi.ResourceUpdate) (bool, error) {
	if !strings.EqualFold(e.res.FullDomain, d.PublishedHost()) {
		// Moving onto another host: the same check as a create, or the move could
		// publish a host twice. An unmarked resource of d's there stays a stray: the
		// resource moving is d's already.
		if _, free, err := a.hostFree(ctx, d, w, e.res.ResourceID); err != nil || !free {
			return false, err
		}
	}
	if !strings.EqualFold(e.res.FullDomain, d.PublishedHost()) || e.res.DomainID != w.host.DomainID || strings.ToLower(e.res.Subdomain) != w.host.Subdomain {
		host := w.host // subdomain and domainId together, or the routing does not move
		u.Host = &host
	}
	if d.SSO != nil && e.res.SSO != *d.SSO {
		u.SSO = d.SSO
	}
	if d.BlockAccess != nil && e.res.BlockAccess != *d.BlockAccess {
		u.BlockAccess = d.BlockAccess
	}
	if !slices.Equal(e.res.Headers, *headersOf(d.Headers)) {
		u.Headers = headersOf(d.Headers) // an empty list clears them
	}
	return true, nil
}

// rawFields adds to u what differs of a raw resource: its port, which only a hand edit
// moves (a port PIC changes is another claim, so another resource). Moving back is
// checked like a create, or the move could publish a port twice.
func (a *applying) rawFields(ctx context.Context, d engine.Resource, w wanted, e *entry, u *pangolinapi.ResourceUpdate) (bool, error) {
	if e.res.ProxyPort == int(d.ProxyPort) {
		return true, nil
	}
	if _, free, err := a.hostFree(ctx, d, w, e.res.ResourceID); err != nil || !free {
		return false, err
	}
	u.ProxyPort = int(d.ProxyPort)
	return true, nil
}

// syncTargetsUpdating is syncTargets for an existing resource: any target write makes it
// Updated, once.
func (a *applying) syncTargetsUpdating(ctx context.Context, d engine.Resource, w wanted, e *entry, before int) error {
	writes := a.targetWrites
	err := a.syncTargets(ctx, d, w, e)
	if a.targetWrites > writes && len(a.res.Updated) == before {
		a.res.Updated = append(a.res.Updated, d)
	}
	return err
}

// lost handles a failed write on a resource: gone from Pangolin (deleted by hand since the
// last read), it leaves the mirror and the reconcile is tried again, which creates it.
func (a *applying) lost(ctx context.Context, d engine.Resource, w wanted, what string, err error) error {
	if !pangolinapi.IsNotFound(err) {
		return a.failed(ctx, d, what, err)
	}
	// Pangolin answers 404 for other things a write names too (a site it no longer
	// has, a target deleted by hand): the resource is forgotten only once a read of it
	// answers 404 as well. Forgotten while it exists, its host would be no one's until
	// the next refresh, and a younger claimant could publish it beside it.
	if e, known := a.sink.lookup(w.niceID); known {
		_, readErr := a.sink.api.GetResource(ctx, e.res.ResourceID)
		switch {
		case readErr == nil:
			return a.failed(ctx, d, what, err)
		case !pangolinapi.IsNotFound(readErr):
			return a.failed(ctx, d, "read the resource back after a 404", readErr)
		}
	}
	a.sink.forget(w.niceID)
	return fmt.Errorf("%s: cannot %s: the resource is gone from Pangolin (deleted by hand?), it is created again: %w", subject(d), what, err)
}

// syncTargets brings e's targets to w's without leaving the host unrouted, once every
// path group has a router name of its own (routable): a target that matches stays; one on the same path and match type is updated in place (one
// row, the router never goes); the others are created, and only then are the targets
// left over deleted. No target is ever disabled.
func (a *applying) syncTargets(ctx context.Context, d engine.Resource, w wanted, e *entry) error {
	s := a.sink
	if a.noteUnsent(ctx, d, w, e) {
		s.put(w.niceID, e)
	}
	w.targets = a.routable(d, w, e)
	used := make([]bool, len(e.targets))
	free := func(match func(pangolinapi.Target) bool) int {
		for i, have := range e.targets {
			if i < len(used) && !used[i] && match(have) {
				return i
			}
		}
		return -1
	}
	var pending []target
	for _, t := range w.targets {
		if i := free(t.is); i >= 0 {
			used[i] = true
			continue
		}
		pending = append(pending, t)
	}
	var missing []target
	for _, t := range pending {
		i := free(func(have pangolinapi.Target) bool { return have.Path == t.path && have.PathMatchType == t.match })
		if i < 0 {
			missing = append(missing, t)
			continue
		}
		used[i] = true
		u := pangolinapi.TargetUpdate{
			SiteID: t.siteID, IP: t.ip, Port: t.port, Method: t.method, Enabled: ptrTo(true),
			Path: pathMatch(t), Priority: t.priority, Health: t.health,
		}
		if t.raw {
			u.Path = nil // the target matched has none: nothing to clear
		}
		if have := e.targets[i]; have.RewritePath != t.rewrite || have.RewritePathType != t.rewriteType {
			u.Rewrite = &pangolinapi.Rewrite{Path: t.rewrite, Type: t.rewriteType}
		}
		updated, err := s.api.UpdateTarget(ctx, e.targets[i].TargetID, u)
		countWrite(pangolinapi.OpUpdateTarget, err)
		if err != nil {
			return a.lost(ctx, d, w, "update a target", err)
		}
		a.targetWrites++
		e.targets[i] = updated
		s.put(w.niceID, e)
	}
	for _, t := range missing {
		var created pangolinapi.Target
		var err error
		if t.raw {
			created, err = s.api.CreateRawTarget(ctx, e.res.ResourceID, pangolinapi.RawTargetSpec{SiteID: t.siteID, IP: t.ip, Port: t.port, Enabled: true, Health: t.health})
		} else {
			created, err = s.api.CreateTarget(ctx, e.res.ResourceID, pangolinapi.TargetSpec{
				SiteID: t.siteID, IP: t.ip, Port: t.port, Method: t.method, Enabled: true,
				Path: t.path, PathMatchType: t.match, Priority: t.priority,
				Rewrite: pangolinapi.Rewrite{Path: t.rewrite, Type: t.rewriteType},
				Health:  t.health,
			})
		}
		countWrite(pangolinapi.OpCreateTarget, err)
		if err != nil {
			return a.lost(ctx, d, w, "create a target", err)
		}
		a.targetWrites++
		e.targets = append(e.targets, created)
		used = append(used, true)
		s.put(w.niceID, e)
	}
	for i := len(used) - 1; i >= 0; i-- {
		if used[i] {
			continue
		}
		err := s.api.DeleteTarget(ctx, e.targets[i].TargetID)
		countWrite(pangolinapi.OpDeleteTarget, err)
		if err != nil && !pangolinapi.IsNotFound(err) {
			return a.failed(ctx, d, "delete a target", err)
		}
		if err == nil {
			a.targetWrites++
		}
		e.targets = append(e.targets[:i], e.targets[i+1:]...)
		s.put(w.niceID, e)
	}
	return nil
}

// is reports whether have is t, in every field PIC writes. A raw target's priority is
// Pangolin's default, which PIC neither writes nor reads.
func (t target) is(have pangolinapi.Target) bool {
	return have.SiteID == t.siteID && have.IP == t.ip && have.Port == t.port && have.Method == t.method &&
		have.Enabled && formOf(have) == t.form && (t.raw || have.Priority == t.priority) && sameHealth(have.Health, t.health)
}

// headersOf is d's headers as Pangolin takes them; an empty list for none.
func headersOf(headers []route.Header) *[]pangolinapi.Header {
	out := make([]pangolinapi.Header, 0, len(headers))
	for _, h := range headers {
		out = append(out, pangolinapi.Header{Name: h.Name, Value: h.Value})
	}
	return &out
}

func pathMatch(t target) *pangolinapi.PathMatch {
	return &pangolinapi.PathMatch{Path: t.path, Type: t.match}
}

// delete removes a resource of the owner's, and its targets with it.
func (a *applying) delete(ctx context.Context, e engine.Existing) error {
	s := a.sink
	id := niceIDOf(s.ownerID, e)
	known, ok := s.lookup(id)
	if ok {
		err := s.deleteResource(ctx, known.res.ResourceID)
		if err != nil && !pangolinapi.IsNotFound(err) {
			return a.failed(ctx, e.Resource, "delete the resource", err)
		}
		s.forget(id)
		s.accessRecords.drop(id)
	}
	a.res.Deleted = append(a.res.Deleted, e.Resource)
	a.hosts = append(a.hosts, e.ClaimKey())
	return nil
}
