package pangolin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// ManagedSites are the sites PIC creates in Pangolin and whose Newt agents it runs
// beside itself (docs/direct-mode.md, "Managed sites").
type ManagedSites struct {
	// Names are the managed tunnels' names, which are their sites' niceIds. With none,
	// PIC only removes the sites it created that nothing names any more (sweep).
	Names []string
	// Configured are every tunnel name the configuration gives, managed or not: a site
	// one of them names is never removed, even once PIC no longer manages it.
	Configured []string
	// Agent is every agent's template: all but Site and Owner.
	Agent newt.Agent
	// OwnerName is PIC's own Deployment, in Agent.Namespace.
	OwnerName string
	Keeper    *newt.Keeper
	// Period is how often each site and its agent are checked; 0 is DefaultSitePeriod.
	Period time.Duration
}

// DefaultSitePeriod is how often a managed site and its agent are checked: a site that
// comes online, or a hand edit to the agent, is seen within it.
const DefaultSitePeriod = 15 * time.Second

// DefaultSweepPeriod is how often PIC, managing no site, looks for the sites it created
// to remove: each pass is one list of the org's sites, and nothing is urgent once
// nothing is managed.
const DefaultSweepPeriod = 5 * time.Minute

// managedSiteOnline is each managed site's connection, as Pangolin last reported it.
var managedSiteOnline = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "pic_pangolin_managed_site_online",
	Help: "1 when the managed site's Newt agent is connected to Pangolin, 0 while it is not (or the site is not created yet, or refused), by site.",
}, []string{"site"})

// managedSiteNewt is the Newt version each managed site's agent last reported, an info
// metric: the series of the current version is 1, and the only one of its site.
var managedSiteNewt = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "pic_pangolin_managed_site_newt_info",
	Help: "1 for the Newt version the managed site's agent reported when it last connected, by site and version; no series while no agent has connected.",
}, []string{"site", "version"})

// managedSiteKept is each site PIC created and no longer manages that it keeps instead
// of removing, and why: a site waiting for its removal is worth an alert only when
// what holds it is not going by itself (foreign_resources, agent).
var managedSiteKept = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "pic_pangolin_managed_site_kept",
	Help: "1 while a site PIC created and no longer manages is kept instead of removed, by site and reason: objects (objects still publish through it), resources (PIC's own resources still have targets on it), foreign_resources (resources PIC did not create have targets on it, which PIC never deletes), agent (its Newt agent cannot be removed).",
}, []string{"site", "reason"})

// Why a site PIC no longer manages is kept: the reason label of managedSiteKept.
const (
	keptForObjects          = "objects"
	keptForResources        = "resources"
	keptForForeignResources = "foreign_resources"
	keptForAgent            = "agent"
)

func init() { metrics.Registry.MustRegister(managedSiteOnline, managedSiteNewt, managedSiteKept) }

// setManagedSiteNewt keeps the Newt version of a managed site PIC created; "" (no
// agent connected yet, or a site PIC did not create) leaves the site no series.
func setManagedSiteNewt(niceID, version string) {
	managedSiteNewt.DeletePartialMatch(prometheus.Labels{"site": niceID})
	if version != "" {
		managedSiteNewt.WithLabelValues(niceID, version).Set(1)
	}
}

// siteName is the name of a site PIC creates: its niceId is the tunnel's name, which
// the rest of the sink knows it by, and its name carries PIC's mark, which says who
// created it. "edge (PIC cluster-a)".
func siteName(ownerID, niceID string) string { return niceID + " (PIC " + ownerID + ")" }

// ownsSite reports whether PIC, with this owner id, created site.
func ownsSite(ownerID string, site pangolinapi.Site) bool {
	return site.Type == pangolinapi.SiteTypeNewt && site.Name == siteName(ownerID, site.NiceID)
}

// managedSiteCheck is the verdict on a managed tunnel's site, when it is not the
// ordinary one: a site still to create, or one PIC did not create, which it never
// takes over. ok is false when the ordinary checks apply.
func managedSiteCheck(ownerID, org, niceID string, site *pangolinapi.Site) (check plugin.TunnelCheck, ok bool) {
	switch {
	case site == nil:
		return plugin.TunnelCheck{State: plugin.TunnelNotFound, Message: fmt.Sprintf(
			"Pangolin site %q is a managed site PIC has not created yet in org %q: nothing is published until it exists", niceID, org)}, true
	case !ownsSite(ownerID, *site):
		return plugin.TunnelCheck{State: plugin.TunnelNotFound, Message: fmt.Sprintf(
			"Pangolin site %q exists in org %q but PIC (owner id %q) did not create it: a managed tunnel uses only a site PIC created, and never takes over another; rename the tunnel, or remove managedSite to publish through that site as it is",
			niceID, org, ownerID)}, true
	}
	return plugin.TunnelCheck{}, false
}

// managedSiteOffline is why a managed site's tunnel is not ready while its site exists:
// its agent is not connected. Newt's version says whether an agent ever connected, and
// which one, which is where to look next (its Deployment's pods).
func managedSiteOffline(site pangolinapi.Site) string {
	agent := "no Newt agent has connected to it yet"
	if site.NewtVersion != "" {
		agent = fmt.Sprintf("its Newt agent (version %s when it last connected) is not connected", site.NewtVersion)
	}
	return fmt.Sprintf("managed Pangolin site %q is not online: %s; its routes are written, and Pangolin serves them once the agent of Deployment %s connects",
		site.NiceID, agent, newt.Agent{Site: site.NiceID}.Name())
}

// managedSitesFrom is the managed sites of the configuration, nil when there are none.
func managedSitesFrom(cfg *config.Config, deps plugin.SinkDeps, ownerID string) (*ManagedSites, error) {
	names := cfg.ManagedSites()
	namespace := ownNamespace()
	known := namespace != "" && deps.Client != nil && deps.APIReader != nil
	switch {
	case len(names) > 0 && !known:
		return nil, errors.New("configure managed sites: PIC's namespace is not known (no $POD_NAMESPACE, no ServiceAccount namespace file), and the Newt agents run there")
	case !known:
		// Outside a cluster no agent of PIC's can be found, so no site of PIC's is removed.
		return nil, nil
	}
	period := time.Duration(0)
	if len(names) == 0 {
		period = DefaultSweepPeriod
	}
	configured := []string{cfg.Tunnels.Default.Name}
	for _, t := range cfg.Tunnels.Aliases {
		configured = append(configured, t.Name)
	}
	return &ManagedSites{
		Names:      names,
		Configured: configured,
		Agent: newt.Agent{Namespace: namespace, OwnerID: ownerID, Image: cfg.Pangolin.NewtImage,
			Replicas: int32(cfg.Pangolin.NewtReplicas), Endpoint: cfg.Pangolin.NewtEndpointURL(), Resources: newtResources(cfg.Pangolin)},
		OwnerName: cfg.Pangolin.NewtOwner,
		Keeper:    &newt.Keeper{Reader: deps.APIReader, Writer: deps.Client, Mint: mintCredentials},
		Period:    period,
	}, nil
}

// newtResources are the agent container's requests and limits, from the configuration,
// which has checked each quantity; an empty one sets none.
func newtResources(p config.Pangolin) corev1.ResourceRequirements {
	list := func(cpu, memory string) corev1.ResourceList {
		out := corev1.ResourceList{}
		if cpu != "" {
			out[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if memory != "" {
			out[corev1.ResourceMemory] = resource.MustParse(memory)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return corev1.ResourceRequirements{Requests: list(p.NewtCPURequest, p.NewtMemoryRequest), Limits: list(p.NewtCPULimit, p.NewtMemoryLimit)}
}

func mintCredentials() newt.Credentials {
	c := pangolinapi.NewNewtCredentials()
	return newt.Credentials{ID: c.ID, Secret: string(c.Secret)}
}

// siteKeeper keeps each managed site and its agent: it creates the site, with the
// credentials of the agent's Secret, then the agent's Deployment, and puts back what was
// edited; and it removes a site it created that the configuration no longer names, once
// no resource is left on it (sweep). It touches no site PIC did not create.
type siteKeeper struct {
	sink    *Sink
	managed *ManagedSites
}

// NeedLeaderElection: one replica creates sites.
func (k *siteKeeper) NeedLeaderElection() bool { return true }

// Start keeps the sites until ctx ends. Managing none, it first waits a period: the
// objects that ask for a site by annotation have asked by then, which keeps their site.
func (k *siteKeeper) Start(ctx context.Context) error {
	period := k.managed.Period
	if period <= 0 {
		period = DefaultSitePeriod
	}
	if len(k.managed.Names) == 0 {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(period):
		}
	}
	for {
		k.Keep(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(period):
		}
	}
}

// Keep does one pass over the managed sites, then asks again about their state and
// wakes the objects waiting for one whose state changed; then it removes the sites no
// longer named. Managing none, it only removes: it needs no owner for agents it will not
// write.
func (k *siteKeeper) Keep(ctx context.Context) {
	logger := log.FromContext(ctx).WithName("pangolin").WithName("sites")
	if len(k.managed.Names) == 0 {
		k.sweep(ctx)
		return
	}
	owner, err := k.managed.Keeper.Owner(ctx, k.managed.Agent.Namespace, k.managed.OwnerName)
	if err != nil {
		logger.Error(err, "cannot keep the managed sites' agents")
		return
	}
	checks := map[string]plugin.TunnelCheck{}
	for _, name := range k.managed.Names {
		agent := k.managed.Agent
		agent.Site, agent.Owner = name, owner
		if err := k.keep(ctx, agent); err != nil {
			logger.Error(err, "cannot keep a managed site; trying again at the next pass", "site", name)
			continue
		}
		check, site, err := k.sink.readSite(ctx, name)
		if err != nil {
			logger.Error(err, "cannot read a managed site's state", "site", name)
			continue
		}
		checks[name] = check
		online := 0.0
		if check.State == plugin.TunnelReady {
			online = 1
		}
		managedSiteOnline.WithLabelValues(name).Set(online)
		version := ""
		if ownsSite(k.sink.ownerID, site) {
			version = site.NewtVersion
		}
		setManagedSiteNewt(name, version)
	}
	k.sink.mu.Lock()
	wake := k.sink.recheckedTunnels(checks)
	k.sink.mu.Unlock()
	k.sink.changes.publish(ctx, plugin.Change{Tunnels: wake})
	k.sweep(ctx)
}

// sweep removes the sites PIC created, with this owner id, that the configuration no
// longer names, in order: once no resource has a target on one, its agent's Deployment
// and Secret, then the site. The resources are not the sweep's to delete: PIC's own go
// with the objects that published them (deleted, or moved to another tunnel), and an
// object whose new tunnel is missing holds them, as any refusal does; the site waits
// for them. A site that still carries resources is kept, and the log and
// pic_pangolin_managed_site_kept say why at every pass; one carrying resources PIC did
// not create is kept until someone else removes them.
func (k *siteKeeper) sweep(ctx context.Context) {
	logger := log.FromContext(ctx).WithName("pangolin").WithName("sites")
	sites, err := k.sink.api.ListSites(ctx)
	if err != nil {
		logger.Error(err, "cannot list the sites to find those PIC no longer manages; trying again at the next pass")
		return
	}
	kept := map[string]string{} // niceId -> why
	for _, site := range sites {
		if !ownsSite(k.sink.ownerID, site) || k.named(site.NiceID) {
			continue
		}
		if k.asked(site.NiceID) {
			logger.Info("keeping a site PIC no longer manages: objects asked to publish through it since PIC started (the tunnel-name annotation, or a pangolin-<name> class); it is removed once none does, after a restart",
				"site", site.NiceID)
			kept[site.NiceID] = keptForObjects
			continue
		}
		if site.ResourceCount > 0 {
			kept[site.NiceID] = k.keptForResources(ctx, site)
			continue
		}
		agent := k.managed.Agent
		agent.Site = site.NiceID
		if err := k.managed.Keeper.Remove(ctx, agent); err != nil {
			kept[site.NiceID] = keptForAgent
			if apierrors.IsForbidden(err) {
				// The managed sites' Role went with the last managed tunnel: PIC cannot
				// see whether the agent is gone, so the site stays.
				logger.Info("keeping a site PIC no longer manages: PIC may no longer read or delete its Newt agent (the managed sites' Role is not installed); delete the Deployment and Secret, then the site, by hand",
					"site", site.NiceID, "deployment", agent.Name(), "namespace", agent.Namespace)
				continue
			}
			logger.Error(err, "cannot remove the Newt agent of a site PIC no longer manages; the site is kept", "site", site.NiceID)
			continue
		}
		if err := k.sink.api.DeleteSite(ctx, site.SiteID); err != nil && !pangolinapi.IsNotFound(err) {
			logger.Error(err, "cannot delete a site PIC no longer manages; trying again at the next pass", "site", site.NiceID)
			continue
		}
		managedSiteOnline.DeleteLabelValues(site.NiceID)
		setManagedSiteNewt(site.NiceID, "")
		logger.Info("removed a site PIC no longer manages, and its Newt agent", "site", site.NiceID, "siteId", site.SiteID)
	}
	managedSiteKept.Reset()
	for niceID, why := range kept {
		managedSiteKept.WithLabelValues(niceID, why).Set(1)
	}
}

// keptForResources says why a site PIC no longer manages, which still carries
// resources, is kept: Pangolin's count is every resource on the site, and the sink knows
// which of them are PIC's, once it has read them all. Resources PIC did not create keep
// the site for good: PIC deletes neither them nor the site under them.
func (k *siteKeeper) keptForResources(ctx context.Context, site pangolinapi.Site) string {
	logger := log.FromContext(ctx).WithName("pangolin").WithName("sites")
	own, objects, known := k.sink.resourcesOn(site.SiteID)
	switch {
	case !known:
		logger.Info("keeping a site PIC no longer manages: resources still have targets on it; it is removed once they are gone",
			"site", site.NiceID, "resources", site.ResourceCount)
		return keptForResources
	case site.ResourceCount > own:
		kv := []any{"site", site.NiceID, "foreign", site.ResourceCount - own, "resources", site.ResourceCount}
		if own > 0 {
			kv = append(kv, "objects", objects)
		}
		logger.Info("keeping a site PIC no longer manages: resources PIC did not create have targets on it, and PIC deletes neither them nor the site; delete them or move them to another site, and PIC then removes the site and its agent", kv...)
		return keptForForeignResources
	}
	logger.Info("keeping a site PIC no longer manages: PIC's resources still have targets on it; they go when the objects that published them are deleted or move to another tunnel, and the site and its agent after them",
		"site", site.NiceID, "resources", own, "objects", objects)
	return keptForResources
}

// resourcesOn are how many of this owner id's resources have a target on siteID, and
// the objects that published them ("Ingress shop/web"), as the sink last read or wrote
// them; known is false until a refresh has read every resource whole, its targets with
// it.
func (s *Sink) resourcesOn(siteID int) (resources int, objects []string, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.complete {
		return 0, nil, false
	}
	for _, e := range s.entries {
		if !slices.ContainsFunc(e.targets, func(t pangolinapi.Target) bool { return t.SiteID == siteID }) {
			continue
		}
		resources++
		if o := e.mark.Kind + " " + e.mark.Namespace + "/" + e.mark.Name; !slices.Contains(objects, o) {
			objects = append(objects, o)
		}
	}
	slices.Sort(objects)
	return resources, objects, true
}

// keep makes one managed site and its agent exist.
func (k *siteKeeper) keep(ctx context.Context, agent newt.Agent) error {
	logger := log.FromContext(ctx).WithName("pangolin").WithName("sites")
	api, keeper := k.sink.api, k.managed.Keeper
	site, err := api.GetSiteByNiceID(ctx, agent.Site)
	switch {
	case pangolinapi.IsNotFound(err):
		// The credentials are written to the Secret before the site is created: the
		// server shows the secret only once, and keeps a hash.
		creds, err := keeper.Credentials(ctx, agent, true)
		if err != nil {
			return err
		}
		site, err = api.CreateNewtSite(ctx, pangolinapi.NewtSite{NiceID: agent.Site, Name: siteName(k.sink.ownerID, agent.Site),
			Credentials: pangolinapi.NewtCredentials{ID: creds.ID, Secret: pangolinapi.Secret(creds.Secret)}})
		if err != nil {
			return fmt.Errorf("create the managed site %s: %w", agent.Site, err)
		}
		logger.Info("created a managed site", "site", agent.Site, "siteId", site.SiteID)
	case err != nil:
		return fmt.Errorf("get the managed site %s: %w", agent.Site, err)
	case !ownsSite(k.sink.ownerID, site):
		// Refused where the tunnel is checked (managedSiteCheck); no agent runs with
		// credentials that could never match that site.
		logger.V(1).Info("skipping a managed site PIC did not create", "site", agent.Site, "name", site.Name, "type", site.Type)
		return nil
	default:
		if _, err := keeper.Credentials(ctx, agent, false); err != nil {
			if errors.Is(err, newt.ErrNoCredentials) {
				return fmt.Errorf("%w: delete the site %s in Pangolin (its targets go with it; PIC writes them again) and PIC creates it again with new credentials", err, agent.Site)
			}
			return err
		}
	}
	wrote, err := keeper.Deployment(ctx, agent)
	if err != nil {
		return err
	}
	if wrote {
		logger.Info("wrote a managed site's Newt Deployment", "site", agent.Site, "deployment", agent.Name())
	}
	return nil
}

// named reports whether the configuration names a site as a tunnel, managed or not.
func (k *siteKeeper) named(niceID string) bool {
	return slices.Contains(k.managed.Names, niceID) || slices.Contains(k.managed.Configured, niceID)
}

// asked reports whether an object asked about a site (the tunnel-name annotation, or a
// class naming a tunnel the configuration does not) since PIC started.
func (k *siteKeeper) asked(niceID string) bool {
	k.sink.mu.Lock()
	defer k.sink.mu.Unlock()
	_, asked := k.sink.tunnels[niceID]
	return asked
}

// isManaged reports whether niceID is a managed site's.
func (s *Sink) isManaged(niceID string) bool {
	return s.managed != nil && slices.Contains(s.managed.Names, niceID)
}
