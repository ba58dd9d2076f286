// Package rendertest runs golden translation cases through render.Run: a folder per
// case holding input.yaml and, per operator CRD variant, want-<variant>.yaml with the
// PangolinResources, events and statuses (Gateway API objects', AccessPolicies')
// expected. Each source's package
// keeps its own cases in testdata/golden.
package rendertest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/render"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// Variants are the operator CRD variants every case runs for, by the name of their
// want file.
var Variants = []struct {
	Name         string
	Capabilities tunnelv1alpha1.Capabilities
}{
	{"fork", tunnelv1alpha1.ForkCapabilities},
	{"original", tunnelv1alpha1.OriginalCapabilities},
}

// Config is the configuration every golden case runs with: PIC's defaults, every
// source, the default tunnel "default", the alias edge-eu naming a tunnel in the
// pangolin-system namespace and the alias restricted, allowed in team-a only.
func Config() *config.Config {
	cfg := config.Default()
	cfg.Sources = builtin.SourceNames()
	cfg.Tunnels = tunnel.Resolver{
		Default: tunnel.Tunnel{Name: "default"},
		Aliases: map[string]tunnel.Tunnel{
			"edge-eu":    {Name: "edge-eu-tunnel", Namespace: "pangolin-system"},
			"restricted": {Name: "restricted", AllowedNamespaces: []string{"team-a"}},
		},
	}
	return cfg
}

// Golden runs every case folder under dir once per variant, and compares the
// outcome with want-<variant>.yaml. The input is input.yaml: the objects of the case,
// PangolinTunnels and pre-existing PangolinResources among them. Each case also checks
// that a second reconcile of every object writes nothing.
//
// go test -run TestGolden -update rewrites the expectations.
func Golden(t *testing.T, dir string) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs, "no cases in %s", dir)
	for _, d := range dirs {
		for _, v := range Variants {
			t.Run(filepath.Base(d)+"/"+v.Name, func(t *testing.T) {
				got := Run(t, filepath.Join(d, "input.yaml"), v.Name)
				wantFile := filepath.Join(d, "want-"+v.Name+".yaml")
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

// output is the shape of want-<variant>.yaml.
type output struct {
	Events    []string                          `json:"events"`
	Resources []tunnelv1alpha1.PangolinResource `json:"resources"`
	// Statuses are the statuses PIC wrote, of Gateway API objects and of
	// AccessPolicies, one line per condition.
	Statuses []string `json:"statuses,omitempty"`
}

// Run runs one case's input and returns its outcome as want-<variant>.yaml holds it.
func Run(t *testing.T, inputFile, crdVariant string) []byte {
	t.Helper()
	ctx := context.Background()
	res, err := render.Run(ctx, ReadObjects(t, inputFile), render.Options{Config: Config(), CRDVariant: crdVariant})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Passes), 2)
	assert.Equal(t, 0, res.Passes[1].Writes, "a second reconcile of unchanged objects must write nothing")
	assert.Equal(t, 0, res.Passes[1].StatusWrites, "a second reconcile of unchanged objects must write no status")

	out := output{Events: []string{}, Resources: res.Resources, Statuses: statuses(t, res.Client)}
	for _, e := range res.Events {
		out.Events = append(out.Events, e.String())
	}
	for i := range out.Resources {
		m := &out.Resources[i].ObjectMeta
		m.ResourceVersion, m.CreationTimestamp, m.ManagedFields = "", metav1.Time{}, nil
		out.Resources[i].TypeMeta = metav1.TypeMeta{}
	}
	data, err := yaml.Marshal(out)
	require.NoError(t, err)
	return data
}

// ReadObjects decodes a multi-document manifest, as render does. Objects get a UID and
// a creation time from their position, as the API server would give them, so that
// outputs are stable and the first object of a file is the oldest.
func ReadObjects(t *testing.T, file string) []client.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	scheme := apis.Scheme()
	manifests, err := render.Decode(file, data, scheme, func(gvk schema.GroupVersionKind) (schema.GroupVersionKind, bool, error) {
		if !scheme.Recognizes(gvk) {
			return gvk, false, fmt.Errorf("%s is not a kind PIC knows", gvk)
		}
		return gvk, true, nil
	})
	require.NoError(t, err)
	objects := make([]client.Object, len(manifests))
	for i, m := range manifests {
		o := m.Object
		if o.GetUID() == "" {
			o.SetUID(types.UID(fmt.Sprintf("uid-%s-%s", strings.ToLower(o.GetObjectKind().GroupVersionKind().Kind), o.GetName())))
		}
		if ts := o.GetCreationTimestamp(); ts.IsZero() {
			o.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)))
		}
		objects[i] = o
	}
	return objects
}

// statuses renders the statuses of Gateway API objects and of AccessPolicies as one
// line per condition, without the times, so that a reviewer reads them like a table.
func statuses(t *testing.T, c client.Client) []string {
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
	parents := func(kind string, route metav1.Object, status gatewayv1.RouteStatus) {
		for _, p := range status.Parents {
			ref := string(p.ParentRef.Name)
			if p.ParentRef.SectionName != nil {
				ref += "/" + string(*p.ParentRef.SectionName)
			}
			line(fmt.Sprintf("%s %s/%s parent %s [%s]:", kind, route.GetNamespace(), route.GetName(), ref, p.ControllerName), p.Conditions)
		}
	}
	var routes gatewayv1.HTTPRouteList
	require.NoError(t, c.List(ctx, &routes))
	for _, r := range routes.Items {
		parents("HTTPRoute", &r, r.Status.RouteStatus)
	}
	var tcpRoutes gatewayv1.TCPRouteList
	require.NoError(t, c.List(ctx, &tcpRoutes))
	for _, r := range tcpRoutes.Items {
		parents("TCPRoute", &r, r.Status.RouteStatus)
	}
	var udpRoutes gatewayv1.UDPRouteList
	require.NoError(t, c.List(ctx, &udpRoutes))
	for _, r := range udpRoutes.Items {
		parents("UDPRoute", &r, r.Status.RouteStatus)
	}
	var policies accessv1alpha1.AccessPolicyList
	require.NoError(t, c.List(ctx, &policies))
	for _, p := range policies.Items {
		for _, a := range p.Status.Ancestors {
			line(fmt.Sprintf("AccessPolicy %s/%s ancestor %s %s [%s]:", p.Namespace, p.Name, ptr.Deref(a.AncestorRef.Kind, ""), a.AncestorRef.Name, a.ControllerName), a.Conditions)
		}
	}
	return out
}
