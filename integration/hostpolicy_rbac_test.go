package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// errSinkReached stops manager.New once it is past the start-up checks.
var errSinkReached = errors.New("the sink is built: the start-up checks passed")

// TestANamespaceSelectorNeedsTheHostPolicyRole starts PIC on a real API server as a user
// with a hostPolicy that selects namespaces by labels: without the rule of
// config/rbac/host-policy, start-up stops naming the rule and the fix; with it, start-up
// goes on. Rules by names need no grant.
func TestANamespaceSelectorNeedsTheHostPolicyRole(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		registry := plugin.Registry{Sinks: map[string]plugin.SinkFactory{"probe": {
			New: func(context.Context, plugin.SinkDeps) (plugin.Sink, error) { return nil, errSinkReached },
		}}}
		start := func(t *testing.T, user string, policy hostpolicy.Policy) error {
			t.Helper()
			rc, err := env.AddUser(user, nil)
			require.NoError(t, err)
			cfg := config.Default()
			cfg.Sink, cfg.HostPolicy, cfg.MetricsBindAddress, cfg.HealthProbeBindAddress = "probe", policy, "0", "0"
			_, err = manager.New(ctx, cfg, rc, registry)
			return err
		}
		bySelector := hostpolicy.Policy{{NamespaceSelector: "tenant=shop", Hosts: []string{"shop.example.com"}}}
		byName := hostpolicy.Policy{{Namespaces: []string{"shop"}, Hosts: []string{"shop.example.com"}}}

		err := start(t, "pic-without-namespaces", bySelector)
		require.Error(t, err)
		assert.NotErrorIs(t, err, errSinkReached)
		assert.ErrorContains(t, err, "hostPolicy[0].namespaceSelector")
		assert.ErrorContains(t, err, "config/components/host-policy")

		assert.ErrorIs(t, start(t, "pic-by-names", byName), errSinkReached, "rules by names read no namespace")

		root, err := testenv.RepoRoot()
		require.NoError(t, err)
		data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "host-policy", "role.yaml"))
		require.NoError(t, err)
		objs, err := testenv.DecodeYAML(data)
		require.NoError(t, err)
		require.Len(t, objs, 1)
		var role rbacv1.ClusterRole
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &role))
		role.Name = "pic-host-policy-test"
		require.NoError(t, env.Client.Create(ctx, &role))
		const user = "pic-with-host-policy-role"
		require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}))
		assert.Eventually(t, func() bool { return errors.Is(start(t, user, bySelector), errSinkReached) }, 10*time.Second, 200*time.Millisecond,
			"with config/rbac/host-policy's rule, start-up goes past the check")
	})
}
