package pangolinsim

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Target health checks, as the reference's section 13 describes them, and Pangolin's
// createTarget and updateTarget where it is silent ([source]).
//
//   - Every hc* field is optional and nullable; the server stores null for what is not
//     sent and fills in no default.
//   - hcPath and hcMethod need at least 1 character; hcPort is positive; hcInterval,
//     hcUnhealthyInterval, hcTimeout and the thresholds are positive and at least 1,
//     which zod reports as two issues for 0; hcStatus is any integer; hcHeaders a list
//     of {name, value}. The strings (hcScheme, hcMode, hcHostname, hcTlsServerName) are
//     not validated.
//   - A create with hcEnabled:true needs a non-blank hcHostname.
//   - hcHealth: a create sets "unhealthy" when hcEnabled, else "unknown". An update sets
//     "unknown" when it sends hcEnabled false or null, or when the site is not a Newt
//     site; "unhealthy" when it turns the check on (false to true) on a Newt site; and
//     leaves it otherwise. Only Newt ever reports "healthy" (SetTargetHealth here, or
//     Options.HealthyBackends).
//   - An update stores hcEnabled false when it leaves hcEnabled out, and hcHeaders null
//     when it leaves hcHeaders out [source]; the other fields left out keep their values.
//   - hcHeaders comes back JSON-encoded in a string from create and update (the column
//     as stored), and as an array from GET and the list.
//   - An "unhealthy" target is left out of its Traefik service.

// Target health values.
const (
	healthUnknown   = "unknown"
	healthUnhealthy = "unhealthy"
	healthHealthy   = "healthy"
)

// healthFields validates the hc* fields of a target body other than hcEnabled, and
// returns those present, null included, as sent.
func healthFields(v *validator) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	keep := func(k string, present bool) {
		if present {
			out[k] = v.in.values[k]
		}
	}
	for _, k := range []string{"hcScheme", "hcMode", "hcHostname", "hcTlsServerName"} {
		_, present := v.str(k, false, true)
		keep(k, present)
	}
	for _, k := range []string{"hcPath", "hcMethod"} {
		s, present := v.str(k, false, true)
		if s != nil && len(*s) < 1 {
			v.issue("Too small: expected string to have >=1 characters", k)
		}
		keep(k, present)
	}
	_, present := positiveInt(v, "hcPort", false)
	keep("hcPort", present)
	for _, k := range []string{"hcInterval", "hcUnhealthyInterval", "hcTimeout", "hcHealthyThreshold", "hcUnhealthyThreshold"} {
		_, present := positiveInt(v, k, true)
		keep(k, present)
	}
	_, present = v.integer("hcStatus", false, true, math.MinInt32, math.MaxInt32)
	keep("hcStatus", present)
	_, present = v.headers("hcHeaders")
	keep("hcHeaders", present)
	_, present = v.boolean("hcFollowRedirects", true)
	keep("hcFollowRedirects", present)
	return out
}

// positiveInt reads an optional, nullable integer that zod's positive() checks, and
// min(1) after it when atLeastOne: 0 is then two issues.
func positiveInt(v *validator, key string, atLeastOne bool) (*int, bool) {
	raw, present, isNull := v.field(key)
	if !present || isNull {
		return nil, present
	}
	var f float64
	if jsType(raw) != "number" || json.Unmarshal(raw, &f) != nil {
		v.typeIssue(key, "number", raw)
		return nil, true
	}
	if f != math.Trunc(f) {
		v.issue("Invalid input: expected int, received number", key)
		return nil, true
	}
	n := int(f)
	if n <= 0 {
		v.issue("Too small: expected number to be >0", key)
	}
	if atLeastOne && n < 1 {
		v.issue("Too small: expected number to be >=1", key)
	}
	return &n, true
}

// hostnameMissing is the create's refinement: hcEnabled true needs a non-blank hostname.
func hostnameMissing(hc map[string]json.RawMessage) bool {
	var s string
	return jsType(hc["hcHostname"]) != "string" || json.Unmarshal(hc["hcHostname"], &s) != nil || strings.TrimSpace(s) == ""
}

// healthAfterUpdate is a target's hcHealth after an update on a site of siteType.
func healthAfterUpdate(before string, wasEnabled bool, enabled *bool, enabledSent bool, siteType string) string {
	switch {
	case enabledSent && (enabled == nil || !*enabled), siteType != "newt":
		return healthUnknown
	case enabledSent && *enabled && !wasEnabled:
		return healthUnhealthy
	}
	return before
}

// headersAsStored is hcHeaders as create and update answer it: the stored column, a
// JSON string, or null.
func headersAsStored(raw json.RawMessage) json.RawMessage {
	if raw == nil || jsType(raw) == "null" {
		return raw
	}
	encoded, _ := json.Marshal(string(raw))
	return encoded
}

// SetTargetHealth sets a target's hcHealth as a Newt agent's report would: "healthy"
// puts an enabled target back in its Traefik service, "unhealthy" leaves it out.
func (s *Server) SetTargetHealth(targetID int, health string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch health {
	case healthUnknown, healthUnhealthy, healthHealthy:
	default:
		panic(fmt.Sprintf("inmemory: target health %q is not unknown, unhealthy or healthy", health))
	}
	if t, ok := s.targets[targetID]; ok {
		t.health = health
	}
}

// newtProbes is Options.HealthyBackends' Newt agent reporting on t, just written: a
// checked target on an online Newt site is healthy. The caller holds s.mu.
func (s *Server) newtProbes(t *target) {
	if !s.opts.HealthyBackends || !t.hcEnabled {
		return
	}
	if site, found := s.site(t.siteID); found && site.Type == "newt" && !site.Offline {
		t.health = healthHealthy
	}
}

// HealthCheck is a target's stored health check, for assertions: "" and 0 for null.
type HealthCheck struct {
	Hostname, Mode, Scheme, Path, Method                          string
	Port, Interval, Timeout, HealthyThreshold, UnhealthyThreshold int
}

func (t *target) healthCheck() HealthCheck {
	var out HealthCheck
	for k, dst := range map[string]any{
		"hcHostname": &out.Hostname, "hcMode": &out.Mode, "hcScheme": &out.Scheme, "hcPath": &out.Path, "hcMethod": &out.Method,
		"hcPort": &out.Port, "hcInterval": &out.Interval, "hcTimeout": &out.Timeout,
		"hcHealthyThreshold": &out.HealthyThreshold, "hcUnhealthyThreshold": &out.UnhealthyThreshold,
	} {
		if raw := t.hc[k]; raw != nil {
			_ = json.Unmarshal(raw, dst) // validated on the way in; null leaves the zero value
		}
	}
	return out
}
