#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# The layout rule (docs/design.md, "Layout"): hack/check-layout.sh passes on the tree, and fails,
# naming the file, on a scratch copy of the tree with one break of each kind. No root, no traffic.

REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"

setup() {
	VT=$(mktemp -d /tmp/velotest-layout.XXXXXX)
	cp -r "$REPO/plugin" "$REPO/bpf" "$REPO/velod" "$REPO/veloctl" "$VT/"
	mkdir -p "$VT/hack"
	cp "$REPO/hack/check-layout.sh" "$VT/hack/"
}

teardown() {
	rm -rf "$VT"
}

@test "layout: the tree keeps the rank rule, foldered includes and header ownership" {
	run "$REPO/hack/check-layout.sh"
	[ "$status" -eq 0 ]
	[ "$output" = "layout: ranks, headers and includes hold" ]
}

@test "layout: a lower folder including a higher one fails, naming the file" {
	sed -i '0,/#include "base\/log.h"/s||#include "base/log.h"\n#include "cmd/attachment.h"|' \
		"$VT/plugin/state/state.c"
	grep -q '"cmd/attachment.h"' "$VT/plugin/state/state.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"plugin/state/state.c: state (rank 1) includes cmd/attachment.h (rank 6)"* ]]
}

@test "layout: folders of one rank don't include each other" {
	sed -i '0,/#include "base\/log.h"/s||#include "base/log.h"\n#include "net/netlink.h"|' \
		"$VT/plugin/state/state.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"plugin/state/state.c: state (rank 1) includes net/netlink.h (rank 1)"* ]]
}

@test "layout: an include without its folder fails" {
	sed -i 's|#include "base/log.h"|#include "log.h"|' "$VT/plugin/state/state.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *'plugin/state/state.c: #include "log.h" must name its folder'* ]]
}

@test "layout: a header declaring what its .c does not define fails" {
	printf 'int velotest_not_defined(void);\n' >>"$VT/plugin/base/naming.h"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"plugin/base/naming.h declares what naming.c does not define: velotest_not_defined"* ]]
}

@test "layout: a .c declaring another file's function fails" {
	printf 'int velo_addr_parse(const char *text, int *family, unsigned char addr[16]);\n' \
		>>"$VT/plugin/base/naming.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"plugin/base/naming.c declares another file's velo_addr_parse"* ]]
}

@test "layout: bpf/ including plugin/ and velod/ including veloctl/ fail" {
	printf '#include "base/log.h"\n' >>"$VT/bpf/veth_tc.bpf.c"
	printf '#include "ctl.h"\n' >>"$VT/velod/main.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bpf/veth_tc.bpf.c: bpf/ includes plugin/base/log.h"* ]]
	[[ "$output" == *'velod/main.c: #include "ctl.h" is not a file of velod/'* ]]
}

@test "layout: a C file in a nested folder the Makefile does not build fails" {
	mkdir -p "$VT/plugin/net/extra" "$VT/velod/k8s/extra"
	printf '// SPDX-License-Identifier: Apache-2.0\n/* Never built. */\n' >"$VT/plugin/net/extra/helper.c"
	printf '// SPDX-License-Identifier: Apache-2.0\n/* Never built. */\n' >"$VT/velod/k8s/extra/helper.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"plugin/net/extra/helper.c: in a nested folder, which the Makefile does not build"* ]]
	[[ "$output" == *"velod/k8s/extra/helper.c: in a nested folder, which the Makefile does not build"* ]]
}

@test "layout: a velod folder including a higher one fails, naming the file" {
	sed -i '0,/#include "agent\/agent.h"/s||#include "agent/agent.h"\n#include "policy/policy.h"|' \
		"$VT/velod/k8s/k8s_nodes.h"
	grep -q '"policy/policy.h"' "$VT/velod/k8s/k8s_nodes.h"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"velod/k8s/k8s_nodes.h: k8s (rank 1) includes policy/policy.h (rank 2): includes only go down"* ]]
}

@test "layout: velod folders of one rank don't include each other" {
	sed -i '0,/#include "agent\/agent.h"/s||#include "agent/agent.h"\n#include "node/reaper.h"|' \
		"$VT/velod/k8s/k8s_nodes.h"
	grep -q '"node/reaper.h"' "$VT/velod/k8s/k8s_nodes.h"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"velod/k8s/k8s_nodes.h: k8s (rank 1) includes node/reaper.h (rank 1)"* ]]
}

@test "layout: a velod folder without a rank fails" {
	mkdir -p "$VT/velod/extra"
	printf '// SPDX-License-Identifier: Apache-2.0\n/* Not ranked. */\n' >"$VT/velod/extra/helper.c"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"velod/extra has no rank in hack/check-layout.sh"* ]]
}

@test "layout: velod includes another folder's file by folder, its own by name" {
	sed -i 's|#include "agent/config.h"|#include "config.h"|' "$VT/velod/routing/routing.c"
	sed -i 's|#include "k8s_list_watch.h"|#include "k8s/k8s_list_watch.h"|' "$VT/velod/k8s/k8s_watch.h"
	sed -i 's/VELOD_AGENT_NFT_H/VELOD_NFT_H/' "$VT/velod/agent/nft.h"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *'velod/routing/routing.c: #include "config.h" is not a file of velod/routing/'* ]]
	[[ "$output" == *'velod/k8s/k8s_watch.h: #include "k8s/k8s_list_watch.h" names its own folder'* ]]
	[[ "$output" == *"velod/agent/nft.h: include guard is not VELOD_AGENT_NFT_H"* ]]
}

@test "layout: includes out of folder order, a file without its opening comment and a stale guard fail" {
	sed -i 's|#include "base/lock.h"|#include "state/state.h"\n#include "base/lock.h"|' \
		"$VT/plugin/state/state.c"
	sed -i '2d' "$VT/plugin/base/naming.c"
	sed -i 's/VELO_BASE_NAMING_H/VELO_NAMING_H/' "$VT/plugin/base/naming.h"
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *'plugin/state/state.c: "..." includes not grouped by folder'* ]]
	[[ "$output" == *"plugin/base/naming.c: no opening comment"* ]]
	[[ "$output" == *"plugin/base/naming.h: include guard is not VELO_BASE_NAMING_H"* ]]
}

@test "layout: a velod .c file over 400 lines fails, naming it and its count" {
	count=$(wc -l <"$VT/velod/agent/nft.c")
	for _ in $(seq $((401 - count))); do printf '/* padding */\n'; done >>"$VT/velod/agent/nft.c"
	[ "$(wc -l <"$VT/velod/agent/nft.c")" -eq 401 ]
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"velod/agent/nft.c: 401 lines, over velod's 400: split it by concern"* ]]
}

@test "layout: a velod file listed as being split fails once it is under 400 lines" {
	sed -i 's|^declare -A velod_long=(|&\n\t[velod/agent/nft.c]="being split"|' "$VT/hack/check-layout.sh"
	grep -q 'velod/agent/nft.c' "$VT/hack/check-layout.sh"
	count=$(wc -l <"$VT/velod/agent/nft.c")
	run "$VT/hack/check-layout.sh"
	[ "$status" -eq 1 ]
	[[ "$output" == *"velod/agent/nft.c: $count lines, no longer over 400: drop it from velod_long"* ]]
}
