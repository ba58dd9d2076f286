// Package pangolintest is an in-memory Pangolin Integration API (1.22, as observed in
// the shared reference), quirks and error bodies included, with fault injection, request
// counters and a view of the Traefik routers Pangolin would serve. It must not import
// pangolinapi: written apart from the client, it cannot share the client's mistakes.
// Blueprints, root-only routes and non-HTTP resources are deliberately not implemented.
package pangolintest
