// Package pangolinsim is an in-memory Pangolin Integration API (1.22, as observed in
// the shared reference), quirks and error bodies included, with request counters and a
// view of the Traefik routers Pangolin would serve. It must not import pangolinapi:
// written apart from the client, it cannot share the client's mistakes. Blueprints,
// root-only routes and resources other than HTTP, TCP and UDP ones are deliberately not
// implemented.
//
// The simulator is an http.Handler and serves no port. Besides the tests, `manager
// render` runs the direct sink against it, in memory (Transport), to show what direct
// mode would create: the package ships in the binary for that. What only tests need (a
// loopback listener, faults, a real server's pace) is in internal/pangolinsim/simtest,
// which the binary does not link; it puts itself in front of the simulator through
// Count and Answer.
package pangolinsim

// Fidelity. The fake answers as Pangolin 1.22 did on every difference a comparison of
// 137 requests sent to both found: the update response
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
//     V8's JSON syntax errors; the read messages of roles, users, whitelist, rules and
//     policies) are plausible, not verbatim;
//   - raw (TCP and UDP) resources (section 15): with DenyRawResources, a create is
//     refused before its body is validated; a raw resource gets the default policy of
//     an HTTP one (GET and the list show its sso, which applies to nothing); the raw
//     update accepts resourcePolicyId and ignores it, and checks a niceId's length,
//     not its characters; a raw resource's router takes its targets without a method;
//   - access control (sections 11 and 12): the list shapes {"roles":[...]},
//     {"users":[...]} of /resource/:id/roles and /users; data {} for every set call;
//     skipToIdpId is the policy's idpId, and one naming no identity provider
//     (Options.IdentityProviders) fails the whole update with 500 "An error occurred",
//     as the real server's database does (its message not verbatim); a body is
//     validated before "Email whitelist is not enabled"; duplicate emails are stored
//     once, duplicate userIds are refused like duplicate roleIds (403, counted); an
//     unknown role is found missing before the Admin role is refused; PATH rules need a
//     leading slash and URL path characters, COUNTRY the assigned ISO 3166-1 codes (no
//     XK), REGION a continent or sub-region M49 id (no 001); equal rule priorities
//     list by ruleId.
//
// Access control. Every resource has an inline policy: sso on and the Admin role only
// for a new resource; the Admin role (Options.Roles never holds it) is listed by
// /resource/:id/roles and never by /policies, and cannot be assigned; /resource/:id/users
// is always [] (the server's defect: read /policies). Secrets are kept as digests
// only: every password, PIN code or header-auth write mints a new id from its own
// never-reused sequence, the API shows ids only, and Policy, SecretWrites and the Check
// helpers let tests see what was written without reading it back. Roles and users are
// the fixture's (Options.Roles, Options.Users): the fake creates neither.
//
// Not modelled: blueprints; root-only routes (orgs, API keys, IdPs, users); role and
// org-user create/delete, user-by-username, the single-item routes (/roles/add,
// /roles/remove, /users/add, /users/remove, /whitelist/add, /whitelist/remove), shared
// policies (/resource-policy, resourcePolicyId; sharedPolicy is always null) and visitor
// sessions, so a secret rewrite logs nobody out here; resource-names, OpenAPI and docs
// routes; modes other than http, tcp and udp, the refusal of rules on raw resources
// ("Cannot create rule for non-http resource"), proxy protocol beyond the
// serversTransport name, and
// the SSH, inference and maintenance fields (refused as unrecognized keys); TLS,
// transports, sticky sessions and the web redirect twins in Routers (rewrite and header
// middlewares are modelled, from the reference's section 14 and Pangolin's
// createPathRewriteMiddleware, and a group whose rewrite Pangolin rejects has no
// router); the labels and health filters of the resource list (healthStatus is accepted
// and ignored); health checks, which turn healthy only when a
// test says so (SetTargetHealth, Options.HealthyBackends); domains and sites of any org
// but Options.Org; the hash Pangolin releases after 1.22 may append to long router keys;
// argon2's 25-50 ms per request and Node's small thread pool, which simtest adds when
// asked (its Pace, and its Latency fault for a delay outside any limit).
