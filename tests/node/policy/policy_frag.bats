#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy on what the truth table doesn't send: IP fragments (a UDP datagram over the
# veth's 1500-byte MTU, IPv4 and IPv6: the first fragment's ports judge the rest), IPv6
# extension headers (a destination-options header before TCP or UDP) and ICMP errors (one
# passes with the flow it quotes; a made-up one from a pod under egress deny-all doesn't).
# Dual-stack pods of policy_lib's grid layout (x/a, x/b, x/c) wired by velo with "policy": true,
# velod reading the policy file; peers in tests/node/policy/policy_frag.py.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

setup() {
	pol_setup
	command -v python3 >/dev/null || skip "python3 not installed"
	FRAG_PEER="$VELOTEST_REPO/tests/node/policy/policy_frag.py"
	POL_FAMILY=dual
	pol_add x a '{}'
	pol_add x b '{}'
	pol_add x c '{}'
	[ -n "${POL_IP6[x/a]}" ]
	frag_serve x/a
	pol_velod
}

# x/a's ingress: from x/b UDP and TCP 7000 only; from x/c UDP 7002 only (closed: nothing
# listens there). x/c: ingress nothing, egress UDP 7002 to x/a only.
A_INGRESS='{"podSelector": {"matchLabels": {"pod": "a"}}, "policyTypes": ["Ingress"],
	"ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}],
		"ports": [{"port": 7000, "protocol": "UDP"}, {"port": 7000, "protocol": "TCP"}]},
	{"from": [{"podSelector": {"matchLabels": {"pod": "c"}}}],
		"ports": [{"port": 7002, "protocol": "UDP"}]}]}'
C_ISOLATED='{"podSelector": {"matchLabels": {"pod": "c"}}, "policyTypes": ["Ingress", "Egress"],
	"egress": [{"to": [{"podSelector": {"matchLabels": {"pod": "a"}}}],
		"ports": [{"port": 7002, "protocol": "UDP"}]}]}'

# frag_serve KEY: policy_frag.py's echo servers on 7000 and 7001 in the pod (7002 stays
# closed); their log is $VT/work/frag-serve.log.
frag_serve() {
	local key="$1" log="$VT/work/frag-serve.log"
	vtc_run "${POL_NS[$key]}" "${POL_CG[$key]}" python3 "$FRAG_PEER" serve 7000 7001 \
		>"$log" 2>&1 &
	VT_PIDS+=($!)
	pol_listening "$log" "frag servers in $key"
}

# frag_run KEY ARGS...: policy_frag.py in the pod KEY.
frag_run() {
	local key="$1"
	shift
	vtc_run "${POL_NS[$key]}" "${POL_CG[$key]}" python3 "$FRAG_PEER" "$@"
}

# frag_expect WANT KEY ARGS...: policy_frag.py ARGS in the pod KEY prints WANT.
frag_expect() {
	local want="$1"
	shift
	run frag_run "$@"
	echo "$*: $output (want $want)"
	[ "$status" -eq 0 ] || return 1
	[ "$output" = "$want" ]
}

@test "policy fragments: a 4000-byte UDP datagram to an allowed port arrives whole (IPv4, IPv6); to a denied port it doesn't" {
	local mtu family addr
	pol_apply "[$(pol_np x a-ingress "$A_INGRESS")]"
	mtu="$(vt_pod "${POL_NS[x/b]}" cat /sys/class/net/eth0/mtu)"
	[ "$mtu" -le 1500 ]
	for family in 4 6; do
		if [ "$family" = 4 ]; then addr="${POL_IP[x/a]}"; else addr="${POL_IP6[x/a]}"; fi
		# Small first: the policy lets it through at all.
		frag_expect ok x/b udp "$addr" 7000 100
		frag_expect ok x/b udp "$addr" 7000 4000
		frag_expect timeout x/b udp "$addr" 7001 4000
	done
	# The server got both datagrams to 7000 whole, none to 7001.
	[ "$(grep -c '^got udp 7000 4000$' "$VT/work/frag-serve.log")" -eq 2 ]
	run grep -c '^got udp 7001' "$VT/work/frag-serve.log"
	[ "$output" = 0 ]
	# Each family's fragments went through the fragment map.
	run bpftool -j map dump pinned "$VTC_BPFFS/velo_pol_frag_v1"
	[ "$status" -eq 0 ]
	[ "$(jq length <<<"$output")" -ge 2 ]
}

@test "policy IPv6 extension headers: TCP and UDP behind a destination-options header are judged by their ports" {
	local addr
	pol_apply "[$(pol_np x a-ingress "$A_INGRESS")]"
	addr="${POL_IP6[x/a]}"
	frag_expect ok x/b udp "$addr" 7000 100 dstopts
	frag_expect ok x/b tcp "$addr" 7000 dstopts
	frag_expect timeout x/b udp "$addr" 7001 100 dstopts
	# Fragmented and with the header: both walked.
	frag_expect ok x/b udp "$addr" 7000 4000 dstopts
}

@test "policy ICMP errors: a genuine one reaches the sender; a made-up one from a pod under egress deny-all doesn't" {
	local listen="$VT/work/icmp-listen.out"
	pol_apply "[$(pol_np x a-ingress "$A_INGRESS"), $(pol_np x c-isolated "$C_ISOLATED")]"
	# Genuine: x/c's datagram to x/a's closed UDP 7002 (allowed both ways) draws a port
	# unreachable, which x/c's ingress (allowing nothing) lets through as its flow's.
	frag_expect refused x/c udp "${POL_IP[x/a]}" 7002 100
	frag_expect refused x/c udp "${POL_IP6[x/a]}" 7002 100
	# Made up: x/c (NET_RAW) sends x/b an ICMP error quoting a flow that never was; then so
	# does x/a, whose egress no policy isolates: the listener hears until x/a's arrived.
	frag_run x/b icmp-listen "${POL_IP[x/a]}" 60 >"$listen" 2>&1 &
	VT_PIDS+=($!)
	pol_listening "$listen" "the ICMP listener in x/b"
	frag_expect sent x/c forge "${POL_IP[x/c]}" "${POL_IP[x/b]}"
	frag_expect sent x/a forge "${POL_IP[x/a]}" "${POL_IP[x/b]}"
	wait "${VT_PIDS[@]: -1}"
	echo "x/b's raw ICMP socket: $(cat "$listen")"
	grep -qx "forged ${POL_IP[x/a]} 3" "$listen"
	run grep -c "^forged ${POL_IP[x/c]} " "$listen"
	[ "$output" = 0 ]
}
