package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// specManagedSite runs the real binary with one managed tunnel against the in-repo
// Pangolin: PIC creates the site and the Newt agent's Secret and Deployment, an Ingress
// is published through the site, the site's state reaches the metric once the test marks
// it online, no log line holds the agent's secret, and deleting PIC's Deployment (an
// uninstall) lets the garbage collector remove the agent.
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
	pic := e.startPIC(PICOptions{Pangolin: pangolin, ConfigFile: "defaultTunnel: {name: " + managedSite + ", managedSite: true}\n",
		Args: []string{"--log-level=debug"}})[0]

	e.service("web", 8080)
	app := ingress(e.ns, "app", "pangolin", e.host("app"), "web", 8080)
	e.create(app)

	var site pangolinsim.Site
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, s := range server.Sites() {
			if s.NiceID == managedSite {
				site = s
			}
		}
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

	t.Run("uninstalling PIC removes the agent's Deployment and Secret", func(t *testing.T) {
		pic.Stop(t)
		require.NoError(t, e.c.Delete(e.ctx, owner))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.True(c, apierrors.IsNotFound(e.c.Get(e.ctx, agentKey, &corev1.Secret{})), "the Secret is gone")
			assert.True(c, apierrors.IsNotFound(e.c.Get(e.ctx, agentKey, &appsv1.Deployment{})), "the Deployment is gone")
		}, eventually, tick)
		_, stillThere := func() (pangolinsim.Site, bool) {
			for _, s := range server.Sites() {
				if s.NiceID == managedSite {
					return s, true
				}
			}
			return pangolinsim.Site{}, false
		}()
		assert.True(t, stillThere, "PIC deletes no site")
	})
}
