// Package gatewayapi is the Gateway API source: PIC is the implementation of its own
// GatewayClass (controllerName pangolin.io/gateway-controller). A Gateway of that class
// stands for a Pangolin tunnel; HTTPRoutes attached to it, as the Gateway API defines
// attachment, become routes. It writes only the status of GatewayClasses, Gateways and
// HTTPRoutes, and only its own entries of an HTTPRoute's status.
package gatewayapi
