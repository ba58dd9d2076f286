// Package config is PIC's configuration: one typed Config, every default in one place
// (the key table in keys.go), read from flags, the environment (PIC_*) and a YAML file
// through viper, and validated before anything starts. It is the only package that
// imports viper. Source and sink names are the caller's (Plugins), not its own.
package config

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

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
func Default() *Config {
	l := newLoader(Plugins{})
	c := l.decode()
	if err := l.probs.err(); err != nil {
		panic("config: the defaults do not decode: " + err.Error())
	}
	return c
}

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
