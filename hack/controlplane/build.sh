#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-controller-manager from the Go module proxy,
# once per machine, and prints the directory that holds them.
#
# The versions are pinned by kube/go.mod and etcd/go.mod, nowhere else. The binaries
# are cached outside the clone, keyed by those versions, so a fresh clone on the same
# machine reuses them. KUBEBUILDER_ASSETS, if set to a directory that already holds
# etcd and kube-apiserver, wins: users with envtest binaries skip the build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version_of() { awk -v m="$1" '$1 == m || ($1 == "require" && $2 == m) { print $NF; exit }' "$2"; }
k8s_version=$(version_of k8s.io/kubernetes "$here/kube/go.mod")
etcd_version=$(version_of go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")

if [[ "${1:-}" == "--versions" ]]; then
  echo "kubernetes=$k8s_version etcd=$etcd_version"
  exit 0
fi

if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

cache_root=${PIC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pangolin-ingress-controller}
dest="$cache_root/controlplane/k8s-$k8s_version-etcd-$etcd_version"
binaries=(etcd kube-apiserver kube-controller-manager)

complete() { for b in "${binaries[@]}"; do [[ -x "$dest/$b" ]] || return 1; done; }
if complete; then
  echo "$dest"
  exit 0
fi

mkdir -p "$cache_root/controlplane"
# Two test runs starting at once must not build twice.
exec 9>"$cache_root/controlplane/.lock"
flock 9
if complete; then
  echo "$dest"
  exit 0
fi

echo "building control plane (kubernetes $k8s_version, etcd $etcd_version) into $dest; the first build takes about 10 minutes on 2 cores" >&2
start=$(date +%s)
tmp=$(mktemp -d "$cache_root/controlplane/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
(cd "$here/kube" && go build -trimpath -ldflags='-s -w' -o "$tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
(cd "$here/etcd" && go build -trimpath -ldflags='-s -w' -o "$tmp/etcd" .)
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "control plane built in $(( $(date +%s) - start ))s" >&2
echo "$dest"
