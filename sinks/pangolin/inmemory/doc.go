// Package inmemory is an in-memory Pangolin Integration API (1.22, as observed in
// the shared reference), quirks and error bodies included, with fault injection, request
// counters and a view of the Traefik routers Pangolin would serve. It must not import
// pangolinapi: written apart from the client, it cannot share the client's mistakes.
// Blueprints, root-only routes and non-HTTP resources are deliberately not implemented.
//
// Besides the tests, `manager render` runs the direct sink against it, in memory, to show
// what direct mode would create: the package ships in the binary for that.
package inmemory

// Fidelity. Where the reference is silent the fake makes a choice, listed here so that
// the contract suite against a real server is where each one gets confirmed:
//   - an unknown route without a key is 401 before it is 404 (authentication is
//     mounted on the whole router);
//   - domainId without subdomain on update recomputes the host with the stored subdomain;
//   - a domain of the org is accepted on create whether it is verified or not;
//   - a path group whose targets have different priorities takes the first target's;
//   - malformed limit/offset/page/pageSize values silently become the default;
//   - messages not in the reference (site by niceId not found, target list and get,
//     V8's JSON syntax errors) are plausible, not verbatim.
//
// Not implemented: blueprints; root-only routes (orgs, API keys, IdPs, users);
// resource-names, policies, OpenAPI and docs routes; modes other than http, and the
// SSH, inference and maintenance fields (refused as unrecognized keys); rewrite
// middlewares, TLS and the web redirect twins in Routers; the labels and health
// filters of the resource list (healthStatus is accepted and ignored); health checks,
// which never turn healthy; domains and sites of any org but Options.Org; argon2's
// 25-50 ms per request (use Latency).
