package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	pangolinsink "github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
)

// The roles of the access spec's Pangolin org, besides Admin (id 1).
const (
	roleDevelopers = 3
	roleOperators  = 4
)

// The secret values the access spec's policies reference: none may appear in PIC's log,
// in an event, in a policy's status or in PIC's record of what it wrote.
const (
	firstPassword  = "e2e-first-password-7Hq2"
	secondPassword = "e2e-second-password-Vx9k"
	freshPIN       = "482915"
)

// specAccessPolicies runs PIC in direct mode on a cluster with PIC's AccessPolicy CRD,
// as a ServiceAccount with exactly the RBAC of a direct-mode install with access
// policies (config/direct-gateway-api with config/components/access-policies): a role
// restriction, a password from a Secret and its edit (one rewrite), rules, a Gateway's
// policy replaced by a route's, then overriding it (mode Override), a missing Secret on a new host (not published) and on a
// published one (left as it is), a restart that writes nothing (secrets included, from
// the record in PIC's namespace), and no secret value in PIC's debug log or in an event.
func specAccessPolicies(t *testing.T, p Provider) {
	e := newEnv(t, p, "access")
	server := simtest.NewHandler(pangolinsim.Options{
		Org:     directOrg,
		Domains: []pangolinsim.Domain{{ID: "domain1", BaseDomain: e.ns + ".example.com", Verified: true}},
		Sites:   []pangolinsim.Site{{ID: 1, NiceID: directSite, Name: "e2e"}},
		Keys:    []pangolinsim.Key{directKey},
		Roles:   []pangolinsim.Role{{ID: roleDevelopers, Name: "Developers"}, {ID: roleOperators, Name: "Operators"}},
	})
	t.Cleanup(server.Close)
	pangolin := &Pangolin{URL: p.ServePangolin(t, server), Org: directOrg, OwnerID: accessOwnerID, APIKey: directKey.Token()}
	a := &accessWorld{directWorld: &directWorld{env: e, server: server}}

	e.create(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}},
	})
	web := "http://" + e.svcAddr("web", 8080)
	served := map[string][]string{}
	pic := e.startPIC(PICOptions{Pangolin: pangolin, GatewayAPI: true, Args: []string{"--sources=ingress,httproute", "--log-level=debug"}})[0]

	t.Run("a policy restricting a host to a role reaches Pangolin: that role, by id, and SSO on", func(t *testing.T) {
		a := a.in(t)
		// The policy comes first, as GitOps tools apply a directory.
		a.create(a.policy("devs", onIngress("team"), accessv1alpha1.AccessPolicySpec{Roles: []string{"Developers"}}))
		team := ingress(a.ns, "team", "pangolin", a.host("team"), "web", 8080)
		a.create(team)
		served = with(served, a.host("team"), web)
		a.eventuallyServed(served)
		a.eventuallyPolicy(a.host("team"), func(c *assert.CollectT, got pangolinsim.Policy) {
			assert.Equal(c, []int{roleDevelopers}, got.RoleIDs, "the role, by id; the Admin role is implicit")
			assert.True(c, got.SSO, "roles act through SSO")
			assert.Empty(c, got.UserIDs)
		})
		assert.Contains(t, a.eventuallyEvent(team, corev1.EventTypeNormal, "AccessPolicyAttached").Note, a.ns+"/devs")
	})

	t.Run("an override onto the protected host is a HostConflict, and nothing is published beside it", func(t *testing.T) {
		// A younger Ingress for a host of its own whose subdomain annotation publishes it
		// on the protected host, public, on a longer path: Pangolin would route that path
		// to it first, with no login.
		a := a.in(t)
		testenv.NextCreationSecond()
		squat := ingress(a.ns, "squat", "pangolin", a.host("squat"), "web", 8080)
		squat.Spec.Rules[0].HTTP.Paths[0].Path = "/login"
		squat.Annotations = map[string]string{"pangolin.ingress.k8s.io/subdomain": "team", "pangolin.ingress.k8s.io/sso": "false"}
		reconciled := a.reconciles(t, pic, "ingress")
		a.create(squat)
		assert.Contains(t, a.eventuallyEvent(squat, corev1.EventTypeWarning, "HostConflict").Note, "Ingress "+a.ns+"/team")
		a.eventuallyReconciled(pic, "ingress", reconciled, 1)
		assert.Equal(t, served, server.Served(), "the protected host alone, as it was")
		var onHost []pangolinsim.Resource
		for _, r := range server.Resources() {
			if r.FullDomain == a.host("team") {
				onHost = append(onHost, r)
			}
		}
		if assert.Len(t, onHost, 1, "one resource on the protected host") {
			a.eventuallyPolicy(a.host("team"), func(c *assert.CollectT, got pangolinsim.Policy) {
				assert.Equal(c, []int{roleDevelopers}, got.RoleIDs, "its role restriction is untouched")
				assert.True(c, got.SSO)
			})
		}
	})

	t.Run("a policy created before its target is Accepted once the target exists", func(t *testing.T) {
		// As a GitOps tool applies a directory: the policy first. Its status follows its
		// target's creation.
		a := a.in(t)
		a.eventuallyCondition("devs", "Accepted", metav1.ConditionTrue, "Accepted")
	})

	var vaultID int
	t.Run("a password from a Secret reaches Pangolin, and an edit of the Secret rewrites it exactly once", func(t *testing.T) {
		a := a.in(t)
		a.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-auth", Namespace: a.ns}, StringData: map[string]string{"password": firstPassword}})
		a.create(a.policy("vault", onIngress("vault"), accessv1alpha1.AccessPolicySpec{
			SSO:      ptr.To(false),
			Password: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "vault-auth", Key: "password"}},
		}))
		a.create(ingress(a.ns, "vault", "pangolin", a.host("vault"), "web", 8080))
		served = with(served, a.host("vault"), web)
		a.eventuallyServed(served)
		vaultID = a.resource(a.host("vault")).ID
		require.Eventually(t, func() bool { return server.CheckPassword(vaultID, firstPassword) }, eventually, tick, "the Secret's password")
		a.eventuallyRecorded(a.host("vault"))
		writes := server.SecretWrites()

		reconciled := a.reconciles(t, pic, "ingress")
		a.editSecret("vault-auth", map[string]string{"password": secondPassword})
		require.Eventually(t, func() bool { return server.CheckPassword(vaultID, secondPassword) }, eventually, tick, "the edited Secret's password")
		a.eventuallyRecorded(a.host("vault"))
		// A second rewrite, had the edit caused one, came from a reconcile it woke.
		a.eventuallyReconciled(pic, "ingress", reconciled, 1)
		assert.Equal(t, writes+1, server.SecretWrites(), "one edit of the Secret, one rewrite: %v", server.Counts())
		assert.True(t, server.CheckPassword(vaultID, secondPassword))
	})

	t.Run("rules attached to a published host reach it: Allow CIDR becomes ACCEPT, with Pangolin's rule switch on", func(t *testing.T) {
		a := a.in(t)
		a.create(ingress(a.ns, "lan", "pangolin", a.host("lan"), "web", 8080))
		served = with(served, a.host("lan"), web)
		a.eventuallyServed(served)
		a.create(a.policy("lan", onIngress("lan"), accessv1alpha1.AccessPolicySpec{Rules: []accessv1alpha1.Rule{
			{Action: accessv1alpha1.RuleAllow, Match: accessv1alpha1.MatchCIDR, Value: "10.0.0.0/8"},
			{Action: accessv1alpha1.RuleDeny, Match: accessv1alpha1.MatchPath, Value: "/admin/*"},
		}}))
		a.eventuallyPolicy(a.host("lan"), func(c *assert.CollectT, got pangolinsim.Policy) {
			assert.True(c, got.ApplyRules, "applyRules")
			assert.Equal(c, []string{"1 ACCEPT CIDR 10.0.0.0/8 enabled", "2 DROP PATH /admin/* enabled"}, rules(got.Rules), "the rules, in order")
		})
		a.eventuallyCondition("lan", "Accepted", metav1.ConditionTrue, "Accepted")
		a.eventuallyCondition("lan", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
		a.eventuallyServed(served)
	})

	t.Run("a policy on a Gateway protects its routes, and a route's own policy replaces it", func(t *testing.T) {
		a := a.in(t)
		a.gateway("public")
		a.create(a.policy("gateway-wide", target(accessv1alpha1.GroupGateway, accessv1alpha1.KindGateway, "public"),
			accessv1alpha1.AccessPolicySpec{Roles: []string{"Operators"}}))
		a.create(a.policy("blog-only", target(accessv1alpha1.GroupGateway, accessv1alpha1.KindHTTPRoute, "blog"),
			accessv1alpha1.AccessPolicySpec{Roles: []string{"Developers"}}))
		shop, blog := a.httpRoute("shop", "public", a.host("shop")), a.httpRoute("blog", "public", a.host("blog"))
		a.create(shop)
		a.create(blog)
		served = with(with(served, a.host("shop"), web), a.host("blog"), web)
		a.eventuallyServed(served)
		a.eventuallyPolicy(a.host("shop"), func(c *assert.CollectT, got pangolinsim.Policy) {
			assert.Equal(c, []int{roleOperators}, got.RoleIDs, "the Gateway's policy")
		})
		a.eventuallyPolicy(a.host("blog"), func(c *assert.CollectT, got pangolinsim.Policy) {
			assert.Equal(c, []int{roleDevelopers}, got.RoleIDs, "the route's own policy")
		})
		assert.Contains(t, a.eventuallyEvent(blog, corev1.EventTypeNormal, "AccessPolicyAttached").Note,
			"overrides AccessPolicy "+a.ns+"/gateway-wide", "the route's event names the Gateway policy it overrides")
	})

	t.Run("a Gateway's policy in mode Override applies to a route with its own, which reports Overridden", func(t *testing.T) {
		a := a.in(t)
		setMode := func(mode accessv1alpha1.PolicyMode) {
			require.NoError(t, testenv.Update(a.ctx, a.c, client.ObjectKey{Namespace: a.ns, Name: "gateway-wide"}, func(p *accessv1alpha1.AccessPolicy) {
				p.Spec.Mode = mode
			}, eventually))
		}
		setMode(accessv1alpha1.ModeOverride)
		a.eventuallyPolicy(a.host("blog"), func(c *assert.CollectT, got pangolinsim.Policy) {
			assert.Equal(c, []int{roleOperators}, got.RoleIDs, "the Gateway's override, not the route's own policy")
		})
		a.eventuallyCondition("blog-only", "Accepted", metav1.ConditionFalse, "Overridden")

		setMode(accessv1alpha1.ModeDefault)
		a.eventuallyPolicy(a.host("blog"), func(c *assert.CollectT, got pangolinsim.Policy) {
			assert.Equal(c, []int{roleDevelopers}, got.RoleIDs, "a default again: the route's own policy replaces it")
		})
		a.eventuallyCondition("blog-only", "Accepted", metav1.ConditionTrue, "Accepted")
	})

	t.Run("a policy whose Secret is missing keeps a new host unpublished, until the Secret is created", func(t *testing.T) {
		a := a.in(t)
		a.create(a.policy("pin", onIngress("fresh"), accessv1alpha1.AccessPolicySpec{
			SSO:     ptr.To(false),
			PinCode: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "fresh-pin", Key: "pin"}},
		}))
		fresh := ingress(a.ns, "fresh", "pangolin", a.host("fresh"), "web", 8080)
		reconciled := a.reconciles(t, pic, "ingress")
		a.create(fresh)
		assert.Contains(t, a.eventuallyEvent(fresh, corev1.EventTypeWarning, "AccessPolicySecretNotFound").Note, "fresh-pin")
		a.eventuallyCondition("pin", "ResolvedRefs", metav1.ConditionFalse, "AccessPolicySecretNotFound")
		a.eventuallyReconciled(pic, "ingress", reconciled, 1)
		assert.NotContains(t, server.Served(), a.host("fresh"), "not published without its PIN code")
		assert.False(t, slices.ContainsFunc(server.Resources(), func(r pangolinsim.Resource) bool { return r.FullDomain == a.host("fresh") }),
			"no Pangolin resource for it either")

		a.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fresh-pin", Namespace: a.ns}, StringData: map[string]string{"pin": freshPIN}})
		served = with(served, a.host("fresh"), web)
		a.eventuallyServed(served)
		assert.True(t, server.CheckPincode(a.resource(a.host("fresh")).ID, freshPIN), "published with its PIN code")
		a.eventuallyRecorded(a.host("fresh"))
		a.eventuallyCondition("pin", "Accepted", metav1.ConditionTrue, "Accepted")
		a.eventuallyCondition("pin", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	})

	t.Run("a Secret deleted under a published host leaves it as it is, with a Warning", func(t *testing.T) {
		a := a.in(t)
		vault := a.getIngress("vault")
		writes := server.Writes()
		reconciled := a.reconciles(t, pic, "ingress")
		require.NoError(t, a.c.Delete(a.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-auth", Namespace: a.ns}}))
		assert.Contains(t, a.eventuallyEvent(vault, corev1.EventTypeWarning, "AccessPolicySecretNotFound").Note, "vault-auth")
		a.eventuallyCondition("vault", "ResolvedRefs", metav1.ConditionFalse, "AccessPolicySecretNotFound")
		a.eventuallyReconciled(pic, "ingress", reconciled, 1)
		assert.Equal(t, served, server.Served(), "still published, with its targets")
		assert.True(t, server.CheckPassword(vaultID, secondPassword), "the password Pangolin holds is kept")
		assert.Equal(t, writes, server.Writes(), "nothing written: %v", server.Counts())

		secretWrites := server.SecretWrites()
		reconciled = a.reconciles(t, pic, "ingress")
		a.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-auth", Namespace: a.ns}, StringData: map[string]string{"password": secondPassword}})
		a.eventuallyCondition("vault", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
		a.eventuallyReconciled(pic, "ingress", reconciled, 1)
		assert.Equal(t, secretWrites, server.SecretWrites(), "the Secret back with the value Pangolin holds: no rewrite")
	})

	t.Run("a restarted PIC writes nothing to Pangolin, and rewrites no secret", func(t *testing.T) {
		a := a.in(t)
		pic.Stop(t)
		server.ResetCounts()
		secretWrites := server.SecretWrites()
		pic.Start(t)
		// Every Ingress (team, squat, vault, lan, fresh) and HTTPRoute (shop, blog)
		// reconciled after the first read of Pangolin and of the record, which reconciles
		// wait for: had they meant to write, they would have.
		a.eventuallyReconciled(pic, "ingress", 0, 5)
		a.eventuallyReconciled(pic, "httproute", 0, 2)
		assert.Positive(t, server.Reads(), "PIC read Pangolin at start")
		assert.Zero(t, server.Writes(), "writes after a restart: %v", server.Counts())
		assert.Equal(t, secretWrites, server.SecretWrites(), "secret writes after a restart")
		assert.Equal(t, served, server.Served())
	})

	t.Run("no secret value appears in PIC's log, in an event, in a policy's status or in the record", func(t *testing.T) {
		a := a.in(t)
		secrets := []string{firstPassword, secondPassword, freshPIN, directKey.Token(), directKey.Secret}
		log := pic.Log(t)
		require.Contains(t, log, "\tDEBUG\t", "PIC logged at debug level: the check covers every level")
		var events eventsv1.EventList
		require.NoError(t, a.c.List(a.ctx, &events))
		require.NotEmpty(t, events.Items)
		var policies accessv1alpha1.AccessPolicyList
		require.NoError(t, a.c.List(a.ctx, &policies, client.InNamespace(a.ns)))
		status, err := json.Marshal(policies.Items)
		require.NoError(t, err)
		var record corev1.ConfigMap
		record.Data = map[string]string{}
		for n := range pangolinsink.AccessRecordParts {
			var part corev1.ConfigMap
			err := a.c.Get(a.ctx, client.ObjectKey{Namespace: picNamespace, Name: pangolinsink.AccessRecordPartName(accessOwnerID, n)}, &part)
			if apierrors.IsNotFound(err) {
				continue
			}
			require.NoError(t, err)
			maps.Copy(record.Data, part.Data)
		}
		// Empty places would hide nothing: the check must read something in each.
		require.NotEmpty(t, policies.Items, "the policies' statuses to search")
		require.NotEmpty(t, record.Data, "the record to search")
		for _, secret := range secrets {
			assert.NotContains(t, log, secret, "a secret in PIC's log")
			for _, ev := range events.Items {
				assert.NotContains(t, ev.Note, secret, "a secret in the event %s %s/%s", ev.Reason, ev.Regarding.Kind, ev.Regarding.Name)
			}
			assert.NotContains(t, string(status), secret, "a secret in the policies")
			for k, v := range record.Data {
				assert.NotContains(t, v, secret, "a secret in the record, at %s", k)
			}
		}
	})
}

// accessWorld is the access spec's view of Pangolin and of its policies.
type accessWorld struct {
	*directWorld
}

// in is the world for the subtest t: its helpers fail t, not the spec.
func (a *accessWorld) in(t *testing.T) *accessWorld {
	e := *a.env
	e.t = t
	return &accessWorld{directWorld: &directWorld{env: &e, server: a.server}}
}

// target is a policy's reference to an object of its namespace.
func target(group, kind, name string) gatewayv1.LocalPolicyTargetReference {
	return gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.Group(group), Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(name)}
}

// onIngress targets the spec's Ingress name.
func onIngress(name string) gatewayv1.LocalPolicyTargetReference {
	return target(accessv1alpha1.GroupIngress, accessv1alpha1.KindIngress, name)
}

// policy is an AccessPolicy of the spec's namespace on target.
func (a *accessWorld) policy(name string, target gatewayv1.LocalPolicyTargetReference, spec accessv1alpha1.AccessPolicySpec) *accessv1alpha1.AccessPolicy {
	spec.TargetRefs = []gatewayv1.LocalPolicyTargetReference{target}
	return &accessv1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.ns}, Spec: spec}
}

// eventuallyPolicy waits until the resource serving host has an access state check
// accepts.
func (a *accessWorld) eventuallyPolicy(host string, check func(c *assert.CollectT, got pangolinsim.Policy)) {
	a.t.Helper()
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		i := slices.IndexFunc(a.server.Resources(), func(r pangolinsim.Resource) bool { return r.FullDomain == host })
		if !assert.GreaterOrEqual(c, i, 0, "no Pangolin resource serves %s", host) {
			return
		}
		got, ok := a.server.Policy(a.server.Resources()[i].ID)
		if assert.True(c, ok) {
			check(c, got)
		}
	}, eventually, tick)
}

// eventuallyCondition waits until the policy's status for its first target has the
// condition with status and reason.
func (a *accessWorld) eventuallyCondition(name, condition string, status metav1.ConditionStatus, reason string) {
	a.t.Helper()
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		var p accessv1alpha1.AccessPolicy
		if !assert.NoError(c, a.c.Get(a.ctx, client.ObjectKey{Namespace: a.ns, Name: name}, &p)) ||
			!assert.NotEmpty(c, p.Status.Ancestors, "status.ancestors of AccessPolicy %s", name) {
			return
		}
		got := meta.FindStatusCondition(p.Status.Ancestors[0].Conditions, condition)
		if assert.NotNil(c, got, "condition %s of AccessPolicy %s", condition, name) {
			assert.Equal(c, status, got.Status, "%s: %s", condition, got.Message)
			assert.Equal(c, reason, got.Reason)
		}
	}, eventually, tick)
}

// recordName is the ConfigMap, in PIC's namespace, where the direct sink records the
// secrets it wrote for the resource niceID: the part that holds it.
func (a *accessWorld) recordName(niceID string) string {
	return pangolinsink.AccessRecordPartName(accessOwnerID, pangolinsink.AccessRecordPart(niceID))
}

// eventuallyRecorded waits until PIC's record of the resource serving host names the
// ids of the secrets Pangolin holds for it: what lets a restarted PIC leave them be.
func (a *accessWorld) eventuallyRecorded(host string) {
	a.t.Helper()
	res := a.resource(host)
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		var cm corev1.ConfigMap
		if !assert.NoError(c, a.c.Get(a.ctx, client.ObjectKey{Namespace: picNamespace, Name: a.recordName(res.NiceID)}, &cm)) {
			return
		}
		var rec struct {
			ResourceID int  `json:"resourceId"`
			Governed   bool `json:"governed"`
			Password   *struct {
				Digest string `json:"digest"`
				ID     int    `json:"id"`
			} `json:"password"`
			Pincode *struct {
				Digest string `json:"digest"`
				ID     int    `json:"id"`
			} `json:"pincode"`
		}
		if !assert.Contains(c, cm.Data, res.NiceID, "the record of %s", host) ||
			!assert.NoError(c, json.Unmarshal([]byte(cm.Data[res.NiceID]), &rec)) {
			return
		}
		got, _ := a.server.Policy(res.ID)
		assert.Equal(c, res.ID, rec.ResourceID)
		assert.True(c, rec.Governed, "governed by a policy")
		id := func(s *struct {
			Digest string `json:"digest"`
			ID     int    `json:"id"`
		}) int {
			if s == nil {
				return 0
			}
			assert.NotEmpty(c, s.Digest)
			return s.ID
		}
		assert.Equal(c, got.PasswordID, id(rec.Password), "the password id Pangolin holds")
		assert.Equal(c, got.PincodeID, id(rec.Pincode), "the PIN code id Pangolin holds")
	}, eventually, tick)
}

// editSecret replaces the data of a Secret of the spec's namespace.
func (a *accessWorld) editSecret(name string, data map[string]string) {
	a.t.Helper()
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		var s corev1.Secret
		if !assert.NoError(c, a.c.Get(a.ctx, client.ObjectKey{Namespace: a.ns, Name: name}, &s)) {
			return
		}
		s.Data = nil
		s.StringData = data
		assert.NoError(c, a.c.Update(a.ctx, &s))
	}, eventually, tick)
}

// gateway creates a GatewayClass of PIC's and a Gateway of it, with one HTTP listener.
// The class stays: the cluster is the spec's own.
func (a *accessWorld) gateway(name string) {
	a.t.Helper()
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "pangolin-" + a.ns},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: "pangolin.io/gateway-controller"},
	}
	a.create(class)
	a.create(&gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.ns},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class.Name),
			Listeners: []gatewayv1.Listener{{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}}},
	})
}

// httpRoute is an HTTPRoute of the spec's namespace publishing host through gateway to
// the Service web, port 8080.
func (a *accessWorld) httpRoute(name, gateway, host string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.ns},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gateway)}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To(gatewayv1.PortNumber(8080))},
			}}}}},
		},
	}
}

// eventuallyEvent waits for an event of type with reason regarding obj, and returns it.
func (e *env) eventuallyEvent(obj client.Object, eventType, reason string) eventsv1.Event {
	e.t.Helper()
	var got eventsv1.Event
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var list eventsv1.EventList
		if !assert.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(obj.GetNamespace()))) {
			return
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.UID != obj.GetUID() {
				continue
			}
			seen = append(seen, ev.Type+"/"+ev.Reason)
			if ev.Type == eventType && ev.Reason == reason {
				got = ev
				return
			}
		}
		assert.Fail(c, "no event", "no %s %s regarding %s/%s; its events: %v", eventType, reason, obj.GetNamespace(), obj.GetName(), seen)
	}, eventually, tick)
	return got
}

// rules are Pangolin rules as "priority action match value [enabled]", by priority.
func rules(rs []pangolinsim.Rule) []string {
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b pangolinsim.Rule) int { return cmp.Compare(a.Priority, b.Priority) })
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		s := fmt.Sprintf("%d %s %s %s", r.Priority, r.Action, r.Match, r.Value)
		if r.Enabled {
			s += " enabled"
		}
		out = append(out, s)
	}
	return out
}
