package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// managerBinary is the PIC binary the local provider runs: $PIC_MANAGER_BINARY (make
// test and make test-e2e build bin/manager and set it), else built once by TestMain.
var managerBinary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse() // testing.Short and -test.list are flags
	start := time.Now()
	defer func() { fmt.Printf("e2e: suite finished in %s\n", time.Since(start).Round(time.Millisecond)) }()
	// Only the local provider runs the binary; -short (make test-unit) skips the suite.
	if !testing.Short() && clusterKind() == "local" && !listOnly() {
		cleanup, err := prepareBinary()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer cleanup()
	}
	code := m.Run()
	if err := teardownKind(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// listOnly is true for go test -list, which runs no test.
func listOnly() bool {
	f := flag.Lookup("test.list")
	return f != nil && f.Value.String() != ""
}

func prepareBinary() (func(), error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	if p := os.Getenv("PIC_MANAGER_BINARY"); p != "" {
		// go test runs in the package directory: a relative path means the repository's.
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("PIC_MANAGER_BINARY: %w (run make build)", err)
		}
		managerBinary = p
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "pic-e2e-bin-")
	if err != nil {
		return nil, err
	}
	managerBinary = filepath.Join(dir, "manager")
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", managerBinary, "./cmd/manager")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("build ./cmd/manager (set PIC_MANAGER_BINARY to skip): %w", err)
	}
	fmt.Printf("e2e: built %s in %s\n", managerBinary, time.Since(start).Round(time.Millisecond))
	return func() { _ = os.RemoveAll(dir) }, nil
}

// clusterKind is E2E_CLUSTER: local (default) or kind.
func clusterKind() string {
	if k := os.Getenv("E2E_CLUSTER"); k != "" {
		return k
	}
	return "local"
}

// variants are the operator CRD variants to run against: both, or those listed in
// E2E_VARIANTS (comma-separated), to iterate on one; "none" there is the direct-mode
// spec, on a cluster without the operator's CRDs.
func variants(t *testing.T) []testenv.Variant {
	all := testenv.Variants()
	want := os.Getenv("E2E_VARIANTS")
	if want == "" {
		return all
	}
	var out []testenv.Variant
	for _, v := range all {
		if slices.Contains(strings.Split(want, ","), v.Name) {
			out = append(out, v)
		}
	}
	if len(out) == 0 && !slices.Contains(strings.Split(want, ","), testenv.VariantNone) {
		t.Fatalf("E2E_VARIANTS=%q names no variant (want %s, %s and/or %s)", want, testenv.VariantOriginal, testenv.VariantFork, testenv.VariantNone)
	}
	return out
}

// specs is the suite, in the order it runs on each variant. The API server outage goes
// last: it is the one spec that disturbs the whole cluster.
var specs = []struct {
	name string
	fn   func(t *testing.T, p Provider)
}{
	{"Lifecycle", specLifecycle},
	{"MultiTunnelConfigFile", specMultiTunnel},
	{"HTTPRoute", specHTTPRoute},
	{"ServicePorts", specServicePorts},
	{"RestartNoWrites", specRestart},
	{"DecoysUntouched", specDecoys},
	{"WriteFaults", specWriteFaults},
	{"LeaderElectionFailover", specLeaderElection},
	{"MetricsAndProbes", specMetricsAndProbes},
	{"APIServerOutage", specAPIServerOutage},
}

// TestE2E runs every spec against each operator CRD variant, on the cluster provider
// chosen by E2E_CLUSTER.
func TestE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("the e2e suite needs a control plane; skipped with -short")
	}
	for _, v := range variants(t) {
		t.Run(v.Name, func(t *testing.T) {
			p := newProvider(t, v)
			for _, s := range specs {
				t.Run(s.name, func(t *testing.T) {
					start := time.Now()
					defer func() { t.Logf("%s/%s took %s", v.Name, s.name, time.Since(start).Round(time.Millisecond)) }()
					s.fn(t, p)
				})
			}
		})
	}
	// Direct mode needs no operator: its cluster has none of the operator's CRDs.
	if want := os.Getenv("E2E_VARIANTS"); want == "" || slices.Contains(strings.Split(want, ","), testenv.VariantNone) {
		t.Run("direct", func(t *testing.T) {
			start := time.Now()
			defer func() { t.Logf("direct took %s", time.Since(start).Round(time.Millisecond)) }()
			specDirect(t, newProvider(t, testenv.Variant{Name: testenv.VariantNone}))
		})
		// Access policies need PIC's AccessPolicy CRD, which the default installs lack
		// and the other specs run without: a cluster of their own.
		t.Run("managed-site", func(t *testing.T) {
			start := time.Now()
			defer func() { t.Logf("managed-site took %s", time.Since(start).Round(time.Millisecond)) }()
			specManagedSite(t, newManagedProvider(t))
		})
		t.Run("access", func(t *testing.T) {
			start := time.Now()
			defer func() { t.Logf("access took %s", time.Since(start).Round(time.Millisecond)) }()
			specAccessPolicies(t, newAccessProvider(t))
		})
	}
}

// accessOwnerID is the owner id of the access-policy spec's PIC: its record of secrets
// is in the ConfigMaps pic-access-<accessOwnerID>.<n>.
const accessOwnerID = "e2e-access"

// newAccessProvider is a cluster with PIC's AccessPolicy CRD and no operator, where PIC
// runs in direct mode with the RBAC of an install with access policies.
func newAccessProvider(t *testing.T) Provider {
	if k := clusterKind(); k != "local" {
		// The kind cluster is shared by every spec and deploys config/gateway-api: the
		// AccessPolicy CRD there would change what the other specs check.
		t.Skipf("the access-policy spec runs on the local cluster only (E2E_CLUSTER=%s)", k)
	}
	return newLocalAccessProvider(t, accessOwnerID)
}

// newProvider is the cluster of E2E_CLUSTER with the variant's CRDs.
func newProvider(t *testing.T, v testenv.Variant) Provider {
	switch k := clusterKind(); k {
	case "local":
		return newLocalProvider(t, v)
	case "kind":
		return newKindProvider(t, v)
	default:
		t.Fatalf("E2E_CLUSTER=%q: want local or kind", k)
		return nil
	}
}
