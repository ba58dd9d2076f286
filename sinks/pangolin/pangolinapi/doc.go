// Package pangolinapi is a typed client for the part of Pangolin's Integration API that a
// controller needs: domains, sites, HTTP resources and their targets. It holds no
// controller logic and no state besides its configuration, and it must never print, log or
// return the API key. Blueprints are left out on purpose: PIC drives the imperative API.
//
// The contract tests (contract_test.go) run against the in-memory Pangolin server (sinks/pangolin/inmemory) by
// default. To run them against a real Pangolin instead, set all of:
//
//	PIC_CONTRACT_PANGOLIN_URL      base URL including /v1, e.g. http://pangolin:3003/v1
//	PIC_CONTRACT_PANGOLIN_API_KEY  bearer token "<apiKeyId>.<secret>" with PIC's 12
//	                               actions and getTarget, which only the suite calls
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
// random "pic-contract-<random>" label, pointing at unresolvable ".invalid" backends, and
// deletes everything it created; it never modifies or deletes anything else.
package pangolinapi
