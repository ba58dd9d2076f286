package ingress_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
)

// fuzzConfig is the configuration every FuzzTranslate input runs with: a default
// tunnel, an alias in another namespace and an alias restricted to one namespace.
var fuzzConfig = ingress.Config{
	Tunnels: tunnel.Resolver{
		Default: tunnel.Tunnel{Name: "default"},
		Aliases: map[string]tunnel.Tunnel{
			"edge-eu":    {Name: "edge-eu-tunnel", Namespace: "pangolin-system"},
			"restricted": {Name: "restricted", AllowedNamespaces: []string{"team-a"}},
		},
	},
	BackendScheme: "http",
	ClusterDomain: "cluster.local",
}

// fuzzClasses: PIC's class, a PIC class that is the cluster default and names a tunnel,
// and another controller's class.
var fuzzClasses = []*networkingv1.IngressClass{
	{ObjectMeta: metav1.ObjectMeta{Name: "pangolin"}, Spec: networkingv1.IngressClassSpec{Controller: pic.ControllerName}},
	{
		ObjectMeta: metav1.ObjectMeta{Name: "company", Annotations: map[string]string{
			"ingressclass.kubernetes.io/is-default-class": "true", pic.AnnotationTunnelName: "pangolin-system/shared",
		}},
		Spec: networkingv1.IngressClassSpec{Controller: pic.ControllerName},
	},
	{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}},
}

// fuzzServices are created in the Ingress's namespace: "web" with a named and an
// unnamed port, and "ext", an ExternalName Service without ports.
func fuzzServices(namespace string) []*corev1.Service {
	return []*corev1.Service{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
				{Name: "http", Port: 80}, {Port: 8443},
			}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "ext"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "backend.example.net."},
		},
	}
}

var fuzzPathTypes = []*networkingv1.PathType{
	nil, ptrTo(networkingv1.PathTypeExact), ptrTo(networkingv1.PathTypePrefix),
	ptrTo(networkingv1.PathTypeImplementationSpecific), ptrTo(networkingv1.PathType("Regex")),
}

func ptrTo[T any](v T) *T { return &v }

// Flags of FuzzTranslate's flags argument.
const (
	flagDefaultBackend  = 1 << iota // spec.defaultBackend is the path's backend
	flagResourceBackend             // the first rule's path has a resource backend instead
	flagBareSecondRule              // the second rule has no http paths
	flagNameAndNumber               // the port has both a name and a number
	flagNoSecondRule                // the Ingress has one rule only
	flagNoRules                     // the Ingress has no rules at all
)

// FuzzTranslate builds an Ingress from fuzzed fields, translates it with the Ingress
// source (reading a fake client) and the engine, for both operator CRD variants, and
// checks what the cluster relies on:
//   - nothing panics and the fake client never yields an infrastructure error;
//   - every PangolinResource name is a DNS-1123 label of at most 63 characters, unique
//     for the Ingress, equal to engine.ResourceName of its origin and host;
//   - every published host, domain and public host (after overrides) is a DNS name,
//     and every host of a route is one the host index knows;
//   - every target has a port of 1 to 65535, a priority of 1 to 1000 and a match type the
//     CRD accepts, and a regex target compiles;
//   - every rejection has a message and a reason from internal/pic, and no host of a
//     managed Ingress is dropped without a route or a rejection that covers it;
//   - translating twice gives the same result, and a plan against its own result is empty.
//
// Seeds: below and testdata/fuzz/FuzzTranslate.
func FuzzTranslate(f *testing.F) {
	type seed struct {
		namespace, name, class, annotations, host1, host2, path string
		pathType                                                uint8
		service                                                 string
		port                                                    int32
		portName                                                string
		flags                                                   uint8
	}
	for _, s := range []seed{
		{"prod", "my-app", "pangolin", "", "app.example.com", "api.example.com", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "app.example.com", "/api", 1, "web", 8443, "", 0},
		{"prod", "my-app", "", "", "App.Example.COM.", "www.example.co.uk", "/", 0, "web", 0, "http", flagDefaultBackend},
		{"prod", "my-app", "pangolin-edge-eu", "", "app.example.com", "", "/", 3, "web", 80, "", flagNoSecondRule},
		{"team-b", "my-app", "pangolin-restricted", "", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "nginx", "enabled=true\nsso=false\nblock-access=true", "app.example.com", "", "/", 2, "ext", 443, "", 0},
		{"prod", "my-app", "nginx", "enabled=false", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "enabled=maybe", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "", "kubernetes.io/ingress.class=pangolin-edge-eu", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "domain-name=example.com\nsubdomain=www", "example.com", "other.example.com", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "subdomain=" + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61),
			strings.Repeat("d", 63) + "." + strings.Repeat("e", 63) + ".example.com", "", "/", 2, "web", 80, "", flagNoSecondRule},
		{"prod", "my-app", "pangolin", "tunnel-name=a/b/c\nbackend-scheme=ftp", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "*.example.com", "[::1]", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "localhost", "192.168.0.1", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "intranet", "my-svc.prod.svc.cluster.local", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "bücher.example", "xn--bcher-kva.example", "/bücher/ñ", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", strings.Repeat("a", 64) + ".example.com", strings.Repeat("abcdefghi.", 24) + "ab.example.com", "/", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "", "", "", 0, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/a.*(b)[c]$", 1, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/a.*(b)[c]$", 2, "web", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "web", 2147483647, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "ext", 70000, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "ext", -1, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "web", -80, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "web", 80, "nope", flagNameAndNumber},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "missing", 80, "", 0},
		{"prod", "my-app", "pangolin", "", "app.example.com", "api.example.com", "/", 2, "web", 80, "", flagResourceBackend | flagBareSecondRule | flagDefaultBackend},
		{"prod", "my-app", "pangolin", "", "app.example.com", "", "/", 2, "web", 80, "", flagNoRules | flagDefaultBackend},
		{"a-very-long-namespace-name-that-is-exactly-sixty-three-chars-xx", strings.Repeat("n", 253), "pangolin", "", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"prod", "my.app.v2", "pangolin", "", "app.example.com", "", "/", 2, "web", 80, "", 0},
		{"Prod", "My_App", "pangolin", "", "app.example.com", "", "/", 2, "web", 80, "", 0},
	} {
		f.Add(s.namespace, s.name, s.class, s.annotations, s.host1, s.host2, s.path, s.pathType, s.service, s.port, s.portName, s.flags)
	}
	reasons := picReasons(f)
	f.Fuzz(func(t *testing.T, namespace, name, class, annotations, host1, host2, path string, pathType uint8,
		service string, port int32, portName string, flags uint8) {
		if namespace == "" || !utf8.ValidString(namespace) || !utf8.ValidString(name) {
			// An Ingress is namespaced, and a key that is not UTF-8 cannot be written as
			// JSON: the API server refuses both (the fake client does not).
			t.Skip("no namespace, or a key that is not UTF-8")
		}
		ing := fuzzIngress(namespace, name, class, annotations, host1, host2, path, pathType, service, port, portName, flags)
		c, ok := fuzzClient(ing)
		if !ok {
			t.Skip("the fake client does not store this Ingress")
		}
		// What PIC reads is what was stored: like the API server, the fake client keeps
		// strings as JSON, where invalid UTF-8 becomes U+FFFD.
		key := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
		ing = &networkingv1.Ingress{}
		if err := c.Get(context.Background(), key, ing); err != nil {
			t.Fatalf("read back the stored Ingress %s: %v", key, err)
		}
		src := ingress.New(c, fuzzConfig)
		res, err := src.Routes(context.Background(), ing.DeepCopy())
		if err != nil {
			t.Fatalf("Routes returned an infrastructure error for a stored Ingress: %v", err)
		}
		again, err := src.Routes(context.Background(), ing.DeepCopy())
		if err != nil || !reflect.DeepEqual(res, again) {
			t.Fatalf("Routes is not deterministic:\n%+v\n%+v (%v)", res, again, err)
		}
		checkSourceResult(t, src, ing, res, reasons)

		for variant, features := range map[string]engine.Features{
			"fork":     {PathRouting: true, AccessControl: true, TunnelNamespace: true},
			"original": {},
		} {
			in := engine.Input{Routes: res.Routes, Features: features, Defaults: engine.Defaults{SSO: true}}
			resources, rejections := engine.Desired(in)
			resources2, rejections2 := engine.Desired(in)
			if !reflect.DeepEqual(resources, resources2) || !reflect.DeepEqual(rejections, rejections2) {
				t.Fatalf("%s: Desired is not deterministic", variant)
			}
			checkDesired(t, variant, features, res.Routes, resources, rejections, reasons)
		}
	})
}

// fuzzIngress builds the Ingress: rule 1 is host1 with the fuzzed path and backend, rule 2
// is host2 with "/" to web:80, unless flags say otherwise.
func fuzzIngress(namespace, name, class, annotations, host1, host2, path string, pathType uint8,
	service string, port int32, portName string, flags uint8) *networkingv1.Ingress {
	backendPort := networkingv1.ServiceBackendPort{Number: port}
	if portName != "" {
		backendPort = networkingv1.ServiceBackendPort{Name: portName}
		if flags&flagNameAndNumber != 0 {
			backendPort.Number = port
		}
	}
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: service, Port: backendPort}}
	pathBackend := backend
	if flags&flagResourceBackend != 0 {
		pathBackend = networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "StorageBucket", Name: service}}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: "uid-ingress", Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		},
	}
	for line := range strings.Lines(annotations) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		if !strings.Contains(k, "/") {
			k = pic.AnnotationPrefix + k
		}
		if ing.Annotations == nil {
			ing.Annotations = map[string]string{}
		}
		ing.Annotations[k] = v
	}
	if class != "" {
		ing.Spec.IngressClassName = &class
	}
	if flags&flagDefaultBackend != 0 {
		ing.Spec.DefaultBackend = &backend
	}
	if flags&flagNoRules != 0 {
		return ing
	}
	ing.Spec.Rules = []networkingv1.IngressRule{{
		Host: host1,
		IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
			{Path: path, PathType: fuzzPathTypes[int(pathType)%len(fuzzPathTypes)], Backend: pathBackend},
		}}},
	}}
	if flags&flagNoSecondRule == 0 {
		second := networkingv1.IngressRule{Host: host2}
		if flags&flagBareSecondRule == 0 {
			second.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: fuzzPathTypes[2],
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80},
				}},
			}}}
		}
		ing.Spec.Rules = append(ing.Spec.Rules, second)
	}
	return ing
}

// fuzzScheme has the kinds the Ingress source reads.
var fuzzScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(networkingv1.AddToScheme(s))
	return s
}()

// fuzzClient stores the Ingress, the Services in its namespace and the classes; false
// when the fake client refuses the Ingress (an empty name, for example).
func fuzzClient(ing *networkingv1.Ingress) (client.Client, bool) {
	// A plain object tracker: the default one manages fields and builds a REST mapper of
	// the whole scheme on every write, which made each input cost 50 ms.
	tracker := clienttesting.NewObjectTracker(fuzzScheme, scheme.Codecs.UniversalDecoder())
	c := fake.NewClientBuilder().WithScheme(fuzzScheme).WithObjectTracker(tracker).Build()
	ctx := context.Background()
	if err := c.Create(ctx, ing.DeepCopy()); err != nil {
		return nil, false
	}
	for _, svc := range fuzzServices(ing.Namespace) {
		if err := c.Create(ctx, svc); err != nil {
			return nil, false
		}
	}
	for _, class := range fuzzClasses {
		if err := c.Create(ctx, class.DeepCopy()); err != nil {
			return nil, false
		}
	}
	return c, true
}

// checkSourceResult checks what the Ingress source returns, before the engine.
func checkSourceResult(t *testing.T, src *ingress.Source, ing *networkingv1.Ingress, res plugin.Result, reasons map[string]bool) {
	t.Helper()
	if res.Origin == nil || res.Origin.Namespace != ing.Namespace || res.Origin.Name != ing.Name {
		t.Fatalf("result of a stored Ingress has origin %v", res.Origin)
	}
	checkRejections(t, "source", res.Rejections, reasons)
	if !res.Managed && len(res.Routes) > 0 {
		t.Errorf("an unmanaged Ingress produced %d routes", len(res.Routes))
	}
	indexed := src.Hosts(context.Background(), ing)
	seen := map[string]bool{}
	for _, r := range res.Routes {
		checkDNSName(t, "route host", r.Host)
		if seen[r.Host] {
			t.Errorf("host %s has two routes", r.Host)
		}
		seen[r.Host] = true
		if published := engine.ClaimKey(r, nil); !slices.Contains(indexed, published) {
			t.Errorf("route host %s, published as %s, is missing from the host index %q, so its conflicts would go unseen", r.Host, published, indexed)
		}
		if r.Tunnel.Name == "" || r.Tunnel.Namespace == "" {
			t.Errorf("route %s has tunnel %v", r.Host, r.Tunnel)
		}
		if len(r.Paths) == 0 {
			t.Errorf("route %s has no paths", r.Host)
		}
		for _, p := range r.Paths {
			if p.Path == "" || p.Backend.Host == "" || p.Backend.Port < 1 || p.Backend.Port > 65535 ||
				p.Backend.Scheme != "http" && p.Backend.Scheme != "https" {
				t.Errorf("route %s has path %+v", r.Host, p)
			}
		}
	}
	if !res.Managed {
		return
	}
	// No host of a managed Ingress disappears silently: it is routed, or a rejection
	// names it or the whole Ingress.
	for _, rule := range ing.Spec.Rules {
		h, problem := hostname.Normalize(rule.Host, fuzzConfig.ClusterDomain)
		if problem != nil || seen[h] {
			continue
		}
		if !slices.ContainsFunc(res.Rejections, func(r route.Rejection) bool { return r.Host == "" || r.Host == h }) {
			t.Errorf("host %s of a managed Ingress has neither a route nor a rejection: %v", h, res.Rejections)
		}
	}
}

// checkDesired checks the engine's answer for the routes of one Ingress.
func checkDesired(t *testing.T, variant string, features engine.Features, routes []route.Route, resources []engine.Resource,
	rejections []route.Rejection, reasons map[string]bool) {
	t.Helper()
	checkRejections(t, variant, rejections, reasons)
	names := map[string]bool{}
	for _, r := range resources {
		if errs := validation.IsDNS1123Label(r.Name); len(errs) > 0 {
			t.Errorf("%s: resource name %q is not a DNS label of at most 63 characters: %v", variant, r.Name, errs)
		}
		if want := engine.ResourceName(r.Origin, r.Host); r.Name != want {
			t.Errorf("%s: resource name %q, but ResourceName gives %q", variant, r.Name, want)
		}
		if names[r.Name] {
			t.Errorf("%s: two resources named %s", variant, r.Name)
		}
		names[r.Name] = true
		if r.Namespace != r.Origin.Namespace {
			t.Errorf("%s: resource %s in namespace %q, its Ingress in %q", variant, r.Name, r.Namespace, r.Origin.Namespace)
		}
		checkDNSName(t, variant+": host", r.Host)
		checkDNSName(t, variant+": domain", r.Domain)
		checkDNSName(t, variant+": public host", r.PublishedHost())
		if r.Subdomain == "" {
			t.Errorf("%s: resource %s has an empty subdomain, which the CRD refuses", variant, r.Name)
		}
		if features.AccessControl != (r.SSO != nil && r.BlockAccess != nil) {
			t.Errorf("%s: resource %s has sso %v, block-access %v", variant, r.Name, r.SSO, r.BlockAccess)
		}
		if len(r.Targets) == 0 || !features.PathRouting && len(r.Targets) != 1 {
			t.Errorf("%s: resource %s has %d targets", variant, r.Name, len(r.Targets))
		}
		for _, target := range r.Targets {
			checkTarget(t, variant, features, r.Name, target)
		}
	}
	// Every route is published or rejected, never dropped.
	for _, r := range routes {
		published := slices.ContainsFunc(resources, func(res engine.Resource) bool { return res.Host == r.Host })
		rejected := slices.ContainsFunc(rejections, func(rej route.Rejection) bool { return rej.Host == r.Host })
		if !published && !rejected {
			t.Errorf("%s: route %s is neither published nor rejected", variant, r.Host)
		}
	}

	plan := engine.Calculate(route.Origin{}, resources, nil, nil, nil)
	if len(plan.Create) != len(resources) || len(plan.Update)+len(plan.Delete) != 0 {
		t.Errorf("%s: plan from nothing %+v does not create exactly the %d resources", variant, plan, len(resources))
	}
	existing := make([]engine.Existing, len(resources))
	for i, r := range resources {
		existing[i] = engine.Existing{Resource: r, UID: types.UID("uid-" + r.Name)}
	}
	if plan := engine.Calculate(route.Origin{}, resources, existing, nil, nil); !plan.Empty() {
		t.Errorf("%s: plan against its own result is not empty: %+v", variant, plan)
	}
}

func checkTarget(t *testing.T, variant string, features engine.Features, name string, target engine.Target) {
	t.Helper()
	if target.Backend.Port < 1 || target.Backend.Port > 65535 || target.Backend.Host == "" {
		t.Errorf("%s: resource %s has target %+v", variant, name, target)
	}
	if !features.PathRouting {
		return
	}
	if target.Priority < 1 || target.Priority > 1000 {
		t.Errorf("%s: resource %s: priority %d is outside the CRD's 1 to 1000", variant, name, target.Priority)
	}
	switch target.Match {
	case "exact", "prefix":
	case "regex":
		// Invalid UTF-8 cannot reach PIC: the API server stores strings as JSON.
		if _, err := regexp.Compile(target.Path); err != nil && utf8.ValidString(target.Path) {
			t.Errorf("%s: resource %s: regex target %q does not compile: %v", variant, name, target.Path, err)
		}
	default:
		t.Errorf("%s: resource %s: match type %q is not one the CRD accepts", variant, name, target.Match)
	}
}

func checkRejections(t *testing.T, stage string, rejections []route.Rejection, reasons map[string]bool) {
	t.Helper()
	for _, r := range rejections {
		if !reasons[r.Reason] || r.Message == "" {
			t.Errorf("%s: rejection %q has a reason that is not in internal/pic, or no message", stage, r)
		}
	}
}

func checkDNSName(t *testing.T, what, name string) {
	t.Helper()
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		t.Errorf("%s %q is not a DNS name: %v", what, name, errs)
		return
	}
	for _, label := range strings.Split(name, ".") {
		if errs := validation.IsDNS1123Label(label); len(errs) > 0 {
			t.Errorf("%s %q: label %q: %v", what, name, label, errs)
		}
	}
}

// picReasons reads the values of the Reason* constants of internal/pic from its source,
// so that a new reason needs no change here.
func picReasons(f *testing.F) map[string]bool {
	file, err := parser.ParseFile(token.NewFileSet(), "../../internal/pic/pic.go", nil, 0)
	if err != nil {
		f.Fatalf("read the reasons of internal/pic: %v", err)
	}
	reasons := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, id := range spec.Names {
			if i >= len(spec.Values) || !strings.HasPrefix(id.Name, "Reason") {
				continue
			}
			if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					reasons[v] = true
				}
			}
		}
		return true
	})
	if len(reasons) < 10 || !reasons[pic.ReasonInvalidHost] || !reasons[pic.ReasonTunnelNotAllowed] {
		f.Fatalf("read %d reasons from internal/pic/pic.go: %v", len(reasons), reasons)
	}
	return reasons
}
