package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// Provider is a cluster with one operator CRD variant installed, able to run PIC. The
// specs see nothing else of it, so they run unchanged on the local control plane and
// on kind.
type Provider interface {
	// Name is "local" or "kind".
	Name() string
	// Variant is the operator CRD variant installed in the cluster.
	Variant() testenv.Variant
	// Client is an admin client (uncached, testenv.Scheme()).
	Client() client.Client
	// RESTConfig is the admin connection Client uses.
	RESTConfig() *rest.Config
	// StartPIC runs PIC with opts and returns one handle per replica once every
	// replica answers /readyz with 200. The caller stops them (see env.startPIC).
	StartPIC(t *testing.T, opts PICOptions) []PIC
	// StopAPIServer and StartAPIServer make the API server unreachable and bring it
	// back on the same address; StartAPIServer returns once it is ready.
	StopAPIServer(t *testing.T)
	StartAPIServer(t *testing.T)
	// ServePangolin serves a Pangolin Integration API (the in-repo server) where PIC can
	// reach it, until t ends, and returns its base URL as PIC is to use it.
	ServePangolin(t *testing.T, h http.Handler) string
}

// PICOptions is how a spec wants PIC to run. Metrics and probe addresses are chosen by
// the provider.
type PICOptions struct {
	// Replicas is the number of PIC processes (0 means 1).
	Replicas int
	// LeaderElect runs the replicas with --leader-elect=true in LeaderElectionNamespace.
	LeaderElect bool
	// ConfigFile, if not empty, is written to a file passed with --config.
	ConfigFile string
	// Args are further flags.
	Args []string
	// GatewayAPI grants PIC the opt-in sources' rules (config/rbac/gateway-api and
	// config/rbac/services) on top of an Ingress-only install's, for a spec that turns
	// the httproute, tcproute, udproute or service source on. On kind, PIC always runs
	// with all of them (config/gateway-api and the services RBAC).
	GatewayAPI bool
	// Pangolin, when set, runs PIC in direct mode (sink pangolin) against it, with the
	// API key as a file; locally, with the direct-mode RBAC alone.
	Pangolin *Pangolin
}

// args are PIC's flags for direct mode against p, the key's file given.
func (p *Pangolin) args(keyFile string) []string {
	return []string{"--sink=pangolin", "--pangolin-url=" + p.URL, "--pangolin-org=" + p.Org,
		"--pangolin-owner-id=" + p.OwnerID, "--pangolin-api-key-file=" + keyFile}
}

// Endpoint is one of PIC's HTTP listeners.
type Endpoint int

const (
	// Metrics serves /metrics (--metrics-bind-address).
	Metrics Endpoint = iota
	// Probes serves /healthz and /readyz (--health-probe-bind-address).
	Probes
)

func (e Endpoint) String() string {
	if e == Metrics {
		return "metrics"
	}
	return "probes"
}

// PIC is one running PIC process (a local process, or a pod on kind).
type PIC interface {
	// Name identifies the replica in logs and failure dumps.
	Name() string
	// Get sends GET path to one of PIC's listeners and returns the status and body.
	Get(ctx context.Context, e Endpoint, path string) (int, string, error)
	// Stop ends PIC gracefully (SIGTERM) and waits until it has exited. It is a no-op
	// on a stopped PIC.
	Stop(t *testing.T)
	// Kill ends PIC with SIGKILL, without waiting for a graceful shutdown.
	Kill(t *testing.T)
	// Start runs PIC again after Stop or Kill, with the same configuration, and waits
	// until /readyz answers 200. Metrics come from the new process afterwards.
	Start(t *testing.T)
	// Running reports whether the current process is alive and has not been restarted
	// behind the suite's back.
	Running(t *testing.T) bool
	// Log is everything the replica's processes have logged so far.
	Log(t *testing.T) string
}

// Constants shared by the providers.
const (
	// picNamespace is where PIC runs: its ServiceAccount, its leader-election Lease.
	picNamespace = "pic-system"
	// leaseName is PIC's default --leader-election-id.
	leaseName = "pangolin-ingress-controller"
	// readyTimeout bounds how long a starting PIC may take to answer /readyz.
	readyTimeout = 90 * time.Second
)

// waitReady polls /readyz until it answers 200, failing early through alive when the
// process is gone.
func waitReady(ctx context.Context, p PIC, alive func() error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var last string
	for {
		if err := alive(); err != nil {
			return err
		}
		code, body, err := p.Get(ctx, Probes, "/readyz")
		if err == nil && code == http.StatusOK {
			return nil
		}
		last = fmt.Sprintf("status %d %q, error %v", code, body, err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: /readyz not 200 within %s (last: %s)", p.Name(), readyTimeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
