package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
)

// managedSite is the managed site of the managed-site spec: PIC's default tunnel.
const managedSite = "edge"

// picDeployment is the Deployment of PIC the spec stands up as the agent's owner: on
// the local cluster PIC runs as a process, so its Deployment is an object that runs
// nothing (there is no kubelet), which the garbage collector treats as any other.
const picDeployment = "pangolin-ingress-controller"

// newManagedProvider is a local cluster without the operator's CRDs where PIC runs in
// direct mode with exactly the RBAC of config/direct plus config/rbac/managed-sites, and
// POD_NAMESPACE, as its pod would.
func newManagedProvider(t *testing.T) Provider {
	if k := clusterKind(); k != "local" {
		// On kind PIC's pod would start Newt, which pulls an image and dials Pangolin:
		// the in-repo Pangolin speaks no Newt protocol.
		t.Skipf("the managed-site spec runs on the local cluster only (E2E_CLUSTER=%s)", k)
	}
	none := testenv.Variant{Name: testenv.VariantNone}
	cluster, dir := startLocalCluster(t, "managed", testenv.ClusterOptions{Variant: &none})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	var rbac []*unstructured.Unstructured
	for _, d := range []string{"rbac", filepath.Join("rbac", "direct"), filepath.Join("rbac", "managed-sites")} {
		objs, err := kustomize(filepath.Join(root, "config", d), picNamespace)
		require.NoError(t, err, "render config/%s", d)
		rbac = append(rbac, objs...)
	}
	saNamespace, saName := serviceAccountIdentity(rbac)
	require.NoError(t, ensureNamespace(ctx, cluster.Client, saNamespace))
	require.NoError(t, applyObjects(ctx, cluster.Client, rbac), "apply the RBAC of config/direct with managed sites")
	return &localProvider{variant: none, cluster: cluster, dir: dir,
		directKubeconfig: serviceAccountUser(t, cluster, saNamespace, saName),
		env:              append(os.Environ(), "POD_NAMESPACE="+saNamespace)}
}

// specManagedSite runs the real binary with two managed tunnels against the in-repo
// Pangolin: PIC creates the sites and the Newt agents' Secrets and Deployments, an
// Ingress is published through the default one, the site's state reaches the metric
// once the test marks it online, and no log line holds an agent's secret. PIC then
// starts again with a configuration that names neither: the Ingress moves to the new
// default tunnel's site, and the old default's site goes in order (its resources, then
// its agent, then the site), while the other, which carries a resource PIC did not
// create, is kept with its agent. Last, deleting PIC's Deployment (an uninstall) lets
// the garbage collector remove the agents.
func specManagedSite(t *testing.T, p Provider) {
	e := newEnv(t, p, "managed")
	server := simtest.NewHandler(pangolinsim.Options{
		Org:     directOrg,
		Domains: []pangolinsim.Domain{{ID: "domain1", BaseDomain: e.ns + ".example.com", Verified: true}},
		Sites:   []pangolinsim.Site{{ID: 1, NiceID: "hand-made", Name: "hand-made"}},
		Keys:    []pangolinsim.Key{directKey},
	})
	t.Cleanup(server.Close)
	d := &directWorld{env: e, server: server}
	labels := map[string]string{"app": "pic"}
	owner := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: picDeployment, Namespace: picNamespace},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "pic:e2e"}}},
		}},
	}
	e.create(owner)
	// The owner id config/rbac/direct's access-record Role names as shipped (its EDIT).
	pangolin := &Pangolin{URL: p.ServePangolin(t, server), Org: directOrg, OwnerID: "my-cluster", APIKey: directKey.Token()}
	pic := e.startPIC(PICOptions{Pangolin: pangolin,
		ConfigFile: "defaultTunnel: {name: " + managedSite + ", managedSite: true}\ntunnels:\n  " + keptSite + ": {managedSite: true}\n",
		Args:       []string{"--log-level=debug"}})[0]

	e.service("web", 8080)
	app := ingress(e.ns, "app", "pangolin", e.host("app"), "web", 8080)
	e.create(app)

	var site pangolinsim.Site
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		site, _ = siteOf(server, managedSite)
		assert.Equal(c, managedSite+" (PIC my-cluster)", site.Name, "the site PIC created, with its mark")
	}, eventually, tick)
	assert.Equal(t, "newt", site.Type)
	agentKey := client.ObjectKey{Namespace: picNamespace, Name: "newt-" + managedSite}
	var secret corev1.Secret
	var agent appsv1.Deployment
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NoError(c, e.c.Get(e.ctx, agentKey, &secret))
		assert.NoError(c, e.c.Get(e.ctx, agentKey, &agent))
	}, eventually, tick)
	agentSecret := string(secret.Data[newt.SecretKeySecret])
	assert.True(t, server.NewtCredentialsMatch(managedSite, string(secret.Data[newt.SecretKeyID]), agentSecret),
		"the site accepts the credentials of the agent's Secret")

	d.eventuallyServed(map[string][]string{e.host("app"): {"http://" + e.svcAddr("web", 8080)}})
	e.eventuallyNormal(app, "TunnelNotReady")
	require.Equal(t, []int{site.ID}, targetSites(d, e.host("app")), "published through the managed site")

	t.Run("the site's connection and Newt's version reach the metrics once its agent is online", func(t *testing.T) {
		server.SetNewtVersion(managedSite, "1.15.0")
		server.SetSiteOnline(managedSite, true)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, body, err := pic.Get(e.ctx, Metrics, "/metrics")
			assert.NoError(c, err)
			assert.Contains(c, body, `pic_pangolin_managed_site_online{site="`+managedSite+`"} 1`)
			assert.Contains(c, body, `pic_pangolin_managed_site_newt_info{site="`+managedSite+`",version="1.15.0"} 1`)
		}, eventually, tick)
	})

	t.Run("no log line holds the agent's secret", func(t *testing.T) {
		require.NotEmpty(t, agentSecret)
		assert.False(t, strings.Contains(pic.Log(t), agentSecret))
	})

	t.Run("tunnels taken off the configuration: the old default goes in order, a site carrying another's resource is kept", func(t *testing.T) {
		kept, ok := siteOf(server, keptSite)
		require.True(t, ok, "PIC created the second managed site")
		keptKey := client.ObjectKey{Namespace: picNamespace, Name: "newt-" + keptSite}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.NoError(c, e.c.Get(e.ctx, keptKey, &appsv1.Deployment{}))
		}, eventually, tick)
		foreign := server.SeedResource(pangolinsim.Resource{Name: "by hand", DomainID: "domain1", Subdomain: ptr.To("by-hand"), Enabled: true})
		server.SeedTarget(pangolinsim.Target{ResourceID: foreign.ID, SiteID: kept.ID, IP: "10.0.0.1", Port: 80, Method: "http", Enabled: true})

		removal := watchRemoval(t, e, d, site.ID, agentKey)
		pic.Stop(t)
		pic = e.startPIC(PICOptions{Pangolin: pangolin, ConfigFile: "defaultTunnel: {name: " + nextSite + ", managedSite: true}\n",
			Args: []string{"--log-level=debug"}})[0]

		var next pangolinsim.Site
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			next, _ = siteOf(server, nextSite)
			assert.NotZero(c, next.ID, "PIC creates the new default tunnel's site")
			_, left := siteOf(server, managedSite)
			assert.False(c, left, "the old default's site is removed")
		}, eventually, tick)
		assert.Equal(t, []int{next.ID}, targetSites(d, e.host("app")), "the Ingress moved to the new default tunnel's site")
		assert.Equal(t, map[string][]string{e.host("app"): {"http://" + e.svcAddr("web", 8080)}, e.host("by-hand"): {"http://10.0.0.1:80"}},
			server.Served(), "the Ingress is served all along, and so is the resource PIC did not create")

		steps := removal.stop()
		t.Logf("what Pangolin and the API server saw:\n%s", strings.Join(steps.timeline, "\n"))
		require.NotNil(t, steps.siteDeleted, "Pangolin received the site's DELETE")
		assert.Zero(t, steps.siteDeleted.targetsOnSite, "no resource had a target on the site when it was deleted")
		assert.True(t, steps.siteDeleted.deploymentGone && steps.siteDeleted.secretGone,
			"the agent's Deployment and Secret were gone when the site was deleted")
		for _, kind := range []string{"Deployment", "Secret"} {
			targets, seen := steps.agentDeleted[kind]
			if assert.True(t, seen, "the API server saw the agent's %s deleted", kind) {
				assert.Zero(t, targets, "no resource had a target on the site when the agent's %s was deleted", kind)
			}
		}
		// The watch reports a deletion after the API server made it, so the timeline
		// orders the target's move before it, but not the site's DELETE after it: that
		// order is the state read at the DELETE, above.
		moved := slices.IndexFunc(steps.timeline, func(s string) bool { return strings.Contains(s, "POST /v1/target/") })
		deleted := slices.IndexFunc(steps.timeline, func(s string) bool { return strings.Contains(s, "deleted Deployment") })
		assert.True(t, moved >= 0 && moved < deleted, "the target moved (step %d) before the Deployment went (step %d)", moved, deleted)

		_, keptLeft := siteOf(server, keptSite)
		assert.True(t, keptLeft, "the site carrying a resource PIC did not create is kept")
		assert.NoError(t, e.c.Get(e.ctx, keptKey, &appsv1.Deployment{}), "with its agent's Deployment")
		assert.NoError(t, e.c.Get(e.ctx, keptKey, &corev1.Secret{}), "and its Secret")
		assert.Len(t, server.Targets(foreign.ID), 1, "the resource PIC did not create is untouched")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			line := "resources PIC did not create have targets on it, and PIC deletes neither them nor the site"
			assert.True(c, strings.Contains(pic.Log(t), line), "PIC's log says why it keeps the site: %q", line)
			_, body, err := pic.Get(e.ctx, Metrics, "/metrics")
			assert.NoError(c, err)
			series := `pic_pangolin_managed_site_kept{reason="foreign_resources",site="` + keptSite + `"} 1`
			assert.True(c, strings.Contains(body, series), "the metrics hold %s", series)
		}, eventually, tick)
		assert.False(t, strings.Contains(pic.Log(t), agentSecret), "no log line holds the removed agent's secret")
	})

	t.Run("uninstalling PIC removes the agents' Deployments and Secrets", func(t *testing.T) {
		pic.Stop(t)
		require.NoError(t, e.c.Delete(e.ctx, owner))
		for _, name := range []string{"newt-" + nextSite, "newt-" + keptSite} {
			key := client.ObjectKey{Namespace: picNamespace, Name: name}
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				assert.True(c, apierrors.IsNotFound(e.c.Get(e.ctx, key, &corev1.Secret{})), "the Secret %s is gone", name)
				assert.True(c, apierrors.IsNotFound(e.c.Get(e.ctx, key, &appsv1.Deployment{})), "the Deployment %s is gone", name)
			}, eventually, tick)
		}
		for _, niceID := range []string{nextSite, keptSite} {
			_, stillThere := siteOf(server, niceID)
			assert.True(t, stillThere, "PIC deletes no site when it is uninstalled: %s", niceID)
		}
	})
}

// The other sites of the managed-site spec: a second managed tunnel, whose site comes
// to carry a resource PIC did not create, and the default tunnel PIC moves to.
const (
	keptSite = "lab"
	nextSite = "next"
)

// siteOf is the site of niceID in the in-repo Pangolin.
func siteOf(server *simtest.Server, niceID string) (pangolinsim.Site, bool) {
	for _, s := range server.Sites() {
		if s.NiceID == niceID {
			return s, true
		}
	}
	return pangolinsim.Site{}, false
}

// targetSites are the sites of the targets of the resource that serves host.
func targetSites(d *directWorld, host string) []int {
	var out []int
	for _, t := range d.server.Targets(d.resource(host).ID) {
		out = append(out, t.SiteID)
	}
	return out
}

// targetsOn is how many resources have a target on siteID, as Pangolin's site list
// counts them.
func targetsOn(server *simtest.Server, siteID int) int {
	n := 0
	for _, r := range server.Resources() {
		if slices.ContainsFunc(server.Targets(r.ID), func(t pangolinsim.Target) bool { return t.SiteID == siteID }) {
			n++
		}
	}
	return n
}

// removal is what the in-repo Pangolin and the API server saw while a managed site was
// removed: every write to Pangolin and every deletion of the site's agent's objects, in
// the order each saw them, and what held at the two moments that decide the order.
type removal struct {
	timeline []string
	// siteDeleted is the state when Pangolin received the site's DELETE, nil before.
	siteDeleted *siteDeletion
	// agentDeleted is, by kind, how many resources had a target on the site when the
	// API server's watch reported the agent's object deleted.
	agentDeleted map[string]int
}

type siteDeletion struct {
	targetsOnSite              int
	deploymentGone, secretGone bool
}

type removalWatch struct {
	mu    sync.Mutex
	seen  removal
	stopF func()
}

// stop ends the watch and returns what it saw.
func (w *removalWatch) stop() removal {
	w.stopF()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

func (w *removalWatch) note(format string, args ...any) {
	w.timeline(time.Now().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...))
}

func (w *removalWatch) timeline(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen.timeline = append(w.seen.timeline, line)
}

// watchRemoval records the removal of siteID and of its agent (the Deployment and
// Secret agentKey): Pangolin's writes through a fault that answers nothing, and the
// agent's deletions through a watch of the API server. At the site's DELETE it reads
// the API server and Pangolin: the agent must be gone, and no target left on the site.
func watchRemoval(t *testing.T, e *env, d *directWorld, siteID int, agentKey client.ObjectKey) *removalWatch {
	t.Helper()
	w := &removalWatch{seen: removal{agentDeleted: map[string]int{}}}
	d.server.SetFault(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet {
			return false
		}
		w.note("Pangolin: %s %s", r.Method, r.URL.Path)
		if r.Method == http.MethodDelete && r.URL.Path == fmt.Sprintf("/v1/site/%d", siteID) {
			at := siteDeletion{targetsOnSite: targetsOn(d.server, siteID),
				deploymentGone: apierrors.IsNotFound(e.c.Get(e.ctx, agentKey, &appsv1.Deployment{})),
				secretGone:     apierrors.IsNotFound(e.c.Get(e.ctx, agentKey, &corev1.Secret{}))}
			w.mu.Lock()
			w.seen.siteDeleted = &at
			w.mu.Unlock()
		}
		return false
	})
	wc, err := client.NewWithWatch(e.p.RESTConfig(), client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(e.ctx)
	var done sync.WaitGroup
	for kind, list := range map[string]client.ObjectList{"Deployment": &appsv1.DeploymentList{}, "Secret": &corev1.SecretList{}} {
		watch, err := wc.Watch(ctx, list, client.InNamespace(agentKey.Namespace),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", agentKey.Name)})
		require.NoError(t, err)
		done.Go(func() {
			defer watch.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-watch.ResultChan():
					if !ok {
						return
					}
					if ev.Type != apiwatch.Deleted {
						continue
					}
					targets := targetsOn(d.server, siteID)
					w.note("API server: deleted %s %s (resources with a target on the site: %d)", kind, agentKey, targets)
					w.mu.Lock()
					w.seen.agentDeleted[kind] = targets
					w.mu.Unlock()
				}
			}
		})
	}
	w.stopF = func() {
		d.server.SetFault(nil)
		cancel()
		done.Wait()
	}
	t.Cleanup(w.stopF)
	return w
}
