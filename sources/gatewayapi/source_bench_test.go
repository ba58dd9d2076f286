package gatewayapi_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
)

var benchConfig = gatewayapi.Config{
	Tunnels:       tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}},
	BackendScheme: "http",
	ClusterDomain: "cluster.local",
}

// benchObjects are n HTTPRoutes, each with a host of its own, attached to one Gateway
// of PIC's: the shape of a team sharing one Gateway.
func benchObjects(n int) []client.Object {
	objs := []client.Object{
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: pic.GatewayControllerName}},
		&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "public"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "pangolin", Listeners: []gatewayv1.Listener{
				{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80},
			}},
		},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}},
	}
	for i := range n {
		objs = append(objs, &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: fmt.Sprintf("app-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("app-%d.example.com", i))},
				Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To(gatewayv1.PortNumber(8080))},
				}}}}},
			},
		})
	}
	return objs
}

// benchClients reads benchObjects(n) through controller-runtime's fake client, whose
// indexed List filters every object, and through an indexed reader as the informer
// cache is, whose indexed List costs what it returns.
func benchClients(b *testing.B, n int) map[string]client.Client {
	b.Helper()
	objs := benchObjects(n)
	indexes := gatewayapi.Factory.Indexes(&config.Config{ClusterDomain: benchConfig.ClusterDomain})
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objs...)
	for _, idx := range indexes {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	return map[string]client.Client{"fake": builder.Build(), "indexed": newIndexedReader(b, objs, indexes)}
}

// indexedReader answers Get and List from client-go indexers, one per kind, the way
// controller-runtime's informer cache does (a deep copy of what is stored). Only the
// calls the HTTPRoute source makes are implemented.
type indexedReader struct {
	client.Client // nil
	stores        map[reflect.Type]toolscache.Indexer
}

func newIndexedReader(b *testing.B, objs []client.Object, indexes []plugin.Index) indexedReader {
	r := indexedReader{stores: map[reflect.Type]toolscache.Indexer{}}
	for _, o := range objs {
		t := reflect.TypeOf(o)
		if r.stores[t] == nil {
			funcs := toolscache.Indexers{}
			for _, idx := range indexes {
				if reflect.TypeOf(idx.Object) == t {
					f := idx.Func
					funcs[idx.Field] = func(obj any) ([]string, error) { return f(obj.(client.Object)), nil }
				}
			}
			r.stores[t] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, funcs)
		}
		if err := r.stores[t].Add(o); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

func (r indexedReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	k := key.Name
	if key.Namespace != "" {
		k = key.Namespace + "/" + key.Name
	}
	var stored any
	if store := r.stores[reflect.TypeOf(obj)]; store != nil {
		stored, _, _ = store.GetByKey(k)
	}
	if stored == nil {
		return apierrors.NewNotFound(schema.GroupResource{Resource: fmt.Sprintf("%T", obj)}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(stored.(runtime.Object).DeepCopyObject()).Elem())
	return nil
}

func (r indexedReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var err error
	itemType := reflect.PointerTo(reflect.ValueOf(list).Elem().FieldByName("Items").Type().Elem())
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	var stored []any
	if store := r.stores[itemType]; store != nil {
		if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
			req := lo.FieldSelector.Requirements()[0]
			if stored, err = store.ByIndex(req.Field, req.Value); err != nil {
				return err
			}
		} else {
			stored = store.List()
		}
	}
	var out []runtime.Object
	for _, o := range stored {
		if lo.Namespace == "" || o.(client.Object).GetNamespace() == lo.Namespace {
			out = append(out, o.(runtime.Object).DeepCopyObject())
		}
	}
	return apimeta.SetList(list, out)
}

// BenchmarkRoutesOnSharedGateway is the source's part of one HTTPRoute reconcile, by
// the number of routes on its Gateway. Every route has a host of its own, so none has
// anything to merge: a cost that grows with n is spent looking at unrelated routes.
func BenchmarkRoutesOnSharedGateway(b *testing.B) {
	for _, reader := range []string{"indexed", "fake"} {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/routes=%d", reader, n), func(b *testing.B) {
				c := benchClients(b, n)[reader]
				src := gatewayapi.New(c, benchConfig)
				var hr gatewayv1.HTTPRoute
				if err := c.Get(context.Background(), types.NamespacedName{Namespace: "prod", Name: "app-0"}, &hr); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					res, err := src.Routes(context.Background(), &hr)
					if err != nil || len(res.Routes) != 1 || len(res.Rejections) != 0 {
						b.Fatalf("%d routes, rejections %v, error %v", len(res.Routes), res.Rejections, err)
					}
				}
			})
		}
	}
}
