package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// localProvider is a testenv cluster of its own per variant, with PIC running as local
// processes authenticated as a ServiceAccount user with only the rendered RBAC: that of
// an Ingress-only install, or with the Gateway API rules too when the spec opts in.
type localProvider struct {
	variant           testenv.Variant
	cluster           *testenv.Cluster
	kubeconfig        string // PIC's ServiceAccount: the pangolinresource sink's RBAC with the Gateway API's
	ingressKubeconfig string // a second ServiceAccount with an Ingress-only install's grants alone
	directKubeconfig  string // a third with a direct-mode install's (and the Gateway API's): no tunnel.pangolin.io rights
	// env is PIC's environment; nil is the suite's.
	env []string
	dir string
	seq int // numbers PIC processes, for log file names
}

// newLocalProvider starts a cluster with the variant's CRDs and PIC's RBAC; the cluster
// stops with t. Its directory (logs of every process) is kept when t fails.
func newLocalProvider(t *testing.T, v testenv.Variant) *localProvider {
	t.Helper()
	cluster, dir := startLocalCluster(t, v.Name, testenv.ClusterOptions{Variant: &v, GatewayAPI: true})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ingressRBAC, gatewayRBAC, err := rbacObjects("pangolinresource")
	require.NoError(t, err, "render PIC's RBAC")
	require.NoError(t, ensureNamespace(ctx, cluster.Client, picNamespace))
	require.NoError(t, applyObjects(ctx, cluster.Client, append(ingressRBAC, gatewayRBAC...)), "apply PIC's RBAC")
	saNamespace, saName := serviceAccountIdentity(ingressRBAC)
	// The specs without the httproute source run as a ServiceAccount with only what
	// config/rbac and config/rbac/pangolinresource grant, so a rule an Ingress-only
	// install lacks fails them.
	ingressOnly := saName + "-ingress-only"
	require.NoError(t, applyObjects(ctx, cluster.Client, rebound(ingressRBAC, saNamespace, ingressOnly)), "bind an Ingress-only install's RBAC to %s", ingressOnly)
	// Direct mode runs with what config/direct-gateway-api grants, so that a rule it
	// lacks, or one on PangolinResources it would need, fails the spec.
	directCore, directGateway, err := rbacObjects("pangolin")
	require.NoError(t, err, "render the direct-mode RBAC")
	direct := saName + "-direct"
	require.NoError(t, applyObjects(ctx, cluster.Client, append(directCore, directGateway...)), "apply the direct-mode RBAC")
	require.NoError(t, applyObjects(ctx, cluster.Client, rebound(append(directCore, directGateway...), saNamespace, direct)), "bind the direct-mode RBAC to %s", direct)
	return &localProvider{variant: v, cluster: cluster, dir: dir,
		kubeconfig: serviceAccountUser(t, cluster, saNamespace, saName), ingressKubeconfig: serviceAccountUser(t, cluster, saNamespace, ingressOnly),
		directKubeconfig: serviceAccountUser(t, cluster, saNamespace, direct)}
}

// newLocalAccessProvider starts a cluster without the operator's CRDs and with PIC's
// AccessPolicy CRD, where PIC runs in direct mode only, as the ServiceAccount of
// accessRBACObjects(ownerID) with exactly that RBAC: a direct-mode install with access
// policies and the Gateway API. PIC gets POD_NAMESPACE, its namespace, where a pod
// would read its ServiceAccount's namespace file: the direct sink keeps its record of
// secrets there, where the install's Role lets it.
func newLocalAccessProvider(t *testing.T, ownerID string) *localProvider {
	t.Helper()
	none := testenv.Variant{Name: testenv.VariantNone}
	cluster, dir := startLocalCluster(t, "access", testenv.ClusterOptions{Variant: &none, GatewayAPI: true, AccessPolicies: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rbac, err := accessRBACObjects(ownerID)
	require.NoError(t, err, "render the RBAC of a direct-mode install with access policies")
	saNamespace, saName := serviceAccountIdentity(rbac)
	require.NoError(t, ensureNamespace(ctx, cluster.Client, saNamespace))
	require.NoError(t, applyObjects(ctx, cluster.Client, rbac), "apply the RBAC of a direct-mode install with access policies")
	return &localProvider{variant: none, cluster: cluster, dir: dir,
		directKubeconfig: serviceAccountUser(t, cluster, saNamespace, saName),
		env:              append(os.Environ(), "POD_NAMESPACE="+saNamespace)}
}

// startLocalCluster starts a cluster with opts in a directory of its own; the cluster
// stops with t, and its directory (logs of every process) is kept when t fails.
func startLocalCluster(t *testing.T, name string, opts testenv.ClusterOptions) (*testenv.Cluster, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pic-e2e-"+name+"-")
	require.NoError(t, err)
	opts.Dir = dir
	start := time.Now()
	cluster, err := testenv.StartCluster(opts)
	require.NoError(t, err, "start the local cluster")
	t.Logf("local cluster (%s) ready in %s; files in %s", name, time.Since(start).Round(time.Millisecond), dir)
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stop the local cluster: %v", err)
		}
		if t.Failed() {
			t.Logf("kept the cluster's files (logs of etcd, kube-apiserver, kube-controller-manager and PIC) in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return cluster, dir
}

// serviceAccountUser provisions the user a ServiceAccount token would authenticate as
// (RBAC matches a ServiceAccount subject by this user name and these groups) and
// returns its kubeconfig.
func serviceAccountUser(t *testing.T, cluster *testenv.Cluster, namespace, name string) string {
	t.Helper()
	user := fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
	kubeconfig, err := cluster.AddUser(user, []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"})
	require.NoError(t, err)
	return kubeconfig
}

func (p *localProvider) Name() string               { return "local" }
func (p *localProvider) Variant() testenv.Variant   { return p.variant }
func (p *localProvider) Client() client.Client      { return p.cluster.Client }
func (p *localProvider) RESTConfig() *rest.Config   { return p.cluster.Config }
func (p *localProvider) StopAPIServer(t *testing.T) { require.NoError(t, p.cluster.StopAPIServer()) }
func (p *localProvider) StartAPIServer(t *testing.T) {
	require.NoError(t, p.cluster.StartAPIServer())
}

func (p *localProvider) ServePangolin(t *testing.T, h http.Handler) string {
	return servePangolinLocally(t, h)
}

func (p *localProvider) StartPIC(t *testing.T, opts PICOptions) []PIC {
	t.Helper()
	kubeconfig := p.ingressKubeconfig
	if opts.GatewayAPI {
		kubeconfig = p.kubeconfig
	}
	if opts.Pangolin != nil {
		kubeconfig = p.directKubeconfig
	}
	require.NotEmpty(t, kubeconfig, "this cluster runs PIC in direct mode only")
	args := []string{"--kubeconfig", kubeconfig, "--log-format", "console"}
	if opts.LeaderElect {
		args = append(args, "--leader-elect=true", "--leader-election-namespace", picNamespace)
	}
	if opts.ConfigFile != "" {
		path := filepath.Join(p.dir, fmt.Sprintf("pic-config-%d.yaml", p.seq+1))
		require.NoError(t, os.WriteFile(path, []byte(opts.ConfigFile), 0o600))
		args = append(args, "--config", path)
	}
	if opts.Pangolin != nil {
		path := filepath.Join(p.dir, fmt.Sprintf("pic-api-key-%d", p.seq+1))
		require.NoError(t, os.WriteFile(path, []byte(opts.Pangolin.APIKey+"\n"), 0o600))
		args = append(args, opts.Pangolin.args(path)...)
	}
	args = append(args, opts.Args...)
	n := max(opts.Replicas, 1)
	pics := make([]*localPIC, n)
	out := make([]PIC, n)
	for i := range pics {
		p.seq++
		name := fmt.Sprintf("pic-%d", p.seq)
		proc, err := testenv.NewProcess(name, managerBinary, filepath.Join(p.cluster.LogDir, name+".log"), args...)
		require.NoError(t, err)
		proc.Env = p.env
		lp := &localPIC{proc}
		require.NoError(t, proc.Start())
		// The spec's own cleanup stops the PICs it got; this one also stops those a
		// failure below left it without, before the cluster stops (cleanups run last
		// registered first).
		t.Cleanup(proc.Stop)
		pics[i], out[i] = lp, lp
	}
	for _, lp := range pics {
		require.NoError(t, waitReady(context.Background(), lp, lp.Alive), "PIC %s did not get ready; its log:\n%s", lp.Name(), lp.Log(t))
	}
	return out
}

// localPIC is PIC as a child process, through the harness shared with the benchmarks.
type localPIC struct{ *testenv.Process }

func (l *localPIC) Name() string { return l.Process.Name }

func (l *localPIC) Running(*testing.T) bool { return l.Alive() == nil }

func (l *localPIC) Get(ctx context.Context, e Endpoint, path string) (int, string, error) {
	addr := l.Metrics
	if e == Probes {
		addr = l.Probes
	}
	return testenv.Get(ctx, "http://"+addr+path, 5*time.Second)
}

// Stop sends SIGTERM and waits up to 30 s for a graceful exit, then kills.
func (l *localPIC) Stop(*testing.T) { l.Process.Stop() }

func (l *localPIC) Kill(*testing.T) { l.Process.Kill() }

func (l *localPIC) Start(t *testing.T) {
	t.Helper()
	require.NoError(t, l.Process.Start())
	require.NoError(t, waitReady(context.Background(), l, l.Alive), "PIC %s did not get ready; its log:\n%s", l.Name(), l.Log(t))
}

func (l *localPIC) Log(*testing.T) string { return l.Process.Log() }
