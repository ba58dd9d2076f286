package ingress_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

const benchHosts = 50

var benchConfig = ingress.Config{
	Tunnels:       tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}},
	BackendScheme: "http",
	ClusterDomain: "cluster.local",
}

// benchIngress has benchHosts hosts, each with a root path to "web" (by port name) and
// an /api path to "api" (by number): 100 Service lookups per translation.
func benchIngress() *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	class := "pangolin"
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "shop", UID: "uid-shop", Generation: 1},
		Spec:       networkingv1.IngressSpec{IngressClassName: &class},
	}
	for i := range benchHosts {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{
			Host: fmt.Sprintf("app-%d.example.com", i),
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}}}},
				{Path: "/api", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "api", Port: networkingv1.ServiceBackendPort{Number: 8080}}}},
			}}},
		})
	}
	return ing
}

func benchServices() []*corev1.Service {
	return []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "api"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}},
	}
}

var benchScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(networkingv1.AddToScheme(s))
	return s
}()

// cacheReader answers Gets the way controller-runtime's informer cache does: a deep
// copy of an object held in memory. It isolates the translation's own cost from the
// fake client's (which serializes every object it returns).
type cacheReader struct {
	client.Client // nil: only Get is used by the Ingress source
	objects       map[types.NamespacedName]client.Object
}

func (c cacheReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	stored, ok := c.objects[key]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("object"), key.Name)
	}
	switch out := obj.(type) {
	case *networkingv1.Ingress:
		stored.(*networkingv1.Ingress).DeepCopyInto(out)
	case *corev1.Service:
		stored.(*corev1.Service).DeepCopyInto(out)
	default:
		return fmt.Errorf("unexpected %T", obj)
	}
	return nil
}

func benchClients(b *testing.B) map[string]client.Client {
	ing := benchIngress()
	objs := []client.Object{ing}
	for _, svc := range benchServices() {
		objs = append(objs, svc)
	}
	memory := cacheReader{objects: map[types.NamespacedName]client.Object{}}
	for _, o := range objs {
		memory.objects[client.ObjectKeyFromObject(o)] = o
	}
	return map[string]client.Client{
		"cache-like": memory,
		"fake":       fake.NewClientBuilder().WithScheme(benchScheme).WithObjects(objs...).Build(),
	}
}

// BenchmarkRoutes50Hosts translates a 50-host Ingress into routes (Service lookups
// included), with a cache-like reader and with controller-runtime's fake client.
func BenchmarkRoutes50Hosts(b *testing.B) {
	key := types.NamespacedName{Namespace: "prod", Name: "shop"}
	for _, name := range []string{"cache-like", "fake"} {
		c := benchClients(b)[name]
		b.Run(name, func(b *testing.B) {
			src := ingress.New(c, benchConfig)
			ing := storedIngress(b, c, key)
			b.ReportAllocs()
			for b.Loop() {
				res, err := src.Routes(context.Background(), ing)
				if err != nil || len(res.Routes) != benchHosts || len(res.Rejections) != 0 {
					b.Fatalf("%d routes, %d rejections, error %v", len(res.Routes), len(res.Rejections), err)
				}
			}
		})
	}
}

// BenchmarkTranslate50Hosts is the pure part of one reconcile of a 50-host Ingress:
// routes from the source (cache-like reader), desired resources and the plan against
// resources that are already in place.
func BenchmarkTranslate50Hosts(b *testing.B) {
	key := types.NamespacedName{Namespace: "prod", Name: "shop"}
	c := benchClients(b)["cache-like"]
	src := ingress.New(c, benchConfig)
	ing := storedIngress(b, c, key)
	features := engine.Features{PathRouting: true, AccessControl: true, TunnelNamespace: true}
	res, err := src.Routes(context.Background(), ing)
	if err != nil {
		b.Fatal(err)
	}
	desired, _ := engine.Desired(engine.Input{Routes: res.Routes, Features: features, Defaults: engine.Defaults{SSO: true}})
	existing := make([]engine.Existing, len(desired))
	for i, d := range desired {
		existing[i] = engine.Existing{Resource: d}
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := src.Routes(context.Background(), ing)
		if err != nil {
			b.Fatal(err)
		}
		desired, _ := engine.Desired(engine.Input{Routes: res.Routes, Features: features, Defaults: engine.Defaults{SSO: true}})
		if plan := engine.Calculate(*res.Origin, desired, existing, res.Rejections, nil); !plan.Empty() {
			b.Fatal("a converged Ingress has a non-empty plan")
		}
	}
}

// storedIngress is the Ingress with key as the core hands it to the source: read from
// the cache.
func storedIngress(b *testing.B, c client.Reader, key types.NamespacedName) *networkingv1.Ingress {
	b.Helper()
	var ing networkingv1.Ingress
	if err := c.Get(context.Background(), key, &ing); err != nil {
		b.Fatal(err)
	}
	return &ing
}
