// Package pangolinapi is a typed client for the part of Pangolin's Integration API that a
// controller needs: domains, sites, HTTP and raw (TCP, UDP) resources and their targets, and a resource's
// access control (access.go: roles, users, password, PIN code, header auth, email
// whitelist, rules). It holds no controller logic and no state besides its
// configuration, and it must never print, log or return the API key, nor a secret it
// sends (Secret, HeaderAuth): errors never echo a response body that is not Pangolin's
// message, and Pangolin's message passes through redaction, which finds a secret in
// every encoding a server or a proxy may quote it in (redact.go). Blueprints are left out on purpose: PIC drives the
// imperative API.
//
// The contract tests (contract_test.go) run against the in-memory Pangolin server (internal/pangolinsim) by
// default. To run them against a real Pangolin instead, set all of:
//
//	PIC_CONTRACT_PANGOLIN_URL      base URL including /v1, e.g. http://pangolin:3003/v1
//	PIC_CONTRACT_PANGOLIN_API_KEY  bearer token "<apiKeyId>.<secret>" with PIC's 12
//	                               actions, getTarget (which only the suite calls) and
//	                               the access-control ones (docs/direct-mode.md)
//	PIC_CONTRACT_PANGOLIN_ORG      org id
//	PIC_CONTRACT_PANGOLIN_SITE     niceId of a site of that org, for the targets
//	PIC_CONTRACT_PANGOLIN_DOMAIN   a verified base domain of that org
//
// and, optionally, PIC_CONTRACT_PANGOLIN_TRAEFIK_URL, the server's Traefik configuration
// (http://pangolin:3001/api/v1/traefik-config, its internal port, no key): with it the
// suite checks that Pangolin names routers after the group key cut at 50 characters, as
// PIC computes it (pangolin.RouterKey). The in-repo server serves its own at the same path.
//
// Against a real server the suite only creates resources whose name and host start with a
// random "pic-contract-<random>" label, pointing at unresolvable ".invalid" backends (its
// TCP and UDP resources on public ports from 40000-49999 that no resource of the org
// holds; with flags.allow_raw_resources off it checks the refusal instead), and
// deletes everything it created; it never modifies or deletes anything else. The
// access-control tests grant the org's existing roles and users to those resources
// only (they create no role and no user) and need at least one role besides Admin and
// one user in the org.
package pangolinapi
