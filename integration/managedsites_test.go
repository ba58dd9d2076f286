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
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
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
		agent := newt.Agent{Namespace: ns, Site: "edge", OwnerID: "cluster-a", Image: "docker.io/fosrl/newt:1.15.0", Replicas: 1,
			Endpoint: "https://pangolin.example.com", Owner: owner}

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
				d.OwnerReferences = nil
			}, 10*time.Second))
			wrote, err := keeper.Deployment(ctx, agent)
			require.NoError(t, err)
			assert.True(t, wrote)
			var d appsv1.Deployment
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "newt-edge"}, &d))
			assert.Equal(t, "docker.io/fosrl/newt:1.15.0", d.Spec.Template.Spec.Containers[0].Image)
			assert.Equal(t, int32(1), *d.Spec.Replicas)
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
	})
}
