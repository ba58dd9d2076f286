package pangolinapi

import (
	"errors"
	"fmt"
	"strings"
)

// HealthCheck is a target's health check, in the hc* fields PIC writes: the site's Newt
// agent probes Hostname:Port, and Pangolin routes no traffic to the target while the
// probe fails. The zero HealthCheck is none. The server fills in no defaults: a field
// left at its zero value is stored as null, and Newt applies its own.
type HealthCheck struct {
	Enabled  bool
	Hostname string // required when Enabled: PIC sends the target's ip
	Port     int    // 0: none sent
	Mode     string // HealthModeHTTP or HealthModeTCP
	// Scheme, Path and Method are the request of an http check; "" for a tcp one.
	Scheme string
	Path   string
	Method string
	// Interval, Timeout, HealthyThreshold and UnhealthyThreshold: 0 is none sent, since
	// the server refuses 0 for each.
	Interval           int
	Timeout            int
	HealthyThreshold   int
	UnhealthyThreshold int
}

// Health check modes Pangolin's probes understand; another value is stored all the
// same, and probed as http.
const (
	HealthModeHTTP = "http"
	HealthModeTCP  = "tcp"
)

// Validate refuses what Pangolin would refuse with a 400 (hostname, path and the
// integers) and what it would store but not probe as meant (another mode): a caller
// can drop the check and say why rather than send a request refused again on every
// retry. The zero HealthCheck is valid.
func (h HealthCheck) Validate() error {
	if !h.Enabled {
		return nil
	}
	var errs []error
	if strings.TrimSpace(h.Hostname) == "" {
		errs = append(errs, errors.New("a hostname is required when the health check is enabled"))
	}
	switch h.Mode {
	case HealthModeHTTP:
		if h.Path == "" {
			errs = append(errs, errors.New("an http health check needs a path (Pangolin requires at least 1 character)"))
		}
	case HealthModeTCP:
	default:
		errs = append(errs, fmt.Errorf("health check mode %q is not %s or %s", h.Mode, HealthModeHTTP, HealthModeTCP))
	}
	if h.Port < 0 || h.Port > 65535 {
		errs = append(errs, fmt.Errorf("health check port %d is not 1-65535", h.Port))
	}
	for _, f := range []struct {
		name  string
		value int
	}{{"interval", h.Interval}, {"timeout", h.Timeout}, {"healthy threshold", h.HealthyThreshold}, {"unhealthy threshold", h.UnhealthyThreshold}} {
		if f.value < 0 {
			errs = append(errs, fmt.Errorf("health check %s %d is negative (Pangolin requires at least 1)", f.name, f.value))
		}
	}
	return errors.Join(errs...)
}

// createFields are the hc* fields of a target create: none for no health check (the
// server's default is off), and only those set otherwise, since the server stores null
// for those left out and refuses 0 and "".
func (h HealthCheck) createFields() map[string]any {
	if !h.Enabled {
		return nil
	}
	out := map[string]any{}
	for k, v := range h.wire() {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// updateFields are the hc* fields of a target update. hcEnabled is always sent: the
// server turns the check off on an update without it (updateTarget stores
// `hcEnabled || false`), whatever the target had. An enabled check is sent whole, null
// for what is unset, so that what the server stores is exactly what was sent, whatever
// an earlier check left; a disabled one is hcEnabled false alone.
func (h HealthCheck) updateFields() map[string]any {
	if !h.Enabled {
		return map[string]any{"hcEnabled": false}
	}
	return h.wire()
}

// wire is every field PIC writes, nil for unset.
func (h HealthCheck) wire() map[string]any {
	return map[string]any{
		"hcEnabled": true, "hcHostname": nilIfZero(h.Hostname), "hcPort": nilIfZero(h.Port), "hcMode": nilIfZero(h.Mode),
		"hcScheme": nilIfZero(h.Scheme), "hcPath": nilIfZero(h.Path), "hcMethod": nilIfZero(h.Method),
		"hcInterval": nilIfZero(h.Interval), "hcTimeout": nilIfZero(h.Timeout),
		"hcHealthyThreshold": nilIfZero(h.HealthyThreshold), "hcUnhealthyThreshold": nilIfZero(h.UnhealthyThreshold),
	}
}

// nilIfZero is nil (JSON null) for the zero value, v otherwise.
func nilIfZero[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// healthCheckJSON is a target's hc* fields as create, GET, update and list report
// them. hcHeaders is left out: the create response carries it JSON-encoded in a string
// and GET and the list as an array, PIC writes none, and a field not declared is
// decoded in neither shape.
type healthCheckJSON struct {
	HCEnabled            flexBool `json:"hcEnabled"`
	HCHostname           *string  `json:"hcHostname"`
	HCPort               *int     `json:"hcPort"`
	HCMode               *string  `json:"hcMode"`
	HCScheme             *string  `json:"hcScheme"`
	HCPath               *string  `json:"hcPath"`
	HCMethod             *string  `json:"hcMethod"`
	HCInterval           *int     `json:"hcInterval"`
	HCTimeout            *int     `json:"hcTimeout"`
	HCHealthyThreshold   *int     `json:"hcHealthyThreshold"`
	HCUnhealthyThreshold *int     `json:"hcUnhealthyThreshold"`
}

func (h healthCheckJSON) healthCheck() HealthCheck {
	return HealthCheck{
		Enabled: h.HCEnabled.value, Hostname: str(h.HCHostname), Port: intOf(h.HCPort), Mode: str(h.HCMode),
		Scheme: str(h.HCScheme), Path: str(h.HCPath), Method: str(h.HCMethod),
		Interval: intOf(h.HCInterval), Timeout: intOf(h.HCTimeout),
		HealthyThreshold: intOf(h.HCHealthyThreshold), UnhealthyThreshold: intOf(h.HCUnhealthyThreshold),
	}
}
