#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Upgrades of the socket short-circuit's programs: velo_sockops and velo_sk_msg
# are pinned per BPF generation like the fast path's, and the next release's
# velod moves each opted-in pod's sock_ops link and the node's one sk_msg link
# over while connections run. The next release is build/tests/velo-nextgen and
# velod-nextgen (mk/velod_nextgen.mk).

load ../lib/lib
load sockmap_lib
load ../lib/upgrade_lib

setup() {
	vt_nextgen
	SU_NEXT="$VT_NEXT_VELO" SU_VELOD="$VT_NEXT_VELOD"
	sm_setup
	sysctl -qw kernel.bpf_stats_enabled=1
}

# su_pod: an opted-in pod wired by $VT_EXEC (default velo). Sets SU_POD, SU_CG, SU_IP4, SU_HOST.
# shellcheck disable=SC2034,SC2153 # read by the tests; SM_* are sm_pod's
su_pod() {
	sm_pod true || return 1
	SU_POD="$SM_POD" SU_CG="$SM_CG" SU_IP4="$SM_IP4"
	SU_HOST="$(vt_host_ifname vt "$SM_CID" eth0)"
}

su_link_prog() { vt_link_prog "$SM_BPFFS" "$1"; }
su_prog() { vt_gen_prog "$SM_BPFFS" "$1" "$2"; }

# su_runs GEN_DIR PROG: run_cnt of a program pinned under a generation dir.
su_runs() {
	bpftool -j prog show pinned "$SM_BPFFS/$1/$2" | jq '.run_cnt // 0'
}

su_velod() { vt_velod_once "$SU_VELOD" "$SM_BPFFS" "$1"; }

@test "sockmap upgrade: velod moves the pods' sock_ops links and the sk_msg link to the next generation while streams run, unpins the old one; new connections are still redirected, intact; the next release's ADD gets the new programs" {
	local a a_cg a_host b b_cg b4 b_host gen old_ops old_msg new_ops new_msg redirect runs bg
	su_pod
	a="$SU_POD" a_cg="$SU_CG" a_host="$SU_HOST"
	su_pod
	b="$SU_POD" b_cg="$SU_CG" b4="$SU_IP4" b_host="$SU_HOST"

	# The programs live in the generation dir, and the links run them.
	gen="$(cd "$SM_BPFFS" && echo progs_g*)"
	old_ops="$(su_prog "$gen" velo_sockops)" old_msg="$(su_prog "$gen" velo_sk_msg)"
	[ -n "$old_ops" ] && [ -n "$old_msg" ] ||
		{ echo "sockmap programs not in a generation dir: $(ls -R "$SM_BPFFS")"; false; }
	[ "$(su_link_prog "${a_host}_sockops")" = "$old_ops" ]
	[ "$(su_link_prog "${b_host}_sockops")" = "$old_ops" ]
	[ "$(su_link_prog velo_sk_msg)" = "$old_msg" ]
	sm_stream "$b" "$b_cg" "$b4" "$a" "$a_cg" 2 1048576 65536
	[ "$(sm_stat redirect)" -gt 0 ]

	# Connections come and go while the next release's velod moves everything.
	sm_stream "$b" "$b_cg" "$b4" "$a" "$a_cg" 5000 30000 4096 duplex >"$VT/work/bg.out" 2>&1 &
	bg=$!
	sleep 0.5
	su_velod "$VT/work/velod.log"
	grep -q "moved to BPF generation nextgen" "$VT/work/velod.log" ||
		{ cat "$VT/work/velod.log"; false; }
	new_ops="$(su_prog progs_gnextgen velo_sockops)" new_msg="$(su_prog progs_gnextgen velo_sk_msg)"
	[ -n "$new_ops" ]
	[ "$new_ops" != "$old_ops" ]
	[ -n "$new_msg" ]
	[ "$new_msg" != "$old_msg" ]
	[ "$(su_link_prog "${a_host}_sockops")" = "$new_ops" ]
	[ "$(su_link_prog "${b_host}_sockops")" = "$new_ops" ]
	[ "$(su_link_prog velo_sk_msg)" = "$new_msg" ]
	[ ! -e "$SM_BPFFS/$gen" ] || { echo "old generation still pinned: $(ls "$SM_BPFFS/$gen")"; false; }
	# Every stream that ran across the move arrived intact.
	wait "$bg" || { cat "$VT/work/bg.out"; false; }

	# A connection made after the move runs the new programs and is still redirected, intact.
	redirect="$(sm_stat redirect)" runs="$(su_runs progs_gnextgen velo_sk_msg)"
	sm_stream "$b" "$b_cg" "$b4" "$a" "$a_cg" 2 1048576 65536 duplex
	[ "$(sm_stat redirect)" -gt "$redirect" ]
	[ "$(su_runs progs_gnextgen velo_sockops)" -gt 0 ]
	[ "$(su_runs progs_gnextgen velo_sk_msg)" -gt "$runs" ]
	[ "$(sm_stat redirect_lost)" -eq 0 ]

	# A pod the next release wires gets the new program and pairs with the moved ones;
	# a second pass has nothing to do.
	VT_EXEC="$SU_NEXT" su_pod
	[ "$(su_link_prog "${SU_HOST}_sockops")" = "$new_ops" ]
	redirect="$(sm_stat redirect)"
	sm_stream "$SU_POD" "$SU_CG" "$SU_IP4" "$a" "$a_cg" 2 1048576 65536
	[ "$(sm_stat redirect)" -gt "$redirect" ]
	su_velod "$VT/work/velod2.log"
	if grep "moved to BPF generation" "$VT/work/velod2.log"; then false; fi
	[ "$(su_link_prog velo_sk_msg)" = "$new_msg" ]
}
