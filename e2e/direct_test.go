package e2e

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
)

// Pangolin is the Pangolin a spec runs PIC against in direct mode (sink pangolin).
type Pangolin struct {
	// URL is the Integration API's base URL as PIC reaches it (Provider.ServePangolin).
	URL          string
	Org, OwnerID string
	// APIKey is given to PIC as a file (a mounted Secret on kind), never in its
	// arguments or environment.
	APIKey string
}

// The in-repo Pangolin of the direct-mode spec: its org, the site PIC's default tunnel
// names, and the key PIC authenticates with.
const (
	directOrg  = "e2e"
	directSite = "default" // PIC's default tunnel is "default": in direct mode, a site's niceId
)

var directKey = pangolinsim.Key{ID: "pice2eapikey001", Secret: "e2e-s3cret-never-logged"}

// specDirect runs PIC in direct mode against the in-repo Pangolin server, on a cluster
// without pangolin-operator's CRDs (locally, also with the direct-mode RBAC alone; on
// kind, in the Deployment of config/gateway-api, flags and key Secret set by the
// provider): Ingresses and an
// HTTPRoute are published into Pangolin, edits replace targets, deletions remove
// resources (also while PIC is stopped), a restart writes nothing, resources PIC did not
// create are never touched, an outage deletes nothing, and the API key never reaches a
// log line, at debug level.
func specDirect(t *testing.T, p Provider) {
	e := newEnv(t, p, "direct")
	server := simtest.NewHandler(pangolinsim.Options{
		Org:     directOrg,
		Domains: []pangolinsim.Domain{{ID: "domain1", BaseDomain: e.ns + ".example.com", Verified: true}},
		// edge is a Newt site: Pangolin gives health checks to its targets only (on a
		// local site they would hide the target).
		Sites: []pangolinsim.Site{{ID: 1, NiceID: directSite, Name: "e2e"}, {ID: 2, NiceID: "edge", Name: "edge", Type: "newt"}},
		Keys:  []pangolinsim.Key{directKey},
	})
	t.Cleanup(server.Close)
	pangolin := &Pangolin{URL: p.ServePangolin(t, server), Org: directOrg, OwnerID: "e2e", APIKey: directKey.Token()}
	d := &directWorld{env: e, server: server}

	// Resources PIC did not create: one on a host an Ingress will claim, made by hand,
	// and one that looks like another cluster's PIC (another owner id).
	manual := server.SeedResource(pangolinsim.Resource{Name: "made by hand", DomainID: "domain1", Subdomain: ptr.To("taken"), Enabled: true})
	server.SeedTarget(pangolinsim.Target{ResourceID: manual.ID, SiteID: 1, IP: "10.0.0.9", Port: 80, Method: "http", Enabled: true})
	server.SeedResource(pangolinsim.Resource{NiceID: "pic-other-0123456789abcdef", Name: e.host("other") + " (Ingress shop/web)",
		DomainID: "domain1", Subdomain: ptr.To("other"), Enabled: true})
	decoys := server.Resources()
	decoyHosts := map[string][]string{e.host("taken"): {"http://10.0.0.9:80"}}

	// web serves on two ports: an edit of the port alone updates the target in place.
	e.create(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}, {Name: "alt", Port: 8081}}},
	})
	web, webAlt := "http://"+e.svcAddr("web", 8080), "http://"+e.svcAddr("web", 8081)
	opts := PICOptions{Pangolin: pangolin, GatewayAPI: true, Args: []string{"--sources=ingress,httproute,service,tcproute,udproute", "--log-level=debug"}}
	pic := e.startPIC(opts)[0]

	app := ingress(e.ns, "app", "pangolin", e.host("app"), "web", 8080)
	e.create(app)
	d.eventuallyServed(with(decoyHosts, e.host("app"), web))
	e.eventuallyNormal(app, "Created")
	e.eventuallyAddress(app, e.host("app"))

	t.Run("an edited backend port leaves only the new target", func(t *testing.T) {
		e.updateIngress("app", func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port = networkingv1.ServiceBackendPort{Number: 8081}
		})
		d.eventuallyServed(with(decoyHosts, e.host("app"), webAlt))
		res := d.resource(e.host("app"))
		assert.Len(t, server.Targets(res.ID), 1, "the old target is gone")
	})

	t.Run("a host another resource serves is taken in Pangolin; no duplicate", func(t *testing.T) {
		squat := ingress(e.ns, "squat", "pangolin", e.host("taken"), "web", 8080)
		e.create(squat)
		assert.Contains(t, e.eventuallyWarning(squat, "HostTakenInPangolin").Note, "which PIC did not create")
		assert.Equal(t, with(decoyHosts, e.host("app"), webAlt), d.server.Served())
	})

	t.Run("an HTTPRoute is published, and removed with it", func(t *testing.T) {
		class := &gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: "pangolin-" + e.ns},
			Spec:       gatewayv1.GatewayClassSpec{ControllerName: "pangolin.io/gateway-controller"},
		}
		e.create(class)
		t.Cleanup(func() { _ = e.c.Delete(e.ctx, class) })
		e.create(&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "public", Namespace: e.ns},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class.Name),
				Listeners: []gatewayv1.Listener{{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}}},
		})
		hr := &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "store", Namespace: e.ns},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(e.host("store"))},
				Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To(gatewayv1.PortNumber(8080))},
				}}}}},
			},
		}
		e.create(hr)
		d.eventuallyServed(with(with(decoyHosts, e.host("app"), webAlt), e.host("store"), web))
		assert.Equal(t, e.host("store")+" (HTTPRoute "+e.ns+"/store)", d.resource(e.host("store")).Name)
		require.NoError(t, e.c.Delete(e.ctx, hr))
		d.eventuallyServed(with(decoyHosts, e.host("app"), webAlt))
	})

	t.Run("an HTTPRoute's URLRewrite becomes the target's rewrite", func(t *testing.T) {
		d.gateway(t, "rewrite", gatewayv1.Listener{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80})
		hr := &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: e.ns},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "rewrite"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(e.host("legacy"))},
				Rules: []gatewayv1.HTTPRouteRule{{
					Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/v1")}}},
					Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
						Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To("/api/v1")},
					}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
						BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To(gatewayv1.PortNumber(8080))},
					}}},
				}},
			},
		}
		e.create(hr)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			i := slices.IndexFunc(d.server.Resources(), func(r pangolinsim.Resource) bool { return r.FullDomain == e.host("legacy") })
			if !assert.GreaterOrEqual(c, i, 0, "no resource for the route") {
				return
			}
			targets := d.server.Targets(d.server.Resources()[i].ID)
			if assert.Len(c, targets, 1) {
				assert.Equal(c, "^/v1(/.*)?$", targets[0].Path)
				assert.Equal(c, "/api/v1$1", targets[0].RewritePath)
				assert.Equal(c, "regex", targets[0].RewritePathType)
			}
		}, eventually, tick)
		require.NoError(t, e.c.Delete(e.ctx, hr))
		d.eventuallyServed(with(decoyHosts, e.host("app"), webAlt)) // gone before the restart below
	})

	t.Run("TCP and UDP ports", func(t *testing.T) { specPorts(t, d, pangolin) })

	t.Run("a pod's readiness probe becomes the target's health check", func(t *testing.T) {
		e.create(readinessPod(e.ns, "probed", 8080, "/ready"))
		e.create(&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "probed", Namespace: e.ns},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "probed"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
		})
		probed := ingress(e.ns, "probed", "pangolin", e.host("probed"), "probed", 80)
		probed.Annotations = healthCheckedThrough("edge")
		e.create(probed)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			i := slices.IndexFunc(d.server.Resources(), func(r pangolinsim.Resource) bool { return r.FullDomain == e.host("probed") })
			if !assert.GreaterOrEqual(c, i, 0, "no resource for the Ingress") {
				return
			}
			targets := d.server.Targets(d.server.Resources()[i].ID)
			if assert.Len(c, targets, 1) {
				assert.True(c, targets[0].HCEnabled)
				assert.Equal(c, pangolinsim.HealthCheck{
					Hostname: "probed." + e.ns + ".svc.cluster.local", Mode: "http", Scheme: "http", Path: "/ready", Method: "GET",
					Port: 80, Interval: 7, Timeout: 2, HealthyThreshold: 1, UnhealthyThreshold: 4,
				}, targets[0].HC, "the probe's path and timings, on the Service port that reaches the probed container port")
			}
		}, eventually, tick)
		require.NoError(t, e.c.Delete(e.ctx, probed))
		d.eventuallyServed(with(decoyHosts, e.host("app"), webAlt)) // gone before the restart below
	})

	t.Run("a restarted PIC writes nothing to Pangolin", func(t *testing.T) {
		pic.Stop(t)
		server.ResetCounts()
		pic.Start(t)
		// Both Ingresses (app and squat) reconciled after the first read of Pangolin,
		// which reconciles wait for: had they meant to write, they would have.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			m, err := metrics(e.ctx, pic)
			if assert.NoError(c, err) {
				assert.GreaterOrEqual(c, m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "ingress"}), 2.0)
			}
		}, eventually, tick)
		assert.Positive(t, server.Reads(), "PIC read Pangolin at start")
		assert.Zero(t, server.Writes(), "writes after a restart: %v", server.Counts())
	})

	t.Run("an Ingress deleted while PIC is stopped is removed at the next start", func(t *testing.T) {
		pic.Stop(t)
		require.NoError(t, e.c.Delete(e.ctx, app))
		pic.Start(t)
		d.eventuallyServed(decoyHosts)
	})

	t.Run("an outage deletes nothing and raises a Warning; PIC converges after it", func(t *testing.T) {
		news := ingress(e.ns, "news", "pangolin", e.host("news"), "web", 8080)
		e.create(news)
		d.eventuallyServed(with(decoyHosts, e.host("news"), web))
		deletes := d.server.Deletes()
		server.SetFault(simtest.Outage(http.StatusServiceUnavailable))
		e.updateIngress("news", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = e.host("press") })
		assert.Contains(t, e.eventuallyWarning(news, "SinkUnavailable").Note, "503")
		assert.Equal(t, deletes, d.server.Deletes(), "no delete is sent during the outage: %v", server.Counts())
		server.SetFault(nil)
		d.eventuallyServed(with(decoyHosts, e.host("press"), web))
		e.eventuallyAddress(news, e.host("press"))
	})

	assert.Equal(t, decoys, server.Resources()[:len(decoys)], "the resources PIC did not create were never touched")
	for _, secret := range []string{directKey.Token(), directKey.Secret} {
		assert.NotContains(t, pic.Log(t), secret, "the API key in PIC's log")
	}
}

// directWorld is a direct-mode spec's view of Pangolin.
type directWorld struct {
	*env
	server *simtest.Server
}

func (d *directWorld) eventuallyServed(want map[string][]string) {
	d.t.Helper()
	require.EventuallyWithT(d.t, func(c *assert.CollectT) {
		assert.Equal(c, want, d.server.Served())
	}, eventually, tick)
}

// resource is the resource that serves host.
func (d *directWorld) resource(host string) pangolinsim.Resource {
	d.t.Helper()
	i := slices.IndexFunc(d.server.Resources(), func(r pangolinsim.Resource) bool { return r.FullDomain == host })
	require.GreaterOrEqual(d.t, i, 0, "no Pangolin resource serves %s", host)
	return d.server.Resources()[i]
}

// with is hosts plus host served by backend.
func with(hosts map[string][]string, host, backend string) map[string][]string {
	out := maps.Clone(hosts)
	out[host] = []string{backend}
	return out
}

// eventuallyNormal waits for a Normal event with reason regarding the Ingress.
func (e *env) eventuallyNormal(ing *networkingv1.Ingress, reason string) {
	e.t.Helper()
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var list eventsv1.EventList
		assert.NoError(c, e.c.List(e.ctx, &list, client.InNamespace(ing.Namespace)))
		assert.True(c, slices.ContainsFunc(list.Items, func(ev eventsv1.Event) bool {
			return ev.Type == corev1.EventTypeNormal && ev.Reason == reason && ev.Regarding.UID == ing.UID
		}), "a Normal %s event regarding Ingress %s", reason, ing.Name)
	}, eventually, tick)
}

// eventuallyAddress waits until the Ingress's status shows host alone: what Pangolin
// serves for it.
func (e *env) eventuallyAddress(ing *networkingv1.Ingress, host string) {
	e.t.Helper()
	require.EventuallyWithT(e.t, func(c *assert.CollectT) {
		var got networkingv1.Ingress
		assert.NoError(c, e.c.Get(e.ctx, client.ObjectKeyFromObject(ing), &got))
		assert.Equal(c, []networkingv1.IngressLoadBalancerIngress{{Hostname: host}}, got.Status.LoadBalancer.Ingress)
	}, eventually, tick)
}

// servePangolinLocally serves h on a loopback port until t ends: PIC runs on this host.
func servePangolinLocally(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}
