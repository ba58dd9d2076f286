package pangolin

import (
	"context"
	"reflect"
	"sync"
)

// accessRecords are the durable records of what access policies wrote, by niceId
// (AccessRecord), as this process holds them: loaded once from their store before the
// first refresh reads Pangolin, changed by the writes, and saved after an Apply that
// changed one. Their lock is their own: it is taken inside the mirror's, never around it.
type accessRecords struct {
	store AccessRecordStore
	// saving serializes saves: a snapshot saved late never overwrites a newer one.
	saving sync.Mutex

	mu       sync.Mutex
	byNiceID map[string]AccessRecord
	loaded   bool
	// dirty: changed since the last save that succeeded.
	dirty bool
}

func newAccessRecords(store AccessRecordStore) *accessRecords {
	return &accessRecords{store: store, byNiceID: map[string]AccessRecord{}}
}

// governed reports whether the record says a policy governs the resource.
func (r *accessRecords) governed(niceID string, resourceID int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.byNiceID[niceID]
	return ok && rec.Governed && rec.ResourceID == resourceID
}

// get is a resource's record, if it has one.
func (r *accessRecords) get(niceID string) (AccessRecord, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.byNiceID[niceID]
	return rec, ok
}

// put stores a resource's access record, to be saved. drop removes it.
func (r *accessRecords) put(niceID string, rec AccessRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if have, ok := r.byNiceID[niceID]; ok && reflect.DeepEqual(have, rec) {
		return // unchanged: nothing to save
	}
	r.byNiceID[niceID] = rec.clone()
	r.dirty = true
}

func (r *accessRecords) drop(niceID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byNiceID[niceID]; ok {
		delete(r.byNiceID, niceID)
		r.dirty = true
	}
}

// save saves the records if they changed since the last save. A failed save keeps them
// dirty: the next one saves them again, and meanwhile memory holds them. The error is
// the store's.
func (r *accessRecords) save(ctx context.Context) error {
	r.saving.Lock()
	defer r.saving.Unlock()
	r.mu.Lock()
	if !r.dirty {
		r.mu.Unlock()
		return nil
	}
	snapshot := cloneRecords(r.byNiceID)
	r.dirty = false
	r.mu.Unlock()
	err := r.store.Save(ctx, snapshot)
	if err != nil {
		r.mu.Lock()
		r.dirty = true
		r.mu.Unlock()
	}
	return err
}

// load loads the records once, before the first refresh reads Pangolin.
func (r *accessRecords) load(ctx context.Context) error {
	r.mu.Lock()
	loaded := r.loaded
	r.mu.Unlock()
	if loaded {
		return nil
	}
	records, err := r.store.Load(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range r.byNiceID { // written before the load finished: this process's win
		records[k] = v
	}
	r.byNiceID, r.loaded = records, true
	return nil
}
