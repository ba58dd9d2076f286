// Package gatewayapi is the Gateway API source: PIC is the implementation of its own
// GatewayClass (controllerName pangolin.io/gateway-controller). A Gateway of that class
// stands for a Pangolin tunnel; HTTPRoutes attached to it, as the Gateway API defines
// attachment, become routes (Source), and TCPRoutes and UDPRoutes become raw routes, one
// public port per listener (RawSource). It writes only the status of GatewayClasses,
// Gateways and those routes, and only its own entries of a route's status.
package gatewayapi
