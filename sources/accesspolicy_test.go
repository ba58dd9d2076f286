package sources

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// TestPICStopsWhenTheAccessPolicyCRDAppears: with access policies off, PIC goes on
// while the CRD is missing, and stops, to be restarted, once it is served.
func TestPICStopsWhenTheAccessPolicyCRDAppears(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	w := crdWatch{mapper: mapper, period: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()

	select {
	case err := <-done:
		require.Failf(t, "stopped while the CRD is missing", "%v", err)
	case <-time.After(100 * time.Millisecond):
	}
	mapper.Add(accessv1alpha1.GroupVersion.WithKind(accessv1alpha1.KindPolicy), meta.RESTScopeNamespace)
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "installed after PIC started")
	case <-time.After(5 * time.Second):
		require.Fail(t, "did not stop once the CRD was served")
	}
	cancel()

	stopped := crdWatch{mapper: meta.NewDefaultRESTMapper(nil), period: time.Hour}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, stopped.Start(ctx), "a manager that stops stops it, with no error")
}

func TestRunnablesOnlyWhilePoliciesAreOff(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	assert.Len(t, (&Policies{enabled: false, mapper: mapper}).runnables(), 1)
	assert.Empty(t, (&Policies{enabled: true, mapper: mapper}).runnables(), "on: nothing to wait for")
	assert.Empty(t, (&Policies{enabled: false}).runnables(), "render: no cluster")
	var none *Policies
	assert.Empty(t, none.runnables())
}

// refusingReader fails the test on any read: a Secret PIC may not read is never asked
// for.
type refusingReader struct {
	client.Reader
	t *testing.T
}

func (r refusingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	r.t.Error("a Secret was read outside secretNamespaces")
	return nil
}

// TestASecretOutsideSecretNamespacesIsRefusedClearly: with secretNamespaces, a policy
// elsewhere that references a Secret holds its hosts with a Warning naming the setting,
// and no read of the Secret is attempted (RBAC would refuse it); a policy without
// Secrets, or in a listed namespace, is not concerned.
func TestASecretOutsideSecretNamespacesIsRefusedClearly(t *testing.T) {
	password := &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "web-auth", Key: "password"}}
	policy := func(namespace string, spec accessv1alpha1.AccessPolicySpec) *accessv1alpha1.AccessPolicy {
		spec.TargetRefs = []gatewayv1.LocalPolicyTargetReference{{Group: accessv1alpha1.GroupIngress, Kind: accessv1alpha1.KindIngress, Name: "web"}}
		return &accessv1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web", UID: types.UID("uid-" + namespace)}, Spec: spec}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-auth"}, Data: map[string][]byte{"password": []byte("a-good-password")}}
	cases := []struct {
		name       string
		policy     *accessv1alpha1.AccessPolicy
		wantReason string
	}{
		{name: "a password Secret outside the list is refused", policy: policy("team-b", accessv1alpha1.AccessPolicySpec{Password: password}), wantReason: pic.ReasonAccessPolicySecretForbidden},
		{name: "a policy without Secrets outside the list applies", policy: policy("team-b", accessv1alpha1.AccessPolicySpec{SSO: ptr.To(true)})},
		{name: "a password Secret in the list is read", policy: policy("team-a", accessv1alpha1.AccessPolicySpec{Password: password})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(c.policy, secret)
			for _, idx := range PolicyIndexes() {
				builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
			}
			cache := builder.Build()
			var secrets client.Reader = cache
			if c.wantReason != "" {
				secrets = refusingReader{t: t}
			}
			p := &Policies{client: cache, secrets: secrets, enabled: true, secretNamespaces: []string{"team-a"}}
			origin := route.Origin{Kind: "Ingress", Namespace: c.policy.Namespace, Name: "web"}
			res := plugin.Result{Origin: &origin, Managed: true, Routes: []route.Route{{Origin: origin, Host: "web.example.com"}}}
			require.NoError(t, p.Protect(context.Background(), &res, access.Target{Kind: "Ingress", Namespace: c.policy.Namespace, Name: "web"}, nil))
			if c.wantReason == "" {
				assert.Len(t, res.Routes, 1)
				assert.Empty(t, res.Rejections)
				return
			}
			assert.Empty(t, res.Routes, "not published")
			require.Len(t, res.Rejections, 1)
			rj := res.Rejections[0]
			assert.Equal(t, c.wantReason, rj.Reason)
			assert.True(t, rj.Hold, "what is published stays")
			assert.Contains(t, rj.Message, "secretNamespaces")
			assert.NotContains(t, rj.Message, "a-good-password")
		})
	}
}

// TestConfirmWaitsForAPolicyTheCacheHasNotSeen: Protect's Confirm holds a host whose
// object, or Gateway, a policy targets on the API server that the cache did not show
// Protect; a policy the cache has, or one on another object, holds nothing.
func TestConfirmWaitsForAPolicyTheCacheHasNotSeen(t *testing.T) {
	onTarget := func(name, kind, group, target string) *accessv1alpha1.AccessPolicy {
		return &accessv1alpha1.AccessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)},
			Spec: accessv1alpha1.AccessPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReference{{
				Group: gatewayv1.Group(group), Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target),
			}}},
		}
	}
	onRoute := onTarget("route", accessv1alpha1.KindHTTPRoute, gatewayv1.GroupName, "web")
	gateway := onTarget("gateway", accessv1alpha1.KindGateway, gatewayv1.GroupName, "public")
	elsewhere := onTarget("elsewhere", accessv1alpha1.KindHTTPRoute, gatewayv1.GroupName, "blog")
	cases := []struct {
		name         string
		cached, live []*accessv1alpha1.AccessPolicy
		wantWait     bool
	}{
		{name: "no policy anywhere: no wait", wantWait: false},
		{name: "the route's policy not cached yet: wait", live: []*accessv1alpha1.AccessPolicy{onRoute}, wantWait: true},
		{name: "the Gateway's policy not cached yet: wait", live: []*accessv1alpha1.AccessPolicy{gateway}, wantWait: true},
		{name: "the cache has the policy: no wait", cached: []*accessv1alpha1.AccessPolicy{onRoute}, live: []*accessv1alpha1.AccessPolicy{onRoute}, wantWait: false},
		{name: "a policy of another route: no wait", live: []*accessv1alpha1.AccessPolicy{elsewhere}, wantWait: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objects := func(policies []*accessv1alpha1.AccessPolicy) []client.Object {
				var out []client.Object
				for _, p := range policies {
					out = append(out, p.DeepCopy())
				}
				return out
			}
			builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects(c.cached)...)
			for _, idx := range PolicyIndexes() {
				builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
			}
			cache := builder.Build()
			live := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects(c.live)...).Build()
			p := &Policies{client: cache, secrets: cache, live: newLiveReads(live), enabled: true}

			origin := route.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "web", UID: "uid-web"}
			res := plugin.Result{Origin: &origin, Managed: true, Routes: []route.Route{{Origin: origin, Host: "web.example.com"}}}
			gateways := func(string) []access.Target {
				return []access.Target{{Kind: "Gateway", Namespace: "shop", Name: "public"}}
			}
			require.NoError(t, p.Protect(context.Background(), &res, access.Target{Kind: "HTTPRoute", Namespace: "shop", Name: "web"}, gateways))
			require.NotNil(t, res.Confirm, "a live reader: first publishes are confirmed")
			waiting, err := res.Confirm(context.Background(), []string{"web.example.com"})
			require.NoError(t, err)
			if !c.wantWait {
				assert.Empty(t, waiting)
				return
			}
			require.Len(t, waiting, 1)
			assert.Equal(t, pic.ReasonAccessPolicyPending, waiting[0].Reason)
			assert.Equal(t, "web.example.com", waiting[0].Host)
			assert.True(t, waiting[0].Hold && waiting[0].Retry, "held, and retried")
		})
	}
}

// TestAPortIsNotHeldByAPolicyWhoseSecretsPICMayNotRead: a TCP or UDP port gets no
// access control, so any policy on it, valid or not, unpublishes it (the engine's
// AccessControlUnsupported). A Gateway policy whose Secrets are outside secretNamespaces
// must not hold the port either, which would keep it published open; and its Secrets,
// which a port cannot use, are not read.
func TestAPortIsNotHeldByAPolicyWhoseSecretsPICMayNotRead(t *testing.T) {
	password := &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "edge-auth", Key: "password"}}
	onGateway := &accessv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "edge", UID: "uid-edge"},
		Spec: accessv1alpha1.AccessPolicySpec{Password: password, TargetRefs: []gatewayv1.LocalPolicyTargetReference{{
			Group: accessv1alpha1.GroupGateway, Kind: accessv1alpha1.KindGateway, Name: "edge",
		}}},
	}
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(onGateway)
	for _, idx := range PolicyIndexes() {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	cache := builder.Build()
	p := &Policies{client: cache, secrets: refusingReader{t: t}, enabled: true, secretNamespaces: []string{"team-a"}}
	origin := route.Origin{Kind: "TCPRoute", Namespace: "team-b", Name: "db"}
	port := route.Route{Origin: origin, Host: "tcp:5432", Protocol: route.ProtocolTCP, Port: 5432}
	res := plugin.Result{Origin: &origin, Managed: true, Routes: []route.Route{port}}
	gateways := func(string) []access.Target {
		return []access.Target{{Kind: accessv1alpha1.KindGateway, Namespace: "infra", Name: "edge"}}
	}
	require.NoError(t, p.Protect(context.Background(), &res, access.Target{Kind: "TCPRoute", Namespace: "team-b", Name: "db"}, gateways))
	assert.Empty(t, res.Rejections, "nothing holds the port")
	require.Len(t, res.Routes, 1, "the port goes on to the engine, which unpublishes it")
	require.NotNil(t, res.Routes[0].Access.Policy, "the policy's name, for the engine's refusal")
	assert.Equal(t, types.NamespacedName{Namespace: "infra", Name: "edge"}, res.Routes[0].Access.Policy.Name)
}
