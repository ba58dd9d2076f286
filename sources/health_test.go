package sources

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func webService(ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: ports},
	}
}

func webPod(name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: containers}}
}

func httpProbe(path string, port intstr.IntOrString, scheme corev1.URIScheme) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port, Scheme: scheme}},
		PeriodSeconds: 10, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

func TestHealthCheckFromReadiness(t *testing.T) {
	http80 := corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("web"), Protocol: corev1.ProtocolTCP}
	metrics := corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9000), Protocol: corev1.ProtocolTCP}
	app := func(probe *corev1.Probe) corev1.Container {
		return corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}, {Name: "admin", ContainerPort: 9000}}, ReadinessProbe: probe}
	}
	thresholds := route.HealthCheck{IntervalSeconds: 10, TimeoutSeconds: 2, HealthyThreshold: 1, UnhealthyThreshold: 3}
	with := func(h route.HealthCheck) route.HealthCheck {
		h.IntervalSeconds, h.TimeoutSeconds, h.HealthyThreshold, h.UnhealthyThreshold = thresholds.IntervalSeconds, thresholds.TimeoutSeconds, thresholds.HealthyThreshold, thresholds.UnhealthyThreshold
		return h
	}
	cases := []struct {
		name    string
		svc     *corev1.Service
		pods    []client.Object
		asked   *bool
		path    string
		def     bool
		want    route.HealthCheck
		why     string
		noCheck bool
	}{
		{
			name: "not asked, not configured: no check and nothing to say",
			svc:  webService(http80), pods: []client.Object{webPod("a", app(httpProbe("/ready", intstr.FromString("web"), "")))},
		},
		{
			name: "configured, and the object says false: no check",
			svc:  webService(http80), pods: []client.Object{webPod("a", app(httpProbe("/ready", intstr.FromString("web"), "")))},
			def: true, asked: ptr.To(false),
		},
		{
			name: "an httpGet probe on the port the Service targets, by name",
			svc:  webService(http80), pods: []client.Object{webPod("a", app(httpProbe("/ready", intstr.FromString("web"), "")))},
			def:  true,
			want: with(route.HealthCheck{Mode: "http", Scheme: "http", Path: "/ready", Port: 80}),
		},
		{
			name: "an HTTPS probe on another container port the Service exposes: that Service port",
			svc:  webService(http80, metrics), pods: []client.Object{webPod("a", app(httpProbe("", intstr.FromInt32(9000), corev1.URISchemeHTTPS)))},
			asked: ptr.To(true),
			want:  with(route.HealthCheck{Mode: "http", Scheme: "https", Path: "/", Port: 9090}),
		},
		{
			name: "a tcpSocket probe",
			svc:  webService(http80),
			pods: []client.Object{webPod("a", app(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("web")}},
				PeriodSeconds: 10, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 3}))},
			asked: ptr.To(true),
			want:  with(route.HealthCheck{Mode: "tcp", Port: 80}),
		},
		{
			name:  "the explicit path needs no pod",
			svc:   webService(http80),
			asked: ptr.To(true), path: "/healthz",
			want: route.HealthCheck{Mode: "http", Scheme: "http", Path: "/healthz", Port: 80},
		},
		{
			name: "a probe on a port the Service does not expose: none, and why",
			svc:  webService(http80), pods: []client.Object{webPod("a", app(httpProbe("/ready", intstr.FromInt32(9000), "")))},
			asked: ptr.To(true),
			why:   `the pods of Service web have no httpGet or tcpSocket readiness probe on a port the Service exposes (port "http" (80)); set pangolin.ingress.k8s.io/health-check-path for an explicit check`,
		},
		{
			name:  "an exec probe cannot be run from outside the pod",
			svc:   webService(http80),
			pods:  []client.Object{webPod("a", app(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}))},
			asked: ptr.To(true),
			why:   `the pods of Service web have no httpGet or tcpSocket readiness probe on a port the Service exposes (port "http" (80)); set pangolin.ingress.k8s.io/health-check-path for an explicit check`,
		},
		{
			name: "no pod yet", svc: webService(http80), asked: ptr.To(true),
			why: "Service web has no pods yet to read a readiness probe from",
		},
		{
			name: "a Service without a selector",
			svc: func() *corev1.Service {
				s := webService(http80)
				s.Spec.Selector = nil
				return s
			}(),
			asked: ptr.To(true),
			why:   "Service web selects no pods, so it has no readiness probe to follow; set pangolin.ingress.k8s.io/health-check-path for an explicit check",
		},
		{
			name: "the first pod by name with a usable probe wins",
			svc:  webService(http80),
			pods: []client.Object{
				webPod("b", app(httpProbe("/b", intstr.FromString("web"), ""))),
				webPod("a", app(nil)),
				webPod("c", app(httpProbe("/c", intstr.FromString("web"), ""))),
			},
			asked: ptr.To(true),
			want:  with(route.HealthCheck{Mode: "http", Scheme: "http", Path: "/b", Port: 80}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(tc.pods...).Build()
			h := HealthChecks{Pods: c, Default: tc.def}
			got, why, err := h.Check(context.Background(), tc.asked, tc.path, tc.svc, tc.svc.Spec.Ports[0], "http")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.why, why)
		})
	}
}

func TestExplicitPathOnAUDPPort(t *testing.T) {
	svc := webService(corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	got, why, err := HealthChecks{}.Check(context.Background(), ptr.To(true), "/healthz", svc, svc.Spec.Ports[0], "udp")
	require.NoError(t, err)
	assert.False(t, got.Enabled(), "an HTTP check cannot be answered on a UDP port")
	assert.Contains(t, why, "a UDP port cannot answer")
}

func TestHealthCheckWithoutPodPermission(t *testing.T) {
	forbidden := interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	}}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithInterceptorFuncs(forbidden).Build()
	svc := webService(corev1.ServicePort{Port: 80})
	got, why, err := HealthChecks{Pods: c, Default: true}.Check(context.Background(), nil, "", svc, svc.Spec.Ports[0], "http")
	require.NoError(t, err, "a missing permission is the user's to grant, not an infrastructure failure")
	assert.False(t, got.Enabled())
	assert.Contains(t, why, "PIC may not list pods")
}

func TestForObjectReadsEachServicesPodsOnce(t *testing.T) {
	lists := 0
	counting := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		lists++
		return c.List(ctx, list, opts...)
	}}
	http80 := corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("web"), Protocol: corev1.ProtocolTCP}
	metrics := corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9000), Protocol: corev1.ProtocolTCP}
	svc := webService(http80, metrics)
	pod := webPod("a", corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}},
		ReadinessProbe: httpProbe("/ready", intstr.FromString("web"), "")})
	c := fake.NewClientBuilder().WithScheme(apis.Scheme()).WithObjects(pod).WithInterceptorFuncs(counting).Build()

	object := HealthChecks{Pods: c, Default: true}.ForObject()
	for _, port := range svc.Spec.Ports {
		_, _, err := object.Check(context.Background(), nil, "", svc, port, "http")
		require.NoError(t, err)
	}
	assert.Equal(t, 1, lists, "one read of the Service's pods for all its ports")
}

// TestNoHealthCheckNamesTheBackendFromItsObject: the notice names the Service as the
// object's owner finds it, from the object that refers to it.
func TestNoHealthCheckNamesTheBackendFromItsObject(t *testing.T) {
	svc := webService()
	named := corev1.ServicePort{Name: "http", Port: 80}
	for _, tc := range []struct {
		name   string
		origin route.Origin
		port   corev1.ServicePort
		want   string
	}{
		{name: "an Ingress names a Service of its namespace by name",
			origin: route.Origin{Group: "networking.k8s.io", Kind: "Ingress", Namespace: "shop", Name: "front"}, port: named,
			want: `Service web port "http" (80) is published without a health check: no pods`},
		{name: "an HTTPRoute names a Service of another namespace with its namespace",
			origin: route.Origin{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "edge", Name: "front"}, port: corev1.ServicePort{Port: 8080},
			want: "Service shop/web port 8080 is published without a health check: no pods"},
		{name: "a LoadBalancer Service names its own port alone",
			origin: route.Origin{Kind: "Service", Namespace: "shop", Name: "web"}, port: named,
			want: `port "http" (80) is published without a health check: no pods`},
		{name: "another Service of the namespace is named",
			origin: route.Origin{Kind: "Service", Namespace: "shop", Name: "db"}, port: named,
			want: `Service web port "http" (80) is published without a health check: no pods`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NoHealthCheck(tc.origin, svc, tc.port, "no pods")
			assert.Equal(t, route.Notice{Origin: tc.origin, Reason: pic.ReasonNoReadinessProbe, Message: tc.want}, n)
		})
	}
}
