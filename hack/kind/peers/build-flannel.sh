#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds flanneld from the Go module proxy into $PEERS_CACHE/flannel-<version>/bin. The proxy
# does not serve the Tencent Cloud SDK that the tencentvpc backend imports: the build's copy of
# the module drops that backend's import from main.go and the SDK from go.mod (every other
# backend stays). Sourced by build.sh.

flannel_bins() {
	local dir=$PEERS_CACHE/flannel-$FLANNEL_VERSION src out mod
	src=$dir/src
	out=$dir/bin
	mkdir -p "$out"
	[ -x "$out/flanneld" ] && return 0
	if [ ! -f "$src/go.mod" ]; then
		log "flannel $FLANNEL_VERSION: module source in $src, without tencentvpc"
		mod=$(go mod download -json "github.com/flannel-io/flannel@$FLANNEL_VERSION" | jq -r .Dir)
		rm -rf "$src.tmp"
		cp -a "$mod" "$src.tmp"
		chmod -R u+w "$src.tmp"
		grep -q 'pkg/backend/tencentvpc"' "$src.tmp/main.go" ||
			die "flannel: main.go no longer imports tencentvpc"
		sed -i '/pkg\/backend\/tencentvpc"/d' "$src.tmp/main.go"
		rm -rf "$src.tmp/pkg/backend/tencentvpc"
		(cd "$src.tmp" && go mod edit \
			-droprequire=github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common \
			-droprequire=github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc)
		mv "$src.tmp" "$src"
	fi
	log "flannel: flanneld"
	# The udp backend's proxy is C (cgo): linked against the base image's glibc (the same
	# Debian release as this machine's).
	(cd "$src" && CGO_ENABLED=1 nice -n 19 go build -trimpath \
		-ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$FLANNEL_VERSION" \
		-o "$out/flanneld" .)
}
