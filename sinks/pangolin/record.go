package pangolin

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
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

// AccessRecordStore keeps the access records across restarts: the sink loads them once,
// at its first refresh, and saves them all after an Apply that changed one. Only the
// leader writes.
type AccessRecordStore interface {
	Load(ctx context.Context) (map[string]AccessRecord, error)
	// Save brings the stored records to records. A store kept in parts writes only the
	// parts that changed; when some cannot be written it returns an
	// *AccessRecordsNotSaved, which names the resources whose change is not durable:
	// the others' is.
	Save(ctx context.Context, records map[string]AccessRecord) error
	// String says where the records are, for logs and errors.
	String() string
}

// MemoryAccessRecords keeps the records in memory: for render, and for a PIC that runs
// outside a cluster (each secret is then written again once after a restart).
type MemoryAccessRecords struct {
	mu      sync.Mutex
	records map[string]AccessRecord
}

// Load implements AccessRecordStore.
func (m *MemoryAccessRecords) Load(context.Context) (map[string]AccessRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneRecords(m.records), nil
}

// Save implements AccessRecordStore.
func (m *MemoryAccessRecords) Save(_ context.Context, records map[string]AccessRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = cloneRecords(records)
	return nil
}

func (m *MemoryAccessRecords) String() string { return "memory (lost at restart)" }

func cloneRecords(in map[string]AccessRecord) map[string]AccessRecord {
	out := make(map[string]AccessRecord, len(in))
	for k, v := range in {
		out[k] = v.clone()
	}
	return out
}

// AccessRecordsNotSaved is a Save that wrote some of the records and not others: the
// changes to the records of the resources it names are not durable yet, the others'
// are.
type AccessRecordsNotSaved struct {
	// ByNiceID says, for each resource whose change was not saved, why.
	ByNiceID map[string]error
}

func (e *AccessRecordsNotSaved) Error() string {
	ids := slices.Sorted(maps.Keys(e.ByNiceID))
	if len(ids) == 0 {
		return "no access record left unsaved"
	}
	return fmt.Sprintf("the access record of %d Pangolin resources is not saved (%s first): %v", len(ids), ids[0], e.ByNiceID[ids[0]])
}

// AccessRecordParts is how many ConfigMaps the records are spread over, by a stable
// hash of the niceId. At about 450 bytes for a resource with every secret, 10,000
// resources fill each part to about 300 KiB, and the parts hold about 35,000 before one
// reaches the 1 MiB a ConfigMap may hold. Fixed, so that the RBAC can name every part.
const AccessRecordParts = 16

// maxRecordPartBytes is what a ConfigMap's data may hold, keys and values together:
// a part beyond it is refused before it is sent, and only its resources wait.
const maxRecordPartBytes = 1 << 20

// ConfigMapAccessRecords keeps the records in ConfigMaps of PIC's own namespace, spread
// over AccessRecordParts parts (AccessRecordPartName) by a stable hash of the niceId:
// one data key per resource niceId, each value the JSON of an AccessRecord sealed with
// a MAC (sealRecord). An entry whose MAC does not verify is ignored, so that no one but
// the holder of the API key can mark a resource governed.
//
// A save writes only the parts that changed since they were last read or written, and a
// part that cannot be written delays only the resources it holds
// (AccessRecordsNotSaved).
//
// The single ConfigMap of earlier releases (AccessRecordConfigMapName) is read too: its
// entries carry no MAC, so only their secrets' digests and ids are taken (each digest
// is keyed with the API key, and a forged one only causes a rewrite), never "governed";
// once the parts hold them, it is deleted.
//
// It needs get and update on the parts, get and delete on the earlier ConfigMap, and
// create on ConfigMaps in the namespace (the first save of a part).
type ConfigMapAccessRecords struct {
	// Reader reads past the cache: PIC does not watch ConfigMaps.
	Reader    client.Reader
	Writer    client.Writer
	Namespace string
	OwnerID   string
	// Key authenticates the entries: recordKey of the API key.
	Key []byte

	mu sync.Mutex
	// stored is each part's data as last read or written; nil for a part not there.
	stored [AccessRecordParts]map[string]string
	// legacy: the earlier single ConfigMap was read, and its entries are not in the
	// parts yet.
	legacy bool
}

// AccessRecordConfigMapName is the single ConfigMap that held the access records of an
// owner id in earlier releases; AccessRecordPartName names the ConfigMaps that hold
// them now.
func AccessRecordConfigMapName(ownerID string) string { return "pic-access-" + ownerID }

// AccessRecordPartName is the ConfigMap of part n of the access records of an owner id.
// The dot cannot be part of an owner id, so that no owner id's part is another owner
// id's ConfigMap.
func AccessRecordPartName(ownerID string, n int) string {
	return AccessRecordConfigMapName(ownerID) + "." + strconv.Itoa(n)
}

// AccessRecordPart is the part that holds a resource's record: a hash of its niceId,
// stable across releases and restarts.
func AccessRecordPart(niceID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(niceID))
	return int(h.Sum32() % AccessRecordParts)
}

func (c *ConfigMapAccessRecords) String() string {
	return fmt.Sprintf("ConfigMaps %s/%s to .%d", c.Namespace, AccessRecordPartName(c.OwnerID, 0), AccessRecordParts-1)
}

// Load implements AccessRecordStore: no ConfigMap is no record.
func (c *ConfigMapAccessRecords) Load(ctx context.Context) (map[string]AccessRecord, error) {
	if len(c.Key) == 0 {
		return nil, errors.New("read the access record: no key to verify it")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	logger := log.FromContext(ctx).WithName("pangolin")
	out := map[string]AccessRecord{}

	legacy, _, err := c.read(ctx, AccessRecordConfigMapName(c.OwnerID))
	if err != nil {
		return nil, err
	}
	c.legacy = legacy != nil
	if legacy != nil {
		for niceID, value := range legacy.Data {
			if r, ok := legacyRecord(value); ok {
				out[niceID] = r
			}
		}
	}

	var forbidden []string
	var denial error
	for n := range AccessRecordParts {
		name := AccessRecordPartName(c.OwnerID, n)
		cm, denied, err := c.read(ctx, name)
		if err != nil {
			return nil, err
		}
		if denied != nil {
			forbidden, denial = append(forbidden, name), denied
		}
		c.stored[n] = nil
		if cm == nil {
			continue
		}
		c.stored[n] = maps.Clone(cm.Data)
		var invalid []string
		for niceID, value := range cm.Data {
			r, err := openRecord(c.Key, niceID, value)
			if err != nil || AccessRecordPart(niceID) != n {
				invalid = append(invalid, niceID)
				continue
			}
			out[niceID] = r
		}
		if len(invalid) > 0 {
			c.warnInvalid(ctx, cm, invalid)
		}
	}
	if len(forbidden) > 0 {
		// An install whose Role names other ConfigMaps: direct mode goes on (a host
		// without a policy needs no record), and saying so is enough. A policy then
		// fails to save its record, loudly, and its secrets are written again once after
		// each restart.
		logger.Error(denial, "cannot read the access record: grant get and update on these ConfigMaps (config/rbac/direct names them after the owner id); until then a restart writes each policy's secrets again once",
			"namespace", c.Namespace, "configmaps", forbidden)
	}
	return out, nil
}

// read gets a ConfigMap of the record: nil when it does not exist, or when PIC may not
// read it (denied says why).
func (c *ConfigMapAccessRecords) read(ctx context.Context, name string) (_ *corev1.ConfigMap, denied, _ error) {
	var cm corev1.ConfigMap
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, nil
	case apierrors.IsForbidden(err):
		return nil, err, nil
	case err != nil:
		return nil, nil, fmt.Errorf("read the access record %s/%s (PIC needs get on it): %w", c.Namespace, name, err)
	}
	return &cm, nil, nil
}

// warnInvalid says, once per load, that a part holds entries that fail verification:
// forged, edited by hand, or sealed with another API key. It names them, by niceId; the
// entries themselves hold no secret, but are not repeated either.
func (c *ConfigMapAccessRecords) warnInvalid(ctx context.Context, cm *corev1.ConfigMap, invalid []string) {
	slices.Sort(invalid)
	note := fmt.Sprintf("%d entries of the access record fail verification (forged, edited, or written with another API key) and are ignored: PIC strips nothing from a resource no valid entry governs, and records each again when its AccessPolicy is next applied: %s",
		len(invalid), strings.Join(invalid[:min(len(invalid), maxNamed)], ", "))
	if len(invalid) > maxNamed {
		note += ", …"
	}
	logger := log.FromContext(ctx).WithName("pangolin")
	logger.Info("access record entries ignored", "reason", pic.ReasonAccessRecordInvalid, "configmap", client.ObjectKeyFromObject(cm).String(), "message", note)
	now := time.Now()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, GenerateName: cm.Name + "."},
		EventTime:  metav1.NewMicroTime(now),
		Regarding: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name,
			UID: cm.UID, ResourceVersion: cm.ResourceVersion},
		Type: corev1.EventTypeWarning, Reason: pic.ReasonAccessRecordInvalid, Action: "Load",
		Note:                truncateNote(note),
		ReportingController: pic.ManagedByValue, ReportingInstance: reportingInstance(),
	}
	if err := c.Writer.Create(ctx, ev); err != nil {
		logger.V(1).Info("cannot write the event", "reason", pic.ReasonAccessRecordInvalid, "error", err.Error())
	}
}

// maxNamed is how many niceIds a note names: the log line and the event stay short.
const maxNamed = 10

// maxNoteBytes is the longest note the API server accepts in an event.
const maxNoteBytes = 1024

func truncateNote(note string) string {
	if len(note) <= maxNoteBytes {
		return note
	}
	cut := maxNoteBytes - len("…")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "…"
}

// reportingInstance names this PIC in its events: its Pod's name in a cluster.
func reportingInstance() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return pic.ManagedByValue + "-" + host
}

// Save implements AccessRecordStore: the parts are replaced by records, each part only
// if it changed. A part that cannot be written leaves its resources' changes unsaved
// (AccessRecordsNotSaved) and the other parts are saved all the same.
func (c *ConfigMapAccessRecords) Save(ctx context.Context, records map[string]AccessRecord) error {
	if len(c.Key) == 0 {
		return errors.New("save the access record: no key to seal it")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts [AccessRecordParts]map[string]string
	for niceID, r := range records {
		value, err := sealRecord(c.Key, niceID, r)
		if err != nil {
			return fmt.Errorf("seal the access record of %s: %w", niceID, err)
		}
		n := AccessRecordPart(niceID)
		if parts[n] == nil {
			parts[n] = map[string]string{}
		}
		parts[n][niceID] = value
	}
	unsaved := map[string]error{}
	for n := range AccessRecordParts {
		if maps.Equal(parts[n], c.stored[n]) {
			continue // unchanged: no write at steady state
		}
		if err := c.write(ctx, AccessRecordPartName(c.OwnerID, n), parts[n]); err != nil {
			for _, niceID := range changed(c.stored[n], parts[n]) {
				unsaved[niceID] = err
			}
			continue
		}
		c.stored[n] = parts[n]
	}
	if len(unsaved) > 0 {
		return &AccessRecordsNotSaved{ByNiceID: unsaved}
	}
	if c.legacy {
		c.dropLegacy(ctx)
	}
	return nil
}

// changed are the niceIds whose entry differs between two versions of a part's data.
func changed(before, after map[string]string) []string {
	var out []string
	for niceID, v := range after {
		if before[niceID] != v {
			out = append(out, niceID)
		}
	}
	for niceID := range before {
		if _, ok := after[niceID]; !ok {
			out = append(out, niceID)
		}
	}
	return out
}

// write replaces a part's data, creating the part if it does not exist.
func (c *ConfigMapAccessRecords) write(ctx context.Context, name string, data map[string]string) error {
	size := 0
	for k, v := range data {
		size += len(k) + len(v)
	}
	if size > maxRecordPartBytes {
		return fmt.Errorf("the access record %s/%s would hold %d bytes, more than the %d a ConfigMap may hold", c.Namespace, name, size, maxRecordPartBytes)
	}
	var cm corev1.ConfigMap
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: map[string]string{pic.LabelManagedBy: pic.ManagedByValue}},
			Data:       data,
		}
		if err := c.Writer.Create(ctx, &cm); err != nil {
			return fmt.Errorf("create the access record %s/%s (PIC needs create on ConfigMaps in %s): %w", c.Namespace, name, c.Namespace, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read the access record %s/%s (PIC needs get on it): %w", c.Namespace, name, err)
	}
	cm.Data = data
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels[pic.LabelManagedBy] = pic.ManagedByValue
	if err := c.Writer.Update(ctx, &cm); err != nil {
		return fmt.Errorf("update the access record %s/%s (PIC needs update on it): %w", c.Namespace, name, err)
	}
	return nil
}

// dropLegacy deletes the earlier single ConfigMap once the parts hold its entries. A
// failure is only logged: what it still holds is read again, harmlessly, at the next
// load.
func (c *ConfigMapAccessRecords) dropLegacy(ctx context.Context) {
	c.legacy = false
	name := AccessRecordConfigMapName(c.OwnerID)
	err := c.Writer.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}})
	if err != nil && !apierrors.IsNotFound(err) {
		log.FromContext(ctx).WithName("pangolin").Error(err, "cannot delete the access record of earlier releases, now held by its parts: delete it by hand",
			"configmap", c.Namespace+"/"+name)
	}
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
