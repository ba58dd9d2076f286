package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// The bench's objects: one namespace, a Ready tunnel named like PIC's default tunnel,
// and one Service with two ports; every Ingress routes "/" to it.
const (
	namespace   = "bench"
	tunnelName  = "default" // PIC's default tunnel
	serviceName = "web"
	domain      = "example.com"
	portA       = 80
	portB       = 8080 // the change-latency updates flip the backend between the two
	probeHost   = "probe." + domain
)

// shape is how the N resources are spread over Ingresses.
type shape struct {
	Name            string
	Ingresses       int
	HostsPerIngress int
	// HostPrefix starts every host, and Domain ends it (domain when empty): against a
	// real Pangolin the direct shape's hosts are under its base domain, and unique to
	// the run.
	HostPrefix string
	Domain     string
}

func (s shape) resources() int { return s.Ingresses * s.HostsPerIngress }

func (s shape) ingressName(i int) string { return fmt.Sprintf("%s-%05d", s.Name, i) }

func (s shape) host(i, h int) string {
	if s.HostsPerIngress == 1 {
		return fmt.Sprintf("%s%s-%05d.%s", s.HostPrefix, s.Name, i, s.baseDomain())
	}
	return fmt.Sprintf("%s%s-%05d-%02d.%s", s.HostPrefix, s.Name, i, h, s.baseDomain())
}

// baseDomain is the domain the shape's hosts are under.
func (s shape) baseDomain() string {
	if s.Domain != "" {
		return s.Domain
	}
	return domain
}

// world is one control plane (envtest: etcd and kube-apiserver, the fork's CRDs) with
// the fixture of one shape.
type world struct {
	env        *testenv.Env
	kubeconfig string
	dir        string
	// fast is an admin client without client-side throttling, for the fixture and the
	// change-latency writes.
	fast  client.Client
	shape shape
	// ingresses by index, with their UIDs once created.
	ingresses []*networkingv1.Ingress
	// port is the backend port each Ingress currently names.
	port []int32
	// aff is where the processes run, and mode its placement now (split or shared).
	aff  affinity
	mode string
}

// startWorld starts a control plane placed as aff's primary placement says.
func startWorld(dir string, variant testenv.Variant, aff affinity) (*world, error) {
	env, err := testenv.StartEnv(variant, false)
	if err != nil {
		return nil, err
	}
	w := &world{env: env, dir: dir, aff: aff}
	if err := w.place(aff.primary()); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	if w.kubeconfig, err = writeKubeconfig(env.Config, filepath.Join(dir, "admin.kubeconfig")); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, -1 // no client-side rate limit
	if w.fast, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return w, nil
}

func (w *world) stop() error { return w.env.Stop() }

// place puts etcd, kube-apiserver and the harness itself (its watch, its fixture
// writes, the in-repo Pangolin server) on the control plane's CPUs of the placement
// mode; the clients started next go on the client's (pinClient). The harness stays
// off the client's CPUs: it observes the run, and on a cluster it would not share
// the client's node.
func (w *world) place(mode string) error {
	cpus := w.aff.cpus(mode, false)
	w.mode = mode
	if len(cpus) == 0 { // no CPU known (off Linux): nothing to place
		return nil
	}
	for _, pid := range append(controlPlanePids(), os.Getpid()) {
		if err := pin(pid, cpus); err != nil {
			return fmt.Errorf("place the control plane (%s): %w", mode, err)
		}
	}
	return nil
}

// pinClient puts the client under test, process pid, on the client's CPUs of the
// current placement.
func (w *world) pinClient(pid int) error {
	cpus := w.aff.cpus(w.mode, true)
	if len(cpus) == 0 {
		return nil
	}
	if err := pin(pid, cpus); err != nil {
		return fmt.Errorf("place the client under test (%s): %w", w.mode, err)
	}
	return nil
}

// writeKubeconfig writes an admin kubeconfig for the PIC process.
func writeKubeconfig(cfg *rest.Config, path string) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "admin"}
	kc.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

// setup creates the namespace, the Ready tunnel, the Service and the shape's Ingresses.
// Its time is not measured.
func (w *world) setup(ctx context.Context, s shape) error {
	w.shape = s
	c := w.fast
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	t := &tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: tunnelName, Namespace: namespace}}
	if err := c.Create(ctx, t); err != nil {
		return fmt.Errorf("create tunnel: %w", err)
	}
	t.Status = tunnelv1alpha1.PangolinTunnelStatus{Status: "Ready", Online: true, Conditions: []metav1.Condition{{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Connected", Message: "bench", LastTransitionTime: metav1.Now(),
	}}}
	if err := c.Status().Update(ctx, t); err != nil {
		return fmt.Errorf("mark tunnel Ready: %w", err)
	}
	if err := c.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: namespace},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: portA}, {Name: "alt", Port: portB}}},
	}); err != nil {
		return fmt.Errorf("create service: %w", err)
	}
	w.ingresses = make([]*networkingv1.Ingress, s.Ingresses)
	w.port = make([]int32, s.Ingresses)
	for i := range w.ingresses {
		w.ingresses[i] = w.newIngress(i)
		w.port[i] = portA
	}
	return parallel(ctx, 16, s.Ingresses, func(ctx context.Context, i int) error {
		if err := c.Create(ctx, w.ingresses[i]); err != nil {
			return fmt.Errorf("create Ingress %s: %w", w.ingresses[i].Name, err)
		}
		return nil
	})
}

func (w *world) newIngress(i int) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: w.shape.ingressName(i), Namespace: namespace},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To(pic.DefaultClassName)},
	}
	for h := range w.shape.HostsPerIngress {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{
			Host: w.shape.host(i, h),
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: serviceName, Port: networkingv1.ServiceBackendPort{Number: portA},
				}},
			}}}},
		})
	}
	return ing
}

// expectedSpec is the spec PIC must write for a host routed to the Service's port, with
// the fork's CRD and PIC's defaults (SSO on, block-access off), spelled out here from
// the documented contract (docs/how-it-works.md) rather than taken from PIC's renderer.
func expectedSpec(host string, port int32) tunnelv1alpha1.PangolinResourceSpec {
	sub := host[:len(host)-len(domain)-1]
	return tunnelv1alpha1.PangolinResourceSpec{
		Name:      host, // the resource's name in Pangolin
		Enabled:   ptr.To(true),
		Protocol:  tunnelv1alpha1.ProtocolHTTP,
		TunnelRef: &tunnelv1alpha1.TunnelRef{Name: tunnelName},
		HTTPConfig: &tunnelv1alpha1.HTTPConfig{
			DomainName: domain, Subdomain: sub, SSO: ptr.To(true), BlockAccess: ptr.To(false),
		},
		Targets: []tunnelv1alpha1.Target{{
			IP: serviceName + "." + namespace + ".svc.cluster.local", Port: port, Method: "http",
			Path: "/", PathMatchType: "prefix", Priority: ptr.To(int32(101)),
		}},
	}
}

// expectations are every host's expected spec and owner UID.
func (w *world) expectations() map[string]expectation {
	out := make(map[string]expectation, w.shape.resources())
	for i, ing := range w.ingresses {
		for h := range w.shape.HostsPerIngress {
			host := w.shape.host(i, h)
			out[host] = expectation{spec: expectedSpec(host, w.port[i]), owner: ing.UID}
		}
	}
	return out
}

// baselineObjects are the PangolinResources PIC would create for the fixture (same
// names, labels, annotation, owner reference and spec), each with its owner and host.
func (w *world) baselineObjects() []floorObject {
	var out []floorObject
	for i, ing := range w.ingresses {
		origin := route.Origin{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, UID: ing.UID}
		for h := range w.shape.HostsPerIngress {
			host := w.shape.host(i, h)
			out = append(out, floorObject{owner: ing, host: host, resource: &tunnelv1alpha1.PangolinResource{
				ObjectMeta: metav1.ObjectMeta{
					Name: engine.ResourceName(origin, host), Namespace: ing.Namespace,
					Labels: map[string]string{
						pic.LabelOwnerUID: string(ing.UID), pic.LabelOwnerName: ing.Name,
						pic.LabelOwnerNamespace: ing.Namespace, pic.LabelManagedBy: pic.ManagedByValue,
					},
					Annotations: map[string]string{pic.AnnotationHost: host},
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress", Name: ing.Name, UID: ing.UID,
						Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
					}},
				},
				Spec: expectedSpec(host, w.port[i]),
			}})
		}
	}
	return out
}

// getIngress reads Ingress i.
func (w *world) getIngress(ctx context.Context, i int) (*networkingv1.Ingress, error) {
	var ing networkingv1.Ingress
	key := types.NamespacedName{Namespace: namespace, Name: w.shape.ingressName(i)}
	if err := w.fast.Get(ctx, key, &ing); err != nil {
		return nil, fmt.Errorf("get Ingress %s: %w", key, err)
	}
	return &ing, nil
}

// setBackendPort points every path of the Ingress at the Service's port.
func setBackendPort(ing *networkingv1.Ingress, port int32) {
	for r := range ing.Spec.Rules {
		for p := range ing.Spec.Rules[r].HTTP.Paths {
			ing.Spec.Rules[r].HTTP.Paths[p].Backend.Service.Port.Number = port
		}
	}
}

// probe is a PangolinResource that PIC does not own (no PIC label: outside its cache),
// updated directly to time a single write as seen through a watch.
func probe(port int32) *tunnelv1alpha1.PangolinResource {
	return &tunnelv1alpha1.PangolinResource{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-probe", Namespace: namespace},
		Spec:       expectedSpec(probeHost, port),
	}
}

// parallel runs fn for 0..n-1 on workers goroutines and returns the first error.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// newDir makes the directory for one world's files (kubeconfig, PIC logs).
func newDir(root, name string) (string, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// since is a duration in seconds, rounded to the millisecond.
func since(t time.Time) float64 { return seconds(time.Since(t)) }

func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}
