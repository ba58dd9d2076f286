// Package config is PIC's configuration: one typed Config, every default in one place
// (the key table in keys.go), read from flags, the environment (PIC_*) and a YAML file
// through viper, and validated before anything starts. It is the only package that
// imports viper. Source and sink names are the caller's (Plugins), not its own.
package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// Config is the effective configuration.
type Config struct {
	// Tunnels: the default tunnel, where unqualified tunnel names live, and the
	// class-alias table (from tunnelClassMapping and the file's tunnels section).
	Tunnels tunnel.Resolver `mapstructure:"-"`

	BackendScheme      string   `mapstructure:"backendScheme"`
	ClusterDomain      string   `mapstructure:"clusterDomain"`
	DefaultSSO         bool     `mapstructure:"defaultSSO"`
	DefaultBlockAccess bool     `mapstructure:"defaultBlockAccess"`
	Sources            []string `mapstructure:"sources"` // names from Plugins.Sources
	Sink               string   `mapstructure:"sink"`    // a name from Plugins.Sinks
	Pangolin           Pangolin `mapstructure:"pangolin"`

	WatchNamespaces         []string       `mapstructure:"watchNamespaces"` // empty: all namespaces
	ResyncPeriod            time.Duration  `mapstructure:"resyncPeriod"`
	MaxConcurrentReconciles int            `mapstructure:"maxConcurrentReconciles"`
	Kubeconfig              string         `mapstructure:"kubeconfig"`
	KubeAPIQPS              float32        `mapstructure:"kubeAPIQPS"`
	KubeAPIBurst            int            `mapstructure:"kubeAPIBurst"`
	MetricsBindAddress      string         `mapstructure:"metricsBindAddress"`
	HealthProbeBindAddress  string         `mapstructure:"healthProbeBindAddress"`
	LeaderElection          LeaderElection `mapstructure:"leaderElection"`
	LogLevel                string         `mapstructure:"logLevel"`
	LogFormat               string         `mapstructure:"logFormat"`

	// PrintConfig is --print-config: print the configuration (Print) and exit. It is a
	// command, not a setting: it has no file key and no environment variable.
	PrintConfig bool `mapstructure:"-"`
}

// LeaderElection configures the Lease that lets several replicas run with one active.
type LeaderElection struct {
	Enabled   bool   `mapstructure:"enabled"`
	ID        string `mapstructure:"id"`
	Namespace string `mapstructure:"namespace"`
}

// Pangolin is how the pangolin sink reaches Pangolin's Integration API.
type Pangolin struct {
	URL        string `mapstructure:"url"`
	Org        string `mapstructure:"org"`
	APIKeyFile string `mapstructure:"apiKeyFile"`
	OwnerID    string `mapstructure:"ownerId"` // marks what this PIC creates, so that clusters sharing an org keep apart
	CAFile     string `mapstructure:"caFile"`
	// APIKey comes from PIC_PANGOLIN_API_KEY or the file APIKeyFile, never from a flag or
	// the configuration file, so that it is in neither a process list nor a ConfigMap.
	APIKey Secret `mapstructure:"-"`
}

// Secret is a value that prints as [redacted] whichever way it is formatted or encoded;
// Reveal gives it to the one caller that must send it.
type Secret string

const redacted = "[redacted]"

func (s Secret) Reveal() string             { return string(s) }
func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) Format(f fmt.State, _ rune)   { _, _ = io.WriteString(f, redacted) }
func (Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }
func (Secret) MarshalYAML() (any, error)    { return redacted, nil }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Plugins names the sources and sinks the program can build: sources and sink are
// checked against these, so that a new one is named in one place, where it is built.
type Plugins struct {
	Sources []string
	Sinks   []string
}

// Default returns the configuration used when nothing is configured.
func Default() *Config { return newLoader(Plugins{}).decode() }

// Environment variables and flags that are not settings.
const (
	EnvConfigFile  = "PIC_CONFIG"
	FlagConfigFile = "config"
	FlagPrint      = "print-config"
	// EnvAPIKey holds the Pangolin API key. It has no flag and no file key, so that the
	// key is in neither a process list nor a ConfigMap.
	EnvAPIKey = "PIC_PANGOLIN_API_KEY"
)

// OriginKind is where a value came from.
type OriginKind string

const (
	FromDefault OriginKind = "default"
	FromFile    OriginKind = "file"
	FromEnv     OriginKind = "env"
	FromFlag    OriginKind = "flag"
)

// Origin is where one effective value came from: a variable, a flag or a file (viper
// does not keep the file's lines).
type Origin struct {
	Kind OriginKind
	Name string // PIC_LOG_LEVEL, --log-level or the file's path
}

func (o Origin) String() string {
	return cmp.Or(strings.TrimSpace(string(o.Kind)+" "+o.Name), "unknown")
}

// where names the origin in an error message: the variable or flag alone, or the file.
func (o Origin) where() string {
	if o.Kind == FromEnv || o.Kind == FromFlag {
		return o.Name
	}
	return o.String()
}

// Origins says, for every file key ("backendScheme", "leaderElection.enabled") and every
// tunnel alias ("tunnels.edge-eu"), where its effective value came from.
type Origins map[string]Origin

// Error is an invalid configuration: every problem found, one per line.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// problems collects messages, to list them in the order of the key table.
type (
	problems []problem
	problem  struct{ key, msg string }
)

// add records a problem of a key ("" for none); the same message twice counts once.
func (ps *problems) add(key, format string, args ...any) {
	if p := (problem{key, fmt.Sprintf(format, args...)}); !slices.Contains(*ps, p) {
		*ps = append(*ps, p)
	}
}

// has reports whether a key, or the group holding it, has a problem already.
func (ps problems) has(key string) bool {
	return slices.ContainsFunc(ps, func(p problem) bool {
		return p.key != "" && (p.key == key || strings.HasPrefix(key, p.key+"."))
	})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b problem) int { return order(a.key) - order(b.key) })
	e := &Error{}
	for _, p := range ps {
		e.Problems = append(e.Problems, p.msg)
	}
	return e
}

// Print writes the configuration as YAML that Load accepts as a file, each value
// followed by where it came from (origins may be nil). The aliases of tunnelClassMapping
// are shown in the tunnels section; the API key only as set or not, and from where.
func Print(w io.Writer, c *Config, origins Origins) error {
	var b strings.Builder
	b.WriteString("# Effective configuration of pangolin-ingress-controller.\n" +
		"# Where each value came from follows it; a flag wins over an environment variable,\n" +
		"# which wins over the file, which wins over the default.\n")
	line := func(text, key string) {
		if o, ok := origins[key]; ok {
			text = fmt.Sprintf("%-40s  # %s", text, o)
		}
		b.WriteString(text + "\n")
	}
	vals, group := values(c), ""
	for _, k := range keys {
		name, indent := k.name, ""
		if g, child, nested := strings.Cut(k.name, "."); nested {
			if g != group {
				line(g+":", "")
				group = g
			}
			name, indent = child, "  "
		}
		switch name {
		case "tunnelClassMapping": // its aliases are printed under tunnels
		case "defaultTunnel":
			line(name+": "+tunnelYAML(c.Tunnels.Default), name)
		case "tunnels":
			if name += ":"; len(c.Tunnels.Aliases) == 0 {
				name += " {}"
			}
			line(name, "")
			for _, alias := range slices.Sorted(maps.Keys(c.Tunnels.Aliases)) {
				line("  "+scalarYAML(alias)+": "+tunnelYAML(c.Tunnels.Aliases[alias]), "tunnels."+alias)
			}
		default:
			line(indent+name+": "+scalarYAML(vals[k.name]), k.name)
		}
		if k.name == "pangolin.apiKeyFile" {
			line(indent+"# apiKey ("+EnvAPIKey+" or apiKeyFile): "+apiKeyStatus(c.Pangolin), "")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tunnelYAML writes a tunnel as the file does: "namespace/name", or a mapping for one
// with allowed namespaces.
func tunnelYAML(t tunnel.Tunnel) string {
	if t.AllowedNamespaces == nil {
		return scalarYAML(refString(t))
	}
	return scalarYAML(tunnelSpec(t))
}

func apiKeyStatus(p Pangolin) string {
	switch {
	case p.APIKey == "":
		return "(not set)"
	case p.APIKeyFile != "":
		return "(set, from file " + p.APIKeyFile + ")"
	}
	return "(set, from env " + EnvAPIKey + ")"
}

var zeroUnitsRE = regexp.MustCompile(`([hm])(0m)?0s$`)

// scalarYAML writes a value as YAML on one line, and a duration as people write it: 5m
// rather than 5m0s.
func scalarYAML(v any) string {
	if d, ok := v.(time.Duration); ok {
		v = zeroUnitsRE.ReplaceAllString(d.String(), "$1")
	}
	out, _ := yaml.Marshal(struct { // the values of a Config always marshal
		V any `yaml:"v,flow"`
	}{v})
	return strings.TrimSuffix(strings.TrimPrefix(string(out), "v: "), "\n")
}

func formatValue(v any) string {
	if d, ok := v.(time.Duration); ok {
		v = d.String()
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return scalarYAML(v)
}
