#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# ADD, CHECK and DEL under valgrind memcheck: no invalid access, no uninitialised value
# used, no definite or possible leak (--error-exitcode=1 --leak-check=full). Skips
# without valgrind (Debian package valgrind).

load ../lib/lib

setup() {
	vt_setup_velo
	command -v valgrind >/dev/null 2>&1 || skip "valgrind not installed"
	VG_BPFFS=""
	# The runtime runs this wrapper as the plugin; valgrind's own report goes to a file.
	VG_LOGS="$VT/work/vg"
	mkdir -p "$VG_LOGS"
	cat >"$VT_BIN/velo-vg" <<EOF
#!/bin/sh
exec valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite,possible \
	--track-origins=yes --suppressions=$BATS_TEST_DIRNAME/valgrind.supp \
	--log-file=$VG_LOGS/vg.%p.log $VT_BIN/velo "\$@"
EOF
	chmod 0755 "$VT_BIN/velo-vg"
	export VT_EXEC="$VT_BIN/velo-vg"
}

teardown() {
	unset VT_EXEC
	vt_teardown
	[ -z "${VG_BPFFS:-}" ] || rm -rf "$VG_BPFFS"
	return 0
}

# Fails when valgrind reported an error ("==PID==" lines; "--PID--" lines are valgrind's own
# notes, e.g. that it doesn't know pidfd_open, which velo then does without).
vg_assert_clean() {
	local log bad=0
	for log in "$VG_LOGS"/vg.*.log; do
		[ -e "$log" ] || continue
		if grep -q '^==[0-9]*==' "$log"; then
			bad=1
			echo "--- $log"
			grep '^==[0-9]*==' "$log" | head -n 80
		fi
	done
	[ "$VT_RC" -ne 97 ] || { echo "valgrind found errors (exit 97)"; bad=1; }
	[ "$bad" -eq 0 ]
}

# vg_cycle CONFIG: ADD, CHECK (with the ADD's result as prevResult), DEL under valgrind.
vg_cycle() {
	local config="$1" pod
	pod="$(vt_pod_new)"
	vt_cni ADD vg-1 "$pod" eth0 "$config"
	vg_assert_clean
	vt_assert_ok
	vt_cni CHECK vg-1 "$pod" eth0 "$(vt_with_prev "$config" "$VT_OUT")"
	vg_assert_clean
	vt_assert_ok
	vt_cni DEL vg-1 "$pod" eth0 "$config"
	vg_assert_clean
	vt_assert_ok
	vt_assert_nothing_left
}

@test "valgrind: ADD, CHECK, DEL of a dual-stack pod (routed)" {
	vg_cycle "$(vt_config -f dual)"
}

@test "valgrind: ADD, CHECK, DEL with the tc fast path" {
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	mountpoint -q /sys/fs/bpf || skip "bpffs not mounted at /sys/fs/bpf"
	VG_BPFFS="/sys/fs/bpf/velotest-vg-$VT_TAG-$BATS_TEST_NUMBER"
	vg_cycle "$(vt_annotated "$(vt_config -f dual | jq -c --arg b "$VG_BPFFS" '.bpffsDir = $b')" \
		'{"velo.dev/fastpath": "tc"}')"
}

@test "valgrind: failing ADD (bad annotation, failing IPAM) and DEL of an unknown container" {
	local pod
	pod="$(vt_pod_new)"
	vt_cni ADD vg-2 "$pod" eth0 "$(vt_annotated "$(vt_config)" '{"velo.dev/fastpath": "warp"}')"
	vg_assert_clean
	vt_assert_error 108
	vt_cni ADD vg-3 "$pod" eth0 "$(vt_config | jq -c '.ipam.ranges = [[{"subnet": "10.99.0.0/33"}]]')"
	vg_assert_clean
	vt_assert_failed
	vt_cni DEL vg-unknown "" eth0 "$(vt_config)"
	vg_assert_clean
	vt_assert_ok
	vt_assert_nothing_left
}
