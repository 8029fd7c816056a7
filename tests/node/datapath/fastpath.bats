#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The L3 shortcut between local pods (velo.dev/fastpath: tc or xdp): data
# integrity through each path, flows that must stay on the host stack (NAT,
# portmap hairpin, bandwidth shaping), anti-spoofing, a pod deleted
# mid-stream, and what DEL and GC leave behind. velo's BPF pins live in a
# bpffs dir of each test's own; the counters come from velo_stats_v2.

load ../lib/lib
load ../lib/upgrade_lib

# velo_stats_v2 indexes (enum velo_stat in bpf/lib/velo_shared.h).
declare -gA FP_STAT=([tc_redirect]=0 [tc_pass]=1 [tc_spoof]=2 [xdp_redirect]=3 [xdp_pass]=4
	[xdp_spoof]=5 [ttl]=6 [mtu]=7 [nat]=8 [no_ct]=9)

setup() {
	vt_setup_velo
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	FP_BPFFS="/sys/fs/bpf/velotest-fp-$VT_TAG-$BATS_TEST_NUMBER"
	FP_N=0
	FP_DMESG="$(vt_splats)"
}

teardown() {
	if [ -n "${VT:-}" ] && [ -n "${VT_NODE:-}" ]; then
		vt_node iptables -t nat -F >/dev/null 2>&1 || true
		vt_node iptables -t nat -X >/dev/null 2>&1 || true
		vt_node ip6tables -t nat -F >/dev/null 2>&1 || true
		vt_node ip6tables -t nat -X >/dev/null 2>&1 || true
	fi
	vt_teardown
	# Unpinning the links detaches the programs; the maps go with their last pin.
	[ -n "${FP_BPFFS:-}" ] && rm -rf "$FP_BPFFS"
	return 0
}

# fp_config MODE [FAMILY [RUNTIME_CONFIG_JSON]]: velo's config with the pod's annotation
# (MODE none: no annotation) and the test's bpffs dir; the runtimeConfig goes as a runtime
# passes it under the shipped conflist.
fp_config() {
	local annotations='{}' extra="${3:-{\}}" conf rt
	[ "$1" = none ] || annotations="$(jq -cn --arg v "$1" '{"velo.dev/fastpath": $v}')"
	conf="$(vt_config -f "${2:-dual}" | jq -c --arg b "$FP_BPFFS" '.bpffsDir = $b')" || return 1
	rt="$(jq -cn --argjson a "$annotations" --argjson x "$extra" \
		'{"io.kubernetes.cri.pod-annotations": $a} + $x')" || return 1
	vt_runtime_config "$conf" "$rt"
}

# fp_pod MODE [FAMILY [RUNTIME_CONFIG_JSON]]: a pod wired by velo.
# Sets FP_POD, FP_CID, FP_IP4, FP_IP6, FP_HOST (its host veth), FP_RESULT, FP_CONF.
# shellcheck disable=SC2034 # read by the tests
fp_pod() {
	FP_POD="$(vt_pod_new)"
	FP_CID="fp-$((FP_N++))-$RANDOM"
	FP_CONF="$(fp_config "$@")"
	vt_add "$FP_POD" "$FP_CID" "$FP_CONF" || return 1
	FP_RESULT="$VT_RESULT" # set by vt_add
	FP_IP4="$(vt_ip "$VT_RESULT" 4)"
	FP_IP6="$(vt_ip "$VT_RESULT" 6)"
	FP_HOST="$(vt_host_ifname vt "$FP_CID" eth0)"
}

# fp_stat NAME: a velo_stats_v2 counter (0 before anything was loaded).
fp_stat() {
	[ -e "$FP_BPFFS/velo_stats_v2" ] || { echo 0; return; }
	vt_percpu_u64 "$FP_BPFFS/velo_stats_v2" "${FP_STAT[$1]}" 0 0 0
}

# fp_link HOST_IFNAME KIND: the pinned link of that endpoint and hook exists.
fp_link() { [ -e "$FP_BPFFS/links/${1}_$2" ]; }

# fp_ep_key ADDR: the endpoint map key of an address, as bpftool's hex bytes.
fp_ep_key() {
	python3 - "$1" <<'EOF'
import ipaddress, sys
a = ipaddress.ip_address(sys.argv[1])
b = a.packed if a.version == 6 else b"\0" * 10 + b"\xff\xff" + a.packed
print(" ".join("%02x" % x for x in b))
EOF
}

# fp_has_ep ADDR: the endpoint map has an entry for ADDR.
fp_has_ep() {
	# shellcheck disable=SC2046 # the key's bytes are separate words
	bpftool map lookup pinned "$FP_BPFFS/velo_ep_v1" key hex $(fp_ep_key "$1") >/dev/null 2>&1
}

# fp_eps: how many entries the endpoint map holds.
fp_eps() {
	bpftool -j map dump pinned "$FP_BPFFS/velo_ep_v1" 2>/dev/null | jq 'length' || echo 0
}

# fp_both_ways A_POD A_ADDR B_POD B_ADDR PORT: 4 MiB each way, digests compared.
fp_both_ways() {
	vt_tcp_transfer "$3" "$4" "$1" "$5"
	vt_tcp_transfer "$1" "$2" "$3" "$(($5 + 1))"
}

# fp_udp_arrives FROM_POD TO_POD TO_ADDR [BIND_ADDR]: one datagram, 0 when it arrives.
fp_udp_arrives() {
	local from="$1" to="$2" addr="$3" bind="${4:-}" fam=4 recv="$VT/work/udp.$RANDOM" pid i
	local dest opt=""
	case "$addr" in *:*) fam=6 ;; esac
	if [ "$fam" = 6 ]; then dest="[$addr]:9000"; else dest="$addr:9000"; fi
	[ -z "$bind" ] || opt=",bind=$bind"
	[ "$fam" = 4 ] || [ -z "$bind" ] || opt=",bind=[$bind]"
	vt_pod "$to" timeout 3 socat -u "UDP$fam-RECV:9000" "OPEN:$recv,creat" &
	pid=$!
	VT_PIDS+=("$pid")
	for i in $(seq 30); do
		vt_pod "$to" ss -Hlun "sport = :9000" | grep -q . && break
		sleep 0.1
	done
	for i in 1 2 3; do
		echo "velotest-$i" | vt_pod "$from" socat -u - "UDP$fam-SENDTO:$dest$opt" || return 2
		sleep 0.2
	done
	wait "$pid" || true
	grep -q velotest "$recv" 2>/dev/null
}

@test "tc shortcut: data intact both ways over IPv4 and IPv6, and the redirects are counted" {
	local a b a4 a6 b4 b6 before
	fp_pod tc
	a="$FP_POD" a4="$FP_IP4" a6="$FP_IP6"
	fp_link "$FP_HOST" tc || { echo "no tc link pinned for $FP_HOST"; false; }
	fp_pod tc
	b="$FP_POD" b4="$FP_IP4" b6="$FP_IP6"
	before="$(fp_stat tc_redirect)"

	fp_both_ways "$a" "$a4" "$b" "$b4" 5001
	fp_both_ways "$a" "$a6" "$b" "$b6" 5003

	# 16 MiB went through: thousands of packets, whatever GSO batched.
	[ "$(fp_stat tc_redirect)" -gt $((before + 1000)) ] ||
		{ echo "tc redirects: $before -> $(fp_stat tc_redirect)"; false; }
	[ "$(fp_stat tc_spoof)" -eq 0 ]
	[ "$(fp_stat nat)" -eq 0 ]
	[ "$(fp_stat no_ct)" -eq 0 ]
}

@test "XDP shortcut: data intact both ways over IPv4 and IPv6, per-destination devmap counters" {
	local a b a4 a6 b4 b6 host_b ifindex_b before delivered
	fp_pod xdp
	a="$FP_POD" a4="$FP_IP4" a6="$FP_IP6"
	fp_link "$FP_HOST" xdp || { echo "no XDP link pinned for $FP_HOST"; false; }
	fp_pod xdp
	b="$FP_POD" b4="$FP_IP4" b6="$FP_IP6" host_b="$FP_HOST"
	before="$(fp_stat xdp_redirect)"

	fp_both_ways "$a" "$a4" "$b" "$b4" 5001
	fp_both_ways "$a" "$a6" "$b" "$b6" 5003

	[ "$(fp_stat xdp_redirect)" -gt $((before + 1000)) ] ||
		{ echo "xdp redirects: $before -> $(fp_stat xdp_redirect)"; false; }
	# The devmap program counted what it delivered to B.
	ifindex_b="$(vt_node ip -j link show "$host_b" | jq '.[0].ifindex')"
	delivered="$(vt_percpu_u64 "$FP_BPFFS/velo_dst_v1" $((ifindex_b & 255)) \
		$(((ifindex_b >> 8) & 255)) 0 0)"
	[ "$delivered" -gt 1000 ] || { echo "devmap program counted $delivered packets to B"; false; }
	# Nothing was lost on the way into the pods (redirected frames need NAPI there).
	run vt_node ethtool -S "$host_b"
	echo "$output"
	if grep -qE 'rx_queue_0_drops: [1-9]' <<<"$output"; then echo "frames dropped"; false; fi
}

@test "a pod with the shortcut and a peer without it still talk (routed), both ways" {
	local a b a4 a6 b4 b6 before
	fp_pod tc
	a="$FP_POD" a4="$FP_IP4" a6="$FP_IP6"
	fp_pod none
	b="$FP_POD" b4="$FP_IP4" b6="$FP_IP6"
	fp_link "$FP_HOST" tc && { echo "a pod without the annotation got a link"; false; }
	fp_has_ep "$b4" && { echo "a pod without the annotation is in the endpoint map"; false; }
	before="$(fp_stat tc_redirect)"
	fp_both_ways "$a" "$a4" "$b" "$b4" 5001
	fp_both_ways "$a" "$a6" "$b" "$b6" 5003
	[ "$(fp_stat tc_redirect)" -eq "$before" ]

	# XDP towards a tc-only pod is routed too (it isn't ready for XDP frames).
	fp_pod xdp
	fp_both_ways "$FP_POD" "$FP_IP4" "$a" "$a4" 5005
	[ "$(fp_stat xdp_redirect)" -eq 0 ]
}

# kube-proxy's DNAT of a service IP to a same-node pod: the reply is addressed pod to pod
# but must be reverse-NATed by the stack.
fp_service_nat() {
	local mode="$1" a b a4 a6 b4 b6
	fp_pod "$mode"
	a="$FP_POD" a4="$FP_IP4" a6="$FP_IP6"
	fp_pod "$mode"
	b="$FP_POD" b4="$FP_IP4" b6="$FP_IP6"
	vt_node iptables -t nat -A PREROUTING -d 10.96.0.10/32 -p tcp --dport 80 \
		-j DNAT --to-destination "$b4:8080"
	vt_node ip6tables -t nat -A PREROUTING -d fd96::10/128 -p tcp --dport 80 \
		-j DNAT --to-destination "[$b6]:8080"

	vt_tcp_transfer "$b" "$b4" "$a" 8080 10.96.0.10 80
	vt_tcp_transfer "$b" "$b6" "$a" 8080 fd96::10 80
	# The replies were seen as NATed and handed to the stack.
	[ "$(fp_stat nat)" -gt 0 ] || { echo "no NATed reply counted"; false; }
	# The same pods still take the shortcut directly. tc sees GSO super-packets (up to 64 KiB),
	# so 4 MiB each way is at least 128 redirects, whatever the segmentation.
	local before
	before="$(fp_stat "${mode}_redirect")"
	fp_both_ways "$a" "$a4" "$b" "$b4" 5001
	[ "$(fp_stat "${mode}_redirect")" -ge $((before + 128)) ]
}

@test "tc: a flow DNATed from a service IP to a pod on the same node goes through the stack" {
	fp_service_nat tc
}

@test "XDP: a flow DNATed from a service IP to a pod on the same node goes through the stack" {
	fp_service_nat xdp
}

# portmap_config CONFIG PREV: the reference portmap in the chain, publishing 8080 -> 80.
fp_portmap_config() {
	jq -c --argjson prev "$2" '{
		cniVersion: .cniVersion, name: .name, type: "portmap", snat: true,
		capabilities: {portMappings: true},
		runtimeConfig: {portMappings: [{hostPort: 8080, containerPort: 80, protocol: "tcp"}]},
		prevResult: $prev}' <<<"$1"
}

@test "portmap hairpin: pods reach a published port on the node, the owner reaches its own" {
	local a b b4 b_cid b_conf b_result
	fp_pod tc 4
	a="$FP_POD"
	fp_pod tc 4
	b="$FP_POD" b4="$FP_IP4" b_cid="$FP_CID" b_conf="$FP_CONF" b_result="$FP_RESULT"
	VT_EXEC="$VT_BIN/portmap" vt_cni ADD "$b_cid" "$b" eth0 \
		"$(fp_portmap_config "$b_conf" "$b_result")"
	vt_assert_ok

	# A -> node:8080 -> B:80; B's replies are addressed to A but need the reverse DNAT.
	vt_tcp_transfer "$b" "$b4" "$a" 80 "$VT_NODE_ADDR4" 8080
	[ "$(fp_stat nat)" -gt 0 ] || { echo "no NATed reply counted"; false; }
	# B -> node:8080 -> B itself (hairpin, masqueraded by portmap).
	vt_tcp_transfer "$b" "$b4" "$b" 80 "$VT_NODE_ADDR4" 8080

	VT_EXEC="$VT_BIN/portmap" vt_cni DEL "$b_cid" "$b" eth0 \
		"$(fp_portmap_config "$b_conf" "$b_result")"
	vt_assert_ok
}

# A pod sends from an address, and with a MAC, that aren't its own: dropped and counted.
fp_spoof() {
	local mode="$1" a b a4 b4 a6 b6 mac before
	fp_pod "$mode"
	a="$FP_POD" a4="$FP_IP4" a6="$FP_IP6"
	fp_pod "$mode"
	b="$FP_POD" b4="$FP_IP4" b6="$FP_IP6"
	vt_pod "$a" ip addr add 10.99.0.250/32 dev eth0
	vt_pod "$a" ip addr add fd99::fa/128 dev eth0 nodad
	before="$(fp_stat "${mode}_spoof")"

	# The pod's own addresses get through; another address doesn't.
	fp_udp_arrives "$a" "$b" "$b4" "$a4" || { echo "UDP from $a4 lost"; false; }
	if fp_udp_arrives "$a" "$b" "$b4" 10.99.0.250; then echo "spoofed IPv4 arrived"; false; fi
	fp_udp_arrives "$a" "$b" "$b6" "$a6" || { echo "UDP from $a6 lost"; false; }
	if fp_udp_arrives "$a" "$b" "$b6" fd99::fa; then echo "spoofed IPv6 arrived"; false; fi
	# ICMP (which the shortcut leaves to the stack) is checked as well.
	vt_ping_from_pod "$a" "$b4"
	if vt_pod "$a" "${VT_PING[@]}" -q -c 2 -W 1 -I 10.99.0.250 "$b4" >/dev/null 2>&1; then
		echo "ping from a spoofed source answered"
		false
	fi
	[ "$(fp_stat "${mode}_spoof")" -ge $((before + 8)) ] ||
		{ echo "spoof drops: $before -> $(fp_stat "${mode}_spoof")"; false; }

	# The pod's own address with another MAC. (A MAC change flushes the pod's neighbours,
	# the permanent one for its gateway too: put that back, or nothing leaves the pod.)
	mac="$(vt_pod "$a" ip -j link show eth0 | jq -r '.[0].address')"
	before="$(fp_stat "${mode}_spoof")"
	vt_pod "$a" ip link set eth0 address 02:00:00:00:66:66
	vt_pod "$a" ip neigh replace 169.254.1.1 lladdr "$VT_HOST_MAC" dev eth0 nud permanent
	if fp_udp_arrives "$a" "$b" "$b4" "$a4"; then echo "spoofed MAC arrived"; false; fi
	[ "$(fp_stat "${mode}_spoof")" -eq $((before + 3)) ] ||
		{ echo "spoof drops: $before -> $(fp_stat "${mode}_spoof")"; false; }
	vt_pod "$a" ip link set eth0 address "$mac"
	vt_pod "$a" ip neigh replace 169.254.1.1 lladdr "$VT_HOST_MAC" dev eth0 nud permanent
	fp_udp_arrives "$a" "$b" "$b4" "$a4" || { echo "UDP lost after the MAC came back"; false; }
}

@test "tc: a pod can't send with a source IP or MAC that isn't its own" {
	fp_spoof tc
}

@test "XDP: a pod can't send with a source IP or MAC that isn't its own" {
	fp_spoof xdp
}

@test "bandwidth: a pod whose runtimeConfig asks for shaping stays routed and its limit holds" {
	local a b a4 b4 a_host bw start elapsed
	install -m 0755 "$VELOTEST_REF_CNI_DIR/bandwidth" "$VT_BIN/bandwidth"
	bw='{"bandwidth": {"egressRate": 8000000, "egressBurst": 1000000,
		"ingressRate": 8000000, "ingressBurst": 1000000}}'
	fp_pod tc 4 "$bw"
	a="$FP_POD" a4="$FP_IP4" a_host="$FP_HOST"
	VT_EXEC="$VT_BIN/bandwidth" vt_cni ADD "$FP_CID" "$a" eth0 "$(jq -c --argjson p "$FP_RESULT" \
		--argjson bw "$bw" '{cniVersion: .cniVersion, name: .name, type: "bandwidth",
		capabilities: {bandwidth: true}, runtimeConfig: $bw, prevResult: $p}' <<<"$FP_CONF")"
	vt_assert_ok
	fp_pod tc 4
	b="$FP_POD" b4="$FP_IP4"

	fp_link "$a_host" tc && { echo "shaped pod got the shortcut"; false; }
	fp_has_ep "$a4" && { echo "shaped pod is in the endpoint map"; false; }
	grep -q "bandwidth limits need the routed path" "$VT_LOG"
	# 4 MiB at 8 Mbit/s: about 4 s (the burst allows 1 Mbit at once).
	start="$(date +%s%N)"
	vt_tcp_transfer "$b" "$b4" "$a" 5001
	elapsed=$((($(date +%s%N) - start) / 1000000))
	echo "4 MiB from the shaped pod took $elapsed ms"
	[ "$elapsed" -ge 3000 ]
	[ "$(fp_stat tc_redirect)" -eq 0 ]
}

# A stream into a pod that is deleted under it: the sender's retransmissions fall back to
# the stack (which has no route for them any more), and the kernel logs no warning.
fp_delete_mid_stream() {
	local mode="$1" a a4 b b4 b_cid b_conf pid redirects passes after
	fp_pod "$mode" 4
	a="$FP_POD" a4="$FP_IP4"
	fp_pod "$mode" 4
	b="$FP_POD" b4="$FP_IP4" b_cid="$FP_CID" b_conf="$FP_CONF"
	vt_pod "$b" timeout 20 socat -u TCP4-LISTEN:5001,reuseaddr OPEN:/dev/null &
	VT_PIDS+=($!)
	sleep 0.5
	vt_pod "$a" timeout 20 socat -u OPEN:/dev/zero "TCP4:$b4:5001" &
	pid=$!
	VT_PIDS+=("$pid")
	sleep 1
	[ "$(fp_stat "${mode}_redirect")" -gt 1000 ] || { echo "the stream wasn't shortcut"; false; }
	vt_cni DEL "$b_cid" "$b" eth0 "$b_conf"
	vt_assert_ok
	ip netns del "$b"
	fp_has_ep "$b4" && { echo "endpoint of the deleted pod remains"; false; }
	redirects="$(fp_stat "${mode}_redirect")"
	passes="$(fp_stat "${mode}_pass")"
	sleep 2 # A retransmits to the gone address
	[ "$(fp_stat "${mode}_redirect")" -eq "$redirects" ] ||
		{ echo "still redirected to a deleted pod"; false; }
	[ "$(fp_stat "${mode}_pass")" -gt "$passes" ] || { echo "nothing reached the stack"; false; }
	kill "$pid" 2>/dev/null || true
	after="$(vt_splats)"
	[ "$after" -eq "$FP_DMESG" ] || {
		echo "kernel warnings: $FP_DMESG -> $after"
		dmesg | tail -40
		false
	}
	# The survivor still takes the shortcut to a new pod.
	fp_pod "$mode" 4
	fp_both_ways "$a" "$a4" "$FP_POD" "$FP_IP4" 5003
}

@test "tc: a pod deleted mid-stream: its peer falls back to the stack, no kernel warning" {
	fp_delete_mid_stream tc
}

@test "XDP: a pod deleted mid-stream: its peer falls back to the stack, no kernel warning" {
	fp_delete_mid_stream xdp
}

@test "DEL and GC leave no link, pin, endpoint or devmap entry behind" {
	local conf a b a_cid b_cid a_host b_host a4 a6 b4 b6 ifindex_b
	fp_pod tc dual
	a="$FP_POD" a_cid="$FP_CID" a_host="$FP_HOST" a4="$FP_IP4" a6="$FP_IP6" conf="$FP_CONF"
	fp_pod xdp dual
	b="$FP_POD" b_cid="$FP_CID" b_host="$FP_HOST" b4="$FP_IP4" b6="$FP_IP6"
	ifindex_b="$(vt_node ip -j link show "$b_host" | jq '.[0].ifindex')"
	fp_link "$a_host" tc
	fp_link "$b_host" xdp
	[ "$(fp_eps)" -eq 4 ]
	bpftool map lookup pinned "$FP_BPFFS/velo_xdp_tx_v1" key $((ifindex_b & 255)) \
		$(((ifindex_b >> 8) & 255)) 0 0 >/dev/null

	# DEL of A: its link and entries go, B's stay.
	vt_cni DEL "$a_cid" "$a" eth0 "$conf"
	vt_assert_ok
	fp_link "$a_host" tc && { echo "A's link pin remains"; false; }
	fp_has_ep "$a4" && { echo "A's IPv4 entry remains"; false; }
	fp_has_ep "$a6" && { echo "A's IPv6 entry remains"; false; }
	fp_has_ep "$b4"
	fp_link "$b_host" xdp

	# GC with no valid attachment: B goes as well.
	vt_cni_env "$(jq -c '.cniVersion = "1.1.0" | .["cni.dev/valid-attachments"] = []' \
		<<<"$conf")" CNI_COMMAND=GC "CNI_PATH=$VT_BIN"
	vt_assert_ok
	fp_link "$b_host" xdp && { echo "B's link pin remains"; false; }
	fp_has_ep "$b4" && { echo "B's IPv4 entry remains"; false; }
	fp_has_ep "$b6" && { echo "B's IPv6 entry remains"; false; }
	[ "$(fp_eps)" -eq 0 ]
	run bpftool -j map dump pinned "$FP_BPFFS/velo_xdp_tx_v1"
	[ "$(jq 'length' <<<"$output")" -eq 0 ] || { echo "devmap: $output"; false; }
	[ -z "$(ls -A "$FP_BPFFS/links")" ] || { echo "links: $(ls "$FP_BPFFS/links")"; false; }
	# No XDP or tc program left on any device of the node.
	run vt_node bpftool net show
	echo "$output"
	if grep -q velo_ <<<"$output"; then echo "velo programs still attached"; false; fi
	vt_assert_nothing_left
}

@test "CHECK verifies the fast path: healthy passes, a lost link pin is reported as drift" {
	local mode
	for mode in tc xdp; do
		fp_pod "$mode"
		vt_cni CHECK "$FP_CID" "$FP_POD" eth0 "$(vt_with_prev "$FP_CONF" "$FP_RESULT")"
		vt_assert_ok
		rm "$FP_BPFFS/links/${FP_HOST}_$mode"
		vt_cni CHECK "$FP_CID" "$FP_POD" eth0 "$(vt_with_prev "$FP_CONF" "$FP_RESULT")"
		vt_assert_error 106
		grep -q "fastpath: link pin .*${FP_HOST}_$mode missing" <<<"$VT_OUT" ||
			{ echo "drift not named: $VT_OUT"; false; }
		vt_cni DEL "$FP_CID" "$FP_POD" eth0 "$FP_CONF"
		vt_assert_ok
	done
}

# fp_prog_id PIN: the id of a pinned program or link's program.
fp_prog_id() {
	bpftool -j prog show pinned "$1" 2>/dev/null | jq -r '.id // empty'
}
fp_link_prog() {
	bpftool -j link show pinned "$FP_BPFFS/links/$1_$2" 2>/dev/null | jq -r '.prog_id // empty'
}

# fp_velod_once VELOD LOG: one velod pass over this test's node (upgrade_lib.bash).
fp_velod_once() { vt_velod_once "$1" "$FP_BPFFS" "$2"; }

# fp_devmap_prog IFINDEX: the program id of that devmap entry (bpf_devmap_val: ifindex, prog id).
fp_devmap_prog() {
	bpftool -j map lookup pinned "$FP_BPFFS/velo_xdp_tx_v1" key $(($1 & 255)) \
		$((($1 >> 8) & 255)) 0 0 2>/dev/null | jq -r '.value[4:8] | reverse | join("")' |
		sed 's/0x//g' | { read -r hex && echo $((16#$hex)); }
}

@test "upgrade: the next release's programs load beside the old ones, pods across generations still talk, velod moves every pod over and unpins the old generation" {
	vt_nextgen
	local next="$VT_NEXT_VELO" velod="$VT_NEXT_VELOD"
	local a a4 a_cid a_host a_conf a_result b b4 b_cid b_host b_conf b_result b_ifindex
	local c c4 c_cid c_host gen old_tc new_tc new_xdp new_dst before
	fp_pod tc 4
	a="$FP_POD" a4="$FP_IP4" a_cid="$FP_CID" a_host="$FP_HOST" a_conf="$FP_CONF" a_result="$FP_RESULT"
	fp_pod xdp 4
	b="$FP_POD" b4="$FP_IP4" b_cid="$FP_CID" b_host="$FP_HOST" b_conf="$FP_CONF" b_result="$FP_RESULT"
	b_ifindex="$(vt_node ip -j link show "$b_host" | jq '.[0].ifindex')"
	gen="$(cd "$FP_BPFFS" && echo progs_g*)"
	[ -d "$FP_BPFFS/$gen" ] || { echo "no generation dir: $(ls "$FP_BPFFS")"; false; }
	old_tc="$(fp_prog_id "$FP_BPFFS/$gen/velo_tc_ingress")"

	# The next release wires C: its programs go beside, A and B keep theirs.
	VT_EXEC="$next" fp_pod tc 4
	c="$FP_POD" c4="$FP_IP4" c_cid="$FP_CID" c_host="$FP_HOST"
	new_tc="$(fp_prog_id "$FP_BPFFS/progs_gnextgen/velo_tc_ingress")"
	new_xdp="$(fp_prog_id "$FP_BPFFS/progs_gnextgen/velo_xdp_host")"
	new_dst="$(fp_prog_id "$FP_BPFFS/progs_gnextgen/velo_xdp_dst")"
	[ -n "$new_tc" ]
	[ "$new_tc" != "$old_tc" ]
	[ "$(fp_link_prog "$a_host" tc)" = "$old_tc" ]
	[ "$(fp_link_prog "$c_host" tc)" = "$new_tc" ]
	# Across generations (the endpoint map's layout is the same, so it is shared).
	fp_both_ways "$a" "$a4" "$c" "$c4" 7300

	# A map of an older layout (velo_stats_v1, superseded by velo_stats_v2) goes with it.
	bpftool map pin id "$(bpftool -j map show pinned "$FP_BPFFS/velo_stats_v2" | jq .id)" \
		"$FP_BPFFS/velo_stats_v1"

	# The next release's velod moves A and B and unpins the old generation.
	fp_velod_once "$velod" "$VT/velod.log"
	grep -q "moved to BPF generation nextgen" "$VT/velod.log" || { cat "$VT/velod.log"; false; }
	[ "$(fp_link_prog "$a_host" tc)" = "$new_tc" ] || { cat "$VT/velod.log"; false; }
	[ "$(fp_link_prog "$b_host" xdp)" = "$new_xdp" ]
	[ "$(fp_devmap_prog "$b_ifindex")" = "$new_dst" ]
	[ ! -e "$FP_BPFFS/$gen" ] || { echo "old generation still pinned: $(ls "$FP_BPFFS/$gen")"; false; }
	[ ! -e "$FP_BPFFS/velo_stats_v1" ]
	[ -e "$FP_BPFFS/velo_stats_v2" ]

	# The moved pods pass the next release's CHECK, and their traffic takes its programs.
	VT_EXEC="$next" vt_cni CHECK "$a_cid" "$a" eth0 "$(vt_with_prev "$a_conf" "$a_result")"
	vt_assert_ok
	VT_EXEC="$next" vt_cni CHECK "$b_cid" "$b" eth0 "$(vt_with_prev "$b_conf" "$b_result")"
	vt_assert_ok
	before="$(fp_stat tc_redirect)"
	fp_both_ways "$a" "$a4" "$c" "$c4" 7310
	[ "$(fp_stat tc_redirect)" -gt "$before" ]
	fp_both_ways "$a" "$a4" "$b" "$b4" 7320
	# A second pass has nothing left to do.
	fp_velod_once "$velod" "$VT/velod2.log"
	if grep "moved to BPF generation" "$VT/velod2.log"; then false; fi
	echo "# $(grep -c "moved to BPF generation" "$VT/velod.log") endpoints moved by velod" >&3
	VT_EXEC="$next" vt_cni DEL "$c_cid" "$c" eth0 "$(fp_config tc 4)"
	vt_assert_ok
}

@test "upgrade from before generations: velod moves pods off the fast-path programs pinned under progs_v1 and unpins those only" {
	local a a4 a_host b b4 gen old_tc new_tc
	fp_pod tc 4
	a="$FP_POD" a4="$FP_IP4" a_host="$FP_HOST"
	fp_pod tc 4
	b="$FP_POD" b4="$FP_IP4"
	# The layout of the previous release: the fast path's programs beside the cgroup ones.
	gen="$(cd "$FP_BPFFS" && echo progs_g*)"
	old_tc="$(fp_prog_id "$FP_BPFFS/$gen/velo_tc_ingress")"
	mkdir -p "$FP_BPFFS/progs_v1"
	bpftool map pin id "$(bpftool -j map show pinned "$FP_BPFFS/velo_ep_v1" | jq .id)" \
		"$FP_BPFFS/progs_v1/velo_cg_keepme"
	mv "$FP_BPFFS/$gen"/* "$FP_BPFFS/progs_v1/"
	rmdir "$FP_BPFFS/$gen"

	fp_velod_once "$VELOTEST_REPO/build/velod" "$VT/velod.log"
	new_tc="$(fp_prog_id "$FP_BPFFS/$gen/velo_tc_ingress")"
	[ -n "$new_tc" ] && [ "$new_tc" != "$old_tc" ] || { cat "$VT/velod.log"; false; }
	[ "$(fp_link_prog "$a_host" tc)" = "$new_tc" ]
	[ ! -e "$FP_BPFFS/progs_v1/velo_tc_ingress" ]
	[ ! -e "$FP_BPFFS/progs_v1/velo_xdp_host" ]
	# Other groups' pins there stay.
	[ -e "$FP_BPFFS/progs_v1/velo_cg_keepme" ]
	fp_both_ways "$a" "$a4" "$b" "$b4" 7400
}

@test "programs re-pinned under the same generation (pins removed): the next ADD reloads them and velod moves the older pods onto them" {
	local a a4 a_host b b4 gen new_tc
	fp_pod tc 4
	a="$FP_POD" a4="$FP_IP4" a_host="$FP_HOST"
	gen="$(cd "$FP_BPFFS" && echo progs_g*)"
	rm -r "${FP_BPFFS:?}/$gen"
	fp_pod tc 4
	b="$FP_POD" b4="$FP_IP4"
	new_tc="$(fp_prog_id "$FP_BPFFS/$gen/velo_tc_ingress")"
	[ -n "$new_tc" ]
	[ "$(fp_link_prog "$a_host" tc)" != "$new_tc" ]
	fp_velod_once "$VELOTEST_REPO/build/velod" "$VT/velod.log"
	[ "$(fp_link_prog "$a_host" tc)" = "$new_tc" ] || { cat "$VT/velod.log"; false; }
	fp_both_ways "$a" "$a4" "$b" "$b4" 7500
}
