package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/controller"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// goldenTunnels is the configuration every golden case runs with: the default tunnel,
// and the alias edge-eu naming a tunnel in the pangolin-system namespace.
var goldenTunnels = tunnel.Resolver{
	Default: tunnel.Tunnel{Name: "default"},
	Aliases: map[string]tunnel.Tunnel{
		"edge-eu":    {Name: "edge-eu-tunnel", Namespace: "pangolin-system"},
		"restricted": {Name: "restricted", AllowedNamespaces: []string{"team-a"}},
	},
}

// TestGolden runs every folder of testdata/golden (Ingresses) and
// testdata/golden-gatewayapi (Gateway API) through the sources, the engine
// and the sink, once per operator CRD variant, and compares the PangolinResources and
// events with want-<variant>.yaml. The input is input.yaml: Ingresses, Services,
// IngressClasses, PangolinTunnels and pre-existing PangolinResources. Each case also
// checks that a second reconcile writes nothing.
//
// go test ./internal/controller -run TestGolden -update rewrites the expectations.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	require.NoError(t, err)
	gatewayDirs, err := filepath.Glob("testdata/golden-gatewayapi/*")
	require.NoError(t, err)
	dirs = append(dirs, gatewayDirs...)
	require.NotEmpty(t, dirs)
	variants := map[string]tunnelv1alpha1.Capabilities{"fork": tunnelv1alpha1.ForkCapabilities, "original": tunnelv1alpha1.OriginalCapabilities}
	for _, dir := range dirs {
		for variant, caps := range variants {
			t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir)+"/"+variant, func(t *testing.T) {
				got := runGolden(t, filepath.Join(dir, "input.yaml"), caps)
				wantFile := filepath.Join(dir, "want-"+variant+".yaml")
				if *update {
					require.NoError(t, os.WriteFile(wantFile, got, 0o644))
					return
				}
				want, err := os.ReadFile(wantFile)
				require.NoError(t, err, "run with -update to create it")
				assert.Equal(t, string(want), string(got))
			})
		}
	}
}

// goldenOutput is the shape of want-<variant>.yaml.
type goldenOutput struct {
	Events    []string                          `json:"events"`
	Resources []tunnelv1alpha1.PangolinResource `json:"resources"`
	// Statuses are the Gateway API statuses PIC wrote, one line per condition.
	Statuses []string `json:"statuses,omitempty"`
}

func runGolden(t *testing.T, inputFile string, caps tunnelv1alpha1.Capabilities) []byte {
	ctx := context.Background()
	objects := readObjects(t, inputFile)

	var writes, statusWrites int
	count := func() { writes++ } // reconciles run one at a time here
	src := ingress.New(nil, ingress.Config{Tunnels: goldenTunnels, BackendScheme: "http", ClusterDomain: "cluster.local"})
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects...).
		WithStatusSubresource(&networkingv1.Ingress{}, &tunnelv1alpha1.PangolinResource{}, &tunnelv1alpha1.PangolinTunnel{},
			&gatewayv1.HTTPRoute{}, &gatewayv1.Gateway{}, &gatewayv1.GatewayClass{}).
		WithIndex(&tunnelv1alpha1.PangolinResource{}, pangolinresource.OwnerIndex, pangolinresource.IndexOwner).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				count()
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				count()
				return c.Update(ctx, obj, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				count()
				return c.Delete(ctx, obj, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				statusWrites++
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		})
	gwSrc := gatewayapi.New(nil, gatewayapi.Config{Tunnels: goldenTunnels, BackendScheme: "http", ClusterDomain: "cluster.local"})
	for _, idx := range append(src.Indexes(), gwSrc.Indexes()...) {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	c := builder.Build()
	src = ingress.New(c, ingress.Config{Tunnels: goldenTunnels, BackendScheme: "http", ClusterDomain: "cluster.local"})
	sink := pangolinresource.New(c, c, caps)
	gwSrc = gatewayapi.New(c, gatewayapi.Config{Tunnels: goldenTunnels, BackendScheme: "http", ClusterDomain: "cluster.local", TunnelCheck: sink})
	recorder := &eventLog{}
	deps := controller.Deps{Sink: sink, Recorder: recorder, Defaults: engine.Defaults{SSO: true},
		Sources: []plugin.Source{src, gwSrc}}
	reconcilers := map[string]*controller.Reconciler{"Ingress": controller.NewReconciler(src, deps), "HTTPRoute": controller.NewReconciler(gwSrc, deps)}

	type job struct {
		kind string
		key  types.NamespacedName
	}
	var jobs, gateways, classes []job
	for _, o := range objects {
		switch o.(type) {
		case *networkingv1.Ingress:
			jobs = append(jobs, job{"Ingress", client.ObjectKeyFromObject(o)})
		case *gatewayv1.HTTPRoute:
			jobs = append(jobs, job{"HTTPRoute", client.ObjectKeyFromObject(o)})
		case *gatewayv1.Gateway:
			gateways = append(gateways, job{"Gateway", client.ObjectKeyFromObject(o)})
		case *gatewayv1.GatewayClass:
			classes = append(classes, job{"GatewayClass", client.ObjectKeyFromObject(o)})
		}
	}
	reconcileAll := func() {
		for _, j := range jobs {
			_, err := reconcilers[j.kind].Reconcile(ctx, reconcile.Request{NamespacedName: j.key})
			require.NoError(t, err)
		}
		for _, j := range classes {
			_, err := gwSrc.ReconcileGatewayClass(ctx, reconcile.Request{NamespacedName: j.key})
			require.NoError(t, err)
		}
		for _, j := range gateways {
			_, err := gwSrc.ReconcileGateway(ctx, reconcile.Request{NamespacedName: j.key})
			require.NoError(t, err)
		}
	}
	reconcileAll()
	writesBefore, statusBefore := writes, statusWrites
	reconcileAll()
	assert.Equal(t, writesBefore, writes, "a second reconcile of unchanged objects must write nothing")
	assert.Equal(t, statusBefore, statusWrites, "a second reconcile of unchanged objects must write no status")

	var list tunnelv1alpha1.PangolinResourceList
	require.NoError(t, c.List(ctx, &list))
	out := goldenOutput{Events: append([]string{}, recorder.lines...), Resources: list.Items, Statuses: gatewayStatuses(t, c)}
	for i := range out.Resources {
		m := &out.Resources[i].ObjectMeta
		m.ResourceVersion, m.CreationTimestamp, m.ManagedFields = "", metav1.Time{}, nil
		out.Resources[i].TypeMeta = metav1.TypeMeta{}
	}
	slices.SortFunc(out.Resources, func(a, b tunnelv1alpha1.PangolinResource) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	data, err := yaml.Marshal(out)
	require.NoError(t, err)
	return data
}

// readObjects decodes a multi-document manifest. Objects get a UID and a creation time
// from their position, as the API server would give them, so that outputs are stable.
func readObjects(t *testing.T, file string) []client.Object {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	decoder := serializer.NewCodecFactory(apis.Scheme()).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objects []client.Object
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "document %d of %s", i, file)
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		require.NoError(t, err, "document %d of %s", i, file)
		o := obj.(client.Object)
		if o.GetUID() == "" {
			o.SetUID(types.UID(fmt.Sprintf("uid-%s-%s", strings.ToLower(obj.GetObjectKind().GroupVersionKind().Kind), o.GetName())))
		}
		if ts := o.GetCreationTimestamp(); ts.IsZero() {
			o.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)))
		}
		objects = append(objects, o)
	}
	return objects
}

// eventLog records events as "Type Reason Kind namespace/name: message" lines.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

func (e *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ref := regarding.(*corev1.ObjectReference)
	e.lines = append(e.lines, fmt.Sprintf("%s %s %s: %s", eventtype, reason, ref.Kind+" "+ref.Namespace+"/"+ref.Name, fmt.Sprintf(note, args...)))
}

// gatewayStatuses renders the Gateway API statuses as one line per condition, without
// the times, so that a reviewer reads them like a table.
func gatewayStatuses(t *testing.T, c client.Client) []string {
	ctx := context.Background()
	var out []string
	line := func(prefix string, conditions []metav1.Condition) {
		for _, cond := range conditions {
			generation := "" // shown when set, so that a case can check observedGeneration
			if cond.ObservedGeneration != 0 {
				generation = fmt.Sprintf(" [observedGeneration %d]", cond.ObservedGeneration)
			}
			out = append(out, fmt.Sprintf("%s %s=%s (%s)%s %s", prefix, cond.Type, cond.Status, cond.Reason, generation, cond.Message))
		}
	}
	var classes gatewayv1.GatewayClassList
	require.NoError(t, c.List(ctx, &classes))
	for _, gc := range classes.Items {
		line("GatewayClass "+gc.Name+":", gc.Status.Conditions)
	}
	var gateways gatewayv1.GatewayList
	require.NoError(t, c.List(ctx, &gateways))
	for _, gw := range gateways.Items {
		line("Gateway "+gw.Namespace+"/"+gw.Name+":", gw.Status.Conditions)
		for _, l := range gw.Status.Listeners {
			kinds := []string{}
			for _, k := range l.SupportedKinds {
				kinds = append(kinds, string(k.Kind))
			}
			line(fmt.Sprintf("Gateway %s/%s listener %s (attachedRoutes %d, supportedKinds [%s]):", gw.Namespace, gw.Name, l.Name, l.AttachedRoutes, strings.Join(kinds, ",")), l.Conditions)
		}
	}
	var routes gatewayv1.HTTPRouteList
	require.NoError(t, c.List(ctx, &routes))
	for _, hr := range routes.Items {
		for _, p := range hr.Status.Parents {
			ref := string(p.ParentRef.Name)
			if p.ParentRef.SectionName != nil {
				ref += "/" + string(*p.ParentRef.SectionName)
			}
			line(fmt.Sprintf("HTTPRoute %s/%s parent %s [%s]:", hr.Namespace, hr.Name, ref, p.ControllerName), p.Conditions)
		}
	}
	return out
}
