package loadbalancer

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// WriteStatus implements plugin.Source: status.loadBalancer.ingress holds the public
// address, with the ports Pangolin serves, so `kubectl get service` shows an external
// address once the ports are published. A pending port keeps its place when the status
// already shows it, so an edit never takes the address away while Pangolin goes on
// serving the port. Without an address (loadBalancerAddress unset, and no pangolin.url)
// the status stays empty: PIC does not guess one. It writes only when the status changes.
func (s *Source) WriteStatus(ctx context.Context, obj client.Object, status plugin.Status) error {
	svc := obj.(*corev1.Service)
	want := s.loadBalancerStatus(svc.Status.LoadBalancer, status.Hostnames)
	if equalStatus(svc.Status.LoadBalancer.Ingress, want) {
		return nil
	}
	// A patch of the status alone: the cache's copy lacks the last-applied annotation
	// (the manager trims it), and an update of Services' status would write metadata too.
	patch := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	svc.Status.LoadBalancer.Ingress = want
	if err := s.client.Status().Patch(ctx, svc, patch); err != nil {
		return fmt.Errorf("update status of Service %s: %w", client.ObjectKeyFromObject(svc), err)
	}
	return nil
}

// loadBalancerStatus is the status for the port keys published: one entry, at the
// public address, listing the ports served, in order.
func (s *Source) loadBalancerStatus(current corev1.LoadBalancerStatus, published plugin.Hostnames) []corev1.LoadBalancerIngress {
	if s.config.Address == "" {
		return nil
	}
	shown := map[string]bool{}
	for _, lb := range current.Ingress {
		for _, p := range lb.Ports {
			if protocol, ok := protocolOf(p.Protocol); ok {
				shown[route.PortKey(protocol, p.Port)] = true
			}
		}
	}
	var ports []corev1.PortStatus
	add := func(key string) {
		protocol, port, ok := route.ParsePortKey(key)
		if !ok {
			return
		}
		status := corev1.PortStatus{Port: port, Protocol: corev1.ProtocolTCP}
		if protocol == route.ProtocolUDP {
			status.Protocol = corev1.ProtocolUDP
		}
		if !slices.Contains(ports, status) {
			ports = append(ports, status)
		}
	}
	for _, key := range published.Served {
		add(key)
	}
	for _, key := range published.Pending {
		if shown[key] {
			add(key)
		}
	}
	if len(ports) == 0 {
		return nil
	}
	slices.SortFunc(ports, func(a, b corev1.PortStatus) int {
		if a.Port != b.Port {
			return int(a.Port - b.Port)
		}
		return strings.Compare(string(a.Protocol), string(b.Protocol))
	})
	entry := corev1.LoadBalancerIngress{Hostname: s.config.Address, Ports: ports}
	if net.ParseIP(s.config.Address) != nil {
		// Proxy, not the API server's default VIP: traffic must reach Pangolin, which
		// forwards it; kube-proxy must not short-circuit the address inside the cluster.
		proxy := corev1.LoadBalancerIPModeProxy
		entry = corev1.LoadBalancerIngress{IP: s.config.Address, IPMode: &proxy, Ports: ports}
	}
	return []corev1.LoadBalancerIngress{entry}
}

func equalStatus(a, b []corev1.LoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.LoadBalancerIngress) bool {
		// A stored ipMode of nil matches: an API server without the LoadBalancerIPMode
		// feature drops the field, and a patch could never make it equal.
		return x.IP == y.IP && x.Hostname == y.Hostname && (x.IPMode == nil || ptr.Equal(x.IPMode, y.IPMode)) &&
			slices.EqualFunc(x.Ports, y.Ports, func(p, q corev1.PortStatus) bool {
				return p.Port == q.Port && p.Protocol == q.Protocol && p.Error == nil && q.Error == nil
			})
	})
}
