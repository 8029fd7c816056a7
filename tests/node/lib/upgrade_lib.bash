# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for the BPF upgrade tests (fastpath.bats, cgroup_upgrade.bats, sockmap_upgrade.bats),
# over lib.bash. The next release is build/tests/velo-nextgen and velod-nextgen: the same code
# with another BPF generation name (mk/velod_nextgen.mk).

# vt_nextgen: sets VT_NEXT_VELO and VT_NEXT_VELOD, or skips the test when they aren't built.
vt_nextgen() {
	VT_NEXT_VELO="$VELOTEST_REPO/build/tests/velo-nextgen"
	VT_NEXT_VELOD="$VELOTEST_REPO/build/tests/velod-nextgen"
	if [ ! -x "$VT_NEXT_VELO" ] || [ ! -x "$VT_NEXT_VELOD" ]; then
		skip "make $VT_NEXT_VELO $VT_NEXT_VELOD"
	fi
}

# vt_velod_once VELOD BPFFS LOG: one pass of that velod (reconcile, upgrade) over this test's
# node; nothing is released (a long grace period).
vt_velod_once() {
	jq -n --arg t "$VT" --arg b "$2" --arg n "$VT_NETWORK" --arg bin "$VT_BIN" '{
		network: $n, stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b,
		cniPath: $bin, reconcileIntervalSeconds: 1, gracePeriodSeconds: 3600,
		logLevel: "debug"}' >"$VT/work/velod-once.json"
	vt_node "$1" --config "$VT/work/velod-once.json" --once 2>"$3" || { cat "$3"; return 1; }
}

# vt_link_prog BPFFS LINK: the id of the program a link pinned under links/ runs.
vt_link_prog() {
	bpftool -j link show pinned "$1/links/$2" | jq -r '.prog_id'
}

# vt_gen_prog BPFFS GEN_DIR PROG: the id of a program pinned under a generation dir; empty
# when there is none.
vt_gen_prog() {
	bpftool -j prog show pinned "$1/$2/$3" 2>/dev/null | jq -r '.id'
}
