package integration_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
)

// policyFor is an AccessPolicy in the test namespace on the Ingress named target.
func policyFor(name, target string, spec accessv1alpha1.AccessPolicySpec) *accessv1alpha1.AccessPolicy {
	spec.TargetRefs = []gatewayv1.LocalPolicyTargetReference{{Group: accessv1alpha1.GroupIngress, Kind: accessv1alpha1.KindIngress, Name: gatewayv1.ObjectName(target)}}
	return &accessv1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// policyCondition waits until the policy's ancestor for its first target has condition
// t with status and reason.
func (w *world) policyCondition(name, t string, status metav1.ConditionStatus, reason string) {
	w.t.Helper()
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		var p accessv1alpha1.AccessPolicy
		if !assert.NoError(c, w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &p)) || !assert.NotEmpty(c, p.Status.Ancestors) {
			return
		}
		cond := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, t)
		if assert.NotNil(c, cond, "condition %s", t) {
			assert.Equal(c, status, cond.Status, "%s: %s", t, cond.Message)
			assert.Equal(c, reason, cond.Reason)
		}
	}, wait, tick)
}

// TestAccessPolicyWithTheOperator: in PangolinResource mode a policy's sso and
// blockAccess reach the PangolinResource, the stricter of policy and annotation winning;
// a policy that asks for more than the operator can carry keeps the host unpublished,
// failing closed; and two policies on one Ingress leave the younger Conflicted.
func TestAccessPolicyWithTheOperator(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)
		fork := env.Variant.Name == testenv.VariantFork

		open := ingressFor("open", "pangolin", rule(w.host("open"), "/", "web", 8080))
		open.Annotations = map[string]string{pic.AnnotationSSO: "false"}
		w.create(open)
		w.create(policyFor("blocked", "open", accessv1alpha1.AccessPolicySpec{BlockAccess: ptr.To(true)}))
		w.policyCondition("blocked", "Accepted", metav1.ConditionTrue, "Accepted")
		if fork {
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				r, ok := w.resources()[w.host("open")]
				if assert.True(c, ok) && assert.NotNil(c, r.Spec.HTTPConfig) {
					assert.Equal(c, ptr.To(true), r.Spec.HTTPConfig.BlockAccess, "the policy's blockAccess")
					assert.Equal(c, ptr.To(false), r.Spec.HTTPConfig.SSO, "the annotation's sso: the policy says nothing of it")
				}
			}, wait, tick)
		} else {
			w.eventuallyEvent(pic.ReasonAccessControlUnsupported)
			assert.Empty(t, w.resources(), "the original CRD cannot block access: not published")
		}

		// The policy comes first, as GitOps tools apply a directory: the host must never
		// be published without it.
		w.create(policyFor("devs", "team", accessv1alpha1.AccessPolicySpec{Roles: []string{"Developers"}}))
		w.create(ingressFor("team", "pangolin", rule(w.host("team"), "/", "web", 8080)))
		w.eventuallyEvent(pic.ReasonAccessPolicyUnsupported)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, published := w.resources()[w.host("team")]
			assert.False(c, published, "roles cannot be carried by a PangolinResource: the host is not published")
		}, wait, tick)

		// A password, from a Secret that exists: the operator cannot carry it either.
		w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-auth"}, StringData: map[string]string{"password": "a-good-password"}})
		w.create(policyFor("vault", "vault", accessv1alpha1.AccessPolicySpec{
			Password: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "vault-auth", Key: "password"}},
		}))
		w.create(ingressFor("vault", "pangolin", rule(w.host("vault"), "/", "web", 8080)))
		// The Ingress may reach PIC's cache before the policy does (two informers, no
		// order between them): PIC confirms the host's first publish with the API server,
		// and waits for the policy.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var events eventsv1.EventList
			require.NoError(c, w.c.List(w.ctx, &events, client.InNamespace(w.ns)))
			found := false
			for _, e := range events.Items {
				found = found || e.Regarding.Name == "vault" && e.Reason == pic.ReasonAccessPolicyUnsupported && strings.Contains(e.Note, "password")
			}
			assert.True(c, found, "a Warning on the Ingress vault names the password")
		}, wait, tick)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, published := w.resources()[w.host("vault")]
			assert.False(c, published, "a password cannot be carried by a PangolinResource: the host is not published")
		}, wait, tick)

		testenv.NextCreationSecond() // late must be younger than devs
		w.create(policyFor("late", "team", accessv1alpha1.AccessPolicySpec{SSO: ptr.To(true)}))
		w.policyCondition("late", "Accepted", metav1.ConditionFalse, "Conflicted")
	})
}

// TestAccessPolicyOnAGateway: a Gateway's policy protects the routes published through
// it, a route's own policy replaces it, and a change to the Gateway's policy reaches the
// route's resource at once. The fork's CRD carries sso and blockAccess, which is what
// these policies set; the original's cannot, and publishes neither route.
func TestAccessPolicyOnAGateway(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		testAccessPolicyOnAGateway(t, env)
	})
}

func testAccessPolicyOnAGateway(t *testing.T, env *testenv.Env) {
	w := startGateway(t, env, httpListener("")) // with the tunnel default and the Service web
	onGateway := &accessv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "gateway-wide"},
		Spec: accessv1alpha1.AccessPolicySpec{
			TargetRefs:  []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "public"}},
			BlockAccess: ptr.To(true),
		},
	}
	w.create(onGateway)
	shop, blog := w.httpRoute("shop", "", w.host("shop")), w.httpRoute("blog", "", w.host("blog"))
	shopUpToDate, blogUpToDate := w.upToDate(gatewayapi.Name, "shop"), w.upToDate(gatewayapi.Name, "blog")
	w.create(shop)
	w.create(blog)
	w.create(&accessv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "blog-only"},
		Spec: accessv1alpha1.AccessPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "blog"}},
			SSO:        ptr.To(true),
		},
	})
	blockAccess := func(c *assert.CollectT, host string) *bool {
		r, ok := w.resources()[host]
		if !assert.True(c, ok, host) || !assert.NotNil(c, r.Spec.HTTPConfig) {
			return nil
		}
		return r.Spec.HTTPConfig.BlockAccess
	}
	if env.Variant.Name != testenv.VariantFork {
		w.eventuallyEvent(pic.ReasonAccessControlUnsupported)
		// What a wrong reconcile of either route would publish, it has published once
		// one of them finds nothing to change.
		w.eventuallyUpToDateSince(shopUpToDate, gatewayapi.Name, "shop")
		w.eventuallyUpToDateSince(blogUpToDate, gatewayapi.Name, "blog")
		assert.Empty(t, w.resources(), "the original CRD cannot carry the policies: nothing published")
		return
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, ptr.To(true), blockAccess(c, w.host("shop")), "the Gateway's policy")
		assert.Equal(c, ptr.To(false), blockAccess(c, w.host("blog")), "the route's own policy replaces the Gateway's")
	}, wait, tick)

	require.NoError(t, w.c.Get(w.ctx, client.ObjectKeyFromObject(onGateway), onGateway))
	onGateway.Spec.BlockAccess = ptr.To(false)
	require.NoError(t, w.c.Update(w.ctx, onGateway))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, ptr.To(false), blockAccess(c, w.host("shop")), "the Gateway's policy, edited")
	}, wait, tick)
}

// TestDirectModeAccessPolicy: in direct mode a policy's roles and password reach
// Pangolin before the host is routed; an edit of the password's Secret rewrites it once;
// a restart with the record in PIC's namespace writes nothing; and a policy whose Secret
// is missing keeps a new host unpublished.
func TestDirectModeAccessPolicy(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{Roles: []pangolinsim.Role{{ID: 3, Name: "Developers"}}})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		t.Setenv("POD_NAMESPACE", ns) // where the direct sink keeps its record of secrets
		w, stop := startDirectWorld(t, env, fake, ns)
		w.service("web", 8080)
		webURL := "http://web." + ns + ".svc.cluster.local:8080"

		w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-auth"}, StringData: map[string]string{"password": "first-password"}})
		w.create(policyFor("devs", "team", accessv1alpha1.AccessPolicySpec{
			Roles:    []string{"Developers"},
			Password: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "web-auth", Key: "password"}},
		}))
		w.create(ingressFor("team", "pangolin", rule("team.example.com", "/", "web", 8080)))
		eventuallyServed(t, fake, map[string][]string{"team.example.com": {webURL}})
		team := resourceFor(t, fake, "team.example.com")
		policy, ok := fake.Policy(team.ID)
		require.True(t, ok)
		assert.Equal(t, []int{3}, policy.RoleIDs, "the role, by id; never the Admin role")
		assert.True(t, policy.SSO)
		assert.True(t, fake.CheckPassword(team.ID, "first-password"))
		w.policyCondition("devs", "Accepted", metav1.ConditionTrue, "Accepted")

		writes, edited := fake.SecretWrites(), w.upToDate("ingress", "team")
		var secret corev1.Secret
		require.NoError(t, w.c.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: "web-auth"}, &secret))
		secret.Data = map[string][]byte{"password": []byte("second-password")}
		require.NoError(t, w.c.Update(w.ctx, &secret))
		require.Eventually(t, func() bool { return fake.CheckPassword(team.ID, "second-password") }, wait, tick, "the edited Secret reaches Pangolin")
		// The reconcile that rewrote it has ended (a reconcile finds nothing to change
		// in its plan whatever its access writes, which the plan leaves to the sink);
		// a later one, which finds the password in place, writes it no more.
		w.eventuallyUpToDateSince(edited, "ingress", "team")
		touched := w.upToDate("ingress", "team")
		w.updateIngress("team", func(ing *networkingv1.Ingress) { ing.Annotations = map[string]string{"touched": "1"} })
		w.eventuallyUpToDateSince(touched, "ingress", "team")
		assert.Equal(t, writes+1, fake.SecretWrites(), "one rewrite for one edit")

		stop()
		fake.ResetCounts()
		writes, exposed := fake.SecretWrites(), len(w.notes(t, "team", pic.ReasonExposed))
		w, _ = startDirectWorld(t, env, fake, ns)
		// The restarted PIC's first reconcile of team has applied its plan: it reports
		// the host exposed (each PIC once, in an event of its own) after it. Had it meant
		// to write, it would have; and so would a later one, which finds nothing to
		// change.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Greater(c, len(w.notes(c, "team", pic.ReasonExposed)), exposed, "team exposed again")
		}, wait, tick)
		touched = w.upToDate("ingress", "team")
		w.updateIngress("team", func(ing *networkingv1.Ingress) { ing.Annotations = map[string]string{"touched": "2"} })
		w.eventuallyUpToDateSince(touched, "ingress", "team")
		assert.Equal(t, writes, fake.SecretWrites(), "after a restart, the record says Pangolin holds the password: no rewrite, no visitor logged out")
		assert.Zero(t, fake.Writes(), "a converged host costs no write after a restart")

		fresh := w.upToDate("ingress", "fresh")
		w.create(policyFor("missing", "fresh", accessv1alpha1.AccessPolicySpec{
			PinCode: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "nowhere", Key: "pin"}},
		}))
		w.create(ingressFor("fresh", "pangolin", rule("fresh.example.com", "/", "web", 8080)))
		w.eventuallyEvent(pic.ReasonAccessPolicySecretNotFound)
		w.eventuallyUpToDateSince(fresh, "ingress", "fresh")
		_, served := fake.Served()["fresh.example.com"]
		assert.False(t, served, "a host whose policy cannot be applied is not published")
	})
}

func resourceFor(t *testing.T, fake *simtest.Server, host string) pangolinsim.Resource {
	t.Helper()
	for _, r := range fake.Resources() {
		if r.FullDomain == host {
			return r
		}
	}
	require.Failf(t, "no resource", "for %s", host)
	return pangolinsim.Resource{}
}

// TestRequiredAccessPolicy: an Ingress that requires a policy
// (require-access-policy) publishes nothing while the policy does not exist, with a
// Warning; once the policy exists and targets it, the host is published with it; and
// deleting the policy holds the host as published rather than opening it.
func TestRequiredAccessPolicy(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		w := start(t, env)
		w.tunnel("default")
		w.service("web", 8080)

		guarded := ingressFor("guarded", "pangolin", rule(w.host("guarded"), "/", "web", 8080))
		guarded.Annotations = map[string]string{pic.AnnotationRequireAccessPolicy: "guard"}
		w.create(guarded)
		note := w.eventuallyEventIn(w.ns, pic.ReasonAccessPolicyRequired)
		assert.Contains(t, note, "guard")
		assert.Empty(t, w.resources(), "the required policy does not exist: nothing is published")

		// A policy that sets nothing either operator variant cannot carry: the host is
		// published with it in both.
		guard := policyFor("guard", "guarded", accessv1alpha1.AccessPolicySpec{})
		w.create(guard)
		w.eventuallyHosts(w.host("guarded"))
		note = w.eventuallyEventIn(w.ns, pic.ReasonAccessPolicyAttached)
		assert.Contains(t, note, w.ns+"/guard")

		before := w.upToDate("ingress", "guarded")
		require.NoError(t, w.c.Delete(w.ctx, guard))
		// What a wrong reconcile would remove, it has removed once one finds nothing to
		// change.
		w.eventuallyUpToDateSince(before, "ingress", "guarded")
		_, published := w.resources()[w.host("guarded")]
		assert.True(t, published, "the required policy is gone: what was published is held, not removed")
	})
}

// TestUnknownIdentityProviderIsNoOutage: an autoLoginIdp naming no identity provider,
// which Pangolin answers with a 500, is the policy's refusal (AccessPolicyNotApplied),
// never SinkUnavailable, and costs a handful of requests, not a loop.
func TestUnknownIdentityProviderIsNoOutage(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		fake := simtest.NewServer(pangolinsim.Options{Roles: []pangolinsim.Role{{ID: 3, Name: "Developers"}}})
		t.Cleanup(fake.Close)
		ns := testenv.NewNamespace(t, env.Client)
		t.Setenv("POD_NAMESPACE", ns)
		startDirect(t, env, fake, ns)
		w := &world{t: t, ctx: context.Background(), c: env.Client, ns: ns}
		w.service("web", 8080)

		w.create(policyFor("devs", "team", accessv1alpha1.AccessPolicySpec{Roles: []string{"Developers"}, AutoLoginIdP: "999"}))
		w.create(ingressFor("team", "pangolin", rule("team.example.com", "/", "web", 8080)))
		note := w.eventuallyEventIn(ns, pic.ReasonAccessPolicyNotApplied)
		assert.Contains(t, note, "autoLoginIdp")
		assert.Contains(t, note, "skipToIdpId")
		// Reconciles within the minute, however woken (a retry, an edit), are answered
		// from the client's memory of the refusal: it is not sent again. The window
		// itself is the client's, tested on its clock in pangolinapi. Each of these
		// reconciles plans the host again (it is not published), so none is up to date:
		// the controller's count says they ran, team being its only Ingress.
		start := fake.Counts()["POST /v1/resource/:resourceId"]
		for i := range 3 {
			before := reconciles(t, "ingress")
			w.updateIngress("team", func(ing *networkingv1.Ingress) { ing.Annotations = map[string]string{"touched": strconv.Itoa(i)} })
			w.eventuallyReconciledSince(before, "ingress")
		}
		assert.LessOrEqual(t, fake.Counts()["POST /v1/resource/:resourceId"]-start, 1, "not sent again within the minute: %v", fake.Counts())

		var list eventsv1.EventList
		require.NoError(t, w.c.List(w.ctx, &list, client.InNamespace(ns)))
		for _, e := range list.Items {
			assert.NotEqual(t, pic.ReasonSinkUnavailable, e.Reason, "a refused value is no outage: %s", e.Note)
		}
		_, served := fake.Served()["team.example.com"]
		assert.False(t, served, "fail-closed: a host whose policy is not applied whole is not routed")
	})
}
