package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startTimeout is how long etcd and kube-apiserver may take to become healthy. envtest's
// 20 s default is too short on a loaded 2-core machine running several test packages.
const startTimeout = 90 * time.Second

// Env is an envtest control plane (etcd and kube-apiserver, no controllers) with one
// operator variant's CRDs installed.
type Env struct {
	Variant Variant
	// Config authenticates as an admin in system:masters.
	Config *rest.Config
	// Client is uncached and uses Scheme(), so reads see writes at once.
	Client client.Client

	env *envtest.Environment
}

// StartEnv starts a control plane with the variant's CRDs, PIC's own (AccessPolicy: every
// envtest suite runs with access policies on, as an install that enables them does, and
// as admin) and, if withGatewayAPI, the standard Gateway API CRDs, and waits until they
// are established.
func StartEnv(variant Variant, withGatewayAPI bool) (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	paths, err := crdPaths(&variant, withGatewayAPI, true)
	if err != nil {
		return nil, err
	}
	te, err := newEnvironment(assets, paths, &envtest.APIServer{}, &envtest.Etcd{})
	if err != nil {
		return nil, err
	}
	cfg, err := te.Start()
	if err != nil {
		// Start can fail after etcd is up: do not leave processes behind.
		return nil, errors.Join(fmt.Errorf("start envtest for %s variant: %w", variant.Name, err), te.Stop())
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create envtest client: %w", err), te.Stop())
	}
	return &Env{Variant: variant, Config: cfg, Client: c, env: te}, nil
}

// newEnvironment configures envtest; apiServer may carry directories and outputs.
func newEnvironment(assets string, crdPaths []string, apiServer *envtest.APIServer, etcd *envtest.Etcd) (*envtest.Environment, error) {
	// envtest would take both ports from the kernel's ephemeral range, where an
	// outgoing connection can take them before the processes bind them, or while
	// kube-apiserver is stopped for an outage test and is to serve again on its port.
	apiPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	etcdAddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	apiServer.SecureServing.Address = "127.0.0.1"
	apiServer.SecureServing.Port = strconv.Itoa(apiPort)
	etcd.URL = &url.URL{Scheme: "http", Host: etcdAddr}
	// Without a watch termination grace period the API server ends watches only when
	// its 60 s shutdown timeout expires, so stopping it under a running controller or
	// kube-controller-manager would take a minute. With it, watches end at once and
	// clients re-list, as they do when a real API server rolls.
	apiServer.Configure().Set("shutdown-watch-termination-grace-period", "2s")
	// RBAC is envtest's default; set it explicitly because RBAC tests and the e2e
	// suite rely on it to prove that the rendered RBAC is enough.
	apiServer.Configure().Set("authorization-mode", "RBAC")
	// As on OpenShift and hardened clusters: an owner reference with blockOwnerDeletion
	// needs update on the owner's finalizers, which the rendered RBAC must then grant.
	apiServer.Configure().Set("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	// Stopped in order by Stop; killed by the kernel if the test binary or the demo dies
	// first (SIGKILL, a test timeout), so that nothing outlives them.
	apiServer.Path = diesWithParent(filepath.Join(assets, "kube-apiserver"))
	etcd.Path = diesWithParent(filepath.Join(assets, "etcd"))
	return &envtest.Environment{
		ControlPlane:          envtest.ControlPlane{APIServer: apiServer, Etcd: etcd},
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: crdPaths},
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
		// Never let USE_EXISTING_CLUSTER point the tests at a real cluster.
		UseExistingCluster:       ptr.To(false),
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}, nil
}

// AddUser returns a config that authenticates as a user with the given groups and no
// other rights, to check that rendered RBAC is enough.
func (e *Env) AddUser(name string, groups []string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, baseConfig())
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	return u.Config(), nil
}

// baseConfig is the starting point of every user's config. The API server is local and
// private to the test, so client-side throttling would only slow tests down.
func baseConfig() *rest.Config {
	return &rest.Config{QPS: 1000, Burst: 2000}
}

// Stop stops kube-apiserver and etcd and removes their data.
func (e *Env) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("stop envtest for %s variant: %w", e.Variant.Name, err)
	}
	return nil
}

// Shared envs, one per variant per test binary: starting a control plane takes
// seconds, so ForEachVariant reuses it across tests. Main stops them.
var (
	sharedMu   sync.Mutex
	mainActive bool
	shared     = map[string]*sharedEnv{}
)

type sharedEnv struct {
	env *Env
	err error
}

// Main runs the package's tests and then stops the envs ForEachVariant started. Call it
// from TestMain in every package that uses ForEachVariant:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	sharedMu.Lock()
	mainActive = true
	sharedMu.Unlock()

	code := m.Run()

	sharedMu.Lock()
	defer sharedMu.Unlock()
	for name, s := range shared {
		if s.env == nil {
			continue
		}
		if err := s.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		delete(shared, name)
	}
	os.Exit(code)
}

// ForEachVariant runs fn as a subtest per operator variant, named after it, against an
// env with that variant's CRDs and the Gateway API CRDs. The env is started on first
// use and shared by every test of the package, so tests must not depend on a clean
// cluster: create objects in a namespace of their own (NewNamespace). It skips under
// -short.
func ForEachVariant(t *testing.T, fn func(t *testing.T, env *Env)) {
	t.Helper()
	SkipIfShort(t)
	for _, v := range Variants() {
		t.Run(v.Name, func(t *testing.T) {
			env, err := sharedEnvFor(v)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, env)
		})
	}
}

// WithoutOperator runs fn against a shared env with the Gateway API CRDs and no
// pangolin-operator CRD (VariantNone), once: the direct sink needs none, and its tests
// prove it. Like ForEachVariant, it needs Main, and skips under -short.
func WithoutOperator(t *testing.T, fn func(t *testing.T, env *Env)) {
	t.Helper()
	SkipIfShort(t)
	env, err := sharedEnvFor(Variant{Name: VariantNone})
	if err != nil {
		t.Fatal(err)
	}
	fn(t, env)
}

func sharedEnvFor(v Variant) (*Env, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	// Without Main nothing would stop the processes, and they would outlive the test.
	if !mainActive {
		return nil, errors.New("testenv.ForEachVariant needs func TestMain(m *testing.M) { testenv.Main(m) } in the package")
	}
	s, ok := shared[v.Name]
	if !ok {
		// A failed start is remembered so that every later test fails fast with the
		// same error instead of retrying a slow start.
		s = &sharedEnv{}
		s.env, s.err = StartEnv(v, true)
		shared[v.Name] = s
	}
	return s.env, s.err
}

// SkipIfShort skips a test that needs a control plane under go test -short (make
// test-unit), which must run without one: no build, no etcd, no kube-apiserver.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a control plane (etcd, kube-apiserver); skipped with -short")
	}
}

// NewNamespace creates a namespace with a unique name for one test and returns its
// name. It is not deleted: envtest runs no namespace controller, so deletion would
// never finish, and the env is thrown away at the end anyway.
func NewNamespace(t testing.TB, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("create test namespace: %v", err)
	}
	return ns.Name
}

// Update reads the object named key, applies mutate and writes it back, again (from a
// fresh read) until the write goes through or timeout: another writer (PIC's status,
// the API server's defaults) may have changed the object since it was read.
func Update[T any, P interface {
	*T
	client.Object
}](ctx context.Context, c client.Client, key client.ObjectKey, mutate func(P), timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj := P(new(T))
		if last = c.Get(ctx, key, obj); last != nil {
			return false, nil
		}
		mutate(obj)
		last = c.Update(ctx, obj)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("update %T %s: %w", P(nil), key, last)
	}
	return err
}
