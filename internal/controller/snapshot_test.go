package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// movingDomainsSink is a direct-mode-like sink whose org domains change after the
// first time they are read, as when a refresh lands during a reconcile. It keeps an
// older object's resource on app.team-a.example.com, and records what it is asked to
// create.
type movingDomainsSink struct {
	plugin.Sink
	mu      sync.Mutex
	reads   int
	older   route.Origin
	created []engine.Resource
}

func (s *movingDomainsSink) Features() engine.Features {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	domains := []string{"example.com"}
	if s.reads > 1 {
		domains = []string{"example.com", "team-a.example.com"}
	}
	return engine.Features{PathRouting: true, AccessControl: true, TunnelNamespace: true, Domains: domains}
}

func (s *movingDomainsSink) Tunnel(context.Context, route.TunnelRef) (plugin.TunnelCheck, error) {
	return plugin.TunnelCheck{State: plugin.TunnelReady}, nil
}

func (s *movingDomainsSink) Current(_ context.Context, owner route.Origin) ([]engine.Existing, error) {
	if owner.UID != s.older.UID {
		return nil, nil
	}
	return []engine.Existing{{Resource: engine.Resource{Origin: s.older, Host: "app.team-a.example.com", Subdomain: "app", Domain: "team-a.example.com"}}}, nil
}

func (s *movingDomainsSink) Holders(_ context.Context, host string) ([]route.Origin, error) {
	if host != "app.team-a.example.com" {
		return nil, nil
	}
	return []route.Origin{s.older}, nil
}

func (s *movingDomainsSink) Apply(_ context.Context, _ route.Origin, plan engine.Plan) (plugin.Applied, error) {
	s.created = append(s.created, plan.Create...)
	return plugin.Applied{Created: plan.Create}, nil
}

func (s *movingDomainsSink) Describe(engine.Resource) plugin.Description { return plugin.Description{} }

// overrideSource serves one Ingress whose subdomain override lands, under the org's
// domains, on the host an older Ingress owns; its claimants name that older Ingress.
type overrideSource struct {
	plugin.Source
	self, older route.Origin
}

func (s overrideSource) Name() string          { return "ingress" }
func (s overrideSource) Object() client.Object { return &networkingv1.Ingress{} }
func (s overrideSource) Routes(context.Context, client.Object) (plugin.Result, error) {
	rt := route.Route{Origin: s.self, Host: "x.team-a.example.com", SubdomainOverride: "app",
		Tunnel: route.TunnelRef{Namespace: "pangolin", Name: "main"},
		Paths:  []route.PathRule{{Path: "/login", Match: route.MatchPrefix, Backend: route.Backend{Host: "web.team-b.svc.cluster.local", Port: 80, Scheme: "http"}}}}
	return plugin.Result{Origin: &s.self, Managed: true, Routes: []route.Route{rt}}, nil
}
func (s overrideSource) WriteStatus(context.Context, client.Object, plugin.Status) error {
	return nil
}
func (s overrideSource) Declare() plugin.Declaration {
	return plugin.Declaration{Claims: plugin.Claims{Claimants: func(_ context.Context, host string) ([]engine.Claim, error) {
		claims := []engine.Claim{{Origin: s.self}}
		if host == "app.team-a.example.com" {
			claims = append(claims, engine.Claim{Origin: s.older})
		}
		return claims, nil
	}}}
}

// TestOneReconcileDecidesOnOneViewOfTheDomains: the published host an override gives
// depends on the org's domains; ownership, the host policy and what is published must
// all be decided on the same domains, or a refresh landing between them publishes a
// host whose owner was decided for another one: here a younger Ingress's override,
// judged as app.example.com (nobody's), created as app.team-a.example.com, which an
// older Ingress owns.
func TestOneReconcileDecidesOnOneViewOfTheDomains(t *testing.T) {
	now := time.Now()
	older := route.Origin{Kind: "Ingress", Namespace: "team-a", Name: "app", UID: "uid-a", Created: now.Add(-time.Hour)}
	younger := route.Origin{Kind: "Ingress", Namespace: "team-b", Name: "squat", UID: "uid-b", Created: now}
	sink := &movingDomainsSink{older: older}
	src := overrideSource{self: younger, older: older}
	stored := fake.NewClientBuilder().WithObjects(&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "squat", UID: "uid-b"}}).Build()
	declared := plugin.DeclareAll(src)
	r := NewReconciler(declared[0], Deps{Sink: sink, Recorder: &noted{}, Objects: stored, Sources: declared})
	r.kind = "Ingress"

	_, _, err := r.reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-b", Name: "squat"}})
	require.NoError(t, err)
	for _, c := range sink.created {
		assert.NotEqual(t, "app.team-a.example.com", c.ClaimKey(), "the younger Ingress is published on the host the older one owns")
	}
}
