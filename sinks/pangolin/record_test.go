package pangolin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

const recordNamespace = "pic-system"

// putConfigMap writes data as ConfigMap name of PIC's namespace, as someone with update
// on it would.
func putConfigMap(t *testing.T, c client.Client, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: recordNamespace, Name: name}}
	err := c.Get(context.Background(), client.ObjectKeyFromObject(cm), cm)
	if apierrors.IsNotFound(err) {
		cm.Data = data
		require.NoError(t, c.Create(context.Background(), cm))
		return
	}
	require.NoError(t, err)
	cm.Data = data
	require.NoError(t, c.Update(context.Background(), cm))
}

func seal(t *testing.T, key []byte, niceID string, r AccessRecord) string {
	t.Helper()
	v, err := sealRecord(key, niceID, r)
	require.NoError(t, err)
	return v
}

// TestForgedRecordDoesNotGovern: an entry of the record that PIC did not seal for that
// resource, written by whoever may update the ConfigMaps, does not make PIC strip the
// password set by hand on a host no policy governs. The last case, sealed by PIC, does.
func TestForgedRecordDoesNotGovern(t *testing.T) {
	const host = "app.example.com"
	const handSet = "set-by-hand-in-the-dashboard"
	key := recordKey(secretKey.Token())
	for _, tc := range []struct {
		name    string
		forge   func(t *testing.T, c client.Client, niceID string, resourceID int)
		governs bool
	}{
		{"an entry without a MAC in the ConfigMap of earlier releases does not govern", func(t *testing.T, c client.Client, niceID string, id int) {
			putConfigMap(t, c, AccessRecordConfigMapName("default"), map[string]string{niceID: fmt.Sprintf(`{"resourceId":%d,"governed":true}`, id)})
		}, false},
		{"an entry without a MAC in its part does not govern", func(t *testing.T, c client.Client, niceID string, id int) {
			putConfigMap(t, c, AccessRecordPartName("default", AccessRecordPart(niceID)), map[string]string{niceID: fmt.Sprintf(`{"resourceId":%d,"governed":true}`, id)})
		}, false},
		{"an entry sealed with another API key does not govern", func(t *testing.T, c client.Client, niceID string, id int) {
			putConfigMap(t, c, AccessRecordPartName("default", AccessRecordPart(niceID)), map[string]string{
				niceID: seal(t, recordKey("another-api-key"), niceID, AccessRecord{ResourceID: id, Governed: true}),
			})
		}, false},
		{"an entry PIC sealed for another resource, moved under this one, does not govern", func(t *testing.T, c client.Client, niceID string, id int) {
			putConfigMap(t, c, AccessRecordPartName("default", AccessRecordPart(niceID)), map[string]string{
				niceID: seal(t, key, "pic-default-0123456789abcdef", AccessRecord{ResourceID: id, Governed: true}),
			})
		}, false},
		{"an entry PIC sealed as not governed, edited to governed, does not govern", func(t *testing.T, c client.Client, niceID string, id int) {
			v := seal(t, key, niceID, AccessRecord{ResourceID: id, Governed: false, Password: &SecretRecord{Digest: "d", ID: 1}})
			require.Contains(t, v, `"governed":false`)
			putConfigMap(t, c, AccessRecordPartName("default", AccessRecordPart(niceID)), map[string]string{niceID: strings.Replace(v, `"governed":false`, `"governed":true`, 1)})
		}, false},
		{"an entry PIC sealed, copied to another part, does not govern", func(t *testing.T, c client.Client, niceID string, id int) {
			putConfigMap(t, c, AccessRecordPartName("default", (AccessRecordPart(niceID)+1)%AccessRecordParts), map[string]string{
				niceID: seal(t, key, niceID, AccessRecord{ResourceID: id, Governed: true}),
			})
		}, false},
		{"an entry PIC sealed for the resource, in its part, governs", func(t *testing.T, c client.Client, niceID string, id int) {
			putConfigMap(t, c, AccessRecordPartName("default", AccessRecordPart(niceID)), map[string]string{
				niceID: seal(t, key, niceID, AccessRecord{ResourceID: id, Governed: true}),
			})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().Build()
			shop := ingress("shop", "web")
			w := newWorld(t, accessOrg)
			w.accessRecords = &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "default", Key: key}
			w.restart("default")
			rt := web(shop, host, 8080)
			w.converge(shop, rt)
			res := w.resourceOn(host)
			require.NoError(t, w.api.SetResourcePassword(w.ctx, res.ID, handSet))

			tc.forge(t, c, res.NiceID, res.ID)
			w.restart("default")
			w.converge(shop, rt)
			if tc.governs {
				assert.Zero(t, w.policyOn(host).PasswordID, "governed: what a detached policy wrote is undone")
				return
			}
			assert.NotZero(t, w.policyOn(host).PasswordID, "the password set by hand stays")
			assert.True(t, w.fake.CheckPassword(res.ID, handSet))
		})
	}
}

// TestInvalidRecordEntriesAreReported: a part with entries that fail verification is
// reported once per load, by a Warning event on that ConfigMap naming the entries and
// no key; the valid entries of the part are kept.
func TestInvalidRecordEntriesAreReported(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	key := recordKey(secretKey.Token())
	const good, forged = "pic-default-00000000000000aa", "pic-default-00000000000000bb"
	n := AccessRecordPart(good)
	forgedHere := forged
	for i := 0; AccessRecordPart(forgedHere) != n; i++ { // a forged entry in the same part
		forgedHere = fmt.Sprintf("pic-default-%016x", i)
	}
	putConfigMap(t, c, AccessRecordPartName("default", n), map[string]string{
		good:       seal(t, key, good, AccessRecord{ResourceID: 1, Governed: true}),
		forgedHere: `{"resourceId":2,"governed":true}`,
	})
	store := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "default", Key: key}
	got, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]AccessRecord{good: {ResourceID: 1, Governed: true}}, got)

	var events eventsv1.EventList
	require.NoError(t, c.List(ctx, &events, client.InNamespace(recordNamespace)))
	require.Len(t, events.Items, 1)
	ev := events.Items[0]
	assert.Equal(t, corev1.EventTypeWarning, ev.Type)
	assert.Equal(t, pic.ReasonAccessRecordInvalid, ev.Reason)
	assert.Equal(t, AccessRecordPartName("default", n), ev.Regarding.Name)
	assert.Contains(t, ev.Note, forgedHere)
	assert.NotContains(t, ev.Note, good)
	for _, secret := range []string{secretKey.Secret, string(key), fmt.Sprintf("%x", key)} {
		assert.NotContains(t, ev.Note, secret)
	}
}

// TestAPIKeyRotationForgetsTheRecord: entries sealed with the previous API key verify
// no more; the resources they governed are governed again by their policy's next write.
func TestAPIKeyRotationForgetsTheRecord(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	records := map[string]AccessRecord{"pic-default-0123456789abcdef": {ResourceID: 12, Governed: true}}
	before := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "default", Key: recordKey("old-key")}
	require.NoError(t, before.Save(ctx, records))
	after := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "default", Key: recordKey("new-key")}
	got, err := after.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
	require.NoError(t, after.Save(ctx, records), "the first write seals it again")
	got, err = after.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, records, got)
}

// writeCounter counts the writes a fake client receives, by ConfigMap name.
type writeCounter struct {
	mu     sync.Mutex
	writes map[string]int
}

func (wc *writeCounter) funcs(fail func(name string) error) interceptor.Funcs {
	count := func(obj client.Object) error {
		wc.mu.Lock()
		defer wc.mu.Unlock()
		if wc.writes == nil {
			wc.writes = map[string]int{}
		}
		if _, ok := obj.(*corev1.ConfigMap); !ok {
			return nil
		}
		if fail != nil {
			if err := fail(obj.GetName()); err != nil {
				return err
			}
		}
		wc.writes[obj.GetName()]++
		return nil
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := count(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := count(obj); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
	}
}

func (wc *writeCounter) take() map[string]int {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	out := wc.writes
	wc.writes = map[string]int{}
	return out
}

// manyRecords are n records with every secret, as large as PIC writes them.
func manyRecords(n int) map[string]AccessRecord {
	digest := strings.Repeat("5f1c", 16)
	out := make(map[string]AccessRecord, n)
	for i := range n {
		out[fmt.Sprintf("pic-my-cluster-%016x", i*7919)] = AccessRecord{
			ResourceID: 100000 + i, Governed: true,
			Password:   &SecretRecord{Digest: digest, ID: 200000 + i},
			Pincode:    &SecretRecord{Digest: digest, ID: 300000 + i},
			HeaderAuth: &SecretRecord{Digest: digest, ID: 400000 + i},
		}
	}
	return out
}

// TestRecordHoldsTenThousandResources: 10,000 resources, each with every secret, fit in
// the parts, each well under what a ConfigMap may hold; saving them again writes nothing,
// and a change writes one part.
func TestRecordHoldsTenThousandResources(t *testing.T) {
	ctx := context.Background()
	var counter writeCounter
	c := fake.NewClientBuilder().WithInterceptorFuncs(counter.funcs(nil)).Build()
	store := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "my-cluster", Key: recordKey(secretKey.Token())}
	records := manyRecords(10000)
	require.NoError(t, store.Save(ctx, records))
	assert.Len(t, counter.take(), AccessRecordParts, "every part written once")

	total := 0
	for n := range AccessRecordParts {
		var cm corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: recordNamespace, Name: AccessRecordPartName("my-cluster", n)}, &cm))
		size := 0
		for k, v := range cm.Data {
			size += len(k) + len(v)
		}
		assert.Less(t, size, maxRecordPartBytes/2, "part %d: well under 1 MiB", n)
		assert.Equal(t, pic.ManagedByValue, cm.Labels[pic.LabelManagedBy])
		total += len(cm.Data)
	}
	assert.Equal(t, 10000, total)

	restarted := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "my-cluster", Key: store.Key}
	got, err := restarted.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, records, got)
	require.NoError(t, restarted.Save(ctx, got))
	assert.Empty(t, counter.take(), "no write at steady state")

	changedID := "pic-my-cluster-0000000000000000"
	r := got[changedID]
	r.Password = &SecretRecord{Digest: strings.Repeat("a", 64), ID: 7}
	got[changedID] = r
	require.NoError(t, restarted.Save(ctx, got))
	assert.Equal(t, map[string]int{AccessRecordPartName("my-cluster", AccessRecordPart(changedID)): 1}, counter.take(), "one part written")
}

// TestRecordPartTooLargeIsRefused: a part past what a ConfigMap may hold is not sent,
// and only its resources are unsaved.
func TestRecordPartTooLargeIsRefused(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	store := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "my-cluster", Key: recordKey(secretKey.Token())}
	records := manyRecords(3000)
	huge := strings.Repeat("f", maxRecordPartBytes)
	var hugeID string
	for id := range records {
		hugeID = id
		break
	}
	records[hugeID] = AccessRecord{ResourceID: 1, Governed: true, Password: &SecretRecord{Digest: huge, ID: 1}}
	err := store.Save(ctx, records)
	var partial *AccessRecordsNotSaved
	require.ErrorAs(t, err, &partial)
	assert.Contains(t, partial.ByNiceID[hugeID].Error(), "more than the 1048576 a ConfigMap may hold")
	for id := range partial.ByNiceID {
		assert.Equal(t, AccessRecordPart(hugeID), AccessRecordPart(id), "only the resources of the part that is too large")
	}
	got, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, got, len(records)-len(partial.ByNiceID), "the other parts are saved")
}

// TestOneRecordPartFailingDelaysOnlyItsResources: while one part of the record cannot be
// written, the Apply of an object whose resource it holds fails (retried, with a
// SinkUnavailable Warning), and the others' succeed; once it can, it is saved.
func TestOneRecordPartFailingDelaysOnlyItsResources(t *testing.T) {
	shop, blog := ingress("shop", "web"), ingress("blog", "web")
	const shopHost = "app.example.com"
	blogHost := ""
	shopPart := AccessRecordPart(niceID("default", markOf(shop, shopHost, "")))
	for i := 0; blogHost == ""; i++ { // a host whose resource is in another part
		h := fmt.Sprintf("blog%d.example.com", i)
		if AccessRecordPart(niceID("default", markOf(blog, h, ""))) != shopPart {
			blogHost = h
		}
	}
	var mu sync.Mutex
	failing := AccessRecordPartName("default", shopPart)
	var counter writeCounter
	c := fake.NewClientBuilder().WithInterceptorFuncs(counter.funcs(func(name string) error {
		mu.Lock()
		defer mu.Unlock()
		if name == failing {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, name, errors.New("not granted"))
		}
		return nil
	})).Build()

	w := newWorld(t, accessOrg)
	w.accessRecords = &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "default", Key: recordKey(secretKey.Token())}
	w.restart("default")
	shopRoute := protected(web(shop, shopHost, 8080), true, everything())
	blogRoute := protected(web(blog, blogHost, 8080), true, everything())

	o := w.reconcile(shop, shopRoute)
	require.Error(t, o.err, "its part cannot be written")
	assert.True(t, plugin.IsUnreachable(o.err), "retried, and its owner told")
	assert.Contains(t, o.err.Error(), failing)
	assert.NotZero(t, w.policyOn(shopHost).PasswordID, "what Pangolin holds is as applied")

	w.converge(blog, blogRoute) // another part: saved, though the shop's is still unsaved
	w.converge(blog, blogRoute)

	mu.Lock()
	failing = ""
	mu.Unlock()
	w.converge(shop, shopRoute)
	counter.take()
	got, err := w.accessRecords.Load(w.ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{w.resourceOn(shopHost).NiceID, w.resourceOn(blogHost).NiceID}, keys(got))

	secrets := w.fake.SecretWrites()
	w.restart("default")
	w.converge(shop, shopRoute)
	w.converge(blog, blogRoute)
	assert.Equal(t, secrets, w.fake.SecretWrites(), "the record survived: no secret written again")
	assert.Empty(t, counter.take(), "nothing written at steady state")
}

func keys(m map[string]AccessRecord) []string { return slices.Collect(maps.Keys(m)) }

// TestRecordOfEarlierReleasesIsMoved: the single ConfigMap of earlier releases gives its
// secrets' digests (no secret is written again), never "governed"; the parts take them
// at the first save, and it is deleted.
func TestRecordOfEarlierReleasesIsMoved(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	shop := ingress("shop", "web")
	const host = "app.example.com"
	w := newWorld(t, accessOrg)
	rt := protected(web(shop, host, 8080), true, everything())
	w.converge(shop, rt) // with the record in memory: what an earlier release saved
	earlier, err := w.accessRecords.Load(w.ctx)
	require.NoError(t, err)
	legacy := map[string]string{}
	for id, r := range earlier {
		b, err := sealRecord(nil, id, r) // its JSON; the MAC is dropped below
		require.NoError(t, err)
		legacy[id] = b[:strings.LastIndex(b, `,"mac":`)] + "}"
	}
	putConfigMap(t, c, AccessRecordConfigMapName("default"), legacy)

	w.accessRecords = &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: recordNamespace, OwnerID: "default", Key: recordKey(secretKey.Token())}
	secrets := w.fake.SecretWrites()
	w.restart("default")
	loaded, err := w.accessRecords.Load(w.ctx)
	require.NoError(t, err)
	for _, r := range loaded {
		assert.False(t, r.Governed, "an entry without a MAC governs nothing")
	}
	w.converge(shop, rt)
	assert.Equal(t, secrets, w.fake.SecretWrites(), "the digests were taken: no secret written again")

	got, err := w.accessRecords.Load(w.ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	for _, r := range got {
		assert.True(t, r.Governed, "governed again by its policy's write")
	}
	var cm corev1.ConfigMap
	err = c.Get(w.ctx, client.ObjectKey{Namespace: recordNamespace, Name: AccessRecordConfigMapName("default")}, &cm)
	assert.True(t, apierrors.IsNotFound(err), "the ConfigMap of earlier releases is deleted: %v", err)
}
