package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
)

// warnings collects the API server's warnings: Pod Security admission warns on a
// Deployment whose pods a namespace's level would refuse.
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.text...)
}

// managedSitesUser is a client with only the rules of config/rbac/managed-sites in ns:
// what PIC's ServiceAccount is granted there.
func managedSitesUser(t *testing.T, env *testenv.Env, ns string, w rest.WarningHandler) client.Client {
	t.Helper()
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "managed-sites", "role.yaml"))
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err)
	require.Len(t, objs, 1)
	var role rbacv1.Role
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &role))
	role.Namespace = ns
	require.NoError(t, env.Client.Create(ctx, &role))
	const user = "pic-managed-sites"
	require.NoError(t, env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}))
	cfg, err := env.AddUser(user, nil)
	require.NoError(t, err)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	return c
}

// TestNewtAgentOnTheAPIServer keeps a managed site's agent on a real API server, with
// only the managed sites' rules, in a namespace that enforces the restricted Pod
// Security Standard.
func TestNewtAgentOnTheAPIServer(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ns := testenv.NewNamespace(t, env.Client)
		require.NoError(t, testenv.Update(ctx, env.Client, client.ObjectKey{Name: ns}, func(n *corev1.Namespace) {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
			n.Labels["pod-security.kubernetes.io/warn"] = "restricted"
		}, 10*time.Second))
		// PIC's own Deployment, the agents' owner.
		labels := map[string]string{"app": "pic"}
		pic := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "pangolin-ingress-controller", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "pic:test"}}},
			}},
		}
		require.NoError(t, env.Client.Create(ctx, pic))

		w := &warnings{}
		c := managedSitesUser(t, env, ns, w)
		minted := 0
		keeper := &newt.Keeper{Reader: c, Writer: c, Mint: func() newt.Credentials {
			minted++
			return newt.Credentials{ID: "abcdefghijklmno", Secret: "envtest-newt-secret-0123456789abcdefghijklmnopqrs"}
		}}
		owner, err := keeper.Owner(ctx, ns, pic.Name)
		require.NoError(t, err, "the managed sites' rules may read PIC's Deployment")
		// A CPU limit without a CPU request: the API server defaults the request to the
		// limit, which must not read as drift.
		agent := newt.Agent{Namespace: ns, Site: "edge", OwnerID: "cluster-a", Image: "docker.io/fosrl/newt:1.15.0", Replicas: 1,
			Endpoint: "https://pangolin.example.com", Owner: owner, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			}}

		t.Run("the Secret is created with fresh credentials, owned by PIC's Deployment", func(t *testing.T) {
			creds, err := keeper.Credentials(ctx, agent, true)
			require.NoError(t, err)
			var s corev1.Secret
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, &s))
			assert.Equal(t, creds.Secret, string(s.Data[newt.SecretKeySecret]))
			assert.Equal(t, pic.UID, s.OwnerReferences[0].UID)
			again, err := keeper.Credentials(ctx, agent, true)
			require.NoError(t, err)
			assert.Equal(t, creds, again, "kept, not minted again")
			assert.Equal(t, 1, minted)
		})

		t.Run("the Deployment is created, passes the restricted level, and the server's defaults are no drift", func(t *testing.T) {
			wrote, err := keeper.Deployment(ctx, agent)
			require.NoError(t, err)
			assert.True(t, wrote)
			assert.Empty(t, w.all(), "Pod Security admission warns about nothing")
			var d appsv1.Deployment
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, &d))
			assert.Equal(t, pic.UID, d.OwnerReferences[0].UID, "uninstalling PIC removes it")
			for range 3 {
				wrote, err = keeper.Deployment(ctx, agent)
				require.NoError(t, err)
				assert.False(t, wrote, "what the API server defaulted is not a change to put back")
			}
		})

		t.Run("a pod of the Deployment's template is admitted where restricted is enforced", func(t *testing.T) {
			require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}))
			tmpl := agent.Deployment().Spec.Template
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "newt-edge-probe", Namespace: ns, Labels: tmpl.Labels}, Spec: tmpl.Spec}
			require.NoError(t, env.Client.Create(ctx, pod))
			bad := pod.DeepCopy()
			bad.Name = "newt-edge-escalating"
			bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
			assert.Error(t, env.Client.Create(ctx, bad), "the namespace does enforce the restricted level")
		})

		t.Run("a hand edit of the Deployment is put back", func(t *testing.T) {
			require.NoError(t, testenv.Update(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Image = "docker.io/fosrl/newt:latest"
				d.Spec.Replicas = ptr.To[int32](5)
				d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
				d.OwnerReferences = nil
			}, 10*time.Second))
			wrote, err := keeper.Deployment(ctx, agent)
			require.NoError(t, err)
			assert.True(t, wrote)
			var d appsv1.Deployment
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, &d))
			assert.Equal(t, "docker.io/fosrl/newt:1.15.0", d.Spec.Template.Spec.Containers[0].Image)
			assert.Equal(t, int32(1), *d.Spec.Replicas)
			assert.Equal(t, "128Mi", ptr.To(d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]).String(), "the configured limit")
			require.Len(t, d.OwnerReferences, 1)
			assert.Equal(t, pic.UID, d.OwnerReferences[0].UID)
		})

		t.Run("a hand edit of the Secret's labels and owner is put back, its credentials kept", func(t *testing.T) {
			require.NoError(t, testenv.Update(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, func(s *corev1.Secret) {
				s.Labels = nil
				s.OwnerReferences = nil
			}, 10*time.Second))
			creds, err := keeper.Credentials(ctx, agent, false)
			require.NoError(t, err)
			var s corev1.Secret
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, &s))
			assert.Equal(t, newt.ManagedBy, s.Labels[newt.LabelManagedBy])
			assert.Equal(t, pic.UID, s.OwnerReferences[0].UID)
			assert.Equal(t, creds.Secret, string(s.Data[newt.SecretKeySecret]))
			assert.Equal(t, 1, minted)
		})

		t.Run("credentials rotated by hand and a rollout restart are kept, as the docs tell the user", func(t *testing.T) {
			rotated := newt.Credentials{ID: "rotatedidabcdef", Secret: "rotated-newt-secret-0123456789abcdefghijklmnopqr"}
			require.NoError(t, testenv.Update(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, func(s *corev1.Secret) {
				s.Data[newt.SecretKeyID], s.Data[newt.SecretKeySecret] = []byte(rotated.ID), []byte(rotated.Secret)
			}, 10*time.Second))
			require.NoError(t, testenv.Update(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, func(d *appsv1.Deployment) {
				d.Spec.Template.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}
			}, 10*time.Second))
			creds, err := keeper.Credentials(ctx, agent, false)
			require.NoError(t, err)
			assert.Equal(t, rotated, creds, "the Secret's credentials are the agent's")
			wrote, err := keeper.Deployment(ctx, agent)
			require.NoError(t, err)
			assert.False(t, wrote, "a restart is not a change to put back")
			assert.Equal(t, 1, minted, "nothing minted")
		})

		t.Run("the agent of a site no longer managed is removed with the Role's rules alone", func(t *testing.T) {
			require.NoError(t, keeper.Remove(ctx, agent))
			key := client.ObjectKey{Namespace: ns, Name: "newt-edge"}
			assert.True(t, apierrors.IsNotFound(env.Client.Get(ctx, key, &appsv1.Deployment{})))
			assert.True(t, apierrors.IsNotFound(env.Client.Get(ctx, key, &corev1.Secret{})))
			require.NoError(t, keeper.Remove(ctx, agent), "removing what is gone is no error")
		})
	})
}

// startManaged runs a direct-mode PIC whose default tunnel "edge" is a managed site,
// in ns, where its own Deployment is created first.
func startManaged(t *testing.T, env *testenv.Env, fake *simtest.Server) (*world, *appsv1.Deployment) {
	t.Helper()
	ctx := context.Background()
	ns := testenv.NewNamespace(t, env.Client)
	labels := map[string]string{"app": "pic"}
	pic := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pangolin-ingress-controller", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "pic:test"}}},
		}},
	}
	require.NoError(t, env.Client.Create(ctx, pic))
	// PIC's namespace, as the Deployment's downward API gives it.
	t.Setenv("POD_NAMESPACE", ns)
	startDirect(t, env, fake, ns, func(cfg *config.Config) {
		cfg.Tunnels.Default = tunnel.Tunnel{Name: "edge", ManagedSite: true}
	})
	return &world{t: t, ctx: ctx, c: env.Client, ns: ns}, pic
}

// TestManagedSiteThroughPIC runs PIC with a managed site against the in-repo Pangolin:
// the site is created, the agent's Deployment and Secret are kept, and an Ingress is
// published through the site before its agent connects.
func TestManagedSiteThroughPIC(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{})
		t.Cleanup(fake.Close)
		w, owner := startManaged(t, env, fake)
		w.service("web", 8080)
		w.create(ingressFor("shop", "pangolin", rule("app.example.com", "/", "web", 8080)))

		var site pangolinsim.Site
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			for _, s := range fake.Sites() {
				if s.NiceID == "edge" {
					site = s
				}
			}
			assert.Equal(c, "edge (PIC integration)", site.Name)
		}, wait, tick)
		assert.Equal(t, "newt", site.Type)

		var secret corev1.Secret
		var d appsv1.Deployment
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.NoError(c, env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "newt-edge"}, &secret))
			assert.NoError(c, env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "newt-edge"}, &d))
		}, wait, tick)
		assert.True(t, fake.NewtCredentialsMatch("edge", string(secret.Data[newt.SecretKeyID]), string(secret.Data[newt.SecretKeySecret])),
			"the site accepts the credentials in the agent's Secret")
		assert.Equal(t, owner.UID, d.OwnerReferences[0].UID)
		assert.Equal(t, config.DefaultNewtImage, d.Spec.Template.Spec.Containers[0].Image)

		eventuallyServed(t, fake, map[string][]string{"app.example.com": {"http://web." + w.ns + ".svc.cluster.local:8080"}})
		for _, r := range fake.Resources() {
			for _, tg := range fake.Targets(r.ID) {
				assert.Equal(t, site.ID, tg.SiteID, "the target is on the managed site")
			}
		}
		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonTunnelNotReady), `Pangolin site "edge" is not online`)

		// No event, status or log of PIC's carries the secret.
		var events eventsv1.EventList
		require.NoError(t, env.Client.List(w.ctx, &events, client.InNamespace(w.ns)))
		for _, e := range events.Items {
			assert.NotContains(t, e.Note, string(secret.Data[newt.SecretKeySecret]))
		}
	})
}

// TestManagedSiteRefusedThroughPIC: a managed tunnel whose site PIC did not create is
// refused, and neither Pangolin nor the cluster is written for it.
func TestManagedSiteRefusedThroughPIC(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{Sites: []pangolinsim.Site{{ID: 1, NiceID: "edge", Name: "edge", Type: "newt"}}})
		t.Cleanup(fake.Close)
		w, _ := startManaged(t, env, fake)
		w.service("web", 8080)
		w.create(ingressFor("shop", "pangolin", rule("app.example.com", "/", "web", 8080)))

		assert.Contains(t, w.eventuallyEventIn(w.ns, pic.ReasonTunnelNotFound), `PIC (owner id "integration") did not create it`)
		assert.Zero(t, fake.Writes(), "nothing is written to Pangolin")
		var d appsv1.Deployment
		assert.True(t, apierrors.IsNotFound(env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "newt-edge"}, &d)), "no agent runs")
		var s corev1.Secret
		assert.True(t, apierrors.IsNotFound(env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "newt-edge"}, &s)), "no credentials are minted")
	})
}
