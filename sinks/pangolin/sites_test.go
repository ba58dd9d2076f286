package pangolin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// siteWorld is a Pangolin, a cluster holding PIC's Deployment, and a sink managing the
// site "edge" for owner id cluster-a.
type siteWorld struct {
	t      *testing.T
	ctx    context.Context
	logs   *bytes.Buffer
	fake   *simtest.Server
	kube   client.Client
	sink   *Sink
	keeper *siteKeeper
	wake   *wakes
	minted []newt.Credentials
	// order are the deletions, in the cluster and in Pangolin, in order.
	order []string
	// forbidden makes every read of a Deployment or Secret forbidden, as without the
	// managed sites' Role.
	forbidden bool
}

const managedSite = "edge"

func newSiteWorld(t *testing.T, sites ...pangolinsim.Site) *siteWorld {
	t.Helper()
	w := &siteWorld{t: t, logs: &bytes.Buffer{}}
	w.ctx = log.IntoContext(context.Background(), funcr.New(func(prefix, args string) { w.logs.WriteString(prefix + " " + args + "\n") }, funcr.Options{Verbosity: 1}))
	o := pangolinsim.Options{Keys: []pangolinsim.Key{secretKey}}
	if sites != nil {
		o.Sites = append([]pangolinsim.Site{{ID: 1, NiceID: site, Name: "k8s-local"}}, sites...)
	}
	w.fake = simtest.NewServer(o)
	t.Cleanup(w.fake.Close)
	api, err := pangolinapi.New(pangolinapi.Config{BaseURL: w.fake.BaseURL(), Org: "interop", APIKey: secretKey.Token(), Timeout: 5 * time.Second})
	require.NoError(t, err)
	pic := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "pic", Namespace: "pic-system", UID: "pic-uid"}}
	w.kube = fake.NewClientBuilder().WithObjects(pic).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if w.forbidden {
				return apierrors.NewForbidden(schema.GroupResource{Resource: fmt.Sprintf("%T", obj)}, key.Name, errors.New("no Role"))
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w.order = append(w.order, fmt.Sprintf("delete %T %s", obj, obj.GetName()))
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	w.fake.SetFault(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodDelete {
			w.order = append(w.order, "DELETE "+r.URL.Path)
		}
		return false
	})
	managed := &ManagedSites{
		Names:     []string{managedSite},
		Agent:     newt.Agent{Namespace: "pic-system", OwnerID: "cluster-a", Image: "docker.io/fosrl/newt:1.15.0", Replicas: 1, Endpoint: "https://pangolin.example.com"},
		OwnerName: "pic",
		Keeper: &newt.Keeper{Reader: w.kube, Writer: w.kube, Mint: func() newt.Credentials {
			c := mintCredentials()
			w.minted = append(w.minted, c)
			return c
		}},
	}
	w.sink = New(api, Options{OwnerID: "cluster-a", APIKey: secretKey.Token(), Managed: managed})
	decl := w.sink.Declare()
	require.Len(t, decl.Runnables, 2, "the refresher and the site keeper")
	w.keeper = decl.Runnables[1].(*siteKeeper)
	w.wake = &wakes{changes: decl.Changes()}
	return w
}

func (w *siteWorld) tunnel() plugin.TunnelCheck {
	w.t.Helper()
	check, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Namespace: "shop", Name: managedSite})
	require.NoError(w.t, err)
	return check
}

func (w *siteWorld) secret() (*corev1.Secret, bool) {
	var s corev1.Secret
	err := w.kube.Get(w.ctx, types.NamespacedName{Namespace: "pic-system", Name: "newt-" + managedSite}, &s)
	return &s, err == nil
}

func (w *siteWorld) deployment() (*appsv1.Deployment, bool) {
	var d appsv1.Deployment
	err := w.kube.Get(w.ctx, types.NamespacedName{Namespace: "pic-system", Name: "newt-" + managedSite}, &d)
	return &d, err == nil
}

func (w *siteWorld) siteNamed(niceID string) (pangolinsim.Site, bool) {
	for _, s := range w.fake.Sites() {
		if s.NiceID == niceID {
			return s, true
		}
	}
	return pangolinsim.Site{}, false
}

func TestManagedSiteIsCreatedWithItsAgent(t *testing.T) {
	w := newSiteWorld(t)
	assert.Equal(t, plugin.TunnelNotFound, w.tunnel().State, "not created yet")

	w.keeper.Keep(w.ctx)

	created, ok := w.siteNamed(managedSite)
	require.True(t, ok, "the site is created, named by the tunnel")
	assert.Equal(t, "newt", created.Type)
	assert.Equal(t, "edge (PIC cluster-a)", created.Name, "its name carries PIC's mark")
	secret, ok := w.secret()
	require.True(t, ok, "the agent's Secret")
	require.Len(t, w.minted, 1)
	assert.True(t, w.fake.NewtCredentialsMatch(managedSite, string(secret.Data[newt.SecretKeyID]), string(secret.Data[newt.SecretKeySecret])),
		"the site accepts the credentials the Secret holds")
	d, ok := w.deployment()
	require.True(t, ok, "the agent's Deployment")
	assert.Equal(t, types.UID("pic-uid"), d.OwnerReferences[0].UID, "owned by PIC's Deployment")

	check := w.tunnel()
	assert.Equal(t, plugin.TunnelNotReady, check.State, "offline until its agent connects")
	assert.Equal(t, 0.0, testutil.ToFloat64(managedSiteOnline.WithLabelValues(managedSite)))

	w.fake.SetSiteOnline(managedSite, true)
	w.keeper.Keep(w.ctx)
	assert.Equal(t, plugin.TunnelReady, w.tunnel().State)
	assert.Equal(t, 1.0, testutil.ToFloat64(managedSiteOnline.WithLabelValues(managedSite)), "the metric follows the site")
	assert.Contains(t, w.wake.heard().tunnels, route.TunnelRef{Namespace: "shop", Name: managedSite}, "the objects waiting for it are woken")

	writes := w.fake.Writes()
	w.keeper.Keep(w.ctx)
	assert.Equal(t, writes, w.fake.Writes(), "a pass with nothing to do writes nothing to Pangolin")
	assert.Len(t, w.minted, 1, "nor mints again")
	assertNoCredential(t, w)
}

func TestManagedSiteRefusal(t *testing.T) {
	cases := []struct {
		name     string
		existing pangolinsim.Site
	}{
		{"a site PIC did not create, of the tunnel's name, is refused", pangolinsim.Site{ID: 7, NiceID: managedSite, Name: "edge", Type: "newt"}},
		{"a local site of the tunnel's name is refused", pangolinsim.Site{ID: 7, NiceID: managedSite, Name: "edge (PIC cluster-a)", Type: "local"}},
		{"a site of another owner id is refused", pangolinsim.Site{ID: 7, NiceID: managedSite, Name: "edge (PIC cluster-b)", Type: "newt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newSiteWorld(t, tc.existing)
			w.keeper.Keep(w.ctx)

			assert.Zero(t, w.fake.Writes(), "nothing is written to Pangolin")
			got, _ := w.siteNamed(managedSite)
			assert.Equal(t, tc.existing.Name, got.Name, "the site is left as it is")
			_, hasSecret := w.secret()
			_, hasDeployment := w.deployment()
			assert.False(t, hasSecret, "no credentials are minted for a site that could never accept them")
			assert.False(t, hasDeployment, "no agent runs")
			check := w.tunnel()
			assert.Equal(t, plugin.TunnelNotFound, check.State, "nothing is published through it")
			assert.Contains(t, check.Message, `PIC (owner id "cluster-a") did not create it`)
			assert.Contains(t, check.Message, "rename the tunnel, or remove managedSite")
		})
	}
}

func TestManagedSiteCreationRetriesWithTheSameCredentials(t *testing.T) {
	w := newSiteWorld(t)
	failing := true
	w.fake.SetFault(func(rw http.ResponseWriter, r *http.Request) bool {
		if failing && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/site") {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	w.keeper.Keep(w.ctx)
	_, created := w.siteNamed(managedSite)
	assert.False(t, created)
	_, hasDeployment := w.deployment()
	assert.False(t, hasDeployment, "no agent before its site exists")

	failing = false
	w.keeper.Keep(w.ctx)
	secret, ok := w.secret()
	require.True(t, ok)
	assert.Len(t, w.minted, 1, "the credentials written before the failed create are the ones used")
	assert.True(t, w.fake.NewtCredentialsMatch(managedSite, string(secret.Data[newt.SecretKeyID]), string(secret.Data[newt.SecretKeySecret])))
	assertNoCredential(t, w)
}

func TestManagedSiteWithLostCredentialsIsKept(t *testing.T) {
	w := newSiteWorld(t)
	w.keeper.Keep(w.ctx)
	secret, ok := w.secret()
	require.True(t, ok)
	require.NoError(t, w.kube.Delete(w.ctx, secret))

	w.keeper.Keep(w.ctx)
	_, ok = w.siteNamed(managedSite)
	assert.True(t, ok, "the site is not deleted")
	assert.Zero(t, w.fake.Deletes())
	_, ok = w.secret()
	assert.False(t, ok, "no fresh credentials that the site would refuse")
	assert.Len(t, w.minted, 1)
	assert.Contains(t, w.logs.String(), "delete the site edge in Pangolin", "the log says how to start over")
	assertNoCredential(t, w)
}

// assertNoCredential checks that no credential PIC minted is in its logs.
func assertNoCredential(t *testing.T, w *siteWorld) {
	t.Helper()
	require.NotEmpty(t, w.logs.String(), "the test sees the logs")
	for _, c := range w.minted {
		assert.NotContains(t, w.logs.String(), c.Secret)
	}
}

// seedAgent places the Newt agent PIC would have written for site.
func (w *siteWorld) seedAgent(site string, labelled bool) {
	w.t.Helper()
	agent := w.keeper.managed.Agent
	agent.Site = site
	agent.Owner = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "pic", UID: "pic-uid"}
	d, s := agent.Deployment(), agent.Secret(newt.Credentials{ID: "old-id", Secret: "old-secret"})
	if !labelled {
		d.Labels, s.Labels = nil, nil
	}
	require.NoError(w.t, w.kube.Create(w.ctx, d))
	require.NoError(w.t, w.kube.Create(w.ctx, s))
}

func (w *siteWorld) has(obj client.Object, name string) bool {
	return w.kube.Get(w.ctx, types.NamespacedName{Namespace: "pic-system", Name: name}, obj) == nil
}

// Who published a resource seeded on a site, for the tests of removal.
const (
	noResource = iota
	foreignResource
	picResource
	bothResources
)

// seedResources places resources with a target on site: one made by hand, one PIC
// published for the Ingress shop/app, or both.
func (w *siteWorld) seedResources(siteID int, which int) {
	w.t.Helper()
	if which == foreignResource || which == bothResources {
		r := w.fake.SeedResource(pangolinsim.Resource{Name: "by hand", DomainID: "domain1", Subdomain: ptrTo("by-hand"), Enabled: true})
		w.fake.SeedTarget(pangolinsim.Target{ResourceID: r.ID, SiteID: siteID, IP: "10.0.0.1", Port: 80, Enabled: true})
	}
	if which == picResource || which == bothResources {
		m := mark{Kind: "Ingress", Namespace: "shop", Name: "app", Host: "app.example.com", PublishedHost: "app.example.com"}
		r := w.fake.SeedResource(pangolinsim.Resource{NiceID: niceID("cluster-a", m), Name: resourceName(m), DomainID: "domain1", Subdomain: ptrTo("app"), Enabled: true})
		w.fake.SeedTarget(pangolinsim.Target{ResourceID: r.ID, SiteID: siteID, IP: "web.shop.svc.cluster.local", Port: 8080, Method: "http", Enabled: true})
	}
}

// kept is the reason pic_pangolin_managed_site_kept gives for site, "" for no series.
func kept(t *testing.T, niceID string) string {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	managedSiteKept.Collect(ch)
	close(ch)
	var reasons []string
	for m := range ch {
		var pb dto.Metric
		require.NoError(t, m.Write(&pb))
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["site"] == niceID {
			assert.Equal(t, 1.0, pb.GetGauge().GetValue())
			reasons = append(reasons, labels["reason"])
		}
	}
	require.LessOrEqual(t, len(reasons), 1, "one reason per site")
	if len(reasons) == 0 {
		return ""
	}
	return reasons[0]
}

func TestSitesNoLongerManaged(t *testing.T) {
	old := pangolinsim.Site{ID: 7, NiceID: "old", Name: "old (PIC cluster-a)", Type: "newt"}
	cases := []struct {
		name        string
		site        pangolinsim.Site
		resources   int  // who published the resources with a target on the site
		unread      bool // PIC has not read Pangolin's resources yet
		labelled    bool // the agent's objects carry PIC's labels
		configured  bool // a tunnel of the configuration names it, without managedSite
		asked       bool // an object asked about it (the tunnel-name annotation)
		wantRemoved bool
		wantKept    string // pic_pangolin_managed_site_kept's reason
		wantLog     string
	}{
		{name: "a site PIC created and no longer manages, without resources, is removed with its agent, in order",
			site: old, labelled: true, wantRemoved: true, wantLog: "removed a site PIC no longer manages"},
		{name: "a site carrying PIC's own resources is kept until their objects let them go, and the log names the objects",
			site: old, resources: picResource, labelled: true, wantKept: keptForResources,
			wantLog: `keeping a site PIC no longer manages: PIC's resources still have targets on it; they go when the objects that published them are deleted or move to another tunnel, and the site and its agent after them" "site"="old" "resources"=1 "objects"=["Ingress shop/app"]`},
		{name: "a site carrying a resource PIC did not create is kept with its agent, and PIC says it deletes neither",
			site: old, resources: foreignResource, labelled: true, wantKept: keptForForeignResources,
			wantLog: `keeping a site PIC no longer manages: resources PIC did not create have targets on it, and PIC deletes neither them nor the site; delete them or move them to another site, and PIC then removes the site and its agent" "site"="old" "foreign"=1 "resources"=1` + "\n"},
		{name: "a site carrying PIC's resources and another's is kept for the other's",
			site: old, resources: bothResources, labelled: true, wantKept: keptForForeignResources,
			wantLog: `resources PIC did not create have targets on it, and PIC deletes neither them nor the site; delete them or move them to another site, and PIC then removes the site and its agent" "site"="old" "foreign"=1 "resources"=2 "objects"=["Ingress shop/app"]`},
		{name: "before PIC has read Pangolin's resources, a site carrying resources is kept without guessing whose they are",
			site: old, resources: foreignResource, unread: true, labelled: true, wantKept: keptForResources,
			wantLog: "keeping a site PIC no longer manages: resources still have targets on it; it is removed once they are gone"},
		{name: "a site whose agent's objects PIC did not label is kept with them",
			site: old, labelled: false, wantKept: keptForAgent, wantLog: "PIC did not create it and leaves it alone"},
		{name: "another owner id's site is not touched",
			site: pangolinsim.Site{ID: 7, NiceID: "old", Name: "old (PIC cluster-b)", Type: "newt"}, labelled: true},
		{name: "a site made by hand is not touched",
			site: pangolinsim.Site{ID: 7, NiceID: "old", Name: "old", Type: "newt"}, labelled: true},
		{name: "a site the configuration still names as a tunnel, unmanaged, is kept",
			site: old, labelled: true, configured: true},
		{name: "a site an object asked about is kept, and the log says so",
			site: old, labelled: true, asked: true, wantKept: keptForObjects,
			wantLog: "keeping a site PIC no longer manages: objects asked to publish through it since PIC started"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newSiteWorld(t, tc.site)
			w.seedAgent("old", tc.labelled)
			w.seedResources(tc.site.ID, tc.resources)
			if !tc.unread {
				require.NoError(t, w.sink.Refresh(w.ctx))
			}
			if tc.configured {
				w.keeper.managed.Configured = append(w.keeper.managed.Configured, "old")
			}
			if tc.asked {
				_, err := w.sink.Tunnel(w.ctx, route.TunnelRef{Namespace: "shop", Name: "old"})
				require.NoError(t, err)
			}
			resources := w.fake.Resources()
			w.keeper.Keep(w.ctx)

			_, siteLeft := w.siteNamed("old")
			deploymentLeft, secretLeft := w.has(&appsv1.Deployment{}, "newt-old"), w.has(&corev1.Secret{}, "newt-old")
			if tc.wantRemoved {
				assert.False(t, siteLeft || deploymentLeft || secretLeft, "site %t, deployment %t, secret %t", siteLeft, deploymentLeft, secretLeft)
				assert.Equal(t, []string{"delete *v1.Deployment newt-old", "delete *v1.Secret newt-old", "DELETE /v1/site/7"}, w.order,
					"the agent goes before its site")
			} else {
				assert.True(t, siteLeft && deploymentLeft && secretLeft, "site %t, deployment %t, secret %t", siteLeft, deploymentLeft, secretLeft)
				assert.Empty(t, w.order, "nothing is deleted")
			}
			assert.Equal(t, resources, w.fake.Resources(), "no resource is deleted: PIC's go with their objects")
			assert.Equal(t, tc.wantKept, kept(t, "old"), "pic_pangolin_managed_site_kept")
			if tc.wantLog != "" {
				assert.Contains(t, w.logs.String(), tc.wantLog)
			}
			_, managedLeft := w.siteNamed(managedSite)
			assert.True(t, managedLeft, "the managed site is kept")
		})
	}
}

func TestSiteNoLongerManagedGoesOnceItsResourcesMove(t *testing.T) {
	old := pangolinsim.Site{ID: 7, NiceID: "old", Name: "old (PIC cluster-a)", Type: "newt"}
	w := newSiteWorld(t, old)
	w.seedAgent("old", true)
	w.seedResources(old.ID, picResource)
	require.NoError(t, w.sink.Refresh(w.ctx))

	w.keeper.Keep(w.ctx)
	_, siteLeft := w.siteNamed("old")
	require.True(t, siteLeft, "kept while PIC's resource has its target there")
	require.Empty(t, w.order)
	require.Equal(t, keptForResources, kept(t, "old"))

	// The Ingress moves to the managed tunnel: its target goes to the managed site.
	created, ok := w.siteNamed(managedSite)
	require.True(t, ok)
	var moved bool
	for _, r := range w.fake.Resources() {
		for _, tg := range w.fake.Targets(r.ID) {
			if tg.SiteID == old.ID {
				_, err := w.sink.api.UpdateTarget(w.ctx, tg.ID, pangolinapi.TargetUpdate{SiteID: created.ID, IP: tg.IP, Port: tg.Port, Method: tg.Method, Enabled: ptrTo(true)})
				require.NoError(t, err)
				moved = true
			}
		}
	}
	require.True(t, moved)
	require.NoError(t, w.sink.Refresh(w.ctx))
	w.order = nil

	w.keeper.Keep(w.ctx)
	assert.Equal(t, []string{"delete *v1.Deployment newt-old", "delete *v1.Secret newt-old", "DELETE /v1/site/7"}, w.order,
		"its resources gone, the agent goes, then the site")
	assert.Empty(t, kept(t, "old"), "a removed site is kept for no reason")
	assert.Len(t, w.fake.Resources(), 1, "PIC's resource is served from the managed site")
}

// newtVersions are the versions the info metric holds for a site.
func newtVersions(t *testing.T, niceID string) []string {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	managedSiteNewt.Collect(ch)
	close(ch)
	var out []string
	for m := range ch {
		var pb dto.Metric
		require.NoError(t, m.Write(&pb))
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["site"] == niceID {
			out = append(out, labels["version"])
		}
	}
	return out
}

func TestManagedSiteReportsNewtVersion(t *testing.T) {
	w := newSiteWorld(t)
	w.keeper.Keep(w.ctx)
	check := w.tunnel()
	assert.Equal(t, plugin.TunnelNotReady, check.State)
	assert.Contains(t, check.Message, "no Newt agent has connected to it yet")
	assert.Contains(t, check.Message, "newt-edge", "the message names the agent's Deployment")
	assert.Empty(t, newtVersions(t, managedSite), "no version before an agent connects")

	w.fake.SetNewtVersion(managedSite, "1.15.0")
	w.keeper.Keep(w.ctx)
	assert.Contains(t, w.tunnel().Message, "version 1.15.0", "an agent that connected once and left says which it was")
	assert.Equal(t, []string{"1.15.0"}, newtVersions(t, managedSite))

	w.fake.SetNewtVersion(managedSite, "1.16.0")
	w.fake.SetSiteOnline(managedSite, true)
	w.keeper.Keep(w.ctx)
	assert.Equal(t, plugin.TunnelReady, w.tunnel().State)
	assert.Equal(t, []string{"1.16.0"}, newtVersions(t, managedSite), "one series per site: the old version's goes")
}

func TestManagedSiteOfflineMessage(t *testing.T) {
	cases := []struct {
		name    string
		version string
		want    string
	}{
		{name: "a site no agent has connected to says so", version: "",
			want: `managed Pangolin site "edge" is not online: no Newt agent has connected to it yet; its routes are written, and Pangolin serves them once the agent of Deployment newt-edge connects`},
		{name: "a site whose agent left gives the version it had", version: "1.15.0",
			want: `managed Pangolin site "edge" is not online: its Newt agent (version 1.15.0 when it last connected) is not connected; its routes are written, and Pangolin serves them once the agent of Deployment newt-edge connects`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, managedSiteOffline(pangolinapi.Site{NiceID: "edge", NewtVersion: tc.version}))
		})
	}
}

func TestNewtResourcesFromConfiguration(t *testing.T) {
	cases := []struct {
		name string
		in   config.Pangolin
		want corev1.ResourceRequirements
	}{
		{name: "the defaults request CPU and memory and limit memory",
			in: config.Pangolin{NewtCPURequest: "10m", NewtMemoryRequest: "32Mi", NewtMemoryLimit: "128Mi"},
			want: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			}},
		{name: "every one set sets all four",
			in: config.Pangolin{NewtCPURequest: "50m", NewtMemoryRequest: "64Mi", NewtCPULimit: "1", NewtMemoryLimit: "256Mi"},
			want: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			}},
		{name: "none set sets neither requests nor limits", in: config.Pangolin{}, want: corev1.ResourceRequirements{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, newtResources(tc.in))
		})
	}
}

func TestImageVersion(t *testing.T) {
	cases := []struct{ name, image, want string }{
		{"a tag is the version", "docker.io/fosrl/newt:1.15.0", "1.15.0"},
		{"a leading v is dropped", "fosrl/newt:v1.16.0", "1.16.0"},
		{"a tag with a digest is the tag", "docker.io/fosrl/newt:1.15.0@sha256:" + strings.Repeat("ab", 32), "1.15.0"},
		{"a registry port is not a tag", "registry.example:5000/newt@sha256:" + strings.Repeat("ab", 32), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, imageVersion(tc.image)) })
	}
}

func TestSitesRemovedOnceNoTunnelIsManaged(t *testing.T) {
	cases := []struct {
		name        string
		resources   bool // a resource has a target on the site
		forbidden   bool // the managed sites' Role is gone
		wantRemoved bool
		wantKept    string // pic_pangolin_managed_site_kept's reason
		wantLog     string
	}{
		{name: "the last managed site, once taken off, is removed with its agent, in order",
			wantRemoved: true, wantLog: "removed a site PIC no longer manages"},
		{name: "a site that still carries resources is kept",
			resources: true, wantKept: keptForResources, wantLog: "keeping a site PIC no longer manages: resources still have targets on it"},
		{name: "without the Role, the agent cannot be seen gone, so the site is kept and the log says what to do",
			forbidden: true, wantKept: keptForAgent, wantLog: "delete the Deployment and Secret, then the site, by hand"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newSiteWorld(t)
			w.keeper.Keep(w.ctx)
			created, ok := w.siteNamed(managedSite)
			require.True(t, ok)
			if tc.resources {
				r := w.fake.SeedResource(pangolinsim.Resource{Name: "by hand", DomainID: "domain1", Enabled: true})
				w.fake.SeedTarget(pangolinsim.Target{ResourceID: r.ID, SiteID: created.ID, IP: "10.0.0.1", Port: 80, Enabled: true})
			}
			// The configuration manages no site any more, nor names this one.
			w.keeper.managed.Names = nil
			w.forbidden = tc.forbidden
			require.NoError(t, w.kube.Delete(w.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "pic", Namespace: "pic-system"}}))
			w.order = nil

			w.keeper.Keep(w.ctx)

			_, siteLeft := w.siteNamed(managedSite)
			w.forbidden = false
			deploymentLeft, secretLeft := w.has(&appsv1.Deployment{}, "newt-edge"), w.has(&corev1.Secret{}, "newt-edge")
			if tc.wantRemoved {
				assert.False(t, siteLeft || deploymentLeft || secretLeft, "site %t, deployment %t, secret %t", siteLeft, deploymentLeft, secretLeft)
				assert.Equal(t, []string{"delete *v1.Deployment newt-edge", "delete *v1.Secret newt-edge", fmt.Sprintf("DELETE /v1/site/%d", created.ID)}, w.order,
					"the agent goes before its site, and PIC's own Deployment is not needed")
			} else {
				assert.True(t, siteLeft && deploymentLeft && secretLeft, "site %t, deployment %t, secret %t", siteLeft, deploymentLeft, secretLeft)
				assert.Empty(t, w.order, "nothing is deleted")
			}
			assert.Contains(t, w.logs.String(), tc.wantLog)
			assert.Equal(t, tc.wantKept, kept(t, managedSite), "pic_pangolin_managed_site_kept")
			assert.NotContains(t, w.logs.String(), "cannot keep the managed sites' agents", "managing none, PIC looks for no owner")
			assertNoCredential(t, w)
		})
	}
}

func TestManagedSitesFromConfiguration(t *testing.T) {
	kube := fake.NewClientBuilder().Build()
	deps := plugin.SinkDeps{Client: kube, APIReader: kube}
	cases := []struct {
		name       string
		namespace  string
		managed    bool
		wantNil    bool
		wantPeriod time.Duration
		wantErr    string
	}{
		{name: "managed tunnels in a cluster keep their sites every 15 s", namespace: "pic-system", managed: true},
		{name: "no managed tunnel in a cluster still removes PIC's sites, every 5 minutes", namespace: "pic-system", wantPeriod: DefaultSweepPeriod},
		{name: "no managed tunnel outside a cluster runs nothing", wantNil: true},
		{name: "a managed tunnel outside a cluster is an error", managed: true, wantErr: "PIC's namespace is not known"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tc.namespace)
			cfg := config.Config{Sink: "pangolin"}
			cfg.Tunnels.Default = tunnel.Tunnel{Name: "edge", ManagedSite: tc.managed}
			got, err := managedSitesFrom(&cfg, deps, "cluster-a")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantNil {
				if ownNamespace() == "" {
					assert.Nil(t, got)
				}
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tc.wantPeriod, got.Period)
			assert.Equal(t, []string{"edge"}, got.Configured)
		})
	}
}
