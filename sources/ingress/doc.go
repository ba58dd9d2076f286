// Package ingress is the networking.k8s.io/v1 Ingress source: it decides whether PIC
// manages an Ingress (class, IngressClass, annotations), resolves its tunnel and its
// Service backends, and turns its rules into one route per host.
//
// It reads Ingresses, IngressClasses and Services from the cache and writes nothing.
package ingress
