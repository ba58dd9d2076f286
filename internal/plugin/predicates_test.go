package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestChangedBeyondStatus(t *testing.T) {
	ingress := func(generation int64, annotations map[string]string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Generation: generation, Annotations: annotations}}
	}
	service := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
	moved := service.DeepCopy()
	moved.Spec.Ports[0].Port = 6432
	statusWritten := service.DeepCopy()
	statusWritten.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	assert.False(t, ChangedBeyondStatus(ingress(3, nil), ingress(3, nil)), "a status write on a kind that counts generations")
	assert.True(t, ChangedBeyondStatus(ingress(3, nil), ingress(4, nil)), "a spec edit")
	assert.True(t, ChangedBeyondStatus(ingress(3, nil), ingress(3, map[string]string{"a": "b"})), "an annotation")
	assert.True(t, ChangedBeyondStatus(service, moved), "a Service keeps generation 0: its spec is compared")
	assert.False(t, ChangedBeyondStatus(service, statusWritten), "a Service's status write")
}
