package e2e

// The kind provider (E2E_CLUSTER=kind) runs the specs against PIC deployed in a kind
// cluster the way a user deploys it: the image built from the Dockerfile, loaded with
// `kind load docker-image`, and config/gateway-api (config/default + Gateway API RBAC) applied with kustomize. It needs docker
// and kind on PATH (kubectl is not used: logs come from the pods/log API and metrics
// and probes through the API server's pod proxy).
//
// It cannot run where the suite is developed (no Docker engine there); it is written
// for GitHub Actions' ubuntu runners, which have docker and can install kind:
//
//	E2E_CLUSTER=kind make test-e2e
//
// Environment:
//
//	E2E_KIND_CLUSTER      kind cluster name (default pic-e2e); created unless it exists,
//	                      and deleted at the end if the suite created it (E2E_KIND_KEEP=1
//	                      keeps it)
//	E2E_KIND_USE_CURRENT  1: use the current kubeconfig context instead; it must be a
//	                      disposable kind cluster without pangolin-operator, since the
//	                      suite installs each variant's CRDs in turn
//	E2E_IMAGE             image tag to build and load (default pangolin-ingress-controller:e2e)
//	E2E_SKIP_BUILD        1: do not run docker build (the image is already built)

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

const (
	kindConfigMap = "pic-e2e-config"
	kindConfigDir = "/etc/pic-e2e"
	// kindAPIKeySecret holds the direct-mode spec's Pangolin API key, mounted in kindAPIKeyDir.
	kindAPIKeySecret = "pic-e2e-pangolin-api-key"
	kindAPIKeyDir    = "/etc/pic-e2e-pangolin"
	kindCRDLabel     = "pic-e2e"
	kindRollout      = 3 * time.Minute
	kindAPITimeout   = 3 * time.Minute
)

// kindCluster is the kind cluster shared by both variants; set up once.
type kindCluster struct {
	name     string
	created  bool // by the suite, so it deletes it
	cfg      *rest.Config
	c        client.Client
	cs       *kubernetes.Clientset
	deploy   types.NamespacedName
	baseArgs []string // the container's args in config/gateway-api
	metrics  int      // container ports of the metrics and probe listeners
	probes   int
	variant  string // whose CRDs are installed
	runs     int
}

var (
	kindOnce  sync.Once
	kindErr   error
	kindState *kindCluster
)

func newKindProvider(t *testing.T, v testenv.Variant) Provider {
	t.Helper()
	kindOnce.Do(func() { kindState, kindErr = setupKind() })
	require.NoError(t, kindErr, "set up the kind cluster")
	k := kindState
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, k.installVariant(ctx, v), "install the %s CRDs", v.Name)
	return &kindProvider{k: k, variant: v}
}

func run1(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "e2e: %s %s\n", name, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func output(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func setupKind() (*kindCluster, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	k := &kindCluster{name: os.Getenv("E2E_KIND_CLUSTER")}
	if os.Getenv("E2E_KIND_USE_CURRENT") == "1" {
		raw, err := clientcmd.NewDefaultClientConfigLoadingRules().Load()
		if err != nil {
			return nil, fmt.Errorf("load the current kubeconfig: %w", err)
		}
		if k.name == "" {
			k.name = strings.TrimPrefix(raw.CurrentContext, "kind-")
		}
		k.cfg, err = clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("current kubeconfig context: %w", err)
		}
	} else {
		if k.name == "" {
			k.name = "pic-e2e"
		}
		clusters, err := output("kind", "get", "clusters")
		if err != nil {
			return nil, err
		}
		if !slices.Contains(strings.Fields(clusters), k.name) {
			if err := run1("kind", "create", "cluster", "--name", k.name, "--wait", "180s"); err != nil {
				return nil, err
			}
			k.created = true
		}
		kc, err := output("kind", "get", "kubeconfig", "--name", k.name)
		if err != nil {
			return nil, err
		}
		if k.cfg, err = clientcmd.RESTConfigFromKubeConfig([]byte(kc)); err != nil {
			return nil, err
		}
	}
	k.cfg.QPS, k.cfg.Burst = 100, 200
	if k.c, err = client.New(k.cfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if k.cs, err = kubernetes.NewForConfig(k.cfg); err != nil {
		return nil, err
	}

	image := os.Getenv("E2E_IMAGE")
	if image == "" {
		image = "pangolin-ingress-controller:e2e"
	}
	if os.Getenv("E2E_SKIP_BUILD") != "1" {
		if err := run1("docker", "build", "-t", image, root); err != nil {
			return nil, err
		}
	}
	if err := run1("kind", "load", "docker-image", image, "--name", k.name); err != nil {
		return nil, err
	}

	// The Gateway API overlay is config/default plus the opt-in Gateway API RBAC and
	// GatewayClass, so the HTTPRoute spec runs too; each spec picks its --sources.
	gatewayCRDs, err := testenv.GatewayAPICRDFiles()
	if err != nil {
		return nil, err
	}
	if _, err := installCRDs(context.Background(), k.c, gatewayCRDs); err != nil {
		return nil, fmt.Errorf("install the Gateway API CRDs: %w", err)
	}
	dir := filepath.Join(root, "config", "gateway-api")
	if !hasKustomization(dir) {
		return nil, fmt.Errorf("%s has no kustomization: the kind provider deploys PIC with it", dir)
	}
	objs, err := kustomize(dir, "")
	if err != nil {
		return nil, err
	}
	// The Deployment starts with no replica: each spec starts PIC with its own flags.
	var deploys []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deploys = append(deploys, o)
		}
	}
	if len(deploys) != 1 {
		return nil, fmt.Errorf("config/gateway-api renders %d Deployments, want 1", len(deploys))
	}
	var d appsv1.Deployment
	if err := runtimeConvert(deploys[0], &d); err != nil {
		return nil, err
	}
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return nil, errors.New("config/gateway-api's Deployment has no container")
	}
	ctr := &d.Spec.Template.Spec.Containers[0]
	ctr.Image, ctr.ImagePullPolicy = image, corev1.PullIfNotPresent
	d.Spec.Replicas = ptr.To[int32](0)
	k.deploy = types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	k.baseArgs, k.metrics, k.probes = listenerArgs(append(slices.Clone(ctr.Command[min(1, len(ctr.Command)):]), ctr.Args...))
	ctr.Command = nil // the image's entrypoint is /manager
	if err := runtimeConvert(&d, deploys[0]); err != nil {
		return nil, err
	}
	// The service source's RBAC, as the services Component adds it, and list on pods,
	// as the health-checks one does, so that the direct spec's LoadBalancer Services
	// and health checks run too.
	for _, rbac := range [][]string{{"services"}, {"pangolinresource", "services"}, {"health-checks"}} {
		more, err := kustomize(filepath.Join(append([]string{root, "config", "rbac"}, rbac...)...), d.Namespace)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := applyObjects(ctx, k.c, objs); err != nil {
		return nil, err
	}
	return k, nil
}

// listenerArgs drops the metrics and probe address flags from args and returns the
// ports they used (PIC's defaults, 8080 and 8081, when absent or disabled); the suite
// sets both flags explicitly on those ports so the Deployment's probes keep working.
func listenerArgs(args []string) (rest []string, metrics, probes int) {
	metrics, probes = 8080, 8081
	port := func(v string, def int) int {
		if i := strings.LastIndex(v, ":"); i >= 0 {
			if n, err := strconv.Atoi(v[i+1:]); err == nil && n > 0 {
				return n
			}
		}
		return def
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, f := range []string{"--metrics-bind-address", "--health-probe-bind-address"} {
			if a != f && !strings.HasPrefix(a, f+"=") {
				continue
			}
			v, ok := strings.CutPrefix(a, f+"=")
			if !ok && i+1 < len(args) {
				i++
				v = args[i]
			}
			if f == "--metrics-bind-address" {
				metrics = port(v, metrics)
			} else {
				probes = port(v, probes)
			}
			a = ""
		}
		if a != "" {
			rest = append(rest, a)
		}
	}
	return rest, metrics, probes
}

func runtimeConvert(from, to any) error {
	switch f := from.(type) {
	case *unstructured.Unstructured:
		return runtime.DefaultUnstructuredConverter.FromUnstructured(f.Object, to)
	default:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(from)
		if err != nil {
			return err
		}
		to.(*unstructured.Unstructured).Object = m
		return nil
	}
}

// installVariant replaces the operator CRDs by the variant's; VariantNone removes them.
func (k *kindCluster) installVariant(ctx context.Context, v testenv.Variant) error {
	if k.variant == v.Name {
		return nil
	}
	if v.CRDDir == "" {
		if err := k.removeSuiteCRDs(ctx); err != nil {
			return err
		}
		k.variant = v.Name
		return nil
	}
	files, err := testenv.CRDFiles(v.CRDDir)
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		o, err := testenv.DecodeYAML(data)
		if err != nil {
			return err
		}
		objs = append(objs, o...)
	}
	for _, o := range objs {
		var crd apiextensionsv1.CustomResourceDefinition
		err := k.c.Get(ctx, client.ObjectKey{Name: o.GetName()}, &crd)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return err
		case crd.Labels[kindCRDLabel] != "true":
			return fmt.Errorf("CRD %s exists and was not installed by this suite: use a cluster without pangolin-operator", o.GetName())
		}
		if err := k.c.Delete(ctx, &crd); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(k.c.Get(ctx, client.ObjectKey{Name: o.GetName()}, &crd)), nil
		}); err != nil {
			return fmt.Errorf("wait for CRD %s to be deleted: %w", o.GetName(), err)
		}
	}
	for _, o := range objs {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[kindCRDLabel] = "true"
		o.SetLabels(l)
	}
	if err := applyObjects(ctx, k.c, objs); err != nil {
		return err
	}
	if _, err := installCRDs(ctx, k.c, files); err != nil { // waits until established
		return err
	}
	k.variant = v.Name
	return nil
}

// removeSuiteCRDs deletes the operator CRDs the suite installed, and waits until they
// are gone.
func (k *kindCluster) removeSuiteCRDs(ctx context.Context) error {
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := k.c.List(ctx, &crds, client.MatchingLabels{kindCRDLabel: "true"}); err != nil {
		return err
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if err := k.c.Delete(ctx, crd); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(k.c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})), nil
		}); err != nil {
			return fmt.Errorf("wait for CRD %s to be deleted: %w", crd.Name, err)
		}
	}
	return nil
}

// teardownKind runs after every test: it removes the suite's namespaces and the cluster
// it created.
func teardownKind() error {
	if kindState == nil {
		return nil
	}
	k := kindState
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []error
	if err := k.scale(ctx, 0); err != nil {
		errs = append(errs, err)
	}
	var nss corev1.NamespaceList
	if err := k.c.List(ctx, &nss, client.MatchingLabels{"pic-e2e": "true"}); err != nil {
		errs = append(errs, err)
	}
	for i := range nss.Items {
		if err := k.c.Delete(ctx, &nss.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if k.created && os.Getenv("E2E_KIND_KEEP") != "1" {
		errs = append(errs, run1("kind", "delete", "cluster", "--name", k.name))
	}
	return errors.Join(errs...)
}

func (k *kindCluster) scale(ctx context.Context, n int32) error {
	var d appsv1.Deployment
	if err := k.c.Get(ctx, k.deploy, &d); err != nil {
		return err
	}
	d.Spec.Replicas = ptr.To(n)
	if err := k.c.Update(ctx, &d); err != nil {
		return err
	}
	return k.waitRollout(ctx, n)
}

// waitRollout waits until the Deployment runs exactly n ready pods of its current
// template, and no other pod.
func (k *kindCluster) waitRollout(ctx context.Context, n int32) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, kindRollout, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := k.c.Get(ctx, k.deploy, &d); err != nil {
			return false, nil
		}
		pods, err := k.pods(ctx, &d)
		if err != nil {
			return false, nil
		}
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == n && s.ReadyReplicas == n &&
			s.Replicas == n && len(pods) == int(n), nil
	})
}

// pods are the Deployment's pods, terminating ones included.
func (k *kindCluster) pods(ctx context.Context, d *appsv1.Deployment) ([]corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	var list corev1.PodList
	if err := k.c.List(ctx, &list, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

func (k *kindCluster) readyPods(ctx context.Context) ([]corev1.Pod, error) {
	var d appsv1.Deployment
	if err := k.c.Get(ctx, k.deploy, &d); err != nil {
		return nil, err
	}
	pods, err := k.pods(ctx, &d)
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// kindProvider is one variant on the shared kind cluster.
type kindProvider struct {
	k       *kindCluster
	variant testenv.Variant
}

func (p *kindProvider) Name() string             { return "kind" }
func (p *kindProvider) Variant() testenv.Variant { return p.variant }
func (p *kindProvider) Client() client.Client    { return p.k.c }
func (p *kindProvider) RESTConfig() *rest.Config { return p.k.cfg }

// StartPIC rolls the Deployment out with the spec's flags and replicas.
func (p *kindProvider) StartPIC(t *testing.T, opts PICOptions) []PIC {
	t.Helper()
	k := p.k
	ctx, cancel := context.WithTimeout(context.Background(), kindRollout+time.Minute)
	defer cancel()
	n := int32(max(opts.Replicas, 1))
	k.runs++

	args := slices.DeleteFunc(slices.Clone(k.baseArgs), func(a string) bool {
		return strings.HasPrefix(a, "--leader-elect") || strings.HasPrefix(a, "--config") || strings.HasPrefix(a, "--sources")
	})
	args = append(args,
		fmt.Sprintf("--metrics-bind-address=:%d", k.metrics),
		fmt.Sprintf("--health-probe-bind-address=:%d", k.probes),
		fmt.Sprintf("--leader-elect=%t", opts.LeaderElect),
		"--leader-election-namespace="+k.deploy.Namespace)
	if opts.Pangolin != nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: kindAPIKeySecret, Namespace: k.deploy.Namespace},
			StringData: map[string]string{"api-key": opts.Pangolin.APIKey},
		}
		if err := k.c.Create(ctx, secret); apierrors.IsAlreadyExists(err) {
			require.NoError(t, k.c.Update(ctx, secret))
		} else {
			require.NoError(t, err)
		}
		args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "--sink") })
		args = append(args, opts.Pangolin.args(kindAPIKeyDir+"/api-key")...)
	}
	if opts.ConfigFile != "" {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: kindConfigMap, Namespace: k.deploy.Namespace},
			Data:       map[string]string{"config.yaml": opts.ConfigFile},
		}
		if err := k.c.Create(ctx, cm); apierrors.IsAlreadyExists(err) {
			require.NoError(t, k.c.Update(ctx, cm))
		} else {
			require.NoError(t, err)
		}
		args = append(args, "--config="+kindConfigDir+"/config.yaml")
	}
	args = append(args, opts.Args...)

	var d appsv1.Deployment
	require.NoError(t, k.c.Get(ctx, k.deploy, &d))
	spec := &d.Spec.Template.Spec
	ctr := &spec.Containers[0]
	ctr.Args = args
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == kindConfigMap })
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == kindConfigMap })
	if opts.ConfigFile != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: kindConfigMap, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: kindConfigMap}},
		}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: kindConfigMap, MountPath: kindConfigDir, ReadOnly: true})
	}
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == kindAPIKeySecret })
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == kindAPIKeySecret })
	if opts.Pangolin != nil { // the key as a file from a Secret, as a direct-mode install mounts it
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: kindAPIKeySecret, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: kindAPIKeySecret},
		}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: kindAPIKeySecret, MountPath: kindAPIKeyDir, ReadOnly: true})
	}
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	// New pods for every spec, even when the flags are the same.
	d.Spec.Template.Annotations["pic-e2e/run"] = strconv.Itoa(k.runs)
	d.Spec.Replicas = ptr.To(n)
	require.NoError(t, k.c.Update(ctx, &d))
	require.NoError(t, k.waitRollout(ctx, n), "roll out PIC")

	pods, err := k.readyPods(ctx)
	require.NoError(t, err)
	require.Len(t, pods, int(n))
	out := make([]PIC, 0, n)
	set := &[]*kindPIC{}
	for _, pod := range pods {
		kp := &kindPIC{k: k, replicas: n, set: set}
		kp.attach(pod)
		require.NoError(t, waitReady(ctx, kp, func() error { return nil }))
		*set = append(*set, kp)
		out = append(out, kp)
	}
	return out
}

// ServePangolin serves h on the kind network's gateway address, where the pods reach
// this host (the Docker provider, network "kind"), and nowhere else.
func (p *kindProvider) ServePangolin(t *testing.T, h http.Handler) string {
	t.Helper()
	gateways, err := output("docker", "network", "inspect", "kind", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}")
	require.NoError(t, err, "find the kind network's gateway")
	gateway := ""
	for _, g := range strings.Fields(gateways) {
		if ip := net.ParseIP(g); ip != nil && ip.To4() != nil {
			gateway = g
		}
	}
	require.NotEmpty(t, gateway, "the kind network has no IPv4 gateway: %q", gateways)
	l, err := net.Listen("tcp", net.JoinHostPort(gateway, "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return fmt.Sprintf("http://%s/v1", net.JoinHostPort(gateway, strconv.Itoa(l.Addr().(*net.TCPAddr).Port)))
}

func (p *kindProvider) controlPlaneNode() string { return p.k.name + "-control-plane" }

// StopAPIServer moves the API server's static pod manifest away, so the kubelet stops it.
func (p *kindProvider) StopAPIServer(t *testing.T) {
	t.Helper()
	require.NoError(t, run1("docker", "exec", p.controlPlaneNode(), "mv",
		"/etc/kubernetes/manifests/kube-apiserver.yaml", "/etc/kubernetes/kube-apiserver.yaml.e2e"))
	ctx, cancel := context.WithTimeout(context.Background(), kindAPITimeout)
	defer cancel()
	require.NoError(t, wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := p.k.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err != nil, nil
	}), "the API server did not stop")
}

// StartAPIServer puts the manifest back and waits until the API server is ready.
func (p *kindProvider) StartAPIServer(t *testing.T) {
	t.Helper()
	require.NoError(t, run1("docker", "exec", p.controlPlaneNode(), "mv",
		"/etc/kubernetes/kube-apiserver.yaml.e2e", "/etc/kubernetes/manifests/kube-apiserver.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), kindAPITimeout)
	defer cancel()
	require.NoError(t, wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := p.k.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	}), "the API server did not come back")
}

// kindPIC is one pod of the Deployment.
type kindPIC struct {
	k        *kindCluster
	replicas int32
	set      *[]*kindPIC // the replicas started together, which Stop scales down together
	mu       sync.Mutex
	pod      string
	uid      types.UID
	restarts int32
	logs     []string // logs of this handle's earlier pods
}

func (p *kindPIC) attach(pod corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pod, p.uid, p.restarts = pod.Name, pod.UID, 0
	for _, s := range pod.Status.ContainerStatuses {
		p.restarts += s.RestartCount
	}
}

func (p *kindPIC) Name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pod
}

func (p *kindPIC) Get(ctx context.Context, e Endpoint, path string) (int, string, error) {
	port := p.k.metrics
	if e == Probes {
		port = p.k.probes
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res := p.k.cs.CoreV1().RESTClient().Get().Namespace(p.k.deploy.Namespace).Resource("pods").
		Name(fmt.Sprintf("%s:%d", p.Name(), port)).SubResource("proxy").Suffix(path).Do(ctx)
	var code int
	res.StatusCode(&code)
	body, err := res.Raw()
	if code != 0 {
		err = nil // a non-2xx answer is still an answer
	}
	return code, string(body), err
}

// saveLog keeps the current pod's log before the pod goes away.
func (p *kindPIC) saveLog(ctx context.Context) {
	log := p.fetchLog(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.logs = append(p.logs, log)
	p.pod = ""
}

func (p *kindPIC) fetchLog(ctx context.Context) string {
	name := p.Name()
	if name == "" {
		return ""
	}
	var b strings.Builder
	for _, previous := range []bool{true, false} {
		data, err := p.k.cs.CoreV1().Pods(p.k.deploy.Namespace).GetLogs(name, &corev1.PodLogOptions{Previous: previous}).DoRaw(ctx)
		if err == nil {
			fmt.Fprintf(&b, "=== e2e: pod %s (previous container: %t)\n%s", name, previous, data)
		}
	}
	return b.String()
}

func (p *kindPIC) Stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kindRollout)
	defer cancel()
	if p.Name() == "" {
		return
	}
	// Scaling down ends every replica: keep all their logs first.
	for _, r := range *p.set {
		if r.Name() != "" {
			r.saveLog(ctx)
		}
	}
	require.NoError(t, p.k.scale(ctx, 0))
}

func (p *kindPIC) Kill(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := p.Name()
	if name == "" {
		return
	}
	p.saveLog(ctx)
	err := p.k.cs.CoreV1().Pods(p.k.deploy.Namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if !apierrors.IsNotFound(err) {
		require.NoError(t, err)
	}
}

func (p *kindPIC) Start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kindRollout+time.Minute)
	defer cancel()
	require.NoError(t, p.k.scale(ctx, p.replicas))
	pods, err := p.k.readyPods(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, pods)
	p.attach(pods[0])
	require.NoError(t, waitReady(ctx, p, func() error { return nil }))
}

func (p *kindPIC) Running(t *testing.T) bool {
	t.Helper()
	p.mu.Lock()
	name, uid, restarts := p.pod, p.uid, p.restarts
	p.mu.Unlock()
	if name == "" {
		return false
	}
	var pod corev1.Pod
	if err := p.k.c.Get(context.Background(), types.NamespacedName{Namespace: p.k.deploy.Namespace, Name: name}, &pod); err != nil {
		t.Logf("get pod %s: %v", name, err)
		return false
	}
	var now int32
	for _, s := range pod.Status.ContainerStatuses {
		now += s.RestartCount
	}
	return pod.UID == uid && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && now == restarts
}

func (p *kindPIC) Log(*testing.T) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	current := p.fetchLog(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(append(slices.Clone(p.logs), current), "")
}
