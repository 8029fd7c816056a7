#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that the peers' pinned versions still resolve on the Go module proxy, without building
# them: each module's go.mod (flannel's without the Tencent SDK, as build-flannel.sh builds it)
# as the main module of a scratch directory, and its module graph (go mod graph: go.mod files
# only, a few MB; seconds with the kind cache warm). It catches a pin or a go.mod of its graph
# gone from the proxy, not a module whose source zip alone is refused (the Tencent SDK's go.mod
# is served, its zip is not): only building finds those. The cluster suite runs it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/kind/versions.sh
. "$here/../versions.sh"
# shellcheck source=hack/kind/peers/versions.sh
. "$here/versions.sh"
work=$(mktemp -d /tmp/velo-kind-resolve.XXXXXX)
trap 'rm -rf "$work"' EXIT

# graph MODULE@VERSION [go mod edit flags]: the module graph of that go.mod.
graph() {
	local dir=$work/${1//[\/@]/_} gomod n
	local -a edit=("${@:2}")
	mkdir -p "$dir"
	gomod=$(go list -m -json "$1" | jq -r .GoMod)
	cp "$gomod" "$dir/go.mod"
	chmod u+w "$dir/go.mod"
	[ ${#edit[@]} -eq 0 ] || (cd "$dir" && go mod edit "${edit[@]}")
	n=$(cd "$dir" && go mod graph | wc -l)
	printf 'resolves: %s (%d requirements)\n' "$1" "$n"
}

graph "github.com/cilium/cilium@$CILIUM_VERSION"
graph "github.com/flannel-io/flannel@$FLANNEL_VERSION" \
	-droprequire=github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common \
	-droprequire=github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc
graph "helm.sh/helm/v4@$HELM_VERSION"
