#!/usr/bin/env bash
# Puts etcd, kube-apiserver and kube-controller-manager in a per-machine cache, once, and
# prints the directory that holds them.
#
# The versions are pinned by kube/go.mod and etcd/go.mod, nowhere else; the SHA-256 of
# their release files, where recorded, in release-checksums beside this script.
#
# Where the binaries come from, first that works:
#   1. KUBEBUILDER_ASSETS, if it already holds etcd and kube-apiserver (envtest users);
#   2. the cache, keyed by the versions, so a fresh clone on the same machine reuses it;
#   3. the official release files of those versions (seconds to a minute or two): each
#      file is checked against the checksum published beside it and against the pinned
#      one in release-checksums when there is one. A mismatch is an error, not a reason
#      to fall back: something between here and the release is wrong and a human must
#      look. An unverified file is never made executable, run or cached;
#   4. when the download is impossible (no network, host unreachable, a file missing,
#      not Linux), a build from the Go module proxy (about 10 minutes on 2 cores),
#      which is all that machines reaching only the proxy can do.
# Either way the binaries land in the same cache directory.
#
#   build.sh                     ensure the cache, print its directory
#   build.sh --versions          print the pinned versions
#   build.sh --where             print the cache directory without filling it
#   build.sh --record-checksums  rewrite release-checksums from the published checksum
#                                files (needs the release hosts; make controlplane-checksums)
#
# Environment (defaults in brackets):
#   PIC_CACHE_DIR                    cache root [$XDG_CACHE_HOME or ~/.cache]/pangolin-ingress-controller
#   PIC_CONTROLPLANE_DOWNLOAD=0      skip the download, build from source
#   PIC_CONTROLPLANE_K8S_URL         Kubernetes release root [https://dl.k8s.io/release]
#   PIC_CONTROLPLANE_ETCD_URL        etcd release root [https://github.com/etcd-io/etcd/releases/download]
#   PIC_CONTROLPLANE_CONNECT_TIMEOUT seconds before a release host counts as unreachable [5]
#   PIC_CONTROLPLANE_ARCHES          architectures --record-checksums records [amd64 arm64]
# For tests only:
#   PIC_CONTROLPLANE_CHECKSUMS       the pinned table [release-checksums beside this script]
#   PIC_CONTROLPLANE_SOURCE_BUILD    a command run instead of the Go build, with the
#                                    directory to fill as its argument
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version_of() { awk -v m="$1" '$1 == m || ($1 == "require" && $2 == m) { print $NF; exit }' "$2"; }
k8s_version=$(version_of k8s.io/kubernetes "$here/kube/go.mod")
etcd_version=$(version_of go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")

k8s_url=${PIC_CONTROLPLANE_K8S_URL:-https://dl.k8s.io/release}
etcd_url=${PIC_CONTROLPLANE_ETCD_URL:-https://github.com/etcd-io/etcd/releases/download}
checksums=${PIC_CONTROLPLANE_CHECKSUMS:-$here/release-checksums}
connect_timeout=${PIC_CONTROLPLANE_CONNECT_TIMEOUT:-5}

cache_root=${PIC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pangolin-ingress-controller}
dest="$cache_root/controlplane/k8s-$k8s_version-etcd-$etcd_version"
binaries=(etcd kube-apiserver kube-controller-manager)
kube_binaries=(kube-apiserver kube-controller-manager)

# Exit status of download_release when the release cannot be had at all, as opposed to
# a file that arrived and failed its checksum (status 1, an error).
unavailable_status=10

log() { echo "$*" >&2; }
die() { log "control plane: $*"; exit 1; }

# --- where the release files are -------------------------------------------------------
# The layouts are those of the official release locations:
#   Kubernetes: <root>/<version>/bin/linux/<arch>/<binary>, and <binary>.sha256 beside it
#     holding the bare hex digest (how kubernetes.io's install pages verify kubectl);
#   etcd: <root>/<version>/etcd-<version>-linux-<arch>.tar.gz, and <root>/<version>/SHA256SUMS
#     with "<digest>  <archive>" lines (the GitHub release assets).
# The keys of release-checksums are these paths without the root, one file per line.
k8s_key() { echo "kubernetes/$k8s_version/bin/linux/$1/$2"; }
etcd_archive() { echo "etcd-$etcd_version-linux-$1.tar.gz"; }
etcd_key() { echo "etcd/$etcd_version/$(etcd_archive "$1")"; }

# host_arch prints the release architecture of this machine, or fails: Kubernetes
# publishes kube-apiserver for Linux only, so elsewhere there is nothing to download.
host_arch() {
  [[ "$(uname -s)" == Linux ]] || return 1
  case "$(uname -m)" in
    x86_64 | amd64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    ppc64le) echo ppc64le ;;
    s390x) echo s390x ;;
    *) return 1 ;;
  esac
}

# --- fetching and verifying ----------------------------------------------------------
# fetch URL FILE downloads URL into FILE. Any failure to get it (DNS, refused or timed-out
# connection, HTTP 404 or 5xx, a stalled transfer) means the release is unavailable: the
# caller falls back. The short connect timeout keeps an unreachable host to seconds; the
# speed limit ends a transfer that stalls rather than waiting forever. Redirects (dl.k8s.io
# to its CDN, GitHub to its object store) may only go to HTTPS.
fetch() {
  local url=$1 out=$2 err
  err=$(curl --fail --location --silent --show-error --proto-redir =https \
    --connect-timeout "$connect_timeout" --speed-limit 10240 --speed-time 30 \
    --output "$out" "$url" 2>&1) || unavailable "$url: ${err##*curl: }"
}

# unavailable REASON ends download_release with the status that makes the caller fall
# back to the source build.
unavailable() {
  echo "$1" >"$reason_file"
  exit "$unavailable_status"
}

sha256_of() { sha256sum "$1" | awk '{ print $1 }'; }
is_sha256() { [[ "$1" =~ ^[0-9a-f]{64}$ ]]; }

# pinned KEY prints the digest release-checksums records for KEY, or nothing.
pinned() {
  [[ -f "$checksums" ]] || return 0
  awk -v k="$1" '!/^#/ && $2 == k { print $1; exit }' "$checksums"
}

# verify FILE KEY PUBLISHED fails the whole run unless FILE's digest is the published one
# and, when release-checksums records KEY, the pinned one too.
verify() {
  local file=$1 key=$2 published=$3 actual pin
  actual=$(sha256_of "$file")
  [[ "$actual" == "$published" ]] ||
    die "checksum mismatch for $key: the file has $actual, its published checksum says $published; refusing it (PIC_CONTROLPLANE_DOWNLOAD=0 builds from source)"
  pin=$(pinned "$key")
  if [[ -n "$pin" ]]; then
    [[ "$actual" == "$pin" ]] ||
      die "checksum mismatch for $key: the file and its published checksum say $actual, $checksums pins $pin; refusing it (PIC_CONTROLPLANE_DOWNLOAD=0 builds from source)"
    pinned_count=$((pinned_count + 1))
  fi
}

# published_k8s ARCH BINARY DIR prints the digest published beside a Kubernetes binary.
published_k8s() {
  local sum
  fetch "$k8s_url/$k8s_version/bin/linux/$1/$2.sha256" "$3/$2.sha256"
  sum=$(awk '{ print $1; exit }' "$3/$2.sha256")
  is_sha256 "$sum" || unavailable "$k8s_url/$k8s_version/bin/linux/$1/$2.sha256 holds no SHA-256"
  echo "$sum"
}

# published_etcd ARCH DIR prints the digest etcd's SHA256SUMS gives its archive.
published_etcd() {
  local sum archive
  archive=$(etcd_archive "$1")
  [[ -f "$2/SHA256SUMS" ]] || fetch "$etcd_url/$etcd_version/SHA256SUMS" "$2/SHA256SUMS"
  sum=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$2/SHA256SUMS")
  is_sha256 "$sum" || unavailable "$etcd_url/$etcd_version/SHA256SUMS lists no $archive"
  echo "$sum"
}

# download_release DIR fills DIR with the verified release binaries. It runs in a
# subshell (see main) and exits 0, $unavailable_status, or 1 on a mismatch.
download_release() {
  local dir=$1 arch parts sum sums=() b i=0 archive
  arch=$(host_arch) || unavailable "no official kube-apiserver for $(uname -s)/$(uname -m)"
  command -v curl >/dev/null || unavailable "curl is not installed"
  parts="$dir/.download"
  mkdir -p "$parts"
  pinned_count=0

  # The small checksum files first: an unreachable host or a missing release costs
  # seconds, before any large transfer.
  # (A failing $(...) stops errexit only in a plain assignment, not inside sums+=(...).)
  for b in "${kube_binaries[@]}"; do
    sum=$(published_k8s "$arch" "$b" "$parts")
    sums+=("$sum")
  done
  sum=$(published_etcd "$arch" "$parts")
  sums+=("$sum")

  for b in "${kube_binaries[@]}"; do
    fetch "$k8s_url/$k8s_version/bin/linux/$arch/$b" "$parts/$b"
    verify "$parts/$b" "$(k8s_key "$arch" "$b")" "${sums[i]}"
    i=$((i + 1))
    # Executable only once verified.
    chmod 0755 "$parts/$b"
    mv "$parts/$b" "$dir/$b"
  done

  archive=$(etcd_archive "$arch")
  fetch "$etcd_url/$etcd_version/$archive" "$parts/$archive"
  verify "$parts/$archive" "$(etcd_key "$arch")" "${sums[i]}"
  tar -xzf "$parts/$archive" -C "$parts" "${archive%.tar.gz}/etcd"
  chmod 0755 "$parts/${archive%.tar.gz}/etcd"
  mv "$parts/${archive%.tar.gz}/etcd" "$dir/etcd"

  rm -rf "$parts"
  if ((pinned_count == 3)); then
    echo "published and pinned SHA-256" >"$reason_file"
  else
    echo "published SHA-256 ($(basename "$checksums") pins $pinned_count of the 3 files for linux/$arch)" >"$reason_file"
  fi
}

# build_from_source DIR builds the three binaries into DIR from the Go module proxy.
build_from_source() {
  if [[ -n "${PIC_CONTROLPLANE_SOURCE_BUILD:-}" ]]; then
    "$PIC_CONTROLPLANE_SOURCE_BUILD" "$1"
    return
  fi
  (
    export CGO_ENABLED=0 GOFLAGS=-mod=readonly
    cd "$here/kube"
    go build -trimpath -ldflags='-s -w' -o "$1/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
    cd "$here/etcd"
    go build -trimpath -ldflags='-s -w' -o "$1/etcd" .
  )
}

# record_checksums rewrites release-checksums from the checksum files published for the
# pinned versions. A digest that differs from the one already recorded for the same
# file is refused: a release file must never change after it is published.
record_checksums() {
  local arch b sum old out
  # Global, not local: the EXIT trap runs after this function has returned.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  reason_file="$tmp/reason"
  out="$tmp/release-checksums"
  sed -n '/^#/p' "$checksums" >"$out" 2>/dev/null || true
  for arch in ${PIC_CONTROLPLANE_ARCHES:-amd64 arm64}; do
    mkdir -p "$tmp/$arch"
    for b in "${kube_binaries[@]}"; do
      sum=$( (published_k8s "$arch" "$b" "$tmp/$arch")) || die "cannot record: $(cat "$reason_file")"
      echo "$sum  $(k8s_key "$arch" "$b")" >>"$out"
    done
    sum=$( (published_etcd "$arch" "$tmp/$arch")) || die "cannot record: $(cat "$reason_file")"
    echo "$sum  $(etcd_key "$arch")" >>"$out"
  done
  while read -r sum key; do
    old=$(pinned "$key")
    [[ -z "$old" || "$old" == "$sum" ]] ||
      die "$key is published with $sum now but was recorded as $old: not overwriting; find out why before deleting that line"
  done < <(grep -v '^#' "$out")
  cp "$out" "$checksums"
  log "recorded $(grep -vc '^#' "$checksums") checksums for kubernetes $k8s_version and etcd $etcd_version in $checksums"
}

# --- main --------------------------------------------------------------------------------
case "${1:-}" in
  --versions)
    echo "kubernetes=$k8s_version etcd=$etcd_version"
    exit 0
    ;;
  --where)
    echo "$dest"
    exit 0
    ;;
  --record-checksums)
    record_checksums
    exit 0
    ;;
  "") ;;
  *) die "unknown argument $1 (want --versions, --where or --record-checksums)" ;;
esac

if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

complete() { for b in "${binaries[@]}"; do [[ -x "$dest/$b" ]] || return 1; done; }
if complete; then
  echo "$dest"
  exit 0
fi

mkdir -p "$cache_root/controlplane"
# Two test runs starting at once must not fill the cache twice.
exec 9>"$cache_root/controlplane/.lock"
flock 9
if complete; then
  echo "$dest"
  exit 0
fi

start=$(date +%s)
tmp=$(mktemp -d "$cache_root/controlplane/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
reason_file="$tmp/.reason"

origin=""
if [[ "${PIC_CONTROLPLANE_DOWNLOAD:-1}" == 0 ]]; then
  log "control plane: PIC_CONTROLPLANE_DOWNLOAD=0, building from source"
else
  log "control plane: downloading kubernetes $k8s_version and etcd $etcd_version release binaries into $dest"
  # errexit must hold inside download_release, so it runs in a subshell that is not
  # part of a condition (bash ignores -e in anything called from if, && or ||).
  set +e
  (
    set -e
    download_release "$tmp"
  )
  status=$?
  set -e
  if ((status == 0)); then
    origin="downloaded from $k8s_url and $etcd_url, verified against the $(cat "$reason_file")"
    log "control plane: downloaded and verified against the $(cat "$reason_file"), in $(($(date +%s) - start))s"
  elif ((status == unavailable_status)); then
    log "control plane: cannot download the release ($(cat "$reason_file")); falling back to the source build"
    find "$tmp" -mindepth 1 -delete
  else
    exit "$status"
  fi
fi

if [[ -z "$origin" ]]; then
  log "control plane: building kubernetes $k8s_version and etcd $etcd_version from the Go module proxy into $dest; the first build takes about 10 minutes on 2 cores"
  build_from_source "$tmp"
  origin="built from source with $(go env GOVERSION 2>/dev/null || echo go)"
  log "control plane: built in $(($(date +%s) - start))s"
fi

rm -f "$reason_file"
echo "$origin" >"$tmp/ORIGIN"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "$dest"
