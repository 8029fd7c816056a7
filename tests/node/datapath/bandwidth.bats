#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Bandwidth limits on every path. Pods are wired by the conflist velo ships
# (manifests/velo.yaml: velo, the reference bandwidth plugin, portmap), run
# as a runtime runs it: each plugin gets only the runtimeConfig keys its entry
# declares, containerd's capitalised bandwidth keys, and the previous
# plugin's result. A sender limited to 20 Mbit/s egress must measure within
# 10% of that whatever its pair asked for: routed, fastpath tc or xdp, sockmap.

load ../lib/lib

BW_RATE=20000000 # bits/s

setup() {
	vt_setup_velo
	for cmd in iperf3 python3 bpftool; do
		command -v "$cmd" >/dev/null || skip "$cmd not installed (hack/install-deps.sh)"
	done
	[ -x "$VELOTEST_REF_CNI_DIR/bandwidth" ] || skip "no $VELOTEST_REF_CNI_DIR/bandwidth"
	install -m 0755 "$VELOTEST_REF_CNI_DIR/bandwidth" "$VT_BIN/bandwidth"
	BW_CGMOUNT="$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)"
	[ -n "$BW_CGMOUNT" ] || skip "no cgroup2 mount"
	BW_BPFFS="/sys/fs/bpf/velotest-bw-$VT_TAG-$BATS_TEST_NUMBER"
	BW_CGROUPS=()
	BW_DEL_POD=() BW_DEL_CID=() BW_DEL_RT=() BW_DEL_RESULT=()
	BW_N=0
	BW_CONFLIST="$(bw_conflist)"
}

teardown() {
	local cg i
	# Processes first (cgroup.kill), then each chain's DEL, then the cgroups and pins.
	for cg in "${BW_CGROUPS[@]}"; do
		[ -f "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill" 2>/dev/null
	done
	for cg in "${BW_CGROUPS[@]}"; do
		for i in $(seq 50); do
			[ -s "$cg/cgroup.procs" ] || break
			sleep 0.1
		done
	done
	for i in "${!BW_DEL_CID[@]}"; do
		bw_chain DEL "${BW_DEL_POD[$i]}" "${BW_DEL_CID[$i]}" "${BW_DEL_RT[$i]}" \
			"${BW_DEL_RESULT[$i]}" >/dev/null 2>&1 || true
	done
	for cg in "${BW_CGROUPS[@]}"; do
		rmdir "$cg" 2>/dev/null || echo "cgroup $cg: $(cat "$cg/cgroup.procs" 2>&1)" >&2
	done
	[ -n "${BW_BPFFS:-}" ] && rm -rf "$BW_BPFFS"
	vt_teardown
}

# The shipped conflist, velo's entry given the test's dirs and IPAM (capabilities untouched).
bw_conflist() {
	local velo
	# Kernel bugs accepted: the sockmap case must meet a sockmap pod, not a routed one.
	velo="$(vt_accept_kernel_bugs "$(vt_config -f 4)" |
		jq -c --arg b "$BW_BPFFS" '.bpffsDir = $b | del(.cniVersion, .name)')"
	python3 -c 'import json, sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc.get("kind") == "ConfigMap":
        print(json.dumps(json.loads(doc["data"]["10-velo.conflist"])))' \
		"$VELOTEST_REPO/manifests/velo.yaml" |
		jq -c --argjson v "$velo" --arg n "$VT_NETWORK" '.name = $n |
			.plugins |= map(if .type == "velo" then . + $v else . end)'
}

# bw_chain VERB POD CID RUNTIME_JSON [PREV_RESULT]: the conflist's plugins in order (DEL and
# CHECK: prevResult is the chain's result; DEL in reverse), as libcni does it. ADD sets BW_RESULT.
bw_chain() {
	local verb="$1" pod="$2" cid="$3" rt="$4" prev="${5:-}" n i conf
	n="$(jq '.plugins | length' <<<"$BW_CONFLIST")"
	for ((i = 0; i < n; i++)); do
		local idx=$i
		[ "$verb" = DEL ] && idx=$((n - 1 - i))
		conf="$(jq -c --argjson i "$idx" --argjson rt "$rt" --arg prev "$prev" '
			(.plugins[$i].capabilities // {}) as $caps |
			.plugins[$i] + {cniVersion, name} |
			.runtimeConfig = ($rt | with_entries(select($caps[.key] == true))) |
			if $prev == "" then . else .prevResult = ($prev | fromjson) end' <<<"$BW_CONFLIST")"
		VT_EXEC="$VT_BIN/$(jq -r --argjson i "$idx" '.plugins[$i].type' <<<"$BW_CONFLIST")" \
			vt_cni "$verb" "$cid" "$pod" eth0 "$conf"
		vt_assert_ok || return 1
		[ "$verb" = ADD ] && prev="$VT_OUT"
	done
	[ "$verb" != ADD ] || BW_RESULT="$prev"
}

# bw_pod ANNOTATIONS_JSON [BANDWIDTH_JSON]: a pod with its own cgroup, wired by the chain.
# Sets BW_POD, BW_CG, BW_CID, BW_IP4, BW_HOST, BW_RT.
bw_pod() {
	local rel="/velotest-bw-$VT_TAG-$BATS_TEST_NUMBER-$((BW_N++))"
	BW_POD="$(vt_pod_new)"
	BW_CG="$BW_CGMOUNT$rel"
	mkdir "$BW_CG" || return 1
	BW_CGROUPS+=("$BW_CG")
	BW_CID="bw-$BW_N-$RANDOM"
	# What a runtime knows of the pod; the conflist decides who gets which key.
	BW_RT="$(jq -cn --argjson a "$1" --arg cg "$rel" --argjson bw "${2:-null}" '
		{"io.kubernetes.cri.pod-annotations": $a, cgroupPath: $cg, portMappings: []} +
		(if $bw == null then {} else {bandwidth: $bw} end)')"
	bw_chain ADD "$BW_POD" "$BW_CID" "$BW_RT" || return 1
	BW_DEL_POD+=("$BW_POD") BW_DEL_CID+=("$BW_CID") BW_DEL_RT+=("$BW_RT")
	BW_DEL_RESULT+=("$BW_RESULT")
	BW_IP4="$(vt_ip "$BW_RESULT" 4)"
	BW_HOST="$(vt_host_ifname vt "$BW_CID" eth0)"
}

# bw_in POD CGROUP CMD...: CMD in the pod's netns, as a process of the pod's cgroup.
bw_in() {
	local pod="$1" cg="$2"
	shift 2
	# shellcheck disable=SC2016 # expanded by the inner sh
	nsenter --net="/run/netns/$pod" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# bw_measure SPOD SCG SADDR CPOD CCG: bits/s from CPOD to SPOD over 3 s of iperf3
# (the first second, where the burst goes, omitted).
bw_measure() {
	local port=$((20000 + RANDOM % 20000)) out="$VT/work/iperf.$RANDOM" i
	bw_in "$1" "$2" timeout 20 iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	VT_PIDS+=($!)
	for i in $(seq 50); do
		vt_pod "$1" ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	bw_in "$4" "$5" timeout 20 iperf3 -c "$3" -p "$port" -t 3 -O 1 -J >"$out" || {
		echo "iperf3 failed: $(cat "$out")"
		return 1
	}
	jq '.end.sum_received.bits_per_second | floor' "$out"
}

# bw_case ANNOTATIONS_JSON: a shaped sender and an unshaped receiver with the same annotations;
# the sender's rate must be the limit's, within 10%.
bw_case() {
	local annotations="$1" r r_cg r4 r_host s s_cg s_cid s_rt s_host s_result rate
	# containerd's spelling: capitalised keys, both directions given.
	bw_pod "$annotations"
	r="$BW_POD" r_cg="$BW_CG" r4="$BW_IP4" r_host="$BW_HOST"
	bw_pod "$annotations" "{\"IngressRate\": 0, \"IngressBurst\": 0,
		\"EgressRate\": $BW_RATE, \"EgressBurst\": 2000000}"
	s="$BW_POD" s_cg="$BW_CG" s_cid="$BW_CID" s_rt="$BW_RT" s_host="$BW_HOST"
	s_result="$BW_RESULT"
	BW_R_HOST="$r_host" BW_S_HOST="$s_host"

	# The bandwidth plugin shapes the sender (an ifb takes its host veth's ingress).
	run vt_node tc qdisc show dev "$s_host" ingress
	echo "$output"
	[[ "$output" == *"ingress"* ]]
	# CHECK of the sender's chain agrees with what ADD set up.
	bw_chain CHECK "$s" "$s_cid" "$s_rt" "$s_result"

	rate="$(bw_measure "$r" "$r_cg" "$r4" "$s" "$s_cg")"
	echo "shaped sender ($annotations): $rate bit/s, limit $BW_RATE"
	[ "$rate" -ge $((BW_RATE * 9 / 10)) ]
	[ "$rate" -le $((BW_RATE * 11 / 10)) ]
}

# The shaped pod's fall-back lines: one per fast path it asked for, with the reason.
bw_fallbacks() {
	grep -c "bandwidth limits need the routed path; pod $BW_S_HOST" "$VT_LOG" || true
}

@test "bandwidth: routed pods, the sender's egress limit holds" {
	bw_case '{}'
	[ "$(bw_fallbacks)" -eq 0 ]
}

@test "bandwidth: fastpath tc, the shaped sender stays routed and its limit holds" {
	bw_case '{"velo.dev/fastpath": "tc"}'
	[ -e "$BW_BPFFS/links/${BW_R_HOST}_tc" ]
	[ ! -e "$BW_BPFFS/links/${BW_S_HOST}_tc" ]
	[ "$(bw_fallbacks)" -eq 1 ]
	[ "$(vt_percpu_u64 "$BW_BPFFS/velo_stats_v2" 0 0 0 0)" -eq 0 ] # tc redirects
}

@test "bandwidth: fastpath xdp, the shaped sender stays routed and its limit holds" {
	bw_case '{"velo.dev/fastpath": "xdp"}'
	[ -e "$BW_BPFFS/links/${BW_R_HOST}_xdp" ]
	[ ! -e "$BW_BPFFS/links/${BW_S_HOST}_xdp" ]
	[ "$(bw_fallbacks)" -eq 1 ]
	[ "$(vt_percpu_u64 "$BW_BPFFS/velo_stats_v2" 3 0 0 0)" -eq 0 ] # xdp redirects
}

@test "bandwidth: sockmap, the shaped sender's sockets stay out of the sockhash" {
	bw_case '{"velo.dev/sockmap": "true"}'
	[ "$(bw_fallbacks)" -eq 1 ]
	# Only the receiver is a sockmap pod, and no socket of the pair entered the sockhash.
	run bpftool map dump pinned "$BW_BPFFS/velo_smpod_v1" -j
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -eq 1 ]
	run bpftool map lookup pinned "$BW_BPFFS/velo_smstat_v2" key 0 0 0 0 -j
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq '[.formatted.values[].value] | add' <<<"$output")" -eq 0 ]
}
