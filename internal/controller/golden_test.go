package controller

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
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
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
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

// TestGolden runs every folder of testdata/golden through the Ingress source, the engine
// and the sink, once per operator CRD variant, and compares the PangolinResources and
// events with want-<variant>.yaml. The input is input.yaml: Ingresses, Services,
// IngressClasses, PangolinTunnels and pre-existing PangolinResources. Each case also
// checks that a second reconcile writes nothing.
//
// go test ./internal/controller -run TestGolden -update rewrites the expectations.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	variants := map[string]tunnelv1alpha1.Capabilities{"fork": tunnelv1alpha1.ForkCapabilities, "original": tunnelv1alpha1.OriginalCapabilities}
	for _, dir := range dirs {
		for variant, caps := range variants {
			t.Run(filepath.Base(dir)+"/"+variant, func(t *testing.T) {
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
}

func runGolden(t *testing.T, inputFile string, caps tunnelv1alpha1.Capabilities) []byte {
	ctx := context.Background()
	objects := readObjects(t, inputFile)

	var writes int
	count := func() { writes++ } // reconciles run one at a time here
	src := ingress.New(nil, ingress.Config{Tunnels: goldenTunnels, BackendScheme: "http", ClusterDomain: "cluster.local"})
	builder := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(objects...).
		WithStatusSubresource(&networkingv1.Ingress{}, &tunnelv1alpha1.PangolinResource{}, &tunnelv1alpha1.PangolinTunnel{}).
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
		})
	for _, idx := range src.Indexes() {
		builder = builder.WithIndex(idx.Object, idx.Field, idx.Func)
	}
	c := builder.Build()
	src = ingress.New(c, ingress.Config{Tunnels: goldenTunnels, BackendScheme: "http", ClusterDomain: "cluster.local"})
	recorder := &eventLog{}
	r := NewReconciler(src, Deps{Sink: pangolinresource.New(c, c, caps), Cache: c, Recorder: recorder, Defaults: engine.Defaults{SSO: true}})

	var keys []types.NamespacedName
	for _, o := range objects {
		if _, ok := o.(*networkingv1.Ingress); ok {
			keys = append(keys, client.ObjectKeyFromObject(o))
		}
	}
	for _, key := range keys {
		_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
		require.NoError(t, err)
	}
	writesBefore := writes
	for _, key := range keys {
		_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
		require.NoError(t, err)
	}
	assert.Equal(t, writesBefore, writes, "a second reconcile of unchanged objects must write nothing")

	var list tunnelv1alpha1.PangolinResourceList
	require.NoError(t, c.List(ctx, &list))
	out := goldenOutput{Events: append([]string{}, recorder.lines...), Resources: list.Items}
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
		if err != nil {
			break
		}
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
