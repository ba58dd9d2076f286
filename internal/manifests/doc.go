// Package manifests holds no code, only the tests of PIC's installation manifests: the
// kustomize bases under config/ and the Helm chart under
// charts/pangolin-ingress-controller. They render both with the same Go modules as the
// tools (kustomize's krusty and Helm's engine and linter), so `go test ./...` needs no
// binary, and check what must hold whatever the rendering:
//
//   - PIC's ClusterRoles are exactly the files of config/rbac for the sink and sources
//     it runs, each with exactly its file's rules: role.yaml always (with the
//     leader-election Role), and those the adapters declare, as config/rbac/adapters.yaml
//     lists them (pangolinresource/role.yaml for the pangolinresource sink,
//     gateway-api/role.yaml for the Gateway API sources, services/role.yaml for the
//     service source, and under the sink's directory what it needs for a source's:
//     pangolinresource/gateway-api, pangolinresource/services); no wildcard, no Secrets,
//     nothing added;
//   - a direct-mode installation (config/direct, the chart with config.sink pangolin)
//     grants nothing on Pangolin's CRDs, and PIC reads its API key from a Secret the
//     Deployment mounts as a file, never from a variable;
//   - the Gateway API ClusterRole and the GatewayClass pangolin are rendered exactly
//     when PIC runs a Gateway API source, never with config/default or the chart's
//     defaults;
//   - nothing on Services but reading them is granted unless PIC runs the service
//     source, and the service component's --sources adds up with the Gateway API one's;
//   - the pod runs non-root on a read-only root filesystem, without capabilities;
//   - the Dockerfile builds a static binary on a distroless nonroot base, run as the
//     numeric user (65532) every rendering's pod asks for;
//   - the probes, ports, ServiceAccount, bindings and Lease fit together and with the
//     configuration PIC loads from the rendered Deployment (internal/config.Load);
//   - the multi-tunnel ConfigMap is internal/config/testdata/multi-tunnel.yaml;
//   - every configuration key of internal/config can be set through the chart's values.
package manifests
