package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// firstReadSink is a direct-mode-like sink that learns the org's domains from its
// first read of the backend, which its first Current waits for: until then, its
// features know no domain. It keeps one published resource.
type firstReadSink struct {
	plugin.Sink
	mu      sync.Mutex
	read    bool
	kept    engine.Existing
	applied []engine.Plan
}

func (s *firstReadSink) Features() engine.Features {
	s.mu.Lock()
	defer s.mu.Unlock()
	domains := []string{} // nothing read yet: no domain is known
	if s.read {
		domains = []string{"example.com"}
	}
	return engine.Features{PathRouting: true, TunnelNamespace: true, Domains: domains}
}

func (s *firstReadSink) Current(_ context.Context, owner route.Origin) ([]engine.Existing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read = true
	if owner.UID != s.kept.Origin.UID {
		return nil, nil
	}
	return []engine.Existing{s.kept}, nil
}

func (s *firstReadSink) Tunnel(context.Context, route.TunnelRef) (plugin.TunnelCheck, error) {
	return plugin.TunnelCheck{State: plugin.TunnelReady}, nil
}

func (s *firstReadSink) Holders(context.Context, string) ([]route.Origin, error) {
	return []route.Origin{s.kept.Origin}, nil
}

func (s *firstReadSink) Apply(_ context.Context, _ route.Origin, plan engine.Plan) (plugin.Applied, error) {
	s.applied = append(s.applied, plan)
	return plugin.Applied{Created: plan.Create, Updated: plan.Update}, nil
}

func (s *firstReadSink) Describe(engine.Resource) plugin.Description { return plugin.Description{} }

// plainSource serves one Ingress publishing app.example.com.
type plainSource struct{ self route.Origin }

func (s plainSource) Name() string          { return "ingress" }
func (s plainSource) Object() client.Object { return &networkingv1.Ingress{} }
func (s plainSource) Routes(context.Context, client.Object) (plugin.Result, error) {
	rt := route.Route{Origin: s.self, Host: "app.example.com", Tunnel: route.TunnelRef{Namespace: "pangolin", Name: "main"},
		Paths: []route.PathRule{{Path: "/", Match: route.MatchPrefix, Backend: route.Backend{Host: "web.shop.svc.cluster.local", Port: 80, Scheme: "http"}}}}
	return plugin.Result{Origin: &s.self, Managed: true, Routes: []route.Route{rt}}, nil
}
func (s plainSource) WriteStatus(context.Context, client.Object, plugin.Status) error { return nil }
func (s plainSource) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{Claimants: func(context.Context, string) ([]engine.Claim, error) {
		return []engine.Claim{{Origin: s.self}}, nil
	}}}
}

// TestTheFirstReconcileSeesTheDomainsOfTheFirstRead: a sink learns the org's domains
// from its first read, which Current waits for; a reconcile that took the sink's
// features before that would judge every host against no domain, refuse it
// (DomainNotFound) and delete what it published: PIC restarted against a real Pangolin
// did so. The features are read once what the sink keeps is known.
func TestTheFirstReconcileSeesTheDomainsOfTheFirstRead(t *testing.T) {
	self := route.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", UID: "uid-web", Created: time.Now()}
	published, _ := engine.Desired(engine.Input{
		Routes:   []route.Route{mustRoutes(t, plainSource{self: self})[0]},
		Features: engine.Features{PathRouting: true, TunnelNamespace: true, Domains: []string{"example.com"}},
	})
	require.Len(t, published, 1)
	sink := &firstReadSink{kept: engine.Existing{Resource: published[0], Status: engine.Status{Phase: engine.PhaseReady}}}
	src := plainSource{self: self}
	stored := fake.NewClientBuilder().WithObjects(&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-web"}}).Build()
	declared := plugin.DeclareAll(src)
	recorder := &noted{}
	r := NewReconciler(declared[0], Deps{Sink: sink, Recorder: recorder, Objects: stored, Sources: declared})
	r.kind = "Ingress"

	_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: self.NamespacedName()})
	require.NoError(t, err)

	for _, plan := range sink.applied {
		assert.Empty(t, plan.Delete, "what was published is deleted on the first reconcile")
		assert.Empty(t, plan.Create, "what was published is created again")
	}
	assert.NotContains(t, recorder.reasons, pic.ReasonDomainNotFound)
}

func mustRoutes(t *testing.T, src plugin.Source) []route.Route {
	t.Helper()
	res, err := src.Routes(context.Background(), nil)
	require.NoError(t, err)
	return res.Routes
}
