#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Upgrades of the per-pod cgroup programs: they are pinned per BPF generation
# like the fast path's, and the next release's velod moves a live pod's
# cgroup links and velo_tc_deny over, all of them or none. The next release is
# build/tests/velo-nextgen and velod-nextgen (mk/velod_nextgen.mk).

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/upgrade_lib

setup() {
	vt_nextgen
	CU_NEXT="$VT_NEXT_VELO" CU_VELOD="$VT_NEXT_VELOD"
	vt_setup_velo
	vtc_setup
}

# The cgroup group's programs and the link kinds that run them.
CU_KINDS=(cg_acct_in cg_acct_eg cg_deny_eg cg_sockopt tc_deny)
declare -gA CU_PROG=([cg_acct_in]=velo_cg_acct_in [cg_acct_eg]=velo_cg_acct_eg
	[cg_deny_eg]=velo_cg_deny_eg [cg_sockopt]=velo_cg_sockopt [tc_deny]=velo_tc_deny)

# cu_all DENY_CIDR: annotations that turn every cgroup feature on.
cu_all() {
	jq -cn --arg d "$1" '{"velo.dev/accounting": "true", "velo.dev/egress-deny": $d,
		"velo.dev/tcp-congestion": "reno"}'
}

# cu_pod NAME ANNOTATIONS_JSON: a pod in a cgroup of its own, wired by $VT_EXEC (default velo).
# Sets CU_POD, CU_CG, CU_CID, CU_CONF, CU_RESULT, CU_IP4, CU_HOST.
# shellcheck disable=SC2034,SC2153 # read by the tests; VT_RESULT is vt_add's
cu_pod() {
	CU_POD="$(vt_pod_new)"
	CU_CG="$(vtc_cgroup_new)"
	CU_CID="cu-$1-$RANDOM"
	CU_CONF="$(vtc_config "$(vt_config -f 4)" "$CU_CG" "$2")"
	vt_add "$CU_POD" "$CU_CID" "$CU_CONF" || return 1
	CU_RESULT="$VT_RESULT" # set by vt_add
	CU_IP4="$(vt_ip "$VT_RESULT" 4)"
	CU_HOST="$(vt_host_ifname vt "$CU_CID" eth0)"
}

# cu_link_prog HOST KIND: the program id the endpoint's pinned link runs.
cu_link_prog() { vt_link_prog "$VTC_BPFFS" "$1_$2"; }
cu_prog() { vt_gen_prog "$VTC_BPFFS" "$1" "$2"; }
cu_velod() { vt_velod_once "$CU_VELOD" "$VTC_BPFFS" "$1"; }

# cu_probe POD CGROUP ADDR...: TCP connects from inside the pod's cgroup, "open"/"blocked" each.
cu_probe() {
	vtc_run "$1" "$2" python3 - "${@:3}" <<'PY'
import socket, sys
out = []
for addr in sys.argv[1:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1.5)
    try:
        s.connect((addr, 5001))
        out.append('open')
    except OSError:
        out.append('blocked')
print(' '.join(out))
PY
}

# cu_udp POD CGROUP ADDR N: N datagrams of 100 bytes from inside the pod's cgroup.
cu_udp() {
	vtc_run "$1" "$2" python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range($4):
    s.sendto(b'x' * 100, ('$3', 9))
"
}

# cu_sinks POD...: a TCP listener on port 5001 in each pod.
cu_sinks() {
	local p
	for p in "$@"; do
		# nsenter execs timeout, so teardown's kill reaches it (and it the listener);
		# with fd 3 (bats' own) closed the file ends without waiting for them.
		nsenter --net="/run/netns/$p" timeout 30 socat TCP4-LISTEN:5001,reuseaddr,fork \
			/dev/null 3>&- &
		VT_PIDS+=($!)
	done
	sleep 0.3
}

@test "cgroup upgrade: velod moves a pod's cgroup links and velo_tc_deny to the next generation, unpins the old one; counting and denying go on; the next release's ADD gets the new programs" {
	local deny d4 ok o4 pod cg cid conf result host gen kind tx deny_pkts
	local -A old new
	cu_pod denied '{}'
	deny="$CU_POD" d4="$CU_IP4"
	cu_pod allowed '{}'
	ok="$CU_POD" o4="$CU_IP4"
	cu_pod main "$(cu_all "$d4/32")"
	pod="$CU_POD" cg="$CU_CG" cid="$CU_CID" conf="$CU_CONF" result="$CU_RESULT" host="$CU_HOST"
	cu_sinks "$deny" "$ok"
	[ "$(cu_probe "$pod" "$cg" "$d4" "$o4")" = "blocked open" ]

	# The cgroup programs live in the generation dir, and the pod's links run them.
	gen="$(cd "$VTC_BPFFS" && echo progs_g*)"
	[ -d "$VTC_BPFFS/$gen" ] || { echo "no generation dir: $(ls "$VTC_BPFFS")"; false; }
	for kind in "${CU_KINDS[@]}"; do
		old[$kind]="$(cu_prog "$gen" "${CU_PROG[$kind]}")"
		[ -n "${old[$kind]}" ] || { echo "${CU_PROG[$kind]} not under $gen: $(ls "$VTC_BPFFS/$gen")"; false; }
		[ "$(cu_link_prog "$host" "$kind")" = "${old[$kind]}" ]
	done
	cu_udp "$pod" "$cg" "$o4" 100
	tx="$(vtc_counter "$cg" tx_packets)"
	deny_pkts="$(vtc_counter "$cg" deny_packets)"

	# The next release's velod loads its programs beside and moves every link.
	cu_velod "$VT/work/velod.log"
	grep -q "moved to BPF generation nextgen" "$VT/work/velod.log" ||
		{ cat "$VT/work/velod.log"; false; }
	for kind in "${CU_KINDS[@]}"; do
		new[$kind]="$(cu_prog progs_gnextgen "${CU_PROG[$kind]}")"
		[ -n "${new[$kind]}" ]
		[ "${new[$kind]}" != "${old[$kind]}" ]
		[ "$(cu_link_prog "$host" "$kind")" = "${new[$kind]}" ] ||
			{ echo "$kind still on $(cu_link_prog "$host" "$kind")"; cat "$VT/work/velod.log"; false; }
	done
	[ ! -e "$VTC_BPFFS/$gen" ] || { echo "old generation still pinned: $(ls "$VTC_BPFFS/$gen")"; false; }

	# The moved pod still counts (the same counters, carried on) and still denies.
	cu_udp "$pod" "$cg" "$o4" 100
	[ "$(vtc_counter "$cg" tx_packets)" -eq $((tx + 100)) ]
	[ "$(cu_probe "$pod" "$cg" "$d4" "$o4")" = "blocked open" ]
	[ "$(vtc_counter "$cg" deny_packets)" -gt "$deny_pkts" ]
	VT_EXEC="$CU_NEXT" vt_cni CHECK "$cid" "$pod" eth0 "$(vt_with_prev "$conf" "$result")"
	vt_assert_ok

	# A pod the next release wires gets its programs; a second pass has nothing to do.
	VT_EXEC="$CU_NEXT" cu_pod next '{"velo.dev/accounting": "true"}'
	[ "$(cu_link_prog "$CU_HOST" cg_acct_in)" = "${new[cg_acct_in]}" ]
	[ "$(cu_link_prog "$CU_HOST" cg_acct_eg)" = "${new[cg_acct_eg]}" ]
	cu_velod "$VT/work/velod2.log"
	if grep "moved to BPF generation" "$VT/work/velod2.log"; then false; fi
	VT_EXEC="$CU_NEXT" vt_cni DEL "$cid" "$pod" eth0 "$conf"
	vt_assert_ok
	[ ! -e "$VTC_BPFFS/links/${host}_cg_acct_in" ]
	[ ! -e "$VTC_BPFFS/links/${host}_tc_deny" ]
}

@test "cgroup upgrade: a pod whose new programs would use other maps moves not at all (no link half moved) and the old generation stays pinned" {
	local deny d4 ok o4 pod cg host gen kind
	local -A old
	cu_pod denied '{}'
	deny="$CU_POD" d4="$CU_IP4"
	cu_pod allowed '{}'
	ok="$CU_POD" o4="$CU_IP4"
	cu_pod main "$(cu_all "$d4/32")"
	pod="$CU_POD" cg="$CU_CG" host="$CU_HOST"
	gen="$(cd "$VTC_BPFFS" && echo progs_g*)"
	for kind in "${CU_KINDS[@]}"; do
		old[$kind]="$(cu_link_prog "$host" "$kind")"
	done
	# The deny list's map pin goes (the map lives on in the old programs): the next release
	# creates an empty one, as if its layout had changed, and its deny programs use that.
	rm "$VTC_BPFFS/velo_deny_v1"

	cu_velod "$VT/work/velod.log"
	grep -q "uses other maps" "$VT/work/velod.log" || { cat "$VT/work/velod.log"; false; }
	# Accounting could have moved on its own; nothing did.
	for kind in "${CU_KINDS[@]}"; do
		[ "$(cu_link_prog "$host" "$kind")" = "${old[$kind]}" ] ||
			{ echo "$kind moved"; cat "$VT/work/velod.log"; false; }
	done
	[ -d "$VTC_BPFFS/$gen" ]
	[ -e "$VTC_BPFFS/$gen/velo_cg_acct_in" ]
	cu_sinks "$deny" "$ok"
	[ "$(cu_probe "$pod" "$cg" "$d4" "$o4")" = "blocked open" ]
}
