package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kcmControllers are the controllers a cluster runs: enough for ownerReferences and
// namespace deletion to behave as in a real cluster, which envtest alone does not give.
const kcmControllers = "garbage-collector-controller,namespace-controller"

// ClusterOptions configures StartCluster.
type ClusterOptions struct {
	// Dir receives the admin kubeconfig, users' kubeconfigs, certificates and logs. It
	// is kept after Stop so a failed run can be inspected. Empty means a temporary
	// directory that Stop removes.
	Dir string
	// Variant selects the operator CRDs to install; nil installs none.
	Variant *Variant
	// GatewayAPI installs the standard Gateway API CRDs.
	GatewayAPI bool
	// AccessPolicies installs PIC's AccessPolicy CRD. PIC then needs the rules of
	// config/rbac/access-policies, which the default installs do not grant.
	AccessPolicies bool
}

// Cluster is a local control plane for e2e runs and the demo: etcd, kube-apiserver with
// RBAC authorization, and kube-controller-manager running the garbage collector and
// namespace controllers.
type Cluster struct {
	// Dir holds everything the cluster writes; see ClusterOptions.Dir.
	Dir string
	// LogDir holds etcd.log, kube-apiserver.log and kube-controller-manager.log.
	LogDir string
	// KubeconfigPath is an admin (system:masters) kubeconfig.
	KubeconfigPath string
	// Config and Client are admin; Client is uncached and uses Scheme().
	Config *rest.Config
	Client client.Client

	env    *envtest.Environment
	ownDir bool
	logs   []*os.File
	kcm    *child

	mu         sync.Mutex // serialises API server stop/start and Stop
	apiStopped bool
	stopped    bool
}

// StartCluster starts a cluster and returns once the API server is ready, the CRDs are
// established and kube-controller-manager is healthy.
func StartCluster(opts ClusterOptions) (_ *Cluster, err error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	kcmPath := filepath.Join(assets, "kube-controller-manager")
	if _, err := os.Stat(kcmPath); err != nil {
		return nil, fmt.Errorf("find kube-controller-manager in %s: %w", assets, err)
	}
	paths, err := crdPaths(opts.Variant, opts.GatewayAPI, opts.AccessPolicies)
	if err != nil {
		return nil, err
	}

	c := &Cluster{Dir: opts.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "pic-cluster-"); err != nil {
			return nil, fmt.Errorf("create cluster dir: %w", err)
		}
		c.ownDir = true
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	c.LogDir = filepath.Join(c.Dir, "logs")
	// The API server's certificates must live in a directory we own: envtest deletes
	// its own temporary one on stop and would mint a new CA on restart, breaking every
	// client. A directory left by an earlier run would be reused with a CA envtest no
	// longer knows, so start from an empty one.
	certDir := filepath.Join(c.Dir, "kube-apiserver")
	kcmDir := filepath.Join(c.Dir, "kube-controller-manager")
	// etcd's data lives in Dir too, not in a temporary directory of envtest's: a run
	// that is killed before Stop leaves nothing outside Dir, which the next run clears.
	etcdDir := filepath.Join(c.Dir, "etcd")
	for _, d := range []string{certDir, kcmDir, etcdDir} {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("clean cluster dir: %w", err)
		}
	}
	for _, d := range []string{c.LogDir, certDir, kcmDir, etcdDir, filepath.Join(c.Dir, "users")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("create cluster dir: %w", err)
		}
	}
	etcdLog, err := c.openLog("etcd.log")
	if err != nil {
		return nil, err
	}
	apiLog, err := c.openLog("kube-apiserver.log")
	if err != nil {
		return nil, err
	}

	c.env, err = newEnvironment(assets, paths,
		&envtest.APIServer{CertDir: certDir, Out: apiLog, Err: apiLog},
		&envtest.Etcd{DataDir: etcdDir, Out: etcdLog, Err: etcdLog})
	if err != nil {
		return nil, err
	}
	if c.Config, err = c.env.Start(); err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c.KubeconfigPath = filepath.Join(c.Dir, "admin.kubeconfig")
	if err := os.WriteFile(c.KubeconfigPath, c.env.KubeConfig, 0o600); err != nil {
		return nil, fmt.Errorf("write admin kubeconfig: %w", err)
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: Scheme()}); err != nil {
		return nil, fmt.Errorf("create cluster client: %w", err)
	}
	if err := c.startKCM(kcmPath, kcmDir); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(c.LogDir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	c.logs = append(c.logs, f)
	return f, nil
}

func (c *Cluster) startKCM(path, certDir string) error {
	log, err := c.openLog("kube-controller-manager.log")
	if err != nil {
		return err
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	// Secure serving stays on, bound to loopback, only so that /healthz tells when the
	// controllers are running. /healthz is always allowed without authentication, so no
	// --authentication-kubeconfig: it would only make kube-controller-manager look for
	// a request-header CA that this API server does not have, and log errors about it.
	cmd := exec.Command(path,
		"--kubeconfig="+c.KubeconfigPath,
		"--controllers="+kcmControllers,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+certDir,
	)
	cmd.Stdout = log
	cmd.Stderr = log
	if c.kcm, err = startChild(cmd); err != nil {
		return fmt.Errorf("start kube-controller-manager: %w", err)
	}

	hc := &http.Client{
		Timeout: 2 * time.Second,
		// The serving certificate is self-signed and only the status code matters.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed, see above
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-c.kcm.done:
			return false, fmt.Errorf("exited: %s", cmd.ProcessState)
		default:
		}
		resp, err := hc.Get(url)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("wait for kube-controller-manager (see %s): %w", log.Name(), err)
	}
	return nil
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// AddUser provisions a client-certificate user with the given groups and no other
// rights, and writes its kubeconfig to Dir/users. The e2e suite runs the controller
// with it after applying the rendered RBAC, so missing permissions fail the run.
func (c *Cluster) AddUser(name string, groups []string) (string, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, baseConfig())
	if err != nil {
		return "", fmt.Errorf("add user %s: %w", name, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("render kubeconfig of user %s: %w", name, err)
	}
	path := filepath.Join(c.Dir, "users", unsafeFileChars.ReplaceAllString(name, "_")+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write kubeconfig of user %s: %w", name, err)
	}
	return path, nil
}

// APIServerURL returns the API server's address, which stays the same across
// StopAPIServer and StartAPIServer.
func (c *Cluster) APIServerURL() string {
	return c.Config.Host
}

// StopAPIServer stops kube-apiserver, leaving etcd and kube-controller-manager running,
// to simulate an API server outage.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apiStopped {
		return nil
	}
	if err := c.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	c.apiStopped = true
	return nil
}

// StartAPIServer restarts kube-apiserver after StopAPIServer on the same address, with
// the same certificates, so existing kubeconfigs and clients keep working, and waits
// until it is ready.
func (c *Cluster) StartAPIServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.apiStopped {
		return nil
	}
	s := c.env.ControlPlane.APIServer
	before := s.SecureServing.HostPort()
	// envtest keeps the port, the certificate directory and the client CA in the
	// APIServer value, so Start serves again where clients expect it. The port may
	// linger in TIME_WAIT for a moment; Start's health check waits for that.
	if err := s.Start(); err != nil {
		return fmt.Errorf("restart kube-apiserver: %w", err)
	}
	c.apiStopped = false
	if after := s.SecureServing.HostPort(); after != before {
		return fmt.Errorf("restart kube-apiserver: address changed from %s to %s", before, after)
	}
	return c.waitReady()
}

// waitReady waits for /readyz: /healthz, which envtest waits for, can pass before the
// API server has loaded the CRDs back from etcd.
func (c *Cluster) waitReady() error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("create readiness client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for kube-apiserver to be ready: %w", err)
	}
	return nil
}

// Stop stops kube-controller-manager, kube-apiserver and etcd, and removes Dir if
// StartCluster created it.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var errs []error
	if c.kcm != nil {
		c.kcm.stop(syscall.SIGTERM, 15*time.Second)
	}
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop control plane: %w", err))
		}
	}
	for _, f := range c.logs {
		_ = f.Close()
	}
	if c.ownDir {
		if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, fmt.Errorf("remove cluster dir: %w", err))
		}
	}
	return errors.Join(errs...)
}
