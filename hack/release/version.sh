#!/usr/bin/env bash
# What a release tag publishes, as KEY=VALUE lines for $GITHUB_OUTPUT (release.yaml):
#
#   hack/release/version.sh v1.2.3
#
#   version        the tag, v1.2.3: the image tag and the chart's appVersion
#   chart_version  1.2.3: the chart's version (the OCI artifact's tag)
#   prerelease     true for vX.Y.Z-<pre-release> such as v1.3.0-rc.1
#   image          the image the chart and install.yaml run
#   tags           comma-separated image references to push: a release also moves vX.Y,
#                  vX and latest; a pre-release pushes its own tag only
#
# A release tag must equal the VERSION file (make set-version), so that the tagged
# tree's config/ and chart default to the image being published. A pre-release need not:
# the tree keeps naming the last release. docs/releasing.md.
set -euo pipefail

tag=${1:?usage: version.sh <tag>}
repo=ghcr.io/stefb69/pangolin-ingress-controller
version_file=${VERSION_FILE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/VERSION}

semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'
if [[ ! $tag =~ $semver ]]; then
  echo "tag $tag: want vX.Y.Z, or vX.Y.Z-rc.N for a pre-release" >&2
  exit 1
fi
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]} pre=${BASH_REMATCH[4]}

tags="$repo:$tag"
if [[ -n $pre ]]; then
  prerelease=true
else
  prerelease=false
  file_version=$(tr -d '[:space:]' < "$version_file")
  if [[ $file_version != "$tag" ]]; then
    echo "tag $tag is a release, but VERSION says $file_version: run make set-version NEW_VERSION=$tag, commit, and tag that commit" >&2
    exit 1
  fi
  tags+=",$repo:v$major.$minor,$repo:v$major,$repo:latest"
fi

echo "version=$tag"
echo "chart_version=${tag#v}"
echo "prerelease=$prerelease"
echo "image=$repo:$tag"
echo "tags=$tags"
