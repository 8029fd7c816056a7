#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy's truth table, as Cyclonus checks a CNI: a grid of 3 namespaces x 3 pods wired
# by velo with "policy": true, velod computing the allow sets from a policy file; per case a set
# of NetworkPolicies, then every pod (and the node) probes every pod over TCP, UDP and SCTP on
# ports 53 and 80 (connect, send, echo within 1.5 s), compared with policy_model.py's verdicts
# (a model written from the API reference). The same table on every path velo offers: routed
# (on clsact filters, as kernels without tcx get the programs), the tc shortcut, XDP, the socket
# short-circuit and Service translation (probes to ClusterIPs, the policy of the backend reached). On a kernel without SCTP sockets the probes carry SCTP as
# raw protocol-132 packets (INIT / INIT ACK), the same ports on the wire.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

# The cases (POL_CASES, pol_case_policies) are guest_shared.bash's: the kernel matrix's guest
# runs the same table.

# run_table: every case on the grid as it is; fails at the end naming the cases that differed.
run_table() {
	local name policies start failed=()
	for name in "${POL_CASES[@]}"; do
		start=$(date +%s%N)
		policies="$(pol_case_policies "$name")" || { failed+=("$name(bad case)"); continue; }
		pol_check "$name" "$policies" || failed+=("$name")
		echo "case $name took $((($(date +%s%N) - start) / 1000000)) ms"
	done
	echo "cases that differ from the model: ${failed[*]:-none}"
	[ "${#failed[@]}" -eq 0 ]
}

# The held connections a policy change cuts or keeps (guest_shared.bash's pol_held).
run_held() {
	pol_held pol_apply "$POL_PROBE"
}

# path ANNOTATIONS_JSON: the grid on one path, the table and the held connections.
path() {
	pol_grid "$1"
	pol_velod
	run_table
	run_held
}

sctp_note() {
	local how
	how="$("$POL_PROBE" sctp)"
	[ "$how" = kernel ] || echo "# SCTP as raw packets (${how#raw: })" >&3
}

# pol_filters KEY HOOK: the BPF programs on the host veth of grid pod KEY at tc HOOK (ingress or
# egress), as "pref:name" words in the order tc runs them.
pol_filters() {
	local ifname
	ifname="$(vt_host_ifname vt "ctr-${1/\//-}" eth0)"
	vt_node tc filter show dev "$ifname" "$2" |
		awk '/ bpf / { for (i = 1; i <= NF; i++) { if ($i == "pref") p = $(i + 1);
			if ($i ~ /^velo_/) { sub(/:.*/, "", $i); printf "%s:%s ", p, $i; break } } }'
}

# On clsact (VELO_TC_CLSACT): the programs are filters, not pinned links, in front of velo's
# other tc programs; velod takes them off again.
clsact_check() {
	local key pins start
	start=$(date +%s%N)
	pol_apply "[$(pol_np x deny "$ALL_INGRESS")]"
	pins="$(find "$VTC_BPFFS/links" -name '*_pol_*' -printf '%f ' 2>/dev/null || true)"
	echo "policy link pins: ${pins:-none}"
	[ -z "$pins" ]
	for key in "${POL_KEYS[@]}"; do
		echo "$key ingress: $(pol_filters "$key" ingress)egress: $(pol_filters "$key" egress)"
		case "$key" in
		x/*)
			[ "$(pol_filters "$key" ingress)" = "1:velo_pol_from " ]
			[ "$(pol_filters "$key" egress)" = "1:velo_pol_to " ]
			;;
		*)
			[ -z "$(pol_filters "$key" ingress)" ]
			[ -z "$(pol_filters "$key" egress)" ]
			;;
		esac
	done
	pol_apply '[]'
	for key in "${POL_KEYS[@]}"; do
		[ -z "$(pol_filters "$key" ingress)$(pol_filters "$key" egress)" ]
	done
	echo "clsact check took $((($(date +%s%N) - start) / 1000000)) ms"
}

# Routed pods on clsact, what kernels without tcx (before 6.6) get; the other paths on tcx.
@test "policy truth table: routed pods, on clsact filters (VELO_TC_CLSACT)" {
	sctp_note
	export VELO_TC_CLSACT=1
	path '{}'
	clsact_check
}

@test "policy truth table: tc shortcut (velo.dev/fastpath: tc)" {
	path '{"velo.dev/fastpath": "tc"}'
}

@test "policy truth table: XDP shortcut (velo.dev/fastpath: xdp)" {
	path '{"velo.dev/fastpath": "xdp"}'
}

@test "policy truth table: socket short-circuit (velo.dev/sockmap)" {
	POL_ACCEPT_BUGS=1
	path '{"velo.dev/sockmap": "true"}'
}

@test "policy truth table: Service translation (velo.dev/services), probes to ClusterIPs" {
	pol_grid '{"velo.dev/services": "true"}'
	pol_services
	pol_velod
	run_table
	run_held
}

@test "policy: only pods some policy selects get the programs; a new pod is isolated before velod places it" {
	local key ifname pins
	pol_grid '{}'
	pol_velod
	pol_apply '[]'
	for key in "${POL_KEYS[@]}"; do
		ifname="$(vt_host_ifname vt "ctr-${key/\//-}" eth0)"
		# No links dir at all is fine: the grid was wired before velod turned policy on.
		pins="$(find "$VTC_BPFFS/links" -name "${ifname}_pol_*" 2>/dev/null || true)"
		echo "$key ($ifname) with no policy: ${pins:-no policy links}"
		[ -z "$pins" ]
	done
	pol_apply "[$(pol_np x deny "$ALL_INGRESS")]"
	for key in "${POL_KEYS[@]}"; do
		ifname="$(vt_host_ifname vt "ctr-${key/\//-}" eth0)"
		pins="$(find "$VTC_BPFFS/links" -name "${ifname}_pol_*" -printf '%f ' 2>/dev/null)"
		echo "$key ($ifname) under deny-all in x: ${pins:-no policy links}"
		case "$key" in
		x/*) [ "$pins" = "${ifname}_pol_from ${ifname}_pol_to " ] ||
			[ "$pins" = "${ifname}_pol_to ${ifname}_pol_from " ] ;;
		*) [ -z "$pins" ] ;;
		esac
	done
	# velod frozen: a new pod of x is wired, but nothing passes until velod placed it.
	kill -STOP "$POL_VELOD_PID"
	pol_add x d '{}'
	run vtc_run "${POL_NS[x/d]}" "${POL_CG[x/d]}" "$POL_PROBE" probe -t 1000 \
		<<<"out tcp ${POL_IP[y/a]} 80"
	kill -CONT "$POL_VELOD_PID"
	echo "x/d -> y/a before velod placed x/d: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "out timeout" ]
	pol_apply "[$(pol_np x deny "$ALL_INGRESS")]"
	run vtc_run "${POL_NS[x/d]}" "${POL_CG[x/d]}" "$POL_PROBE" probe -t 1500 \
		<<<"out tcp ${POL_IP[y/a]} 80"
	echo "x/d -> y/a once placed (egress not isolated): $output"
	[ "$output" = "out ok" ]
	run vtc_run "${POL_NS[y/a]}" "${POL_CG[y/a]}" "$POL_PROBE" probe -t 1000 \
		<<<"in tcp ${POL_IP[x/d]} 80"
	echo "y/a -> x/d (deny-all ingress in x): $output"
	[ "$output" = "in timeout" ]
}
