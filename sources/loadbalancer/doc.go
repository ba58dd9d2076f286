// Package loadbalancer is the source of Services of type LoadBalancer whose
// spec.loadBalancerClass is PIC's (configuration key loadBalancerClass): each TCP or UDP
// port becomes a raw Pangolin resource on the Service's tunnel, and the Service's
// status.loadBalancer.ingress shows where users reach it. Kubernetes' own service
// controller leaves Services of another class alone, so nothing fights over them.
package loadbalancer
