#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The socket short-circuit (velo.dev/sockmap): opted-in local pods' TCP streams
# go socket to socket, intact; everything else stays on the routed path.

load ../lib/lib
load sockmap_lib

# Two opted-in pods: A (client) and B (server).
two_pods() {
	sm_pod true
	A="$SM_POD" A_CG="$SM_CG" A4="$SM_IP4" A6="$SM_IP6" A_CID="$SM_CID"
	sm_pod true
	B="$SM_POD" B_CG="$SM_CG" B4="$SM_IP4" B6="$SM_IP6" B_CID="$SM_CID"
}

@test "streams of 1 byte to 4 MiB between opted-in pods arrive intact, redirected" {
	two_pods
	local size
	for size in 1 7 4096 65537 1048576 4194304; do
		sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 2 "$size" 65536
	done
	# Small writes, and a write size that doesn't divide the stream.
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 2 1000000 1
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 2 4194304 100000
	[ "$(sm_stat insert)" -ge 32 ]
	[ "$(sm_stat redirect)" -ge 16 ]
	[ "$(sm_stat pass_first)" -eq 0 ]
	[ "$(sm_stat redirect_lost)" -eq 0 ]
}

@test "both directions at once, over IPv4, IPv6 and IPv4-mapped IPv6" {
	two_pods
	[ -n "$B6" ]
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 3 4194304 65536 duplex
	sm_stream "$B" "$B_CG" "$B6" "$A" "$A_CG" 3 4194304 16384 duplex
	# A dual-stack server and a client that speaks IPv4 through an AF_INET6 socket.
	sm_stream "$B" "$B_CG" "::" "$A" "$A_CG" 3 1048576 4096 duplex "::ffff:$B4"
	[ "$(sm_stat insert)" -eq 18 ]
	[ "$(sm_stat redirect)" -ge 18 ]
	[ "$(sm_stat insert_fail)" -eq 0 ]
}

@test "writes right after connect, 10000 times: every stream intact, no socket left" {
	two_pods
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 10000 3000 1000
	# Each direction took one path for good: redirected, or routed when it won the race.
	[ "$(sm_stat insert)" -eq 20000 ]
	[ $(($(sm_stat redirect) + $(sm_stat pass_first))) -ge 10000 ]
	[ "$(sm_stat redirect_lost)" -eq 0 ]
	# Sockets leave the sockhash when they close.
	[ "$(sm_sockets)" -eq 0 ]
}

@test "pods that did not opt in are never accelerated" {
	sm_pod true
	local a="$SM_POD" a_cg="$SM_CG" a4="$SM_IP4"
	sm_pod false
	local c="$SM_POD" c_cg="$SM_CG" c4="$SM_IP4"
	sm_pod none
	local d="$SM_POD" d_cg="$SM_CG" d4="$SM_IP4"

	# Only the opted-in pod a has velo_sockops on its cgroup ("false" and no annotation
	# attach nothing), so only a's sockets are looked at: one per connection a takes part
	# in, each refused because its peer did not opt in. 3 connections per run.
	[ "$(find "$SM_BPFFS/links" -name '*_sockops' | wc -l)" -eq 1 ]
	sm_stream "$a" "$a_cg" "$a4" "$c" "$c_cg" 3 1048576 65536 duplex
	[ "$(sm_stat peer_not_pod)" -eq 3 ]
	sm_stream "$c" "$c_cg" "$c4" "$a" "$a_cg" 3 1048576 65536 duplex
	[ "$(sm_stat peer_not_pod)" -eq 6 ]
	# Neither end is a: no program runs at all.
	sm_stream "$d" "$d_cg" "$d4" "$c" "$c_cg" 3 1048576 65536 duplex
	[ "$(sm_stat peer_not_pod)" -eq 6 ]
	sm_stream "$a" "$a_cg" "$a4" "$d" "$d_cg" 3 1048576 65536 duplex
	[ "$(sm_stat peer_not_pod)" -eq 9 ]
	[ "$(sm_stat not_pod)" -eq 0 ]
	[ "$(sm_stat insert)" -eq 0 ]
	[ "$(sm_stat redirect)" -eq 0 ]
	[ "$(sm_sockets)" -eq 0 ]
}

@test "a process outside the pod's cgroup is not paired; its peer stays routed, intact" {
	two_pods
	local port=$((20000 + RANDOM % 20000)) out="$VT/work/outside"
	# The server runs in B's netns but not in B's cgroup: its sockets never enter the map.
	nsenter --net="/run/netns/$B" timeout 60 "$SM_STREAM" server "$B4" "$port" 3 1048576 duplex \
		>"$out" 2>&1 &
	VT_PIDS+=("$!")
	sleep 0.3
	sm_in "$A" "$A_CG" timeout 60 "$SM_STREAM" client "$B4" "$port" 3 1048576 1000 duplex
	wait "${VT_PIDS[-1]}"
	# Each client socket went in at connect and left at the first segment it received (its
	# peer never paired); a send before that found no peer and stayed routed (pass_first).
	# Which came first is the server's race, as duplex sends both ways at once.
	echo "insert $(sm_stat insert), unpaired $(sm_stat unpaired), pass_first $(sm_stat pass_first)"
	[ "$(sm_stat insert)" -eq 3 ]
	[ "$(sm_stat unpaired)" -eq 3 ]
	[ "$(sm_stat pass_first)" -le 3 ]
	[ "$(sm_stat redirect)" -eq 0 ]
	[ "$(sm_sockets)" -eq 0 ]
}

# held_client POD CGROUP ADDR PORT OUT: services_peer.py's client in the pod's cgroup: 4 KiB up,
# its digest back, then the connection held open 3 s (output in OUT); waits for the digest.
held_client() {
	local _
	sm_in "$1" "$2" timeout 30 python3 "$VELOTEST_REPO/tests/node/lib/services_peer.py" tcp "$3" "$4" \
		4096 3 >"$5" 2>&1 &
	VT_PIDS+=("$!")
	for _ in $(seq 100); do
		grep -q '^got' "$5" && return 0
		sleep 0.05
	done
	cat "$5"
	return 1
}

@test "a connecting socket whose server never runs velo's sock_ops leaves the sockhash after the handshake" {
	two_pods
	local peer="$VELOTEST_REPO/tests/node/lib/services_peer.py" port=$((20000 + RANDOM % 10000)) _
	# A server in B's netns outside B's cgroup: its accepted sockets never run velo's sock_ops.
	nsenter --net="/run/netns/$B" timeout 30 python3 "$peer" server "$port" "$port" \
		>"$VT/work/outside" 2>&1 &
	VT_PIDS+=("$!")
	# And one in B's cgroup, which pairs.
	sm_in "$B" "$B_CG" timeout 30 python3 "$peer" server $((port + 1)) $((port + 1)) \
		>"$VT/work/inside" 2>&1 &
	VT_PIDS+=("$!")
	for _ in $(seq 50); do
		grep -q listening "$VT/work/outside" && grep -q listening "$VT/work/inside" && break
		sleep 0.1
	done
	held_client "$A" "$A_CG" "$B4" "$port" "$VT/work/c-outside"
	# Held open, exchange done: the client's socket went in at connect and came out again.
	echo "sockets: $(sm_sockets), insert $(sm_stat insert), unpaired $(sm_stat unpaired)"
	[ "$(sm_stat insert)" -eq 1 ]
	[ "$(sm_sockets)" -eq 0 ]
	[ "$(sm_stat unpaired)" -eq 1 ]
	[ "$(awk '$1 == "sent" { print $2 }' "$VT/work/c-outside")" = \
		"$(awk '$1 == "got" { print $2 }' "$VT/work/c-outside")" ]
	# A pairable server: both ends stay in while the connection lives, redirected.
	held_client "$A" "$A_CG" "$B4" $((port + 1)) "$VT/work/c-inside"
	[ "$(sm_sockets)" -eq 2 ]
	[ "$(sm_stat unpaired)" -eq 1 ]
	[ "$(sm_stat redirect)" -ge 1 ]
	[ "$(awk '$1 == "sent" { print $2 }' "$VT/work/c-inside")" = \
		"$(awk '$1 == "got" { print $2 }' "$VT/work/c-inside")" ]
}

@test "accounting: redirected bytes per pod and direction, in apply_bytes steps" {
	two_pods
	local ca cb size=4194304 step=1048576
	ca="$(sm_cookie "$A")"
	cb="$(sm_cookie "$B")"
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 1 "$size" 65536
	# Exact at each step boundary; of the last step, only its first message (see docs/sockmap.md).
	local a_tx b_rx a_rx
	a_tx="$(sm_acct tx_bytes | awk -v c="$ca" '$1 == c {print $2}')"
	b_rx="$(sm_acct rx_bytes | awk -v c="$cb" '$1 == c {print $2}')"
	a_rx="$(sm_acct rx_bytes | awk -v c="$ca" '$1 == c {print $2}')"
	echo "a_tx=$a_tx b_rx=$b_rx a_rx=$a_rx"
	[ "$a_tx" -le "$size" ]
	[ "$a_tx" -gt $((size - step)) ]
	[ "$b_rx" -eq "$a_tx" ]
	[ "$a_rx" -eq 0 ]
	# veloctl reads the same counters per pod (found through the pods' addresses).
	local ctl
	ctl="$(vt_node "$VELOTEST_REPO/build/veloctl" -j --state-dir "$VT/state" --run-dir "$VT/run" \
		--bpffs "$SM_BPFFS" endpoints)"
	jq -e --arg a "$A_CID" --arg b "$B_CID" --argjson tx "$a_tx" --argjson rx "$b_rx" '
		(.[] | select(.containerId == $a) | .counters.socketRedirectTxBytes == $tx) and
		(.[] | select(.containerId == $b) | .counters.socketRedirectRxBytes == $rx)' <<<"$ctl" ||
		{ echo "$ctl"; false; }
}

@test "the sk_msg program's run count rises with redirected traffic" {
	two_pods
	sysctl -qw kernel.bpf_stats_enabled=1
	local before after
	before="$(sm_run_cnt velo_sk_msg)"
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 5 65536 1024 duplex
	after="$(sm_run_cnt velo_sk_msg)"
	echo "run_cnt $before -> $after"
	[ "$after" -ge $((before + 10)) ]
}

@test "DEL detaches: no link pin, no pod entry, no accounting entry" {
	two_pods
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 1 65536 1024
	[ "$(find "$SM_BPFFS/links" -name '*_sockops' | wc -l)" -eq 2 ]
	vt_cni DEL "$A_CID" "$A" eth0 "$(sm_config true /unused)"
	vt_assert_ok
	vt_cni DEL "$B_CID" "" eth0 "$(sm_config true /unused)"
	vt_assert_ok
	[ "$(find "$SM_BPFFS/links" -name '*_sockops' | wc -l)" -eq 0 ]
	[ "$(bpftool map dump pinned "$SM_BPFFS/velo_smpod_v1" -j | jq length)" -eq 0 ]
	[ "$(bpftool map dump pinned "$SM_BPFFS/velo_smacct_v1" -j | jq length)" -eq 0 ]
}


# Kernel bug, not velo's (docs/sockmap.md, "Kernel probes"): tcp_bpf_recvmsg turns a wakeup
# that brings no data (e.g. the ACK of our FIN) into EAGAIN for a blocking recv. The pods here
# accept it (sockmapAcceptKernelBugs): where velo's probe found it, EAGAIN is expected-broken
# by name; where the probe passed, a single EAGAIN fails the test (and the probe is wrong).
@test "a plain blocking reader (no timeout, no O_NONBLOCK) never sees EAGAIN" {
	two_pods
	local run rc eagain=0
	# Many small messages, large ones; each connection writes, half-closes, then reads.
	for run in "300 3000 100" "10 4194304 65536" "100 1000 1"; do
		rc=0
		# shellcheck disable=SC2086 # conns size wsize
		sm_bstream "$B" "$B_CG" "$B4" "$A" "$A_CG" $run || rc=$?
		# Exit 1 means a stream differed or failed: always a failure.
		[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
		[ "$rc" -ne 3 ] || eagain=1
	done
	[ "$(sm_stat redirect)" -ge 820 ]
	if sm_kernel_has halfclose-eagain; then
		echo "# expected-broken (accepted kernel bug halfclose-eagain): EAGAIN seen: $eagain" >&3
	else
		[ "$eagain" -eq 0 ]
	fi
}

# Without sockmapAcceptKernelBugs, a pod on a kernel whose probes failed stays routed, and
# velo says why in the ADD log, CHECK (healthy: routed is right), and veloctl status.
@test "kernel probes failed and nothing accepted: the sockmap pod stays routed, and says why" {
	SM_ACCEPT=""
	two_pods
	local bugs conf host
	bugs="$(sm_kernel_bugs | paste -sd' ')"
	echo "probed kernel bugs: ${bugs:-none}"
	sm_stream "$B" "$B_CG" "$B4" "$A" "$A_CG" 3 1048576 65536 duplex
	if [ -z "$bugs" ]; then
		# A kernel with the fixes: accelerated without any acceptance.
		[ "$(sm_stat redirect)" -ge 3 ]
		return
	fi
	[ "$(find "$SM_BPFFS/links" -name '*_sockops' 2>/dev/null | wc -l)" -eq 0 ]
	[ "$(sm_stat insert 2>/dev/null || echo 0)" -eq 0 ]
	grep -q "sockmap: kernel probe failed: .*halfclose-eagain.*stays on the routed path" "$VT_LOG"
	vt_node "$VELOTEST_REPO/build/veloctl" --state-dir "$VT/state" --run-dir "$VT/run" \
		--bpffs "$SM_BPFFS" status | grep -q "sockmap kernel bugs (probed): .*halfclose-eagain"
	conf="$(sm_config true "${B_CG#"$SM_CGMOUNT"}")"
	vt_cni CHECK "$B_CID" "$B" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	# Accepting one of the bugs found leaves the other one in the way.
	SM_ACCEPT="$(sm_kernel_bugs | head -n 1)"
	sm_pod true
	[ "$(find "$SM_BPFFS/links" -name '*_sockops' 2>/dev/null | wc -l)" -eq 0 ]
	if [ "$(sm_kernel_bugs | wc -l)" -ge 2 ]; then
		grep -q "kernel probe failed: $(sm_kernel_bugs | sed -n 2p)[ ,]" "$VT_LOG"
	fi
	# A pin where the gated pod's link would be (as an older ADD that accepted the bugs left
	# it) is drift: the pod must be routed.
	host="$(vt_host_ifname vt "$SM_CID" eth0)"
	SM_ACCEPT=""
	vt_cni CHECK "$SM_CID" "$SM_POD" eth0 "$(vt_with_prev "$(sm_config true /x)" "$VT_RESULT")"
	vt_assert_ok
	mkdir -p "$SM_BPFFS/links"
	bpftool map create "$SM_BPFFS/links/${host}_sockops" type array key 4 value 4 entries 1 \
		name velotest_pin
	vt_cni CHECK "$SM_CID" "$SM_POD" eth0 "$(vt_with_prev "$(sm_config true /x)" "$VT_RESULT")"
	vt_assert_error 106 "routed pod has a sock_ops link"
}

@test "sockmapAcceptKernelBugs: an unknown name is error 7 naming it" {
	local conf
	sm_pod none
	conf="$(sm_config true /x | jq -c '.sockmapAcceptKernelBugs = ["halfclose-eagain", "tcp-is-fine"]')"
	vt_cni ADD "sm-bad-$RANDOM" "$(vt_pod_new)" eth0 "$conf"
	vt_assert_error 7 'sockmapAcceptKernelBugs: unknown kernel bug "tcp-is-fine"'
	vt_cni ADD "sm-bad-$RANDOM" "$(vt_pod_new)" eth0 "$(jq -c '.sockmapAcceptKernelBugs = "splice-ingress"' <<<"$conf")"
	vt_assert_error 7 'sockmapAcceptKernelBugs: expected an array'
}

@test "a peer pod deleted mid-stream: the sender gets an error, no leak, no kernel splat" {
	two_pods
	local port=$((20000 + RANDOM % 20000)) out="$VT/work/sink" splats after rc=0 pid
	splats="$(vt_splats)"
	sm_in "$B" "$B_CG" timeout 30 "$SM_STREAM" sink "$B4" "$port" >"$out" 2>&1 &
	VT_PIDS+=("$!")
	sleep 0.3
	sm_in "$A" "$A_CG" timeout 20 "$SM_STREAM" blast "$B4" "$port" 65536 4 &
	pid=$!
	sleep 1
	# The pod goes away as under a runtime: its processes die, DEL, its netns is deleted.
	vt_cgroup_kill "$B_CG"
	vt_cni DEL "$B_CID" "$B" eth0 "$(sm_config true /unused)"
	vt_assert_ok
	ip netns del "$B"
	wait "$pid" || rc=$?
	echo "blast exit $rc"
	# An error (or a clean end), never a hang until the timeout.
	[ "$rc" -ne 124 ]
	[ "$(sm_stat redirect)" -ge 1 ]
	[ "$(sm_sockets)" -eq 0 ]
	after="$(vt_splats)"
	[ "$after" -eq "$splats" ] || { echo "kernel warnings: $splats -> $after"; dmesg | tail -40; false; }
}

# sm_count_file FILE: the meter's running byte count.
sm_count_file() { tr -d ' ' <"$1"; }

@test "DEL of a pod whose processes still run: its sockets leave the sockhash, its peer's stream stops" {
	two_pods
	local port=$((20000 + RANDOM % 20000)) out="$VT/work/meter" count="$VT/work/meter.count"
	local pid rc=0 at_del after _
	sm_serve "$out" "$B" "$B_CG" timeout 60 "$SM_STREAM" meter "$B4" "$port" "$count"
	sm_in "$A" "$A_CG" timeout 15 "$SM_STREAM" blast "$B4" "$port" 65536 8 >"$VT/work/blast" 2>&1 &
	pid=$!
	VT_PIDS+=("$pid")
	# Flowing socket to socket: 64 MiB in, both ends in the sockhash.
	for _ in $(seq 200); do
		[ "$(sm_count_file "$count")" -ge 67108864 ] && break
		sleep 0.05
	done
	[ "$(sm_count_file "$count")" -ge 67108864 ]
	[ "$(sm_stat redirect)" -ge 1 ]
	[ "$(sm_sockets)" -eq 2 ]
	# The runtime deletes the pod's network before (or without) killing its processes.
	vt_cni DEL "$B_CID" "$B" eth0 "$(sm_config true /unused)"
	vt_assert_ok
	at_del="$(sm_count_file "$count")"
	# No key of B's netns and none whose peer is B (A's end) is left: here, none at all.
	[ "$(sm_sockets)" -eq 0 ]
	grep -q "sockmap: 2 sockets of pod .* out of the sockhash" "$VT_LOG"
	# The sender's stream ends as it would routed with the veth gone: it errors or stalls
	# (until its timeout); either way B gets no more than what was in flight.
	wait "$pid" || rc=$?
	after="$(sm_count_file "$count")"
	echo "# blast exit $rc; bytes at DEL $at_del, after the blast $after" >&3
	cat "$VT/work/blast"
	[ "$rc" -ne 0 ]
	[ $((after - at_del)) -le $((4 << 20)) ]
}

@test "CHECK verifies sockmap: healthy passes, a lost sock_ops link pin is reported as drift" {
	local conf host
	sm_pod true
	conf="$(sm_config true "${SM_CG#"$SM_CGMOUNT"}")"
	host="$(vt_host_ifname vt "$SM_CID" eth0)"
	vt_cni CHECK "$SM_CID" "$SM_POD" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	rm "$SM_BPFFS/links/${host}_sockops"
	vt_cni CHECK "$SM_CID" "$SM_POD" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_error 106
	grep -q "sockmap: link pin .*${host}_sockops missing" <<<"$VT_OUT" ||
		{ echo "drift not named: $VT_OUT"; false; }
}

# sm_blast_to SPOD SCG ADDR CPOD CCG SECONDS: a sink in SPOD and a client blasting it for
# SECONDS from CPOD, both in the background (this test's processes, stopped at teardown).
sm_blast_to() {
	local port=$((20000 + RANDOM % 20000)) out i
	out="$VT/work/sink.$port"
	sm_serve "$out" "$1" "$2" timeout 60 "$SM_STREAM" sink "$3" "$port"
	sm_in "$4" "$5" timeout 60 "$SM_STREAM" blast "$3" "$port" 65536 "$6" >/dev/null 2>&1 &
	VT_PIDS+=("$!")
	SM_BLAST_PORT=$port
}

@test "veloctl sockets: the accelerated connection with both pods, not a pod that didn't opt in" {
	two_pods
	sm_pod false
	local c="$SM_POD" c_cg="$SM_CG" ab_port ctl
	sm_blast_to "$B" "$B_CG" "$B4" "$A" "$A_CG" 4
	ab_port=$SM_BLAST_PORT
	sm_blast_to "$B" "$B_CG" "$B4" "$c" "$c_cg" 4
	sleep 1
	ctl="$(vt_node "$VELOTEST_REPO/build/veloctl" -j --state-dir "$VT/state" --run-dir "$VT/run" \
		--bpffs "$SM_BPFFS" sockets)"
	echo "$ctl"
	# One connection (A <-> B), both ends in, named after the pods; C's stays routed, unlisted.
	jq -e --arg a "pod-$A_CID" --arg b "pod-$B_CID" --arg a4 "$A4" --arg b4 "$B4" \
		--argjson p "$ab_port" '
		(.connections | length) == 1 and
		(.connections[0] | .accelerated and
			([.local, .peer] | map(.pod) | sort) == (["velotest/" + $a, "velotest/" + $b] | sort) and
			([.local, .peer] | map(select(.pod == "velotest/" + $b)) | .[0] | .address == $b4 and .port == $p) and
			([.local, .peer] | map(select(.pod == "velotest/" + $a)) | .[0] | .address == $a4)) and
		.counters.insert >= 2 and .counters.redirect >= 1' <<<"$ctl"
	# The text form says the same.
	vt_node "$VELOTEST_REPO/build/veloctl" --state-dir "$VT/state" --run-dir "$VT/run" \
		--bpffs "$SM_BPFFS" sockets | grep -E "velotest/pod-.*$B4:$ab_port.*accelerated|$B4:$ab_port.*velotest/pod-.*accelerated"
	# Once the blasts end, nothing is listed.
	sleep 4.5
	ctl="$(vt_node "$VELOTEST_REPO/build/veloctl" -j --state-dir "$VT/state" --run-dir "$VT/run" \
		--bpffs "$SM_BPFFS" sockets)"
	jq -e '.connections | length == 0' <<<"$ctl"
}
