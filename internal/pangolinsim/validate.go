package pangolinsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// object is a JSON object with its keys in the order they were sent: zod reports
// unrecognized keys in input order, and the messages must match.
type object struct {
	keys   []string
	values map[string]json.RawMessage
}

// parseObject decodes a JSON object keeping key order. A non-object document is not an
// error here (the caller reports it as a type issue).
func parseObject(data []byte) (*object, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	o := &object{values: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if _, dup := o.values[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.values[k] = v // like JSON.parse: the last duplicate wins
	}
	return o, true
}

// jsonSyntaxError is what body-parser reports for a malformed body. The wording of
// V8's parser is not reproduced beyond its shape.
func jsonSyntaxError(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("Unexpected token in JSON at position %d", se.Offset-1)
	}
	if err != nil {
		return "Unexpected end of JSON input"
	}
	switch v.(type) {
	case map[string]any, []any:
		return ""
	}
	// body-parser's strict mode accepts only objects and arrays.
	return fmt.Sprintf("Unexpected token %s in JSON at position 0", strings.TrimSpace(string(data))[:1])
}

// jsType names a JSON value the way zod's messages do.
func jsType(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case raw == nil:
		return "undefined"
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean"
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.HasPrefix(s, "["):
		return "array"
	}
	return "number"
}

// validator collects zod-style issues for one strict object schema.
type validator struct {
	in     *object
	known  map[string]bool
	issues []string
}

func newValidator(in *object) *validator {
	if in == nil {
		in = &object{values: map[string]json.RawMessage{}}
	}
	return &validator{in: in, known: map[string]bool{}}
}

func (v *validator) issue(msg, path string) {
	if path != "" {
		msg += fmt.Sprintf(" at %q", path)
	}
	v.issues = append(v.issues, msg)
}

// field declares a key and returns its raw value; present is false for an absent key.
// A null is reported as present with isNull, so each caller decides if null is allowed.
func (v *validator) field(key string) (raw json.RawMessage, present, isNull bool) {
	v.known[key] = true
	raw, present = v.in.values[key]
	return raw, present, present && jsType(raw) == "null"
}

func (v *validator) typeIssue(key, want string, raw json.RawMessage) {
	v.issue(fmt.Sprintf("Invalid input: expected %s, received %s", want, jsType(raw)), key)
}

// str reads an optional (or required) string, possibly nullable.
func (v *validator) str(key string, required, nullable bool) (val *string, present bool) {
	raw, present, isNull := v.field(key)
	switch {
	case !present:
		if required {
			v.typeIssue(key, "string", nil)
		}
		return nil, false
	case isNull:
		if !nullable {
			v.typeIssue(key, "string", raw)
		}
		return nil, true
	case jsType(raw) != "string":
		v.typeIssue(key, "string", raw)
		return nil, true
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return &s, true
}

// integer reads an optional (or required) integer within [min, max].
func (v *validator) integer(key string, required, nullable bool, min, max int) (val *int, present bool) {
	raw, present, isNull := v.field(key)
	switch {
	case !present:
		if required {
			v.typeIssue(key, "number", nil)
		}
		return nil, false
	case isNull:
		if !nullable {
			v.typeIssue(key, "number", raw)
		}
		return nil, true
	case jsType(raw) != "number":
		v.typeIssue(key, "number", raw)
		return nil, true
	}
	var f float64
	_ = json.Unmarshal(raw, &f)
	if f != math.Trunc(f) {
		v.issue("Invalid input: expected int, received number", key)
		return nil, true
	}
	n := int(f)
	if n < min {
		v.issue(fmt.Sprintf("Too small: expected number to be >=%d", min), key)
	}
	if n > max {
		v.issue(fmt.Sprintf("Too big: expected number to be <=%d", max), key)
	}
	return &n, true
}

// boolean reads an optional boolean, possibly nullable.
func (v *validator) boolean(key string, nullable bool) (val *bool, present bool) {
	raw, present, isNull := v.field(key)
	switch {
	case !present:
		return nil, false
	case isNull:
		if !nullable {
			v.typeIssue(key, "boolean", raw)
		}
		return nil, true
	case jsType(raw) != "boolean":
		v.typeIssue(key, "boolean", raw)
		return nil, true
	}
	b := strings.TrimSpace(string(raw)) == "true"
	return &b, true
}

// enum reads an optional string among options, possibly nullable.
func (v *validator) enum(key string, nullable bool, options ...string) (val *string, present bool) {
	raw, present, isNull := v.field(key)
	if !present || (isNull && nullable) {
		return nil, present
	}
	var s string
	if jsType(raw) == "string" {
		_ = json.Unmarshal(raw, &s)
		for _, o := range options {
			if s == o {
				return &s, true
			}
		}
	}
	quoted := make([]string, len(options))
	for i, o := range options {
		quoted[i] = fmt.Sprintf("%q", o)
	}
	v.issue("Invalid option: expected one of "+strings.Join(quoted, "|"), key)
	return nil, true
}

// any declares a key whose value the fake accepts without looking at it.
func (v *validator) any(key string) (json.RawMessage, bool) {
	raw, present, _ := v.field(key)
	return raw, present
}

// headers reads an optional, nullable list of {name, value}, both strings and both
// required (a resource's headers, a target's hcHeaders).
func (v *validator) headers(key string) (json.RawMessage, bool) {
	raw, present, isNull := v.field(key)
	if !present || isNull {
		return raw, present
	}
	var list []json.RawMessage
	if jsType(raw) != "array" || json.Unmarshal(raw, &list) != nil {
		v.typeIssue(key, "array", raw)
		return raw, present
	}
	for i, item := range list {
		var fields map[string]json.RawMessage
		if jsType(item) != "object" || json.Unmarshal(item, &fields) != nil {
			v.typeIssue(fmt.Sprintf("%s[%d]", key, i), "object", item)
			continue
		}
		for _, f := range []string{"name", "value"} {
			if jsType(fields[f]) != "string" {
				v.typeIssue(fmt.Sprintf("%s[%d].%s", key, i, f), "string", fields[f])
			}
		}
	}
	return raw, present
}

// strict adds zod's issue for the keys no field declared, in input order.
func (v *validator) strict() {
	var unknown []string
	for _, k := range v.in.keys {
		if !v.known[k] {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	switch len(unknown) {
	case 0:
	case 1:
		v.issue("Unrecognized key: "+unknown[0], "")
	default:
		v.issue("Unrecognized keys: "+strings.Join(unknown, ", "), "")
	}
}

// err is the 400 message, or "" when the input is valid.
func (v *validator) err() string {
	if len(v.issues) == 0 {
		return ""
	}
	return "Validation error: " + strings.Join(v.issues, "; ")
}

// queryObject turns a query string into an object of strings, in order, so that the
// strict checks of bodies apply to queries too.
func queryObject(rawQuery string) *object {
	o := &object{values: map[string]json.RawMessage{}}
	for _, part := range strings.Split(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		k, _ = url.QueryUnescape(k)
		val, _ = url.QueryUnescape(val)
		b, _ := json.Marshal(val)
		if _, dup := o.values[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.values[k] = b
	}
	return o
}

var (
	subdomainLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	hostLabel      = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$`)
	niceIDPattern  = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
)

// subdomainIssue returns the observed message for an invalid subdomain, or "".
func subdomainIssue(s string) string {
	if s == "" {
		return "Invalid subdomain format; Subdomain must be at least 1 character long"
	}
	for _, l := range strings.Split(s, ".") {
		if !subdomainLabel.MatchString(l) {
			return "Invalid subdomain"
		}
	}
	return ""
}

// validTargetHost reports whether a target's ip is an IP address or a host name.
func validTargetHost(s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if !hostLabel.MatchString(l) {
			return false
		}
	}
	return true
}
