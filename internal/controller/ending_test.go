package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// keepingSink keeps what it is asked to create, and fails every write while broken.
type keepingSink struct {
	plugin.Sink
	kept   []engine.Existing
	broken bool
}

func (s *keepingSink) Features() engine.Features {
	return engine.Features{PathRouting: true, AccessControl: true, TunnelNamespace: true}
}

func (s *keepingSink) Tunnel(context.Context, route.TunnelRef) (plugin.TunnelCheck, error) {
	return plugin.TunnelCheck{State: plugin.TunnelReady}, nil
}

func (s *keepingSink) Current(context.Context, route.Origin) ([]engine.Existing, error) {
	return s.kept, nil
}

func (s *keepingSink) Holders(context.Context, string) ([]route.Origin, error) { return nil, nil }

func (s *keepingSink) Apply(_ context.Context, _ route.Origin, plan engine.Plan) (plugin.Applied, error) {
	if s.broken {
		return plugin.Applied{}, errors.New("connection refused")
	}
	for _, c := range plan.Create {
		s.kept = append(s.kept, engine.Existing{Resource: c, Status: engine.Status{Phase: engine.PhaseReady}})
	}
	return plugin.Applied{Created: plan.Create}, nil
}

func (s *keepingSink) Describe(engine.Resource) plugin.Description { return plugin.Description{} }

// TestOnReconciledIsToldHowEachReconcileEnded: the hook hears, for each reconcile of an
// object, whether it wrote, found nothing to change, or failed; a change written and
// then looked at again is up to date.
func TestOnReconciledIsToldHowEachReconcileEnded(t *testing.T) {
	now := time.Now()
	self := route.Origin{Kind: "Ingress", Namespace: "team-b", Name: "web", UID: "uid-web", Created: now}
	older := route.Origin{Kind: "Ingress", Namespace: "team-a", Name: "app", UID: "uid-app", Created: now.Add(-time.Hour)}
	src := overrideSource{self: self, older: older}
	sink := &keepingSink{}
	type told struct {
		source string
		key    types.NamespacedName
		ended  Ending
	}
	var heard []told
	stored := fake.NewClientBuilder().WithObjects(&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "web", UID: "uid-web"}}).Build()
	declared := plugin.DeclareAll(src)
	r := NewReconciler(declared[0], Deps{Sink: sink, Recorder: &noted{}, Objects: stored, Sources: declared,
		OnReconciled: func(source string, key types.NamespacedName, ended Ending) {
			heard = append(heard, told{source, key, ended})
		}})
	r.kind = "Ingress"
	req := reconcile.Request{NamespacedName: self.NamespacedName()}

	_, err := r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	require.NotEmpty(t, sink.kept, "the first reconcile publishes the Ingress")
	_, err = r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	sink.kept, sink.broken = nil, true
	_, err = r.Reconcile(context.Background(), req)
	require.Error(t, err)

	assert.Equal(t, []told{
		{"ingress", req.NamespacedName, Wrote},
		{"ingress", req.NamespacedName, UpToDate},
		{"ingress", req.NamespacedName, Failed},
	}, heard)
}

func TestEnding(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wrote bool
		err   error
		want  Ending
	}{
		{"a reconcile that writes nothing is up to date", false, nil, UpToDate},
		{"a reconcile that writes is one that wrote", true, nil, Wrote},
		{"a reconcile that fails failed, whatever it wrote first", true, assert.AnError, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ending(tc.wrote, tc.err))
		})
	}
}
