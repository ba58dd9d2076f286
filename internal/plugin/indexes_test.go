package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestIndexStoreLookup: which Lists the store answers from its indexes, which it leaves
// to controller-runtime's cache, and which it refuses.
func TestIndexStoreLookup(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	byValue := Index{Object: &corev1.ConfigMap{}, Field: "test.value", Func: func(o client.Object) []string { return []string{o.GetName()} }}
	store := NewIndexStore(scheme)
	require.NoError(t, store.addLocked(byValue))
	require.ErrorContains(t, store.addLocked(byValue), "declared twice")
	untyped := byValue
	untyped.Object = &metav1.PartialObjectMetadata{}
	require.ErrorContains(t, store.addLocked(untyped), "only typed objects")

	for _, tc := range []struct {
		name    string
		list    client.ObjectList
		opts    []client.ListOption
		indexed bool
		err     string
	}{
		{name: "one indexed field", list: &corev1.ConfigMapList{}, opts: []client.ListOption{client.MatchingFields{"test.value": "a"}}, indexed: true},
		{name: "and a namespace and labels", list: &corev1.ConfigMapList{}, indexed: true,
			opts: []client.ListOption{client.InNamespace("ns"), client.MatchingLabels{"k": "v"}, client.MatchingFields{"test.value": "a"}}},
		{name: "no field", list: &corev1.ConfigMapList{}, opts: []client.ListOption{client.InNamespace("ns")}},
		{name: "a field the store does not index", list: &corev1.ConfigMapList{}, opts: []client.ListOption{client.MatchingFields{"metadata.name": "a"}}},
		{name: "another kind", list: &corev1.SecretList{}, opts: []client.ListOption{client.MatchingFields{"test.value": "a"}}},
		{name: "two fields", list: &corev1.ConfigMapList{}, err: "no other field", opts: []client.ListOption{client.MatchingFields{"test.value": "a", "metadata.name": "b"}}},
		{name: "not equal", list: &corev1.ConfigMapList{}, err: "only an exact match",
			opts: []client.ListOption{client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("test.value", "a")}}},
		{name: "paged", list: &corev1.ConfigMapList{}, err: "never paged", opts: []client.ListOption{client.MatchingFields{"test.value": "a"}, client.Limit(10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, value, ok, err := store.lookup(tc.list, (&client.ListOptions{}).ApplyOptions(tc.opts))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.indexed, ok)
			if tc.indexed {
				assert.Equal(t, byValue.Field, idx.Field)
				assert.Equal(t, "a", value)
			}
		})
	}
}
