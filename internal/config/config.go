// Package config is PIC's configuration: one typed Config, every default in one place,
// read from flags, the environment (PIC_*) and a YAML file through viper, and validated
// before anything starts. It is the only package that imports viper.
package config

import (
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
}

// LeaderElection configures the Lease that lets several replicas run with one active.
type LeaderElection struct {
	Enabled   bool
	ID        string
	Namespace string
}

// Source names.
const (
	SourceIngress   = "ingress"
	SourceHTTPRoute = "httproute"
)
