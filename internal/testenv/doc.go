// Package testenv starts the Kubernetes control planes that PIC's tests, e2e suite and
// demo run against: an envtest API server per operator CRD variant for integration
// tests, and a fuller local cluster (etcd, kube-apiserver with RBAC, and a
// kube-controller-manager running the garbage collector and namespace controllers) for
// end-to-end runs.
//
// The binaries come from hack/controlplane/build.sh, once per machine: the official
// release files of the pinned versions, checksums verified, or else a build from the Go
// module proxy. No test downloads anything else or needs a real cluster. The operator
// CRDs are the verbatim copies in config/crd/operator, so the API server prunes and
// defaults exactly as it does for users.
//
// Under go test -short (make test-unit) nothing is built or started: a test that needs a
// control plane skips through SkipIfShort, which ForEachVariant and WithoutOperator call,
// and Assets fails for one that does not, so that a missing skip shows at once.
//
// This package is for tests only: nothing under cmd/ or internal/ outside tests may
// import it, and it must never touch a cluster it did not start (no kubeconfig from the
// environment, no USE_EXISTING_CLUSTER).
package testenv
