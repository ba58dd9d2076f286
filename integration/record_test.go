package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
)

// TestAccessRecordOnTheAPIServer: the direct sink's record of 10,000 governed resources,
// each with every secret, is accepted by a real API server in the parts the shipped Role
// grants (config/rbac/direct/role.yaml, renamed for the owner id as its EDIT asks, and
// nothing else); saved again it writes nothing; the ConfigMap of earlier releases is
// deleted once moved; and a part the Role no longer grants fails for its resources only.
func TestAccessRecordOnTheAPIServer(t *testing.T) {
	testenv.WithoutOperator(t, func(t *testing.T, env *testenv.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ns := testenv.NewNamespace(t, env.Client)
		const ownerID = "envtest"

		role := shippedRecordRole(t, ns, ownerID)
		require.NoError(t, env.Client.Create(ctx, role))
		require.NoError(t, env.Client.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "pic-record"}},
		}))
		cfg, err := env.AddUser("pic-record", nil)
		require.NoError(t, err)
		var writes writeCount
		user, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Client.Scheme()})
		require.NoError(t, err)
		pic := interceptor.NewClient(user, writes.funcs())

		// What an earlier release left: the single ConfigMap.
		require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pangolin.AccessRecordConfigMapName(ownerID)},
			Data:       map[string]string{"pic-envtest-ffffffffffffffff": `{"resourceId":9,"governed":true,"password":{"digest":"d","id":3}}`},
		}))

		key := []byte("a key derived from the API key, 32 bytes")
		store := &pangolin.ConfigMapAccessRecords{Reader: pic, Writer: pic, Namespace: ns, OwnerID: ownerID, Key: key}
		require.Eventually(t, func() bool { // the RBAC is in force once the authorizer's cache has it
			return pic.Get(ctx, client.ObjectKey{Namespace: ns, Name: pangolin.AccessRecordConfigMapName(ownerID)}, &corev1.ConfigMap{}) == nil
		}, 30*time.Second, 200*time.Millisecond)
		loaded, err := store.Load(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]pangolin.AccessRecord{
			"pic-envtest-ffffffffffffffff": {ResourceID: 9, Password: &pangolin.SecretRecord{Digest: "d", ID: 3}},
		}, loaded, "the earlier entry gives its digest, not governed")

		records := tenThousand()
		for k, v := range loaded {
			records[k] = v
		}
		require.NoError(t, store.Save(ctx, records))
		assert.Equal(t, pangolin.AccessRecordParts, writes.take(), "every part written once")
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pangolin.AccessRecordConfigMapName(ownerID)}, &corev1.ConfigMap{})
		assert.True(t, apierrors.IsNotFound(err), "the earlier ConfigMap is deleted once moved: %v", err)

		for n := range pangolin.AccessRecordParts {
			var cm corev1.ConfigMap
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pangolin.AccessRecordPartName(ownerID, n)}, &cm))
			size := 0
			for k, v := range cm.Data {
				size += len(k) + len(v)
			}
			assert.Less(t, size, 512<<10, "part %d is well under 1 MiB", n)
		}

		restarted := &pangolin.ConfigMapAccessRecords{Reader: pic, Writer: pic, Namespace: ns, OwnerID: ownerID, Key: key}
		got, err := restarted.Load(ctx)
		require.NoError(t, err)
		assert.Equal(t, records, got)
		require.NoError(t, restarted.Save(ctx, got))
		assert.Zero(t, writes.take(), "no write at steady state")

		// The Role loses part 3: only the resources it holds are not saved.
		denied := pangolin.AccessRecordPartName(ownerID, 3)
		require.NoError(t, testenv.Update(ctx, env.Client, client.ObjectKeyFromObject(role), func(r *rbacv1.Role) {
			for i := range r.Rules {
				r.Rules[i].ResourceNames = deleteString(r.Rules[i].ResourceNames, denied)
			}
		}, 30*time.Second))
		require.Eventually(t, func() bool { // once the authorizer sees the new Role
			err := pic.Get(ctx, client.ObjectKey{Namespace: ns, Name: denied}, &corev1.ConfigMap{})
			return apierrors.IsForbidden(err)
		}, 30*time.Second, 200*time.Millisecond)
		for id, r := range got {
			r.ResourceID++
			got[id] = r
		}
		var partial *pangolin.AccessRecordsNotSaved
		require.ErrorAs(t, restarted.Save(ctx, got), &partial)
		for id, cause := range partial.ByNiceID {
			require.Equal(t, 3, pangolin.AccessRecordPart(id), "%s is not in the part the Role no longer grants", id)
			require.True(t, apierrors.IsForbidden(cause), "%v", cause)
		}
		assert.Len(t, partial.ByNiceID, countInPart(got, 3))
		reread := &pangolin.ConfigMapAccessRecords{Reader: env.Client, Writer: env.Client, Namespace: ns, OwnerID: ownerID, Key: key}
		saved, err := reread.Load(ctx)
		require.NoError(t, err)
		for id, r := range saved {
			if pangolin.AccessRecordPart(id) == 3 {
				assert.Equal(t, got[id].ResourceID-1, r.ResourceID, "part 3 holds what it held")
			} else {
				assert.Equal(t, got[id].ResourceID, r.ResourceID, "the other parts are saved")
			}
		}
	})
}

// shippedRecordRole is config/rbac/direct/role.yaml for ownerID in namespace ns.
func shippedRecordRole(t *testing.T, ns, ownerID string) *rbacv1.Role {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "direct", "role.yaml"))
	require.NoError(t, err)
	var role rbacv1.Role
	require.NoError(t, yaml.UnmarshalStrict(b, &role))
	role.Namespace = ns
	for i := range role.Rules {
		for j, name := range role.Rules[i].ResourceNames {
			role.Rules[i].ResourceNames[j] = strings.Replace(name, "my-cluster", ownerID, 1)
		}
	}
	return &role
}

// tenThousand are 10,000 records of governed resources with every secret.
func tenThousand() map[string]pangolin.AccessRecord {
	digest := strings.Repeat("5f1c", 16)
	out := map[string]pangolin.AccessRecord{}
	for i := range 10000 {
		out[fmt.Sprintf("pic-envtest-%016x", i*7919)] = pangolin.AccessRecord{
			ResourceID: 100000 + i, Governed: true,
			Password:   &pangolin.SecretRecord{Digest: digest, ID: 200000 + i},
			Pincode:    &pangolin.SecretRecord{Digest: digest, ID: 300000 + i},
			HeaderAuth: &pangolin.SecretRecord{Digest: digest, ID: 400000 + i},
		}
	}
	return out
}

func countInPart(records map[string]pangolin.AccessRecord, n int) int {
	count := 0
	for id := range records {
		if pangolin.AccessRecordPart(id) == n {
			count++
		}
	}
	return count
}

func deleteString(in []string, s string) []string {
	var out []string
	for _, v := range in {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

// writeCount counts the ConfigMap writes (create, update) a client sends.
type writeCount struct {
	mu sync.Mutex
	n  int
}

func (w *writeCount) funcs() interceptor.Funcs {
	count := func(obj client.Object) {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			w.mu.Lock()
			w.n++
			w.mu.Unlock()
		}
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count(obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count(obj)
			return c.Update(ctx, obj, opts...)
		},
	}
}

func (w *writeCount) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.n
	w.n = 0
	return n
}
