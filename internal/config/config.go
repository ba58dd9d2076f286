// Package config is PIC's configuration: one typed Config, every default in one place,
// read from flags, the environment (PIC_*) and a YAML file through viper, and validated
// before anything starts. It is the only package that imports viper.
package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// Config is the effective configuration.
type Config struct {
	// Tunnels: the default tunnel, where unqualified tunnel names live, and the
	// class-alias table (from tunnelClassMapping and the file's tunnels section).
	Tunnels tunnel.Resolver

	BackendScheme      string // http or https
	ClusterDomain      string // for <service>.<namespace>.svc.<clusterDomain>
	DefaultSSO         bool
	DefaultBlockAccess bool
	Sources            []string // "ingress", "httproute"

	WatchNamespaces         []string // empty: all namespaces
	ResyncPeriod            time.Duration
	MaxConcurrentReconciles int

	Kubeconfig   string
	KubeAPIQPS   float32
	KubeAPIBurst int

	MetricsBindAddress     string
	HealthProbeBindAddress string
	LeaderElection         LeaderElection

	LogLevel  string // debug, info, warn, error
	LogFormat string // json, console

	// PrintConfig is --print-config: print the configuration (Print) and exit without
	// starting anything. It is a command, not a setting: it has no file key and no
	// environment variable.
	PrintConfig bool
}

// LeaderElection configures the Lease that lets several replicas run with one active.
type LeaderElection struct {
	Enabled   bool
	ID        string
	Namespace string
}

// Default returns the configuration used when nothing is configured.
func Default() *Config {
	c := &Config{}
	for _, k := range keys {
		if k.set != nil {
			k.set(c, cloneDefault(k.def))
		}
	}
	c.Tunnels = tunnel.Resolver{Default: parseDefaultTunnel(keyByName("defaultTunnel").def.(string)), Aliases: map[string]tunnel.Tunnel{}}
	return c
}

func cloneDefault(v any) any {
	if list, ok := v.([]string); ok {
		return slices.Clone(list)
	}
	return v
}

// Validate checks a Config built in code. Load checks the same rules as it reads, and
// names the variable, flag or file line that each bad value came from; Validate, which
// cannot know, names the file key with its variable and flag.
func (c *Config) Validate() error {
	var ps problems
	for _, k := range keys {
		if k.get == nil || k.check == nil {
			continue
		}
		v := k.get(c)
		if msg := k.check(v); msg != "" {
			ps.add(k.name, "%s (%s) = %s: %s", k.name, unknownWhere(k), formatValue(v), msg)
		}
	}
	validateResolver(c.Tunnels, &ps)
	return ps.err()
}

// Error is an invalid configuration: every problem found, one per line.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0]
	}
	return fmt.Sprintf("invalid configuration (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// problems collects messages in the order of the key table, so that related problems
// read together whatever order they were found in.
type problems []problem

type problem struct {
	order int
	msg   string
}

func (ps *problems) add(keyName, format string, args ...any) {
	*ps = append(*ps, problem{order(keyName), fmt.Sprintf(format, args...)})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b problem) int { return a.order - b.order })
	e := &Error{}
	for _, p := range ps {
		e.Problems = append(e.Problems, p.msg)
	}
	return e
}

// Source names.
const (
	SourceIngress   = "ingress"
	SourceHTTPRoute = "httproute"
)
