package integration_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/manager"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/example"
)

// TestTheToySourceRunsThroughTheManager: the toy source of docs/development.md
// (sources/example), registered with one line and nothing else, runs in the live
// manager as it runs through render: its ConfigMap publishes its host, and owns it
// against a younger Ingress, across kinds.
func TestTheToySourceRunsThroughTheManager(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		registry := plugin.Registry{Sources: maps.Clone(builtin.Registry.Sources), Sinks: builtin.Registry.Sinks}
		registry.Sources[example.Name] = example.Factory // the one registration line

		ns := testenv.NewNamespace(t, env.Client)
		ctx, cancel := context.WithCancel(context.Background())
		cfg := config.Default()
		cfg.Sources = []string{example.Name, "ingress"}
		cfg.WatchNamespaces = []string{ns}
		cfg.MetricsBindAddress, cfg.HealthProbeBindAddress = "0", "0"
		cfg.ResyncPeriod = time.Hour // tests must not pass thanks to a resync
		mgr, err := manager.New(ctx, cfg, env.Config, registry)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
		t.Cleanup(func() {
			cancel()
			require.NoError(t, <-done)
		})
		require.True(t, mgr.GetCache().WaitForCacheSync(ctx))

		w := &world{t: t, ctx: ctx, c: env.Client, ns: ns}
		w.tunnel(cfg.Tunnels.Default.Name)
		w.service("web", 80)
		host := w.host("shop")
		w.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Data: map[string]string{"host": host, "service": "web"}})
		published := w.eventuallyHosts(host)
		owner := published[host].OwnerReferences
		require.Len(t, owner, 1)
		assert.Equal(t, "ConfigMap", owner[0].Kind, "the ConfigMap's resource")

		testenv.NextCreationSecond() // the Ingress is younger: creation times have one-second resolution
		w.create(ingressFor("late", "pangolin", rule(host, "/", "web", 80)))
		w.eventuallyEvent(pic.ReasonHostConflict)
		var events eventsv1.EventList
		require.NoError(t, env.Client.List(ctx, &events, client.InNamespace(ns)))
		for _, e := range events.Items {
			if e.Reason == pic.ReasonHostConflict {
				assert.Equal(t, "Ingress", e.Regarding.Kind, "the younger Ingress is refused the host: %s", e.Note)
			}
		}
		var list tunnelv1alpha1.PangolinResourceList
		require.NoError(t, env.Client.List(ctx, &list, client.InNamespace(ns)))
		require.Len(t, list.Items, 1, "the ConfigMap's resource alone")
		assert.Equal(t, "ConfigMap", list.Items[0].OwnerReferences[0].Kind)
	})
}
