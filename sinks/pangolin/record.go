package pangolin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// AccessRecord is what the sink keeps, durably, of the access it applied to one
// Pangolin resource: whether an AccessPolicy governs it, and for each secret the HMAC
// digest of the value written (route.Secret.Digest, keyed with route.DigestKey of the
// API key) and the id Pangolin showed right after the write. It holds no secret: the
// digest cannot be reversed without the API key, which can write the secrets anyway.
type AccessRecord struct {
	// ResourceID is the Pangolin resource the record is about: a resource deleted and
	// created again under the same niceId starts with no record.
	ResourceID int `json:"resourceId"`
	// Governed: an AccessPolicy was applied to the resource, and what it wrote is still
	// there; detached, the policy's grants and secrets are removed.
	Governed   bool          `json:"governed"`
	Password   *SecretRecord `json:"password,omitempty"`
	Pincode    *SecretRecord `json:"pincode,omitempty"`
	HeaderAuth *SecretRecord `json:"headerAuth,omitempty"`
}

// SecretRecord is one secret PIC wrote: its digest and the id of the row Pangolin
// created for it (0 when the write's id could not be read back).
type SecretRecord struct {
	Digest string `json:"digest"`
	ID     int    `json:"id"`
}

func (r AccessRecord) clone() AccessRecord {
	c := r
	for _, p := range []**SecretRecord{&c.Password, &c.Pincode, &c.HeaderAuth} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return c
}

// RecordStore keeps the access records across restarts: the sink loads them once, at
// its first refresh, and saves them all after an Apply that changed one. Only the
// leader writes.
type RecordStore interface {
	Load(ctx context.Context) (map[string]AccessRecord, error)
	Save(ctx context.Context, records map[string]AccessRecord) error
	// String says where the records are, for logs and errors.
	String() string
}

// MemoryRecord keeps the records in memory: for render, and for a PIC that runs
// outside a cluster (each secret is then written again once after a restart).
type MemoryRecord struct {
	mu      sync.Mutex
	records map[string]AccessRecord
}

// Load implements RecordStore.
func (m *MemoryRecord) Load(context.Context) (map[string]AccessRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneRecords(m.records), nil
}

// Save implements RecordStore.
func (m *MemoryRecord) Save(_ context.Context, records map[string]AccessRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = cloneRecords(records)
	return nil
}

func (m *MemoryRecord) String() string { return "memory (lost at restart)" }

func cloneRecords(in map[string]AccessRecord) map[string]AccessRecord {
	out := make(map[string]AccessRecord, len(in))
	for k, v := range in {
		out[k] = v.clone()
	}
	return out
}

// ConfigMapRecord keeps the records in a ConfigMap of PIC's own namespace, one data
// key per resource niceId, each value the JSON of an AccessRecord. It needs get and
// update on that ConfigMap, and create on ConfigMaps in the namespace (the first save).
type ConfigMapRecord struct {
	// Reader reads past the cache: PIC does not watch ConfigMaps.
	Reader    client.Reader
	Writer    client.Writer
	Namespace string
	Name      string
}

// RecordConfigMapName is the ConfigMap of the access records of an owner id.
func RecordConfigMapName(ownerID string) string { return "pic-access-" + ownerID }

func (c *ConfigMapRecord) String() string {
	return fmt.Sprintf("ConfigMap %s/%s", c.Namespace, c.Name)
}

// Load implements RecordStore: no ConfigMap is no record.
func (c *ConfigMapRecord) Load(ctx context.Context) (map[string]AccessRecord, error) {
	var cm corev1.ConfigMap
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return map[string]AccessRecord{}, nil
	case apierrors.IsForbidden(err):
		// An install whose Role names another owner id's record: direct mode goes on
		// (a host without a policy needs no record), and saying so is enough. A policy
		// with a secret then fails to save its record, loudly, and its secrets are
		// written again once after each restart.
		log.FromContext(ctx).WithName("pangolin").Error(err, "cannot read the access record: grant get and update on this ConfigMap (config/rbac/direct names it after the owner id); until then a restart writes each policy's secrets again once", "record", c.String())
		return map[string]AccessRecord{}, nil
	case err != nil:
		return nil, fmt.Errorf("read the access record %s (PIC needs get on it): %w", c, err)
	}
	out := make(map[string]AccessRecord, len(cm.Data))
	for key, value := range cm.Data {
		var r AccessRecord
		if err := json.Unmarshal([]byte(value), &r); err != nil {
			// An entry edited by hand: without it the secrets are written again once.
			continue
		}
		out[key] = r
	}
	return out, nil
}

// Save implements RecordStore: the ConfigMap is replaced by records.
func (c *ConfigMapRecord) Save(ctx context.Context, records map[string]AccessRecord) error {
	data := make(map[string]string, len(records))
	for _, key := range slices.Sorted(maps.Keys(records)) {
		b, err := json.Marshal(records[key])
		if err != nil {
			return err
		}
		data[key] = string(b)
	}
	var cm corev1.ConfigMap
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name, Labels: map[string]string{pic.LabelManagedBy: pic.ManagedByValue}},
			Data:       data,
		}
		if err := c.Writer.Create(ctx, &cm); err != nil {
			return fmt.Errorf("create the access record %s (PIC needs create on ConfigMaps in %s): %w", c, c.Namespace, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read the access record %s (PIC needs get on it): %w", c, err)
	}
	cm.Data = data
	if err := c.Writer.Update(ctx, &cm); err != nil {
		return fmt.Errorf("update the access record %s (PIC needs update on it): %w", c, err)
	}
	return nil
}

// serviceAccountNamespace is where the kubelet says which namespace the pod runs in.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is PIC's namespace: $POD_NAMESPACE, else its ServiceAccount's; "" outside
// a cluster.
func ownNamespace() string {
	if ns := strings.TrimSpace(os.Getenv("POD_NAMESPACE")); ns != "" {
		return ns
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
