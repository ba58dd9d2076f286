package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// asManager makes the test binary run the manager itself (main's run) with the
// arguments after the binary's name, so that a test sees everything the real process
// prints, on stdout and stderr, klog's output included.
const asManager = "PIC_TEST_AS_MANAGER"

func TestMain(m *testing.M) {
	if os.Getenv(asManager) == "1" {
		os.Exit(run())
	}
	os.Exit(m.Run())
}

// Credentials the kubeconfigs carry. None may ever be printed.
const (
	secretToken    = "s3cr3t-b34r3r-t0k3n-0123456789abcdef"
	secretPassword = "hunter2-p4ssw0rd-value"
)

// runManager runs the manager as a process with args and env, until stop (if not nil)
// returns, then sends SIGTERM; it returns the exit code and all it printed.
func runManager(t *testing.T, env []string, stop func(), args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.SysProcAttr = testenv.ChildProcAttr() // dies with the test binary, interrupted or not
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIC_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append(env, asManager+"=1")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	if stop != nil {
		stop()
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	err := cmd.Wait()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, out.String()
}

// kubeconfig writes a kubeconfig for the env's API server with the given user.
func kubeconfig(t *testing.T, server *rest.Config, user *clientcmdapi.AuthInfo) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: server.Host, CertificateAuthorityData: server.CAData}
	cfg.AuthInfos["pic"] = user
	cfg.Contexts["pic"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "pic"}
	cfg.CurrentContext = "pic"
	file := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, file))
	return file
}

// leaks lists the credentials, or parts of them, that text contains.
func leaks(text string, admin *rest.Config) []string {
	var out []string
	for name, secret := range map[string]string{
		"the bearer token":                  secretToken,
		"the start of the bearer token":     secretToken[:12],
		"the password":                      secretPassword,
		"a PEM block (\"BEGIN\")":           "BEGIN",
		"the client key (base64)":           base64.StdEncoding.EncodeToString(admin.KeyData)[:40],
		"the client key (PEM body)":         strings.Split(string(admin.KeyData), "\n")[1],
		"the client certificate (base64)":   base64.StdEncoding.EncodeToString(admin.CertData)[:40],
		"the client certificate (PEM body)": strings.Split(string(admin.CertData), "\n")[1],
	} {
		if strings.Contains(text, secret) {
			out = append(out, name)
		}
	}
	return out
}

// TestNoCredentialInOutput runs the manager the way it is deployed, against a real API
// server, with kubeconfigs holding a client key, a bearer token or a password, and
// checks that nothing it prints (the configuration, its logs at debug level in both
// formats, client-go's own output, the error when the API server refuses the
// credentials) contains any of them.
func TestNoCredentialInOutput(t *testing.T) {
	testenv.SkipIfShort(t)
	variant, err := testenv.VariantByName(testenv.VariantFork)
	require.NoError(t, err)
	env, err := testenv.StartEnv(variant, false)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	admin, err := env.AddUser("pic-credentials-test", []string{"system:masters"})
	require.NoError(t, err)
	require.NotEmpty(t, admin.KeyData, "the admin user authenticates with a client key")

	// Something to reconcile, so that PIC logs what it does with it.
	ctx := context.Background()
	ns := testenv.NewNamespace(t, env.Client)
	for _, obj := range []client.Object{
		&tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}},
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}, Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("pangolin"), DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 8080}}},
			Rules: []networkingv1.IngressRule{{Host: "app.credentials.example.com"}, {Host: "*.credentials.example.com"}},
		}},
	} {
		require.NoError(t, env.Client.Create(ctx, obj))
	}

	// A client key and, beside it, a bearer token: both are sent, the key authenticates.
	withKey := kubeconfig(t, env.Config, &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertData, ClientKeyData: admin.KeyData, Token: secretToken})
	tokenOnly := kubeconfig(t, env.Config, &clientcmdapi.AuthInfo{Token: secretToken})
	passwordOnly := kubeconfig(t, env.Config, &clientcmdapi.AuthInfo{Username: "pic", Password: secretPassword})
	listeners := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}

	cases := []struct {
		name string
		env  []string
		args []string
		// running: the manager starts and serves until stopped; want is printed.
		running bool
		want    []string
	}{
		{"--print-config with --kubeconfig", nil, []string{"--print-config", "--kubeconfig=" + withKey}, false,
			[]string{"kubeconfig: " + withKey}},
		{"--print-config with PIC_KUBECONFIG", []string{"PIC_KUBECONFIG=" + tokenOnly}, []string{"--print-config"}, false,
			[]string{"kubeconfig: " + tokenOnly}},
		{"running, JSON logs at debug level", nil, append([]string{"--kubeconfig=" + withKey, "--log-level=debug", "--log-format=json"}, listeners...), true,
			[]string{"detected pangolin-operator CRD", "created PangolinResource", "WildcardHost"}},
		{"running, console logs at debug level", []string{"KUBECONFIG=" + withKey}, append([]string{"--log-level=debug", "--log-format=console"}, listeners...), true,
			[]string{"detected pangolin-operator CRD", "created PangolinResource", "WildcardHost"}},
		{"refused: an invalid bearer token", nil, append([]string{"--kubeconfig=" + tokenOnly, "--log-level=debug"}, listeners...), false,
			[]string{"the server has asked for the client to provide credentials"}},
		{"refused: a password", []string{"PIC_KUBECONFIG=" + passwordOnly}, append([]string{"--log-level=debug"}, listeners...), false,
			[]string{"check the kubeconfig, its credentials"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stop func()
			if tc.running {
				// Until PIC has published the Ingress and sent its Warning: every kind
				// of log line has been printed by then.
				stop = func() {
					require.EventuallyWithT(t, func(c *assert.CollectT) {
						var list tunnelv1alpha1.PangolinResourceList
						assert.NoError(c, env.Client.List(ctx, &list, client.InNamespace(ns)))
						assert.NotEmpty(c, list.Items)
					}, time.Minute, 200*time.Millisecond)
					time.Sleep(time.Second) // the Warning's log line and event follow the create
				}
				// An earlier run created the resource: delete it, so that this one does too.
				require.NoError(t, env.Client.DeleteAllOf(ctx, &tunnelv1alpha1.PangolinResource{}, client.InNamespace(ns)))
			}
			code, out := runManager(t, tc.env, stop, tc.args...)
			if tc.running || strings.HasPrefix(tc.name, "--print-config") {
				assert.Zero(t, code, "exit code; output:\n%s", out)
			} else {
				assert.NotZero(t, code, "exit code; output:\n%s", out)
			}
			// The output is what the test believes it is: the lines it expects are there.
			for _, want := range tc.want {
				assert.Contains(t, out, want)
			}
			assert.Empty(t, leaks(out, admin), "credentials in the output:\n%s", out)
			t.Logf("%d lines, %d bytes, no credential", strings.Count(out, "\n"), len(out))
		})
	}

	t.Run("the check finds what it looks for", func(t *testing.T) {
		for _, leaked := range []string{secretToken, "Authorization: Bearer " + secretToken[:12] + "...", secretPassword,
			"-----BEGIN RSA PRIVATE KEY-----", base64.StdEncoding.EncodeToString(admin.KeyData), string(admin.CertData)} {
			assert.NotEmpty(t, leaks("log line: "+leaked, admin), leaked)
		}
	})
}
