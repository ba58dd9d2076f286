package integration_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// pathLog records the URL path of every request PIC sends.
type pathLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *pathLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.paths = append(l.paths, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// namespacedKinds are the namespaced resources PIC reads or writes.
var namespacedKinds = []string{"ingresses", "services", "endpoints", "pangolinresources", "pangolintunnels", "events", "httproutes", "gateways", "referencegrants", "secrets", "configmaps", "pods"}

// outsideReads lists the requests that could see objects outside namespaces: any
// request into another namespace, and any cluster-wide request for a namespaced kind.
func (l *pathLog) outsideReads(namespaces ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.paths {
		method, path, _ := strings.Cut(p, " ")
		segments := strings.Split(strings.Trim(path, "/"), "/")
		var rest []string
		switch {
		case len(segments) >= 2 && segments[0] == "api":
			rest = segments[2:]
		case len(segments) >= 3 && segments[0] == "apis":
			rest = segments[3:]
		default:
			continue // discovery, healthz
		}
		if len(rest) >= 3 && rest[0] == "namespaces" {
			if !slices.Contains(namespaces, rest[1]) {
				out = append(out, method+" "+path)
			}
			continue
		}
		if len(rest) > 0 && slices.Contains(namespacedKinds, rest[0]) {
			out = append(out, method+" "+path+" (cluster-wide)")
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// TestWatchNamespacesConfinesPIC: with watchNamespaces (PIC_WATCH_NAMESPACES), an
// Ingress in another namespace is never read: PIC sends no request into that namespace
// and no cluster-wide request for a namespaced kind, creates nothing there and writes no
// event about it, while the watched namespace is served. A PIC without the setting is
// the control: the same check sees its cluster-wide reads.
func TestWatchNamespacesConfinesPIC(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		watched := testenv.NewNamespace(t, env.Client)
		outside := testenv.NewNamespace(t, env.Client)
		paths := &pathLog{}
		w := startWith(t, env, paths.wrap, watched, func(c *config.Config) { c.WatchNamespaces = []string{watched} })

		ingresses := map[string]*networkingv1.Ingress{}
		for _, ns := range []string{watched, outside} {
			w.tunnelIn(ns, "default")
			w.create(withNamespace(serviceObject("web", 8080), ns))
			ing := withNamespace(ingressFor("shop", "pangolin", rule("app."+ns+".example.com", "/", "web", 8080)), ns)
			w.create(ing)
			ingresses[ns] = ing
		}
		w.eventuallyHosts("app." + watched + ".example.com")
		// The outside Ingress changes too, after PIC served the watched one, and then the
		// watched one does: a PIC that saw the outside Ingress would have acted on its
		// creation (before the watched one was published) and been handed this update
		// before the watched Ingress's, which it has reconciled once the wait is over.
		var out networkingv1.Ingress
		require.NoError(t, w.c.Get(w.ctx, client.ObjectKeyFromObject(ingresses[outside]), &out))
		out.Labels = map[string]string{"touched": "yes"}
		require.NoError(t, w.c.Update(w.ctx, &out))
		upToDate := w.upToDate("ingress", "shop")
		w.updateIngress("shop", func(ing *networkingv1.Ingress) { ing.Labels = map[string]string{"touched": "yes"} })
		w.eventuallyUpToDateSince(upToDate, "ingress", "shop")

		var prs tunnelv1alpha1.PangolinResourceList
		require.NoError(t, w.c.List(w.ctx, &prs, client.InNamespace(outside)))
		assert.Empty(t, prs.Items, "PangolinResources in the namespace PIC does not watch")
		var events eventsv1.EventList
		require.NoError(t, w.c.List(w.ctx, &events))
		pics := 0
		for _, e := range events.Items {
			if e.ReportingController != manager.EventSource {
				continue // the API server's own (a ClusterIP repair, say) may be about anything
			}
			pics++
			assert.NotEqual(t, outside, e.Regarding.Namespace, "event %s %s about %s/%s", e.Type, e.Reason, e.Regarding.Namespace, e.Regarding.Name)
			assert.NotEqual(t, outside, e.Namespace, "event %s %s in %s", e.Type, e.Reason, e.Namespace)
		}
		assert.NotZero(t, pics, "PIC's events (reportingController %s): the check sees none, so it proves nothing", manager.EventSource)
		assert.Empty(t, paths.outsideReads(watched), "requests that could read outside %s", watched)
		paths.mu.Lock()
		t.Logf("PIC's %d requests, none outside %s: %s", len(paths.paths), watched, strings.Join(slices.Compact(slices.Sorted(slices.Values(paths.paths))), ", "))
		paths.mu.Unlock()

		// Control: an unrestricted PIC reads the whole cluster, and the check sees it.
		unrestricted := &pathLog{}
		startWith(t, env, unrestricted.wrap, testenv.NewNamespace(t, env.Client))
		seen := unrestricted.outsideReads(watched)
		assert.True(t, slices.ContainsFunc(seen, func(p string) bool { return strings.Contains(p, "/ingresses (cluster-wide)") }),
			"the check does not see an unrestricted PIC's cluster-wide Ingress list: %v", seen)
	})
}
