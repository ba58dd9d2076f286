// Package route is the model every source produces and every sink consumes: one public
// host, the tunnel that serves it, and the paths it routes to resolved backends.
//
// It holds data and the small rules that belong to the data (names, keys, ordering); it
// must not import a Kubernetes client or know any source's object kinds.
package route
