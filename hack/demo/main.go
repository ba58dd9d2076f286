// Command demo is `make demo`: it starts a local control plane (etcd, kube-apiserver,
// kube-controller-manager) with the operator's CRDs, creates the embedded sample
// objects, runs bin/manager against them, and prints what PIC created. DEMO_ONESHOT=1
// exits after the first complete table; otherwise it keeps printing changes until Ctrl-C.
package main

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

//go:embed samples.yaml
var samples []byte

// expected is what the samples must produce before the first table is printed: the
// hosts, the TCP port ("tcp:5432") and the Warnings.
var expected = outcome{
	hosts:    []string{"hello.example.com", "shop.example.com", "admin.shop.example.com", "eu.example.com", "tcp:5432"},
	warnings: []string{"ApexHost", "ServiceNotFound"},
}

// expectedDirect is what the direct mode publishes for the samples: an apex host is no
// longer refused when it is one of the organization's domains.
var expectedDirect = outcome{
	hosts:    []string{"hello.example.com", "shop.example.com", "admin.shop.example.com", "eu.example.com", "example.com", "tcp:5432"},
	warnings: []string{"ServiceNotFound"},
}

// demoAddress is where the demo says users reach its TCP and UDP ports: the Services'
// status.loadBalancer.ingress (loadBalancerAddress).
const demoAddress = "pangolin.example.com"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// picStopGrace is how long PIC may take to shut down after SIGTERM before it is killed.
const picStopGrace = 10 * time.Second

// run returns only once every process it started has exited: its deferred stops run in
// reverse order, PIC first (a controller must not outlive its API server), then the
// in-repo Pangolin, then the control plane, and each waits for its process. The signal
// handler stays installed until then, so a second Ctrl-C cannot cut the stop short.
func run() error {
	// SIGHUP: the terminal the demo follows changes in was closed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	manager := envOr("PIC_MANAGER_BINARY", filepath.Join(root, "bin", "manager"))
	if _, err := os.Stat(manager); err != nil {
		return fmt.Errorf("%s not found: run `make build` first (make demo does)", manager)
	}
	variant, err := testenv.VariantByName(envOr("DEMO_VARIANT", testenv.VariantFork))
	if err != nil {
		return err
	}
	dir := filepath.Join(root, ".demo")
	_ = os.RemoveAll(dir)

	fmt.Printf("starting a local control plane with the %s pangolin-operator CRDs...\n", variant.Name)
	cluster, err := testenv.StartCluster(testenv.ClusterOptions{Dir: dir, Variant: &variant})
	if err != nil {
		return err
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
	}()
	c := cluster.Client
	if err := apply(ctx, c, samples); err != nil {
		return interrupted(ctx, err)
	}

	logPath := filepath.Join(cluster.LogDir, "pic.log")
	args := []string{"--kubeconfig", cluster.KubeconfigPath, "--sources=ingress,service", "--load-balancer-address=" + demoAddress, "--log-format", "console"}
	env := append(os.Environ(), "PIC_TUNNEL_CLASS_MAPPING=edge-eu=pangolin-system/edge-eu-tunnel")
	var pangolin *simtest.Server
	if envOr("DEMO_SINK", "pangolinresource") == "pangolin" {
		// Direct mode against the in-repo Integration API server: the tunnels are its
		// sites, example.com its organization's domain.
		pangolin = simtest.NewServer(pangolinsim.Options{
			Org:     "demo",
			Domains: []pangolinsim.Domain{{ID: "domain1", BaseDomain: "example.com", Verified: true}},
			Sites:   []pangolinsim.Site{{ID: 1, NiceID: "default", Name: "demo"}, {ID: 2, NiceID: "edge-eu-tunnel", Name: "edge-eu"}},
		})
		defer pangolin.Close()
		configPath, err := managedSiteSetup(ctx, c, dir)
		if err != nil {
			return interrupted(ctx, err)
		}
		args = append(args, "--sink=pangolin", "--pangolin-url="+pangolin.BaseURL(), "--pangolin-org=demo", "--config", configPath)
		env = append(env, "PIC_PANGOLIN_API_KEY="+pangolinsim.RootKey.Token(), "POD_NAMESPACE="+picNamespace)
		fmt.Printf("direct mode: an in-repo Pangolin Integration API server at %s (org demo, domain example.com, sites default and edge-eu-tunnel)\n", pangolin.BaseURL())
		fmt.Printf("  and the managed site %s, which PIC creates with its Newt agent in %s (the demo plays the agent: no kubelet runs it)\n", managedSite, picNamespace)
	}
	pic, err := testenv.NewProcess("pic", manager, logPath, args...)
	if err != nil {
		return err
	}
	pic.Env = env
	if err := pic.Start(); err != nil {
		return err
	}
	defer pic.Signal(syscall.SIGTERM, picStopGrace)
	fmt.Printf("PIC is running (log: %s)\n", logPath)
	fmt.Printf("kubeconfig: %s\n  try: kubectl --kubeconfig %s describe ingress -n demo broken\n\n", cluster.KubeconfigPath, cluster.KubeconfigPath)
	return interrupted(ctx, follow(ctx, c, pangolin, pic))
}

// follow prints the table each time it changes, until ctx is done, PIC exits, or, with
// DEMO_ONESHOT=1, the table is complete.
func follow(ctx context.Context, c client.Client, pangolin *simtest.Server, pic *testenv.Process) error {
	deadline := time.Now().Add(2 * time.Minute)
	last := ""
	for {
		table, complete, err := render(ctx, c)
		if pangolin != nil {
			table, complete, err = renderPangolin(ctx, c, pangolin)
		}
		if err != nil {
			return err
		}
		if table != last && (complete || time.Now().After(deadline)) {
			fmt.Println(time.Now().Format("15:04:05"))
			fmt.Println(table)
			last = table
		}
		if os.Getenv("DEMO_ONESHOT") == "1" {
			if complete {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("PIC did not publish the samples within 2 minutes; see %s", pic.LogPath)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pic.Exited():
			return pic.Alive()
		case <-time.After(time.Second):
		}
	}
}

// interrupted is err, or nil when ctx was cancelled by Ctrl-C or SIGTERM: the user asked
// the demo to stop, and whatever failed because of that is no error.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		fmt.Println("stopping")
		return nil
	}
	return err
}

// apply creates every sample, and marks the tunnels Ready as the operator would.
func apply(ctx context.Context, c client.Client, manifest []byte) error {
	objs, err := testenv.DecodeYAML(manifest)
	if err != nil {
		return fmt.Errorf("read the samples: %w", err)
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if obj.GetKind() == "PangolinTunnel" {
			_ = unstructured.SetNestedField(obj.Object, "Ready", "status", "status")
			_ = unstructured.SetNestedField(obj.Object, true, "status", "online")
			if err := c.Status().Update(ctx, obj); err != nil {
				return fmt.Errorf("mark tunnel %s Ready: %w", obj.GetName(), err)
			}
		}
	}
	return nil
}

// render prints each Ingress with its PangolinResources, then the Warning events.
func render(ctx context.Context, c client.Client) (string, bool, error) {
	var ingresses networkingv1.IngressList
	var resources tunnelv1alpha1.PangolinResourceList
	var events eventsv1.EventList
	for _, l := range []client.ObjectList{&ingresses, &resources, &events} {
		if err := c.List(ctx, l, client.InNamespace("demo")); err != nil {
			return "", false, err
		}
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "INGRESS\tHOST\tPANGOLINRESOURCE\tTUNNEL\tTARGETS")
	hosts := map[string]bool{}
	for _, ing := range ingresses.Items {
		n := 0
		for _, r := range resources.Items {
			if !ownedBy(r, ing.UID) {
				continue
			}
			n++
			host := r.Spec.HTTPConfig.Subdomain + "." + r.Spec.HTTPConfig.DomainName
			hosts[host] = true
			tunnel := r.Spec.TunnelRef.Name
			if r.Spec.TunnelRef.Namespace != "" {
				tunnel = r.Spec.TunnelRef.Namespace + "/" + tunnel
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", ing.Name, host, r.Name, tunnel, targets(r))
		}
		if n == 0 {
			fmt.Fprintf(w, "%s\t-\t-\t-\t-\n", ing.Name)
		}
	}
	w.Flush()
	ports, err := portsTable(ctx, c, func(svc corev1.Service) []string {
		var out []string
		for _, r := range resources.Items {
			if ownedBy(r, svc.UID) && r.Spec.ProxyConfig != nil {
				port := fmt.Sprintf("%s:%d", r.Spec.Protocol, r.Spec.ProxyConfig.ProxyPort)
				hosts[port] = true
				out = append(out, fmt.Sprintf("%s\t%s\t%s", port, r.Name, targets(r)))
			}
		}
		return out
	})
	if err != nil {
		return "", false, err
	}
	return b.String() + ports + warningsTable(events), expected.met(hosts, events), nil
}

// portsTable prints each Service of type LoadBalancer with what publishes its ports (the
// rows published gives, tab-separated: port, resource, target) and the address its status
// shows.
func portsTable(ctx context.Context, c client.Client, published func(corev1.Service) []string) (string, error) {
	var services corev1.ServiceList
	if err := c.List(ctx, &services, client.InNamespace("demo")); err != nil {
		return "", err
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nSERVICE\tPORT\tRESOURCE\tTARGET\tSTATUS ADDRESS")
	for _, svc := range services.Items {
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		address := "<pending>"
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			address = lb.Hostname + lb.IP
		}
		rows := published(svc)
		if len(rows) == 0 {
			rows = []string{"-\t-\t-"}
		}
		for _, row := range rows {
			fmt.Fprintf(w, "%s\t%s\t%s\n", svc.Name, row, address)
		}
	}
	w.Flush()
	return b.String(), nil
}

// renderPangolin prints what Pangolin would serve (one router per path group, as its
// Traefik configuration does), then PIC's Warning events.
func renderPangolin(ctx context.Context, c client.Client, pangolin *simtest.Server) (string, bool, error) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PANGOLIN RESOURCE\tHOST\tROUTE\tPRIORITY\tSERVERS")
	names := map[int]string{}
	for _, r := range pangolin.Resources() {
		names[r.ID] = r.NiceID
	}
	hosts := map[string]bool{}
	routers := pangolin.Routers()
	slices.SortFunc(routers, func(a, b pangolinsim.Router) int { return strings.Compare(a.Rule, b.Rule) })
	for _, r := range routers {
		_, route, _ := strings.Cut(r.Rule, " && ")
		hosts[r.Host] = true
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", names[r.ResourceID], r.Host, route, r.Priority, strings.Join(r.Servers, ", "))
	}
	w.Flush()
	raw := pangolin.RawRouters()
	ports, err := portsTable(ctx, c, func(svc corev1.Service) []string {
		var out []string
		for _, r := range raw {
			if strings.Contains(resourceName(pangolin, r.ResourceID), "(Service demo/"+svc.Name+")") {
				port := strings.Replace(r.EntryPoint, "-", ":", 1)
				hosts[port] = true
				out = append(out, fmt.Sprintf("%s\t%s\t%s", port, names[r.ResourceID], strings.Join(r.Servers, ", ")))
			}
		}
		return out
	})
	if err != nil {
		return "", false, err
	}
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace("demo")); err != nil {
		return "", false, err
	}
	playNewt(ctx, c, pangolin)
	sites, online := managedSitesTable(ctx, c, pangolin)
	return b.String() + ports + sites + warningsTable(events), expectedDirect.met(hosts, events) && online, nil
}

// The managed site of the direct mode, and PIC's namespace, where its Newt agent goes.
const (
	managedSite  = "lab"
	picNamespace = "pangolin-system"
	// demoNewtVersion is the version the demo's stand-in agent reports on connecting.
	demoNewtVersion = "1.15.0"
)

// managedSiteSetup prepares PIC to manage the site managedSite: a configuration file
// asking for it, and a stand-in for PIC's own Deployment, which owns the agent's objects
// (the demo runs PIC as a process, not in a pod). It returns the file's path.
func managedSiteSetup(ctx context.Context, c client.Client, dir string) (string, error) {
	labels := map[string]string{"app.kubernetes.io/name": "pangolin-ingress-controller"}
	owner := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pangolin-ingress-controller", Namespace: picNamespace},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "pangolin-ingress-controller:demo"}}},
		}},
	}
	if err := c.Create(ctx, owner); err != nil {
		return "", fmt.Errorf("create the stand-in for PIC's Deployment: %w", err)
	}
	path := filepath.Join(dir, "pic.yaml")
	if err := os.WriteFile(path, []byte("tunnels:\n  "+managedSite+": {managedSite: true}\n"), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// playNewt connects the managed site's agent once PIC has created the site and the
// agent's Deployment, as Newt would once its pod runs: the demo has no kubelet.
func playNewt(ctx context.Context, c client.Client, pangolin *simtest.Server) {
	var d appsv1.Deployment
	if c.Get(ctx, client.ObjectKey{Namespace: picNamespace, Name: "newt-" + managedSite}, &d) != nil {
		return
	}
	pangolin.SetNewtVersion(managedSite, demoNewtVersion)
	pangolin.SetSiteOnline(managedSite, true)
}

// managedSitesTable lists the managed sites PIC created, with their connection, Newt's
// version and the agent's Deployment; never credentials. It reports whether every one is
// online.
func managedSitesTable(ctx context.Context, c client.Client, pangolin *simtest.Server) (string, bool) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "MANAGED SITE\tNAME\tONLINE\tNEWT\tAGENT")
	online := false
	for _, s := range pangolin.Sites() {
		if s.Type != "newt" || s.NiceID != managedSite {
			continue
		}
		agent := "-"
		var d appsv1.Deployment
		if c.Get(ctx, client.ObjectKey{Namespace: picNamespace, Name: "newt-" + s.NiceID}, &d) == nil {
			agent = picNamespace + "/" + d.Name
		}
		online = !s.Offline
		fmt.Fprintf(w, "%s\t%s\t%t\t%s\t%s\n", s.NiceID, s.Name, !s.Offline, cmp.Or(s.NewtVersion, "-"), agent)
	}
	w.Flush()
	return "\n" + b.String(), online
}

// outcome is what a demo run must show before it is complete.
type outcome struct {
	hosts    []string
	warnings []string
}

// met reports whether every expected host is published and every expected Warning was
// emitted.
func (o outcome) met(published map[string]bool, events eventsv1.EventList) bool {
	for _, h := range o.hosts {
		if !published[h] {
			return false
		}
	}
	for _, r := range o.warnings {
		if !slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool { return picWarning(e) && e.Reason == r }) {
			return false
		}
	}
	return true
}

// picWarning is a Warning of PIC's, not one of the control plane's own.
func picWarning(e eventsv1.Event) bool {
	return e.Type == "Warning" && e.ReportingController == "pangolin-ingress-controller"
}

// warningsTable lists PIC's Warning events, sorted.
func warningsTable(events eventsv1.EventList) string {
	var warnings []string
	for _, e := range events.Items {
		if picWarning(e) {
			warnings = append(warnings, fmt.Sprintf("  %s %s: %s", e.Regarding.Name, e.Reason, e.Note))
		}
	}
	slices.Sort(warnings)
	return "\nWARNINGS\n" + strings.Join(warnings, "\n") + "\n"
}

func ownedBy(r tunnelv1alpha1.PangolinResource, uid any) bool {
	for _, o := range r.OwnerReferences {
		if fmt.Sprint(o.UID) == fmt.Sprint(uid) {
			return true
		}
	}
	return false
}

func targets(r tunnelv1alpha1.PangolinResource) string {
	if r.Spec.Target != nil {
		return fmt.Sprintf("%s://%s:%d", r.Spec.Target.Method, r.Spec.Target.IP, r.Spec.Target.Port)
	}
	var out []string
	for _, t := range r.Spec.Targets {
		if t.Path == "" { // a TCP or UDP target: no path to match
			out = append(out, fmt.Sprintf("%s://%s:%d", t.Method, t.IP, t.Port))
			continue
		}
		out = append(out, fmt.Sprintf("%s %s → %s://%s:%d", t.PathMatchType, t.Path, t.Method, t.IP, t.Port))
	}
	return strings.Join(out, ", ")
}

// resourceName is the name of the Pangolin resource id: "tcp:5432 (Service demo/postgres)".
func resourceName(pangolin *simtest.Server, id int) string {
	for _, r := range pangolin.Resources() {
		if r.ID == id {
			return r.Name
		}
	}
	return ""
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
