// Package manifests holds no code, only the tests of PIC's installation manifests: the
// kustomize bases under config/ and the Helm chart under
// charts/pangolin-ingress-controller. They render both with the same Go modules as the
// tools (kustomize's krusty and Helm's engine and linter), so `go test ./...` needs no
// binary, and check what must hold whatever the rendering:
//
//   - PIC's ClusterRole and leader-election Role grant exactly the rules of
//     config/rbac/role.yaml: no wildcard, no Secrets, nothing added;
//   - the Gateway API ClusterRole grants exactly config/rbac/gateway-api/role.yaml, and
//     is rendered (with the GatewayClass pangolin) exactly when PIC runs the httproute
//     source: config/gateway-api and the chart with httproute in its sources, never
//     config/default or the chart's defaults;
//   - the pod runs non-root on a read-only root filesystem, without capabilities;
//   - the Dockerfile builds a static binary on a distroless nonroot base, run as the
//     numeric user (65532) every rendering's pod asks for;
//   - the probes, ports, ServiceAccount, bindings and Lease fit together and with the
//     configuration PIC loads from the rendered Deployment (internal/config.Load);
//   - the multi-tunnel ConfigMap is internal/config/testdata/multi-tunnel.yaml;
//   - every configuration key of internal/config can be set through the chart's values.
package manifests
