package ingress

import (
	"context"
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// WriteStatus implements plugin.Source: status.loadBalancer.ingress lists the public
// hostnames Pangolin serves, so `kubectl get ingress` shows an address and Argo CD
// reports the application Healthy. A pending hostname keeps the address it already has,
// so an edit never empties it while Pangolin goes on serving the host. It writes only
// when the list changes.
func (s *Source) WriteStatus(ctx context.Context, obj client.Object, status plugin.Status) error {
	published := status.Hostnames
	ing := obj.(*networkingv1.Ingress)
	hostnames := slices.Clone(published.Served)
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if slices.Contains(published.Pending, lb.Hostname) && !slices.Contains(hostnames, lb.Hostname) {
			hostnames = append(hostnames, lb.Hostname)
		}
	}
	want := make([]networkingv1.IngressLoadBalancerIngress, 0, len(hostnames))
	for _, h := range slices.Sorted(slices.Values(hostnames)) {
		want = append(want, networkingv1.IngressLoadBalancerIngress{Hostname: h})
	}
	if slices.EqualFunc(ing.Status.LoadBalancer.Ingress, want, func(a, b networkingv1.IngressLoadBalancerIngress) bool {
		return a.Hostname == b.Hostname && a.IP == "" && len(a.Ports) == 0
	}) {
		return nil
	}
	ing.Status.LoadBalancer.Ingress = want
	if err := s.client.Status().Update(ctx, ing); err != nil {
		return fmt.Errorf("update status of Ingress %s: %w", client.ObjectKeyFromObject(ing), err)
	}
	return nil
}
