#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Go programs of the kind cluster from the Go module proxy into
# $VELO_KIND_CACHE/bin/<k8s version>/: Kubernetes' commands, e2e.test and agnhost from
# k8s.io/kubernetes (through a generated module that pins each k8s.io staging module to its
# published v0.Y.Z, as the repository's own go.mod points them at local folders), etcd, CoreDNS,
# kind, ginkgo and the ClusterNetworkPolicy conformance suite (sigs.k8s.io/network-policy-api).
# The velo repository stays go.mod-free: the modules live in the cache.
# A program already built for these versions is not rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/kind/versions.sh
. "$here/versions.sh"

bin=$VELO_KIND_CACHE/bin/$K8S_VERSION
src=$VELO_KIND_CACHE/src
mkdir -p "$bin" "$src"

log() { printf '== build-bins: %s\n' "$*" >&2; }

# module DIR NAME REQUIRE...: a module at DIR requiring each "path version"; stdin adds lines.
module() {
	local dir=$1 name=$2
	shift 2
	mkdir -p "$dir"
	{
		printf 'module %s\n\ngo 1.24.0\n\n' "$name"
		for req in "$@"; do printf 'require %s\n' "$req"; done
		cat
	} >"$dir/go.mod"
	# A main package so the module has something of its own; the builds name their targets.
	printf 'package main\n\nfunc main() {}\n' >"$dir/main.go"
}

k8s_minor=${K8S_VERSION#v1.}
k8s_minor=${k8s_minor%%.*}
k8s_patch=${K8S_VERSION##*.}
staging_version=v0.$k8s_minor.$k8s_patch

k8s_module() {
	local dir=$src/k8s-$K8S_VERSION gomod staging
	[ -f "$dir/go.mod" ] && return 0
	log "k8s.io/kubernetes $K8S_VERSION: generated module in $dir"
	gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)
	# Every "k8s.io/x => ./staging/src/k8s.io/x" becomes "k8s.io/x => k8s.io/x v0.Y.Z".
	staging=$(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")
	[ -n "$staging" ] || { log "no staging modules in $gomod"; return 1; }
	for m in $staging; do printf 'replace %s => %s %s\n' "$m" "$m" "$staging_version"; done |
		module "$dir" velo.dev/kind-build/k8s "k8s.io/kubernetes $K8S_VERSION"
}

# The version stamp kubeadm and kubelet report and check against each other.
k8s_ldflags() {
	local v pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		for v in "gitVersion=$K8S_VERSION" "gitMajor=1" "gitMinor=$k8s_minor" \
			"gitTreeState=clean" "gitCommit=0000000000000000000000000000000000000000" \
			"buildDate=2026-01-01T00:00:00Z"; do
			printf -- '-X %s.%s ' "$pkg" "$v"
		done
	done
	printf -- '-s -w'
}

build_k8s() {
	local dir=$src/k8s-$K8S_VERSION cmd flags
	flags=$(k8s_ldflags)
	k8s_module
	for cmd in kubelet kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler \
		kube-proxy; do
		[ -x "$bin/$cmd" ] && continue
		log "$cmd"
		(cd "$dir" && go build -trimpath -ldflags "$flags" -o "$bin/$cmd" \
			"k8s.io/kubernetes/cmd/$cmd")
	done
	if [ ! -x "$bin/agnhost" ]; then
		log agnhost
		(cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$bin/agnhost" \
			k8s.io/kubernetes/test/images/agnhost)
	fi
	if [ ! -x "$bin/e2e.test" ]; then
		log e2e.test
		(cd "$dir" && go test -c -trimpath -ldflags "$flags" -o "$bin/e2e.test" \
			k8s.io/kubernetes/test/e2e)
	fi
	if [ ! -x "$bin/ginkgo" ]; then
		log ginkgo
		(cd "$dir" && go build -trimpath -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo)
	fi
}

build_etcd() {
	local dir=$src/etcd-$ETCD_VERSION gomod
	[ -x "$bin/etcd" ] && return 0
	log "etcd $ETCD_VERSION"
	if [ ! -f "$dir/go.mod" ]; then
		# etcd's server module replaces its sibling modules with local paths, like k8s.
		gomod=$(go mod download -json "go.etcd.io/etcd/server/v3@$ETCD_VERSION" | jq -r .GoMod)
		sed -n 's#^\s*\(go.etcd.io/etcd/[a-z0-9/]*\) => \.\./.*#\1#p' "$gomod" |
			while read -r m; do printf 'replace %s => %s %s\n' "$m" "$m" "$ETCD_VERSION"; done |
			module "$dir" velo.dev/kind-build/etcd "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
	fi
	(cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
}

# no_sctp MANIFEST: the conformance suite's base manifest with its SCTP servers (agnhost porter
# serving SERVE_SCTP_PORT_*, the only porter containers there) running agnhost pause instead,
# for kernels without SCTP sockets (hack/kind/cnp/cnp_test.go says why).
no_sctp() {
	local porters sctp
	porters=$(grep -c '"/agnhost porter"' "$1" || true)
	sctp=$(grep -c 'SERVE_SCTP_PORT_' "$1" || true)
	if [ "$porters" -eq 0 ] || [ "$porters" -ne "$sctp" ]; then
		log "$1: $porters porter containers, $sctp SCTP ports: not the layout no_sctp knows"
		return 1
	fi
	sed 's#"/agnhost porter"#"/agnhost pause"#' "$1"
}

# The ClusterNetworkPolicy conformance suite of sigs.k8s.io/network-policy-api, run by velo's
# runner (hack/kind/cnp/cnp_test.go) from a generated module that holds the runner and the
# suite's base/ folder (the runner embeds it); beside the binary, the images its manifests
# name. Rebuilt when the runner changes.
build_cnp() {
	local dir=$src/cnp-$NETPOL_API_VERSION out=$bin/cnp-$NETPOL_API_VERSION.test suite
	[ -x "$out" ] && cmp -s "$here/cnp/cnp_test.go" "$out.src" && return 0
	log "ClusterNetworkPolicy conformance $NETPOL_API_VERSION"
	# Called in an || list (errexit off there): each step that can fail returns.
	suite=$(go mod download -json "sigs.k8s.io/network-policy-api@$NETPOL_API_VERSION" |
		jq -r .Dir)/conformance || return 1
	[ -d "$suite/base" ] || return 1
	[ -f "$dir/go.mod" ] || module "$dir" velo.dev/kind-build/cnp \
		"sigs.k8s.io/network-policy-api $NETPOL_API_VERSION" </dev/null || return 1
	rm -rf "$dir/cnp"
	mkdir -p "$dir/cnp"
	cp -r "$suite/base" "$dir/cnp/base"
	chmod -R u+w "$dir/cnp/base"
	no_sctp "$dir/cnp/base/manifests.yaml" >"$dir/cnp/base/manifests-no-sctp.yaml" || return 1
	cp "$here/cnp/cnp_test.go" "$dir/cnp/"
	(cd "$dir" && go mod tidy && go test -c -trimpath -ldflags "-s -w" -o "$out" ./cnp) ||
		return 1
	grep -rhoE 'image: *[^ ]+' "$suite/base" | sed 's/image: *//' | sort -u >"$out.images"
	cp "$here/cnp/cnp_test.go" "$out.src"
}

# plain NAME PACKAGE@VERSION: a module whose go.mod needs no help.
plain() {
	[ -x "$bin/$1" ] && return 0
	log "$2"
	GOBIN=$bin/.gobin go install -trimpath -ldflags "-s -w" "$2"
	mv "$bin/.gobin/$(basename "${2%@*}")" "$bin/$1"
}

export GOFLAGS=-mod=mod
start=$(date +%s)
plain kind "sigs.k8s.io/kind@$KIND_VERSION"
plain coredns "github.com/coredns/coredns@$COREDNS_VERSION"
build_etcd
build_k8s
# The conformance suite is hack/kind.sh cnp's alone: a cluster is still built without it (cnp
# then says it is missing).
(build_cnp) || log "the ClusterNetworkPolicy conformance suite did not build; the rest did"
log "done in $(($(date +%s) - start)) s: $bin"
