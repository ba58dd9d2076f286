package pangolinapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"regexp"
)

// APIError is an HTTP answer outside 2xx. Pangolin has no machine-readable error codes:
// only Status and the English Message tell errors apart.
type APIError struct {
	Operation string // one of the Op constants
	Status    int
	Message   string // the envelope's message, or the text of a non-JSON body
	// UnknownRoute is set when a 404 came without the JSON envelope: Express's HTML page
	// for a route or method the server does not have. That is a client/server mismatch,
	// not a missing object, so IsNotFound is false for it.
	UnknownRoute bool
	// Refused is set on a 500 that the same request got again while Pangolin answered
	// others: a value it cannot take, not an outage (IsRefused). Fields are the names
	// of the fields the request sent.
	Refused bool
	Fields  []string
}

func (e *APIError) Error() string {
	if e.UnknownRoute {
		return fmt.Sprintf("pangolin %s: %d unknown route: %s", e.Operation, e.Status, e.Message)
	}
	return fmt.Sprintf("pangolin %s: %d %s", e.Operation, e.Status, e.Message)
}

var preText = regexp.MustCompile(`(?s)<pre>(.*?)</pre>`)

// maxMessage bounds the message an error shows: Pangolin's are one line, and a longer
// text is something else (an echo, a page), which is not shown.
const maxMessage = 64 << 10

// newAPIError reads what it can from an error body. The server's text passes through
// redact: nothing the server echoes may carry the key or a secret of the request into
// logs. A body that is not Pangolin's message is never shown at all.
func newAPIError(op string, status int, body []byte, redact func(string) string) *APIError {
	e := &APIError{Operation: op, Status: status}
	var env struct {
		Message *string `json:"message"`
	}
	switch {
	case json.Unmarshal(body, &env) == nil && env.Message != nil:
		e.Message = *env.Message
	case preText.Match(body):
		e.Message = html.UnescapeString(string(preText.FindSubmatch(body)[1]))
		e.UnknownRoute = status == http.StatusNotFound
	default:
		// Not Pangolin's answer: a proxy's page, or an echo of the request. Every request
		// carries the key and a write may carry secrets, so only the status is shown.
		e.Message = http.StatusText(status)
		// A body that is not the envelope on a 404 is not the API talking about an object.
		e.UnknownRoute = status == http.StatusNotFound && !json.Valid(body)
	}
	if len(e.Message) > maxMessage {
		e.Message = http.StatusText(status)
	}
	e.Message = redact(e.Message)
	return e
}

// transportError is a request that got no HTTP answer.
type transportError struct {
	op     string
	err    error
	redact func(string) string
}

func (e *transportError) Error() string {
	return e.redact(fmt.Sprintf("pangolin %s: %v", e.op, e.err))
}

func (e *transportError) Unwrap() error { return e.err }

// IsNotFound reports whether the server said the object does not exist (a JSON 404).
// A 404 for an unknown route is not "not found": see APIError.UnknownRoute.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound && !ae.UnknownRoute
}

// IsTransient reports whether retrying the same request later may succeed: no answer
// (connection failure, timeout), a 5xx, or 429. A cancellation by the caller is not.
func IsTransient(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return !ae.Refused && (ae.Status >= 500 || ae.Status == http.StatusTooManyRequests)
	}
	var te *transportError
	return errors.As(err, &te) && !errors.Is(err, context.Canceled)
}

// IsClientError reports whether the server refused the request itself (4xx, including
// 429): the same request will keep failing unless IsTransient also says otherwise.
func IsClientError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500
}
