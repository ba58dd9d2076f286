package sources

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// HealthChecks derives the health checks of backends: from the readiness probe of the
// pods a Service selects, or from the user's explicit path. Pangolin's agent then stops
// sending traffic to a target that fails them, as kube-proxy stops sending it to a pod
// that is not ready.
type HealthChecks struct {
	// Pods reads the pods of a Service. It reads past the cache: PIC does not watch
	// Pods (there are many, and only a few Services ask), so a probe edited later is
	// seen at the next reconcile of the object, at the latest after resyncPeriod.
	Pods client.Reader
	// Default is the configuration's healthChecks: whether objects that do not say ask
	// for health checks.
	Default bool
	// read holds the pods read for one object (ForObject), by Service; nil reads on
	// every Check.
	read map[types.NamespacedName]*podsRead
	// unread derives no check and reads nothing (Unread).
	unread bool
}

// Unread is h where only an object's verdicts matter, which no health check changes:
// it derives no check and reads no pods.
func (h HealthChecks) Unread() HealthChecks {
	h.unread = true
	return h
}

// podsRead is one read of a Service's pods: the pods, or why there are none to read.
type podsRead struct {
	pods []corev1.Pod
	why  string
}

// ForObject is h for the backends of one object: each Service's pods are read once,
// however many of its ports, paths or rules name it. An h that already is one (a
// reconcile's, shared by the routes it evaluates) is kept as it is.
func (h HealthChecks) ForObject() HealthChecks {
	if h.read == nil {
		h.read = map[types.NamespacedName]*podsRead{}
	}
	return h
}

// maxPodsRead bounds one read of a Service's pods: the probe comes from the first pod
// (by name) that has one, and pods of one workload share their template.
const maxPodsRead = 20

// Check is the health check of the backend port of svc, as its object asks (asked and
// path are Options.HealthCheck and HealthCheckPath): none when it does not ask; an HTTP
// GET of the explicit path on the port; else the readiness probe of
// the Service's pods. why says, when a check was asked and none can be derived, why not
// (for a Normal event); err is for infrastructure failures only.
//
//	asked | explicit path | pods' readiness probe                  | check
//	------+---------------+----------------------------------------+-----------------------------
//	no    | -             | -                                      | none
//	yes   | /healthz      | -                                      | http GET /healthz on port
//	yes   | -             | httpGet on a port the Service exposes  | http(s) GET of its path there
//	yes   | -             | tcpSocket on a port the Service exposes| tcp on that Service port
//	yes   | -             | none, exec, grpc, or a port not exposed| none, and why
func (h HealthChecks) Check(ctx context.Context, asked *bool, path string, svc *corev1.Service, port corev1.ServicePort, scheme string) (check route.HealthCheck, why string, err error) {
	if h.unread || !*cmp.Or(asked, &h.Default) {
		return route.HealthCheck{}, "", nil
	}
	if path != "" {
		if port.Protocol == corev1.ProtocolUDP {
			return route.HealthCheck{}, fmt.Sprintf("%s asks for an HTTP check, which a UDP port cannot answer", pic.AnnotationHealthCheckPath), nil
		}
		return route.HealthCheck{Mode: "http", Scheme: httpScheme(scheme), Path: path, Port: port.Port}, "", nil
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
		return route.HealthCheck{}, fmt.Sprintf("Service %s selects no pods, so it has no readiness probe to follow; set %s for an explicit check", svc.Name, pic.AnnotationHealthCheckPath), nil
	}
	pods, err := h.podsOf(ctx, svc)
	if err != nil || pods.why != "" {
		return route.HealthCheck{}, pods.why, err
	}
	for i := range pods.pods {
		if check, ok := probeCheck(svc, port, &pods.pods[i]); ok {
			return check, "", nil
		}
	}
	if len(pods.pods) == 0 {
		return route.HealthCheck{}, fmt.Sprintf("Service %s has no pods yet to read a readiness probe from", svc.Name), nil
	}
	return route.HealthCheck{}, fmt.Sprintf("the pods of Service %s have no httpGet or tcpSocket readiness probe on a port the Service exposes (port %s); set %s for an explicit check",
		svc.Name, ServicePortName(port), pic.AnnotationHealthCheckPath), nil
}

// podsOf reads the pods svc selects, sorted by name, once per object when h is
// ForObject's.
func (h HealthChecks) podsOf(ctx context.Context, svc *corev1.Service) (*podsRead, error) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if read, ok := h.read[key]; ok {
		return read, nil
	}
	read := &podsRead{}
	if h.Pods == nil {
		read.why = "PIC cannot read pods here"
	} else {
		var list corev1.PodList
		err := h.Pods.List(ctx, &list, client.InNamespace(svc.Namespace), client.MatchingLabels(svc.Spec.Selector), client.Limit(maxPodsRead))
		switch {
		case apierrors.IsForbidden(err):
			read.why = "PIC may not list pods (grant it list on pods, see docs/health-checks.md)"
		case err != nil:
			return nil, fmt.Errorf("list pods of Service %s/%s: %w", svc.Namespace, svc.Name, err)
		default:
			read.pods = list.Items
			slices.SortFunc(read.pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	if h.read != nil {
		h.read[key] = read
	}
	return read, nil
}

// probeCheck turns the readiness probe of the container behind port into a check on
// the Service port that reaches the probed container port: the agent dials the
// Service, never a pod.
func probeCheck(svc *corev1.Service, port corev1.ServicePort, pod *corev1.Pod) (route.HealthCheck, bool) {
	container, ok := containerBehind(port, pod)
	if !ok || container.ReadinessProbe == nil {
		return route.HealthCheck{}, false
	}
	probe := container.ReadinessProbe
	check := route.HealthCheck{
		IntervalSeconds:    probe.PeriodSeconds,
		TimeoutSeconds:     probe.TimeoutSeconds,
		HealthyThreshold:   probe.SuccessThreshold,
		UnhealthyThreshold: probe.FailureThreshold,
	}
	var probed intstr.IntOrString
	switch {
	case probe.HTTPGet != nil:
		probed = probe.HTTPGet.Port
		check.Mode, check.Scheme, check.Path = "http", strings.ToLower(string(cmp.Or(probe.HTTPGet.Scheme, corev1.URISchemeHTTP))), cmp.Or(probe.HTTPGet.Path, "/")
	case probe.TCPSocket != nil:
		probed = probe.TCPSocket.Port
		check.Mode = "tcp"
	default:
		return route.HealthCheck{}, false // exec and gRPC probes cannot be run from outside the pod
	}
	number, ok := containerPortNumber(container, probed)
	if !ok {
		return route.HealthCheck{}, false
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Protocol != corev1.ProtocolTCP && sp.Protocol != "" {
			continue // probes speak TCP
		}
		if n, ok := containerPortNumber(container, targetPortOf(sp)); ok && n == number {
			check.Port = sp.Port
			return check, true
		}
	}
	return route.HealthCheck{}, false
}

// containerBehind is the container a Service port sends traffic to: the one declaring
// its target port, or the pod's only container when none declares it.
func containerBehind(port corev1.ServicePort, pod *corev1.Pod) (*corev1.Container, bool) {
	target := targetPortOf(port)
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		for _, cp := range c.Ports {
			if target.Type == intstr.String && cp.Name == target.StrVal || target.Type == intstr.Int && cp.ContainerPort == target.IntVal {
				return c, true
			}
		}
	}
	if len(pod.Spec.Containers) == 1 && target.Type == intstr.Int {
		return &pod.Spec.Containers[0], true
	}
	return nil, false
}

// targetPortOf is a Service port's target port: its port when unset, as the API server
// defaults it.
func targetPortOf(p corev1.ServicePort) intstr.IntOrString {
	if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal == 0 || p.TargetPort.Type == intstr.String && p.TargetPort.StrVal == "" {
		return intstr.FromInt32(p.Port)
	}
	return p.TargetPort
}

// containerPortNumber resolves a port of a container, by number or by name.
func containerPortNumber(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.Int {
		return p.IntVal, p.IntVal > 0
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// PodReader is what HealthChecks reads pods through: the API server past the cache,
// or render's cluster.
func PodReader(deps plugin.SourceDeps) client.Reader {
	if deps.APIReader != nil {
		return deps.APIReader
	}
	return deps.Client
}

// NoHealthCheck is the Normal notice that a backend of origin, port of svc, is
// published without the health check its object asked for, and why (Check's why). The
// Service is named as seen from origin: by its port alone when origin is the Service
// itself (a LoadBalancer Service), by name in origin's namespace, and with its namespace
// from another (an HTTPRoute's backendRef through a ReferenceGrant).
func NoHealthCheck(origin route.Origin, svc *corev1.Service, port corev1.ServicePort, why string) route.Notice {
	backend := "Service " + svc.Namespace + "/" + svc.Name + " port " + ServicePortName(port)
	switch {
	case origin.Group == "" && origin.Kind == KindService && origin.Namespace == svc.Namespace && origin.Name == svc.Name:
		backend = "port " + ServicePortName(port)
	case origin.Namespace == svc.Namespace:
		backend = "Service " + svc.Name + " port " + ServicePortName(port)
	}
	return route.Notice{Origin: origin, Reason: pic.ReasonNoReadinessProbe,
		Message: fmt.Sprintf("%s is published without a health check: %s", backend, why)}
}

// AddNotice appends each of more that notices do not hold already: one backend named
// by several paths, or one policy protecting several hosts, is one notice.
func AddNotice(notices []route.Notice, more ...route.Notice) []route.Notice {
	for _, n := range more {
		if !slices.Contains(notices, n) {
			notices = append(notices, n)
		}
	}
	return notices
}

func httpScheme(scheme string) string {
	if scheme == "https" {
		return "https"
	}
	return "http"
}

// ServicePortName is how messages name a Service port: `"http" (80)`, or 80 when it has
// no name.
func ServicePortName(p corev1.ServicePort) string {
	if p.Name != "" {
		return fmt.Sprintf("%q (%d)", p.Name, p.Port)
	}
	return fmt.Sprint(p.Port)
}
