// Package e2e is PIC's end-to-end suite. It runs the real manager binary (bin/manager,
// or $PIC_MANAGER_BINARY) as a separate process against a cluster and checks what it
// does only through the Kubernetes API, PIC's log and its metrics and probe endpoints;
// it never calls controller code in-process.
//
// The cluster comes from a provider chosen by E2E_CLUSTER:
//
//   - local (default, what `make test` and CI use): a control plane started by
//     internal/testenv (etcd, kube-apiserver with RBAC, kube-controller-manager with the
//     garbage collector) per operator CRD variant. PIC runs as a client-certificate user
//     named like a ServiceAccount, bound by the RBAC rendered from config/rbac and
//     config/rbac/pangolinresource (and config/rbac/gateway-api, config/rbac/services
//     and their config/rbac/pangolinresource counterparts for a spec with an opt-in
//     source), so a missing permission fails the suite.
//   - kind (E2E_CLUSTER=kind): a kind cluster (created, or the current context with
//     E2E_KIND_USE_CURRENT=1) running the image built from the Dockerfile and deployed
//     with config/gateway-api (config/default plus the opt-in Gateway API RBAC), and the
//     service source's and health checks' RBAC beside it.
//
// A last run, direct, has no operator CRDs at all: PIC runs in direct mode (sink
// pangolin) against the in-repo Pangolin server (internal/pangolinsim), with the
// API key in a file. Locally PIC has the RBAC of a direct-mode install alone
// (config/rbac and config/rbac/gateway-api). On kind it runs in the config/gateway-api
// Deployment (whose RBAC also grants the pangolinresource sink's rules) with the
// direct-mode flags and the key mounted from a Secret, and the server listens on the
// kind network's gateway, where the pods reach this host.
//
// Another, access, runs access policies in direct mode on a local cluster of its own with
// PIC's AccessPolicy CRD (the other runs must not have it: they check the default
// installs), PIC having the RBAC of config/direct-gateway-api with
// config/components/access-policies, and POD_NAMESPACE set so that its record of secrets
// lands in its namespace. It is skipped on kind.
//
// The specs are written once against the Provider and PIC interfaces. Run them with
// `make test-e2e`; `make test` runs them too, as part of `go test ./...`.
package e2e
