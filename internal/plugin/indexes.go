package plugin

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// IndexStore keeps the adapters' cache indexes (Index) in the cache's own informers,
// one key per value, and answers a List by one of them from there. The manager plugs it
// into controller-runtime through two of its options: cache.Options.NewInformer (the
// informers are client-go's, made here with the indexes of their kind) and
// manager.Options.NewClient (the manager's client, whose List by an indexed field
// reads the index).
//
// controller-runtime's FieldIndexer would keep each value of a namespaced object twice,
// under its namespace and under "every namespace", so that a List in one namespace can
// use the index. PIC's index values carry the namespace of what they name and PIC reads
// them across namespaces, so the second key would only cost memory: at 5000 Ingresses
// those keys were a sixth of PIC's live heap (docs/performance.md). A List by an index in
// one namespace still works here: the objects found are filtered by namespace.
type IndexStore struct {
	scheme *runtime.Scheme

	mu sync.Mutex
	// indexes are the registered indexes by the reflect type of their object.
	indexes map[reflect.Type][]Index
	// itemType is the type of the objects of a list type, for the registered kinds.
	itemType map[reflect.Type]reflect.Type
	// kinds are the registered kinds by the type of their objects.
	kinds map[reflect.Type]schema.GroupVersionKind
	// informers are the cache's informers of the indexed kinds, by the type of their
	// objects: one, or one per namespace when the cache watches a few.
	informers map[reflect.Type][]toolscache.SharedIndexInformer
	// cache starts an informer nothing has asked for yet and waits for its sync.
	cache cache.Informers
}

// NewIndexStore returns an empty store; scheme names the kinds of the lists it answers.
func NewIndexStore(scheme *runtime.Scheme) *IndexStore {
	return &IndexStore{
		scheme:    scheme,
		indexes:   map[reflect.Type][]Index{},
		itemType:  map[reflect.Type]reflect.Type{},
		kinds:     map[reflect.Type]schema.GroupVersionKind{},
		informers: map[reflect.Type][]toolscache.SharedIndexInformer{},
	}
}

// indexName is the name of an index in an informer's indexer.
func indexName(field string) string { return "pic:" + field }

// oneKeyPerValue is idx as client-go indexes it: the values themselves.
func oneKeyPerValue(idx Index) toolscache.IndexFunc {
	return func(obj any) ([]string, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index %s: %T is not a Kubernetes object", idx.Field, obj)
		}
		return idx.Func(o), nil
	}
}

// NewInformer is cache.Options.NewInformer: client-go's informer, with the indexes of
// its kind registered so far.
func (s *IndexStore) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := reflect.TypeOf(obj)
	all := toolscache.Indexers{}
	for name, fn := range indexers {
		all[name] = fn
	}
	for _, idx := range s.indexes[t] {
		all[indexName(idx.Field)] = oneKeyPerValue(idx)
	}
	informer := toolscache.NewSharedIndexInformer(lw, obj, resync, all)
	s.informers[t] = append(s.informers[t], informer)
	return informer
}

// Add registers indexes, before the cache starts, and makes the cache start the
// informers of their kinds with it (as controller-runtime's IndexField does).
func (s *IndexStore) Add(ctx context.Context, informers cache.Informers, indexes []Index) error {
	s.mu.Lock()
	s.cache = informers
	for _, idx := range indexes {
		if err := s.addLocked(idx); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()
	for _, idx := range indexes {
		if _, err := informers.GetInformer(ctx, idx.Object, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("index %T by %s: %w", idx.Object, idx.Field, err)
		}
	}
	return nil
}

func (s *IndexStore) addLocked(idx Index) error {
	switch idx.Object.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadata:
		// Their informers share one Go type across kinds: the store tells kinds apart
		// by type.
		return fmt.Errorf("index %T by %s: only typed objects are indexed", idx.Object, idx.Field)
	}
	t := reflect.TypeOf(idx.Object)
	for _, known := range s.indexes[t] {
		if known.Field == idx.Field {
			return fmt.Errorf("index %T by %s: declared twice", idx.Object, idx.Field)
		}
	}
	gvk, err := apiutil.GVKForObject(idx.Object, s.scheme)
	if err != nil {
		return fmt.Errorf("index %T by %s: %w", idx.Object, idx.Field, err)
	}
	list, err := s.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return fmt.Errorf("index %T by %s: %w", idx.Object, idx.Field, err)
	}
	s.indexes[t] = append(s.indexes[t], idx)
	s.itemType[reflect.TypeOf(list)] = t
	s.kinds[t] = gvk
	// An informer made before the index was declared gets it now.
	for _, informer := range s.informers[t] {
		if err := informer.AddIndexers(toolscache.Indexers{indexName(idx.Field): oneKeyPerValue(idx)}); err != nil {
			return fmt.Errorf("index %T by %s: %w", idx.Object, idx.Field, err)
		}
	}
	return nil
}

// Client is c, whose List by one indexed field (client.MatchingFields{Field: value})
// reads the store; every other call goes to c.
func (s *IndexStore) Client(c client.Client) client.Client {
	return &indexedClient{Client: c, store: s}
}

type indexedClient struct {
	client.Client
	store *IndexStore
}

func (c *indexedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	idx, value, ok, err := c.store.lookup(list, o)
	if err != nil {
		return err
	}
	if !ok {
		return c.Client.List(ctx, list, opts...)
	}
	return c.store.list(ctx, list, idx, value, o)
}

// lookup finds the index a List asks for: one exact field requirement, on a field
// indexed for the list's kind. A List by a field that is not one of the store's
// indexes is not the store's (ok false).
func (s *IndexStore) lookup(list client.ObjectList, o *client.ListOptions) (Index, string, bool, error) {
	if o.FieldSelector == nil {
		return Index{}, "", false, nil
	}
	s.mu.Lock()
	item, known := s.itemType[reflect.TypeOf(list)]
	indexes := s.indexes[item]
	s.mu.Unlock()
	if !known {
		return Index{}, "", false, nil
	}
	reqs := o.FieldSelector.Requirements()
	for _, idx := range indexes {
		i := slices.IndexFunc(reqs, func(r fields.Requirement) bool { return r.Field == idx.Field })
		if i < 0 {
			continue
		}
		req := reqs[i]
		if len(reqs) > 1 {
			return Index{}, "", false, fmt.Errorf("list %T by %s: an indexed list takes no other field", list, req.Field)
		}
		if req.Operator != selection.Equals && req.Operator != selection.DoubleEquals {
			return Index{}, "", false, fmt.Errorf("list %T by %s: only an exact match is indexed", list, req.Field)
		}
		if o.Limit > 0 || o.Continue != "" {
			return Index{}, "", false, fmt.Errorf("list %T by %s: an indexed list is never paged", list, req.Field)
		}
		return idx, req.Value, true, nil
	}
	return Index{}, "", false, nil
}

// list fills list with the objects whose index idx holds value, in the namespace and
// with the labels o asks for, as copies unless o allows the cache's own objects.
func (s *IndexStore) list(ctx context.Context, list client.ObjectList, idx Index, value string, o *client.ListOptions) error {
	s.mu.Lock()
	informers := s.cache
	s.mu.Unlock()
	if informers == nil {
		return fmt.Errorf("list %T by %s: the index store has no cache", list, idx.Field)
	}
	// The cache makes and starts the kind's informers if nothing has yet, and waits for
	// their sync, as a List through the cache does.
	if _, err := informers.GetInformer(ctx, idx.Object); err != nil {
		return err
	}
	s.mu.Lock()
	kindInformers := s.informers[reflect.TypeOf(idx.Object)]
	gvk := s.kinds[reflect.TypeOf(idx.Object)]
	s.mu.Unlock()
	// An answer from an informer that has not synced, or has stopped, could leave out
	// what exists (an AccessPolicy, a claimant of a host): an error makes the reconcile
	// retry instead of acting on it.
	if len(kindInformers) == 0 {
		return fmt.Errorf("list %T by %s: %w", list, idx.Field, &cache.ErrCacheNotStarted{})
	}
	for _, informer := range kindInformers {
		if !informer.HasSynced() || informer.IsStopped() {
			return fmt.Errorf("list %T by %s: the cache of %s is not running", list, idx.Field, gvk.Kind)
		}
	}
	copies := o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy
	var out []runtime.Object
	for _, informer := range kindInformers {
		found, err := informer.GetIndexer().ByIndex(indexName(idx.Field), value)
		if err != nil {
			return err
		}
		for _, item := range found {
			obj, ok := item.(client.Object)
			if !ok {
				return fmt.Errorf("cache holds %T, not a Kubernetes object", item)
			}
			if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
				continue
			}
			if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
				continue
			}
			if copies {
				// As controller-runtime's cache reader: a copy carries its kind.
				c := obj.DeepCopyObject()
				c.GetObjectKind().SetGroupVersionKind(gvk)
				out = append(out, c)
			} else {
				out = append(out, obj)
			}
		}
	}
	return meta.SetList(list, out)
}
