package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// TestIndexesReadAcrossNamespaces: PIC reads its indexes with a List by an indexed field
// and no namespace, which must find the objects of every namespace, whether the cache
// watches all of them or a few (watchNamespaces); a List in one namespace finds that
// namespace's. The manager keeps the indexes in a plugin.IndexStore plugged into the
// cache and the client as here.
func TestIndexesReadAcrossNamespaces(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		first, second := testenv.NewNamespace(t, env.Client), testenv.NewNamespace(t, env.Client)
		for _, ns := range []string{first, second} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "indexed", Labels: map[string]string{"value": "shared", "ns": ns}}}
			require.NoError(t, env.Client.Create(ctx, cm))
		}
		byValue := plugin.Index{Object: &corev1.ConfigMap{}, Field: "test.value", Func: func(o client.Object) []string {
			return []string{o.GetLabels()["value"]}
		}}

		t.Run("a cache not started or stopped answers with an error, never an empty list", func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			store := plugin.NewIndexStore(testenv.Scheme())
			c, err := cache.New(env.Config, cache.Options{Scheme: testenv.Scheme(), NewInformer: store.NewInformer})
			require.NoError(t, err)
			require.NoError(t, store.Add(ctx, c, []plugin.Index{byValue}))
			direct, err := client.New(env.Config, client.Options{Scheme: testenv.Scheme(), Cache: &client.CacheOptions{Reader: c}})
			require.NoError(t, err)
			cl := store.Client(direct)
			var list corev1.ConfigMapList
			assert.Error(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}), "before the cache starts")

			cacheCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { _ = c.Start(cacheCtx); close(done) }()
			require.True(t, c.WaitForCacheSync(ctx))
			require.NoError(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}))
			assert.Len(t, list.Items, 2)
			stop()
			<-done
			assert.Eventually(t, func() bool {
				return cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}) != nil
			}, 10*time.Second, 50*time.Millisecond, "after the cache stops")
		})

		for name, tc := range map[string]struct {
			opts cache.Options
			// informerFirst: the kind's informer exists before the index is declared.
			informerFirst bool
		}{
			"every namespace":                         {},
			"watched namespaces":                      {opts: cache.Options{DefaultNamespaces: map[string]cache.Config{first: {}, second: {}}}},
			"informer made before the index":          {informerFirst: true},
			"watched namespaces, informer made first": {opts: cache.Options{DefaultNamespaces: map[string]cache.Config{first: {}, second: {}}}, informerFirst: true},
		} {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				store := plugin.NewIndexStore(testenv.Scheme())
				opts := tc.opts
				opts.Scheme = testenv.Scheme()
				opts.NewInformer = store.NewInformer
				c, err := cache.New(env.Config, opts)
				require.NoError(t, err)
				if tc.informerFirst {
					_, err := c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
					require.NoError(t, err)
				}
				require.NoError(t, store.Add(ctx, c, []plugin.Index{byValue}))
				go func() { _ = c.Start(ctx) }()
				require.True(t, c.WaitForCacheSync(ctx))
				direct, err := client.New(env.Config, client.Options{Scheme: testenv.Scheme(), Cache: &client.CacheOptions{Reader: c}})
				require.NoError(t, err)
				cl := store.Client(direct)

				var list corev1.ConfigMapList
				require.NoError(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}))
				var found []string
				for _, cm := range list.Items {
					found = append(found, cm.Namespace+"/"+cm.Name)
					assert.Equal(t, "ConfigMap", cm.Kind, "a copy carries its kind, as from controller-runtime's cache")
				}
				assert.ElementsMatch(t, []string{first + "/indexed", second + "/indexed"}, found)

				require.NoError(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "unknown"}))
				assert.Empty(t, list.Items)

				require.NoError(t, cl.List(ctx, &list, client.InNamespace(first), client.MatchingFields{byValue.Field: "shared"}))
				require.Len(t, list.Items, 1)
				assert.Equal(t, first, list.Items[0].Namespace)

				require.NoError(t, cl.List(ctx, &list, client.MatchingLabels{"ns": second}, client.MatchingFields{byValue.Field: "shared"}))
				require.Len(t, list.Items, 1)
				assert.Equal(t, second, list.Items[0].Namespace)

				// A copy is the caller's to change.
				require.NoError(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}))
				list.Items[0].Labels["value"] = "changed"
				require.NoError(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}))
				require.Len(t, list.Items, 2)
				for _, cm := range list.Items {
					assert.Equal(t, "shared", cm.Labels["value"], "the cache's object was changed through a List")
				}

				// What the store does not index goes to controller-runtime's cache.
				require.NoError(t, cl.List(ctx, &list, client.InNamespace(second)))
				assert.Len(t, list.Items, 1)
				assert.Error(t, cl.List(ctx, &list, client.MatchingFields{"test.other": "shared"}), "no such index")
				assert.Error(t, cl.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}, client.Limit(1)), "an indexed list is never paged")
			})
		}
	})
}
