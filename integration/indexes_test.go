package integration_test

import (
	"context"
	"testing"

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
// namespace's.
func TestIndexesReadAcrossNamespaces(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		first, second := testenv.NewNamespace(t, env.Client), testenv.NewNamespace(t, env.Client)
		for _, ns := range []string{first, second} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "indexed", Labels: map[string]string{"value": "shared"}}}
			require.NoError(t, env.Client.Create(ctx, cm))
		}
		byValue := plugin.Index{Object: &corev1.ConfigMap{}, Field: "test.value", Func: func(o client.Object) []string {
			return []string{o.GetLabels()["value"]}
		}}

		for name, opts := range map[string]cache.Options{
			"every namespace":    {},
			"watched namespaces": {DefaultNamespaces: map[string]cache.Config{first: {}, second: {}}},
		} {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				opts.Scheme = testenv.Scheme()
				c, err := cache.New(env.Config, opts)
				require.NoError(t, err)
				require.NoError(t, plugin.AddIndexes(ctx, c, []plugin.Index{byValue}))
				go func() { _ = c.Start(ctx) }()
				require.True(t, c.WaitForCacheSync(ctx))

				var list corev1.ConfigMapList
				require.NoError(t, c.List(ctx, &list, client.MatchingFields{byValue.Field: "shared"}))
				var found []string
				for _, cm := range list.Items {
					found = append(found, cm.Namespace+"/"+cm.Name)
				}
				assert.ElementsMatch(t, []string{first + "/indexed", second + "/indexed"}, found)

				require.NoError(t, c.List(ctx, &list, client.MatchingFields{byValue.Field: "unknown"}))
				assert.Empty(t, list.Items)

				require.NoError(t, c.List(ctx, &list, client.InNamespace(first), client.MatchingFields{byValue.Field: "shared"}))
				require.Len(t, list.Items, 1)
				assert.Equal(t, first, list.Items[0].Namespace)
			})
		}
	})
}
