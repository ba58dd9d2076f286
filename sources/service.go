package sources

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KindService is a Service's kind (core group): the origin kind of the routes a
// LoadBalancer Service publishes, by which NoHealthCheck recognizes them.
const KindService = "Service"

// ServiceAddress is the address the Newt agent dials for a Service: its cluster DNS
// name, or for an ExternalName Service the name it stands for (without the root dot,
// which the operator's CRDs refuse).
func ServiceAddress(svc *corev1.Service, clusterDomain string) string {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return strings.TrimSuffix(svc.Spec.ExternalName, ".")
	}
	return fmt.Sprintf("%s.%s.svc.%s", svc.Name, svc.Namespace, clusterDomain)
}
