#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Upgrades of the connection-event programs: the next release's velod moves an opted-in pod's
# flow_ops link (and, with velo.dev/flows-udp, flow_udp_eg and flow_udp_in) to its own
# generation's programs, then unpins the old generation and the maps an older release's flows
# used; the moved pod still reports its connections into the one pinned ring. The next release is build/tests/velo-nextgen and
# velod-nextgen (mk/velod_nextgen.mk).

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib
load flows_lib
load ../lib/upgrade_lib

setup() {
	vt_nextgen
	svc_setup
	command -v bpftool >/dev/null || skip "bpftool not installed"
}

@test "flows upgrade: the next release's velod moves flow_ops, flow_udp_eg and flow_udp_in to its programs, unpins the old generation and retired maps; the pod still reports its connections" {
	local gen out kind host
	local -A old new
	local -A prog=([flow_ops]=velo_flow_ops [flow_udp_eg]=velo_fl_udp_eg [flow_udp_in]=velo_fl_udp_in)
	flows_pod b
	flows_pod a '{"velo.dev/flows": "true", "velo.dev/flows-udp": "true"}'
	host="$(vt_host_ifname vt ctr-a eth0)"
	gen="$(cd "$VTC_BPFFS" && echo progs_g*)"
	[ -d "$VTC_BPFFS/$gen" ] || { echo "no generation dir: $(ls "$VTC_BPFFS")"; false; }
	for kind in flow_ops flow_udp_eg flow_udp_in; do
		old[$kind]="$(vt_gen_prog "$VTC_BPFFS" "$gen" "${prog[$kind]}")"
		[ -n "${old[$kind]}" ]
		[ "$(vt_link_prog "$VTC_BPFFS" "${host}_$kind")" = "${old[$kind]}" ]
	done

	# A map of the release before this one's flows (its per-socket side table), pinned as it was.
	bpftool map create "$VTC_BPFFS/velo_fl_tcp_v1" type hash key 4 value 8 entries 1 \
		name velo_fl_tcp_v1

	# The release changes: the next one's upgrade pass runs.
	vt_velod_once "$VT_NEXT_VELOD" "$VTC_BPFFS" "$VT/work/velod-once.log"
	grep -q "moved to BPF generation nextgen" "$VT/work/velod-once.log" ||
		{ cat "$VT/work/velod-once.log"; false; }
	for kind in flow_ops flow_udp_eg flow_udp_in; do
		new[$kind]="$(vt_gen_prog "$VTC_BPFFS" progs_gnextgen "${prog[$kind]}")"
		[ -n "${new[$kind]}" ]
		[ "${new[$kind]}" != "${old[$kind]}" ]
		[ "$(vt_link_prog "$VTC_BPFFS" "${host}_$kind")" = "${new[$kind]}" ] ||
			{ echo "$kind not moved"; cat "$VT/work/velod-once.log"; false; }
	done
	[ ! -e "$VTC_BPFFS/$gen" ] || { echo "old generation still pinned: $(ls "$VTC_BPFFS/$gen")"; false; }
	[ ! -e "$VTC_BPFFS/velo_fl_tcp_v1" ]
	VT_EXEC="$VT_NEXT_VELO" vt_cni CHECK ctr-a "$NS_a" eth0 "$(vt_with_prev "$CONF_a" "$RESULT_a")"
	vt_assert_ok

	# The moved programs write the ring the next release's velod reads.
	SVC_VELOD="$VT_NEXT_VELOD" flows_velod
	flows_serve "$NS_b" "$CG_b" 8086 10
	flows_connect "$NS_a" "$CG_a" "$IP_b" 8086 20
	out="$(flows_wait_end 8086)"
	echo "$out"
	[ "$(flows_count "$out" start)" -eq 1 ]
	flows_check_end "$out" velotest/pod-ctr-a velotest/pod-ctr-b 8086 20 10
}
