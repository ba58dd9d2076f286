// Package ingress is the networking.k8s.io/v1 Ingress source: it decides whether PIC
// manages an Ingress (class, IngressClass, annotations), resolves its tunnel and its
// Service backends, and turns its rules into one route per host.
//
// It reads Ingresses, IngressClasses and Services from the cache. The only thing it
// writes is the status of the Ingresses of its class (status.loadBalancer.ingress: the
// hostnames Pangolin serves); it never changes an Ingress's spec or metadata.
package ingress
