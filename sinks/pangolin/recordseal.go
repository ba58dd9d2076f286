package pangolin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// The access record is authenticated entry by entry: whoever may update its ConfigMaps
// but does not hold the API key cannot mark a resource governed (and so have PIC strip
// the passwords, PIN codes and rules set by hand on a resource no policy governs), nor
// move an entry to another resource. A MAC cannot tell a current entry from an earlier
// one PIC sealed for the same resource: restoring an old entry (a replay) is kept out
// by the RBAC on the ConfigMaps alone (docs/access-control.md).

// recordKey derives the key that seals the access record from the API key: a key of its
// own, so that no MAC of the record is ever a secret's digest (route.DigestKey).
func recordKey(apiKey string) []byte {
	mac := hmac.New(sha256.New, []byte(apiKey))
	_, _ = mac.Write([]byte("pangolin-ingress-controller access-record key v1"))
	return mac.Sum(nil)
}

// sealedRecord is an entry as the ConfigMap holds it: the record and its MAC.
type sealedRecord struct {
	AccessRecord
	MAC string `json:"mac"`
}

// recordMAC authenticates a record's canonical JSON for one niceId: an entry copied under
// another key does not verify.
func recordMAC(key []byte, niceID string, canonical []byte) []byte {
	mac := hmac.New(sha256.New, key)
	_, _ = mac.Write([]byte("pangolin-ingress-controller access-record v1\x00"))
	_, _ = mac.Write([]byte(niceID)) // a ConfigMap key: no NUL in it
	_, _ = mac.Write([]byte{0})
	_, _ = mac.Write(canonical)
	return mac.Sum(nil)
}

// sealRecord is the value a ConfigMap holds for r under niceID. The same record gives
// the same value: an unchanged part is not written.
func sealRecord(key []byte, niceID string, r AccessRecord) (string, error) {
	canonical, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(sealedRecord{AccessRecord: r, MAC: hex.EncodeToString(recordMAC(key, niceID, canonical))})
	return string(b), err
}

// errRecordNotVerified is an entry whose MAC is missing or wrong.
var errRecordNotVerified = errors.New("the entry's MAC does not verify")

// openRecord is the record a ConfigMap holds under niceID, once verified. The MAC is
// checked against the record as decoded, re-encoded: what it covers is what PIC reads.
func openRecord(key []byte, niceID, value string) (AccessRecord, error) {
	var s sealedRecord
	if err := json.Unmarshal([]byte(value), &s); err != nil {
		return AccessRecord{}, err
	}
	got, err := hex.DecodeString(s.MAC)
	if err != nil || len(got) != sha256.Size {
		return AccessRecord{}, errRecordNotVerified
	}
	canonical, err := json.Marshal(s.AccessRecord)
	if err != nil {
		return AccessRecord{}, err
	}
	if !hmac.Equal(got, recordMAC(key, niceID, canonical)) {
		return AccessRecord{}, errRecordNotVerified
	}
	return s.AccessRecord, nil
}

// legacyRecord is what PIC takes of an entry of the earlier single ConfigMap, which has
// no MAC: the secrets' digests and ids (a digest is keyed with the API key, so a forged
// one never matches a value and only causes a rewrite), never "governed".
func legacyRecord(value string) (AccessRecord, bool) {
	var r AccessRecord
	if err := json.Unmarshal([]byte(value), &r); err != nil {
		return AccessRecord{}, false
	}
	r.Governed = false
	if r.Password == nil && r.Pincode == nil && r.HeaderAuth == nil {
		return AccessRecord{}, false // nothing to keep
	}
	return r, true
}
