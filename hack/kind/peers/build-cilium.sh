#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds Cilium from the Go module proxy into $PEERS_CACHE/cilium-<version>/: the agent and the
# programs its DaemonSet runs (cilium-dbg, cilium-health and its responder, cilium-cni,
# cilium-mount, cilium-sysctlfix), operator-generic, and the BPF sources the agent compiles at
# runtime. Built in a copy of the module so that Cilium's own replace directives hold. A
# program already built is not rebuilt. Sourced by build.sh.

cilium_bins() {
	local dir=$PEERS_CACHE/cilium-$CILIUM_VERSION src out pkg name tags flags
	src=$dir/src
	out=$dir/bin
	mkdir -p "$out"
	if [ ! -f "$src/go.mod" ]; then
		log "cilium $CILIUM_VERSION: module source in $src"
		local mod
		mod=$(go mod download -json "github.com/cilium/cilium@$CILIUM_VERSION" | jq -r .Dir)
		rm -rf "$src.tmp"
		cp -a "$mod" "$src.tmp"
		chmod -R u+w "$src.tmp"
		mv "$src.tmp" "$src"
	fi
	flags="-s -w -X 'github.com/cilium/cilium/pkg/version.ciliumVersion=${CILIUM_VERSION#v} velo-kind'"
	# name package [tags]: as Cilium's Makefiles name and tag them.
	while read -r name pkg tags; do
		[ -x "$out/$name" ] && continue
		log "cilium: $name"
		(cd "$src" && nice -n 19 go build -trimpath -tags "osusergo${tags:+,$tags}" \
			-ldflags "$flags" -o "$out/$name" "./$pkg")
	done <<'LIST'
cilium-agent daemon
cilium-operator-generic operator ipam_provider_operator
cilium-dbg cilium-dbg
cilium-health cilium-health
cilium-health-responder cilium-health/responder
cilium-cni plugins/cilium-cni
cilium-mount tools/mount
cilium-sysctlfix tools/sysctlfix
LIST
}
