package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestNoControlPlaneUnderShort: go test -short (make test-unit) builds and starts no
// control plane. A test that forgets SkipIfShort gets an error naming it instead.
func TestNoControlPlaneUnderShort(t *testing.T) {
	if !testing.Short() {
		t.Skip("the -short path only: without it, Assets builds the control plane")
	}
	_, err := testenv.Assets()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "testenv.SkipIfShort")
	_, err = testenv.StartEnv(testenv.Variant{Name: testenv.VariantNone}, false)
	assert.Error(t, err, "StartEnv goes through Assets")
}

func TestGatewayAPICRDFilesLeaveOutPolicies(t *testing.T) {
	files, err := testenv.GatewayAPICRDFiles()
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		assert.NotContains(t, f, "vap_safeupgrades")
	}
}

// TestVariantSchemas writes both variants' backend fields and checks that the API
// server keeps the variant's own and prunes the other's: the CRD schemas are real.
func TestVariantSchemas(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		ns := testenv.NewNamespace(t, env.Client)

		crd, err := getCRD(ctx, env.Client)
		require.NoError(t, err)
		caps, err := tunnelv1alpha1.CapabilitiesFromCRD(crd)
		require.NoError(t, err)
		assert.Equal(t, env.Variant.Name == testenv.VariantFork, caps.Targets, "capabilities of %s CRD", env.Variant.Name)

		res := &tunnelv1alpha1.PangolinResource{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: tunnelv1alpha1.PangolinResourceSpec{
				Protocol:   tunnelv1alpha1.ProtocolHTTP,
				TunnelRef:  &tunnelv1alpha1.TunnelRef{Name: "site"},
				HTTPConfig: &tunnelv1alpha1.HTTPConfig{Subdomain: "web", SSO: ptr.To(true)},
				Target:     &tunnelv1alpha1.Target{IP: "10.0.0.1", Port: 80},
				Targets:    []tunnelv1alpha1.Target{{IP: "10.0.0.2", Port: 8080, Path: "/api", PathMatchType: tunnelv1alpha1.PathMatchPrefix}},
			},
		}
		require.NoError(t, env.Client.Create(ctx, res))

		got := &tunnelv1alpha1.PangolinResource{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(res), got))
		require.NotNil(t, got.Spec.Enabled, "spec.enabled is defaulted by both schemas")
		assert.True(t, *got.Spec.Enabled)
		switch env.Variant.Name {
		case testenv.VariantFork:
			assert.Nil(t, got.Spec.Target, "fork prunes spec.target")
			require.Len(t, got.Spec.Targets, 1)
			assert.Equal(t, "/api", got.Spec.Targets[0].Path)
			assert.Equal(t, tunnelv1alpha1.MethodHTTP, got.Spec.Targets[0].Method, "method is defaulted")
			assert.Equal(t, ptr.To[int32](100), got.Spec.Targets[0].Priority, "priority is defaulted")
			assert.Equal(t, ptr.To(true), got.Spec.HTTPConfig.SSO)
		case testenv.VariantOriginal:
			assert.Empty(t, got.Spec.Targets, "original prunes spec.targets")
			require.NotNil(t, got.Spec.Target)
			assert.Equal(t, "10.0.0.1", got.Spec.Target.IP)
			assert.Equal(t, tunnelv1alpha1.MethodHTTP, got.Spec.Target.Method, "method is defaulted")
			assert.Nil(t, got.Spec.HTTPConfig.SSO, "original prunes httpConfig.sso")
		default:
			t.Fatalf("unknown variant %q", env.Variant.Name)
		}
	})
}

func TestGatewayAPIInstalled(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		ns := testenv.NewNamespace(t, env.Client)
		route := &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{
					ParentRefs: []gatewayv1.ParentReference{{Name: "gateway"}},
				},
				Hostnames: []gatewayv1.Hostname{"web.example.com"},
				Rules: []gatewayv1.HTTPRouteRule{{
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
						BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To[gatewayv1.PortNumber](80)},
					}}},
				}},
			},
		}
		require.NoError(t, env.Client.Create(ctx, route))
		got := &gatewayv1.HTTPRoute{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(route), got))
		assert.Equal(t, []gatewayv1.Hostname{"web.example.com"}, got.Spec.Hostnames)
	})
}

// TestCluster checks what envtest alone does not give: a real garbage collector, RBAC
// that denies, and an API server that restarts where clients expect it.
func TestCluster(t *testing.T) {
	testenv.SkipIfShort(t)
	fork, err := testenv.VariantByName(testenv.VariantFork)
	require.NoError(t, err)
	cluster, err := testenv.StartCluster(testenv.ClusterOptions{Dir: t.TempDir(), Variant: &fork, GatewayAPI: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, cluster.Stop()) })
	ctx := context.Background()

	t.Run("garbage collector deletes dependents", func(t *testing.T) {
		assertGarbageCollected(ctx, t, cluster.Client)
	})

	var userKubeconfig string
	t.Run("added user is subject to RBAC", func(t *testing.T) {
		userKubeconfig, err = cluster.AddUser("pic-smoke", []string{"pic-smoke-group"})
		require.NoError(t, err)
		cfg, err := clientcmd.BuildConfigFromFlags("", userKubeconfig)
		require.NoError(t, err)
		cs, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)

		// Authenticated as itself, not anonymous: a 403 for system:anonymous would
		// prove nothing.
		review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "pic-smoke", review.Status.UserInfo.Username)
		assert.Contains(t, review.Status.UserInfo.Groups, "pic-smoke-group")

		_, err = cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsForbidden(err), "want forbidden, got %v", err)

		// And a binding does grant access, so the denial came from RBAC.
		grantSecretList(ctx, t, cluster.Client, "default", "pic-smoke")
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
			return err == nil, nil
		})
		require.NoError(t, err, "list secrets after binding")
	})

	t.Run("API server restarts on the same address", func(t *testing.T) {
		url := cluster.APIServerURL()
		require.NoError(t, cluster.StopAPIServer())
		err := cluster.Client.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("default"))
		require.Error(t, err, "API server should be down")

		require.NoError(t, cluster.StartAPIServer())
		assert.Equal(t, url, cluster.APIServerURL())
		// The same admin client and the user's kubeconfig, made before the restart,
		// still work: same address, same serving and client CAs.
		require.NoError(t, cluster.Client.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("default")))
		if userKubeconfig != "" {
			cfg, err := clientcmd.BuildConfigFromFlags("", userKubeconfig)
			require.NoError(t, err)
			cs, err := kubernetes.NewForConfig(cfg)
			require.NoError(t, err)
			_, err = cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
		}
		// kube-controller-manager reconnects on its own.
		assertGarbageCollected(ctx, t, cluster.Client)
	})
}

func getCRD(ctx context.Context, c client.Client) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return crd, c.Get(ctx, client.ObjectKey{Name: tunnelv1alpha1.ResourceCRDName}, crd)
}

func assertGarbageCollected(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	ns := testenv.NewNamespace(t, c)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	require.NoError(t, c.Create(ctx, owner))
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:      "dependent",
		Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	require.NoError(t, c.Create(ctx, dependent))
	require.NoError(t, c.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationBackground)))

	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
	require.NoError(t, err, "dependent ConfigMap was not garbage-collected")
	t.Logf("dependent garbage-collected after %s", time.Since(start).Round(time.Millisecond))
}

func grantSecretList(ctx context.Context, t *testing.T, c client.Client, ns, user string) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "list-secrets", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}},
	}
	require.NoError(t, c.Create(ctx, role))
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "list-secrets", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	require.NoError(t, c.Create(ctx, binding))
}
