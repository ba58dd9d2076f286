package pangolinapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Pangolin answers some values it cannot take with a 5xx, as it answers an outage: a
// skipToIdpId naming no identity provider gets a 500 (reference section 18). Retried as
// an outage, such a write is sent forever and its object reads "cannot publish now".
// The client tells the two apart: a write whose 500 repeats for the same request while
// Pangolin answers a read in between is refused (APIError.Refused), not transient, and
// is not sent again before a slow backoff (RefusalBackoff, doubling up to
// MaxRefusalBackoff): until then its refusal is answered from memory.
const (
	RefusalBackoff    = time.Minute
	MaxRefusalBackoff = 30 * time.Minute
	// maxRemembered bounds the memory of failing requests: past it, it starts again.
	maxRemembered = 1024
)

// IsRefused reports whether err is a write Pangolin answers with a 500 each time
// while it answers other requests: a value it refuses, retried only on a slow backoff.
func IsRefused(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Refused
}

// refusals remembers the writes that failed with a 500, by request.
type refusals struct {
	mu    sync.Mutex
	now   func() time.Time
	byKey map[[sha256.Size]byte]*failing
}

type failing struct {
	failures int
	refused  *APIError // set once the refusal is confirmed
	retryAt  time.Time
	backoff  time.Duration
}

func newRefusals() *refusals {
	return &refusals{now: time.Now, byKey: map[[sha256.Size]byte]*failing{}}
}

// requestKey identifies a request by everything it sends. The body may hold secrets: its
// digest stays in memory and is never shown.
func requestKey(method, path string, query url.Values, body any) [sha256.Size]byte {
	b, _ := json.Marshal(body)
	return sha256.Sum256([]byte(method + " " + path + "?" + query.Encode() + "\n" + string(b)))
}

// write sends a write, and sorts a 500 answer into an outage (returned as it is:
// transient) or a refusal (IsRefused).
func (c *Client) write(ctx context.Context, op, method, path string, query url.Values, body, out any, redact func(string) string) error {
	key := requestKey(method, path, query, body)
	if refused := c.refusals.held(key); refused != nil {
		return refused
	}
	err := c.observed(ctx, op, method, path, query, body, out, redact)
	if !serverError(err) {
		c.refusals.forget(key)
		return err
	}
	failures := c.refusals.failed(key)
	// A create is not sent twice in a row: had the first been stored despite its 500,
	// the second would be a duplicate. Its repeat is the next reconcile's.
	if failures < 2 && method == http.MethodPut {
		return err
	}
	if !c.answers(ctx) {
		return err
	}
	if failures < 2 {
		// Once more, now that Pangolin is known to answer: a blip passes, a value it
		// cannot take fails the same way.
		if err = c.observed(ctx, op, method, path, query, body, out, redact); !serverError(err) {
			c.refusals.forget(key)
			return err
		}
	}
	var ae *APIError
	errors.As(err, &ae)
	return c.refusals.refuse(key, ae, fieldsOf(body))
}

// answers reports whether Pangolin answers a read: the cheapest the sink makes anyway.
func (c *Client) answers(ctx context.Context) bool {
	return c.observed(ctx, OpListDomains, http.MethodGet, c.orgPath("/domains"), nil, nil, nil, c.cred.redact) == nil
}

// serverError reports whether err is a 500, the answer of a request Pangolin's code
// failed on. 502, 503 and 504 say that the server, or the way to it, is unavailable:
// outages, whatever else answers.
func serverError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusInternalServerError && !ae.Refused
}

// fieldsOf are the names of the fields a JSON object body sends, sorted; never their
// values, which may be secrets.
func fieldsOf(body any) []string {
	b, err := json.Marshal(body)
	if err != nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return nil
	}
	var out []string
	for k := range fields {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// held is the refusal remembered for key while its backoff runs, nil otherwise.
func (r *refusals) held(key [sha256.Size]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.byKey[key]
	if !ok || f.refused == nil || !r.now().Before(f.retryAt) {
		return nil
	}
	refused := *f.refused
	return &refused
}

// failed counts one more 500 for key, and returns how many in a row.
func (r *refusals) failed(key [sha256.Size]byte) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.byKey[key]
	if !ok {
		if len(r.byKey) >= maxRemembered {
			clear(r.byKey)
		}
		f = &failing{}
		r.byKey[key] = f
	}
	f.failures++
	return f.failures
}

// refuse confirms key's refusal and starts, or doubles, its backoff.
func (r *refusals) refuse(key [sha256.Size]byte, answer *APIError, fields []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.byKey[key]
	if !ok {
		f = &failing{}
		r.byKey[key] = f
	}
	refused := *answer
	refused.Refused, refused.Fields = true, fields
	f.refused = &refused
	f.backoff = min(max(2*f.backoff, RefusalBackoff), MaxRefusalBackoff)
	f.retryAt = r.now().Add(f.backoff)
	out := refused
	return &out
}

// forget drops key: it succeeded, or failed otherwise than with a 500.
func (r *refusals) forget(key [sha256.Size]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byKey, key)
}
