#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds what the peer CNIs need, from the Go module proxy and Debian, into $PEERS_CACHE:
#   build.sh cilium    Cilium's programs (build-cilium.sh), helm to render its chart, and the
#                      images velo-kind/cilium and velo-kind/cilium-operator-generic
#   build.sh flannel   flanneld (build-flannel.sh) and the image velo-kind/flannel
#   build.sh bench     velo-kind/bench: iperf3 and bench/'s C traffic tools, for every CNI
# Images come FROM the debootstrap'd base hack/kind/images.sh imports (velo's is built on it
# too), so that must exist. A program already built is kept; an image is rebuilt when what
# goes into it changes (a digest label, as the node image). Go builds run at nice 19.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=hack/kind/versions.sh
. "$here/../versions.sh"
# shellcheck source=hack/kind/peers/versions.sh
. "$here/versions.sh"
# shellcheck source=hack/kind/peers/build-cilium.sh
. "$here/build-cilium.sh"
# shellcheck source=hack/kind/peers/build-flannel.sh
. "$here/build-flannel.sh"

base=velo-kind/base:$DEBIAN_SUITE
work=$(mktemp -d /tmp/velo-kind-peers.XXXXXX)
trap 'rm -rf "$work"' EXIT

log() { printf '== peers: %s\n' "$*" >&2; }
die() {
	printf 'peers: error: %s\n' "$*" >&2
	exit 1
}

helm_bin() {
	local out=$PEERS_CACHE/bin/helm-$HELM_VERSION
	[ -x "$out" ] && return 0
	log "helm $HELM_VERSION"
	mkdir -p "$PEERS_CACHE/bin"
	GOBIN=$PEERS_CACHE/bin/.gobin nice -n 19 go install -trimpath -ldflags "-s -w" \
		"helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
	mv "$PEERS_CACHE/bin/.gobin/helm" "$out"
}

# image TAG DOCKERFILE CONTEXT: builds TAG unless it carries the digest of these inputs.
image() {
	local tag=$1 dockerfile=$2 ctx=$3 inputs
	inputs=$({
		cat "$dockerfile"
		docker image inspect -f '{{.Id}}' "$base"
		(cd "$ctx" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		(cd "$ctx" && find . -type f -printf '%m %p\n' | sort) # modes: exec bits matter
	} | sha256sum | cut -d' ' -f1)
	[ "$(docker image inspect -f '{{index .Config.Labels "dev.velo.inputs"}}' "$tag" \
		2>/dev/null)" = "$inputs" ] && return 0
	log "$tag"
	docker build -q --build-arg "BASE=$base" --label "dev.velo.inputs=$inputs" -t "$tag" \
		-f "$dockerfile" "$ctx" >/dev/null
}

cilium_images() {
	local dir=$PEERS_CACHE/cilium-$CILIUM_VERSION ctx=$work/cilium
	# Afresh each time: `build.sh cilium cilium-best` comes here twice, and a second copy into
	# the first's context (bpf/bpf) would change its digest and rebuild the image.
	rm -rf "$ctx"
	mkdir -p "$ctx/bin"
	cp "$dir/bin/"* "$ctx/bin/"
	mv "$ctx/bin/cilium-operator-generic" "$ctx/"
	# The BPF sources the agent compiles, as Cilium's install-bpf lays them out.
	cp -a "$dir/src/bpf" "$ctx/bpf"
	rm -rf "$ctx/bpf/tests" "$ctx/bpf/complexity-tests" "$ctx/bpf/custom" \
		"$ctx/bpf/Makefile" "$ctx/bpf/Makefile.bpf" "$ctx/bpf/.gitignore"
	cp "$dir/src/images/cilium/init-container.sh" "$dir/src/plugins/cilium-cni/install-plugin.sh" \
		"$dir/src/plugins/cilium-cni/cni-uninstall.sh" "$ctx/"
	# The module cache keeps no exec bits; the chart's init containers exec these.
	chmod 755 "$ctx/init-container.sh" "$ctx/install-plugin.sh" "$ctx/cni-uninstall.sh"
	image "velo-kind/cilium:$CILIUM_VERSION" "$here/cilium.Dockerfile" "$ctx"
	image "velo-kind/cilium-operator-generic:$CILIUM_VERSION" "$here/cilium-operator.Dockerfile" \
		"$ctx"
}

flannel_images() {
	local ctx=$work/flannel
	rm -rf "$ctx"
	mkdir -p "$ctx"
	cp "$PEERS_CACHE/flannel-$FLANNEL_VERSION/bin/flanneld" "$here/flannel-cni-conf" "$ctx/"
	image "velo-kind/flannel:$FLANNEL_VERSION" "$here/flannel.Dockerfile" "$ctx"
}

# The benchmark pods' image, the same for every CNI: iperf3 from Debian and bench/'s C tools.
bench_image() {
	local ctx=$work/bench
	mkdir -p "$ctx"
	for t in dp_traffic flows_conn; do
		${CC:-gcc} -static -std=gnu11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror \
			-o "$ctx/$t" "$top/bench/$t.c"
	done
	image velo-kind/bench:dev "$here/bench.Dockerfile" "$ctx"
}

docker image inspect "$base" >/dev/null 2>&1 || die "no $base: hack/kind.sh build first"
start=$(date +%s)
for peer in "$@"; do
	case $peer in
	cilium | cilium-best) cilium_bins && helm_bin && cilium_images ;;
	flannel | flannel-vxlan) flannel_bins && flannel_images ;;
	bench) bench_image ;;
	velo | velo-best) ;;
	*) die "unknown peer '$peer' (cilium, flannel, bench)" ;;
	esac
done
log "done in $(($(date +%s) - start)) s"
