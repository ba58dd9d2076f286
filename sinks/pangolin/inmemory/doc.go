// Package inmemory is an in-memory Pangolin Integration API (1.22, as observed in
// the shared reference), quirks and error bodies included, with fault injection, request
// counters and a view of the Traefik routers Pangolin would serve. It must not import
// pangolinapi: written apart from the client, it cannot share the client's mistakes.
// Blueprints, root-only routes and non-HTTP resources are deliberately not implemented.
//
// Besides the tests, `manager render` runs the direct sink against it, in memory, to show
// what direct mode would create: the package ships in the binary for that.

package inmemory

// Fidelity. The fake answers as Pangolin 1.22 did on every difference a comparison of
// 137 requests sent to both found, GET /resource/:id/policies aside: the update response
// carries the effective sso, emailWhitelistEnabled and applyRules (and headers as a JSON
// string); domainId without subdomain moves a resource to the apex; router and service
// names are cut at 50 characters, so long paths collide (Routers, RouterKey); sites are
// listed by name; a bearer token without a dot is 401 "Invalid API key", a 500 only when
// it is an existing key id. Where the reference is silent the fake makes a choice,
// listed here so that the contract suite against a real server is where each one gets
// confirmed:
//   - an unknown route without a key is 401 before it is 404 (authentication is
//     mounted on the whole router);
//   - a domain of the org is accepted on create whether it is verified or not;
//   - a path group whose targets have different priorities takes the first target's;
//   - of two path groups whose router names collide, the one whose first target has the
//     higher id wins (the real server keeps its database's row order);
//   - malformed limit/offset/page/pageSize values silently become the default;
//   - messages not in the reference (site by niceId not found, target list and get,
//     V8's JSON syntax errors) are plausible, not verbatim.
//
// Not modelled: blueprints; root-only routes (orgs, API keys, IdPs, users);
// resource-names, policies (GET /resource/:id/policies), access-control, rules, OpenAPI
// and docs routes; modes other than http, and the SSH, inference and maintenance fields
// (refused as unrecognized keys); rewrite middlewares, TLS, transports, header
// middlewares and the web redirect twins in Routers; the labels and health filters of
// the resource list (healthStatus is accepted and ignored); health checks, which never
// turn healthy; domains and sites of any org but Options.Org; the resource's policy as
// an object of its own (sso and the other two flags are columns of the resource here);
// the hash Pangolin releases after 1.22 may append to long router keys; argon2's 25-50
// ms per request (use Latency).
