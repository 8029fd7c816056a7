#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The socket short-circuit's edge cases between two opted-in pods: half-close,
# RST mid-stream, a slow reader with a tiny receive buffer, MSG_PEEK, sendfile
# and splice, and a connection older than the sock_ops attachment. Each checks
# that the bytes went socket to socket (velo_smstat_v2 "redirect" rose) and
# arrived exactly (build/tests/sockmap_edge checks every byte by its offset).

load ../lib/lib
load sockmap_lib

setup() {
	sm_setup
	sm_need_tool SM_EDGE sockmap_edge
}

# Two opted-in pods: A (client) and B (server).
two_pods() {
	sm_pod true
	A="$SM_POD" A_CG="$SM_CG" A_CID="$SM_CID"
	sm_pod true
	B="$SM_POD" B_CG="$SM_CG" B4="$SM_IP4" B6="$SM_IP6" B_CID="$SM_CID"
}

# edge CASE ADDR [key=value...]: the sockmap_edge server in B and client in A, with the same
# options; fails unless both say every connection was correct. What the server said is in
# EDGE_OUT, what the client said in EDGE_CLIENT.
edge() {
	local kase="$1" addr="$2" port=$((20000 + RANDOM % 20000)) out pid i rc=0 src=0
	shift 2
	out="$VT/work/edge.$port"
	sm_serve "$out" "$B" "$B_CG" timeout 60 "$SM_EDGE" server "$kase" "$addr" "$port" "$@"
	pid=$SM_SERVER_PID
	EDGE_CLIENT="$(sm_in "$A" "$A_CG" timeout 60 "$SM_EDGE" client "$kase" "$addr" "$port" "$@" \
		2>&1)" || rc=$?
	wait "$pid" || src=$?
	EDGE_OUT="$(cat "$out")"
	[ "$rc" -eq 0 ] && [ "$src" -eq 0 ] && return 0
	echo "client (exit $rc): $EDGE_CLIENT"
	echo "server (exit $src): $EDGE_OUT"
	return 1
}

# edge_redirected BEFORE MIN: the redirect counter rose by at least MIN since BEFORE, and no
# direction fell back to the routed path or lost its peer.
edge_redirected() {
	local now
	now="$(sm_stat redirect)"
	echo "redirect $1 -> $now, pass_first $(sm_stat pass_first), lost $(sm_stat redirect_lost)"
	[ "$now" -ge $(($1 + $2)) ]
	[ "$(sm_stat pass_first)" -eq 0 ]
	[ "$(sm_stat redirect_lost)" -eq 0 ]
}

@test "half-close: the client's SHUT_WR reaches the server as EOF, the reply arrives intact" {
	two_pods
	local before
	before="$(sm_stat redirect)"
	# Sizes that don't divide the write size; the reply only after the request's EOF.
	edge stream "$B4" conns=20 size=1048583 reply=262147 wsize=65536
	edge stream "$B6" conns=20 size=70001 reply=1 wsize=4096
	edge stream "$B4" conns=3 size=1 reply=300001 wsize=1
	# Each connection, each direction: redirected.
	edge_redirected "$before" 86
	[ "$(sm_stat insert)" -eq 86 ]
	[ "$(sm_sockets)" -eq 0 ]
}

@test "RST mid-stream: the other end gets ECONNRESET/EPIPE or EOF, no socket left in the map" {
	two_pods
	local before sockets
	before="$(sm_stat redirect)"
	sockets="$(sm_sockets)"
	# The reader resets while the client keeps writing: the writer's send must fail.
	edge rst "$B4" conns=50 abort=reader size=262144 wsize=65536
	# The writer resets while the server waits in poll(): it must read everything, then
	# ECONNRESET or EOF.
	edge rst "$B4" conns=50 abort=writer size=100003 wsize=4096
	grep -Eq 'ECONNRESET|EOF' <<<"$EDGE_OUT"
	[ "$(sm_stat insert)" -eq 200 ]
	[ "$(sm_stat redirect)" -ge $((before + 100)) ]
	[ "$(sm_stat pass_first)" -eq 0 ]
	echo "sockets $sockets -> $(sm_sockets), redirect_lost $(sm_stat redirect_lost)"
	[ "$(sm_sockets)" -eq "$sockets" ]
}

# A send racing the peer's close finds the peer gone from the sockhash. velo_sk_msg used to
# return SK_DROP there, which the kernel turns into EACCES, an errno TCP's send never gives
# (~2 in 300); it passes to TCP now. Routed, the same 300 closes give ECONNRESET/EPIPE.
@test "a peer closes (FIN) mid-write: the writer gets ECONNRESET/EPIPE, never EACCES" {
	two_pods
	local before
	before="$(sm_stat redirect)"
	edge rst "$B4" conns=300 abort=close size=262144 wsize=65536 settle_ms=20
	# After reading the peer's EOF first, the writer gets EPIPE.
	edge rst "$B4" conns=20 abort=close size=65536 wait_eof=1
	[ "$(sm_stat redirect)" -ge $((before + 320)) ]
	[ "$(sm_sockets)" -eq 0 ]
}

@test "a slow reader with SO_RCVBUF 4096: 8 MiB blasted, read in small chunks, intact" {
	two_pods
	local before
	before="$(sm_stat redirect)"
	# SO_RCVBUF before listen() and connect(); the reader takes 1000 bytes every 100 us.
	edge stream "$B4" rcvbuf=4096 size=8388608 reply=4096 wsize=1048576 chunk=1000 \
		sleep_us=100 timeout_ms=20000
	edge_redirected "$before" 2
	[ "$(sm_sockets)" -eq 0 ]
}

@test "MSG_PEEK: each peek shows exactly the bytes the next read returns; stream intact" {
	two_pods
	local before
	before="$(sm_stat redirect)"
	# Peeks of 1 byte, of a size that splits writes, and larger than any write.
	edge stream "$B4" peek=1 chunk=1 size=65536 reply=100 wsize=1000
	edge stream "$B4" peek=1 chunk=4093 size=4194304 reply=100 wsize=65536
	edge stream "$B6" peek=1 chunk=1048576 size=4194304 reply=100 wsize=10000
	edge_redirected "$before" 6
	[ "$(sm_sockets)" -eq 0 ]
}

@test "sendfile(2) and splice(2) from a file: redirected, intact" {
	two_pods
	local before
	before="$(sm_stat redirect)"
	edge stream "$B4" send=sendfile size=4194304 reply=4096 wsize=65536 conns=3
	edge stream "$B4" send=sendfile size=4194305 reply=4096 wsize=1000000
	edge stream "$B6" send=splice size=4194304 reply=4096 wsize=65536 conns=3
	edge stream "$B4" send=splice size=1000001 reply=4096 wsize=4097
	edge_redirected "$before" 16
	[ "$(sm_sockets)" -eq 0 ]
}

# splice(2) reading a socket is tcp_splice_read, which reads the TCP receive queue only; the
# redirected bytes wait in the psock's queue, which only tcp_bpf_recvmsg reads (6.18 has no
# tcp_bpf splice_read). The pods accept that bug; where velo's probe found it, the exact
# signature (0, EOF, the stream unread) is expected-broken by name; elsewhere it must work.
@test "splice(2) from a redirected socket into a pipe reads the stream intact" {
	two_pods
	local before
	before="$(sm_stat redirect)"
	if sm_kernel_has splice-ingress; then
		run edge stream "$B4" recv=splice chunk=65536 size=4194304 reply=4096 wsize=65536
		[ "$status" -ne 0 ]
		[ "$(sm_stat redirect)" -gt "$before" ]
		grep -q 'server: stream ended at 0 of 4194304 bytes' <<<"$output"
		echo "# expected-broken (accepted kernel bug splice-ingress): splice read 0 bytes" >&3
		return
	fi
	edge stream "$B4" recv=splice chunk=65536 size=4194304 reply=4096 wsize=65536
	edge_redirected "$before" 2
	[ "$(sm_sockets)" -eq 0 ]
}

# velo decides at ADD, before the pod runs, so a pod's own connections normally never predate
# its sock_ops link. They do when the link was lost (a removed pin: CHECK reports it as drift)
# and is attached again. docs/sockmap.md: such connections "are not touched".
@test "a connection older than the sock_ops link stays routed and intact; newer ones redirect" {
	two_pods
	local port=$((20000 + RANDOM % 20000)) gate="$VT/work/gate" sout="$VT/work/rounds.s"
	local cout="$VT/work/rounds.c" spid cpid i redirected
	# The pods' links go, as when their pins are lost: sock_ops leaves both cgroups.
	find "$SM_BPFFS/links" -name '*_sockops' -delete
	[ -z "$(bpftool cgroup show "$A_CG")$(bpftool cgroup show "$B_CG")" ]

	sm_serve "$sout" "$B" "$B_CG" timeout 90 "$SM_EDGE" server rounds "$B4" "$port" rounds=3 \
		size=1048576 timeout_ms=30000
	spid=$SM_SERVER_PID
	sm_in "$A" "$A_CG" timeout 90 "$SM_EDGE" client rounds "$B4" "$port" rounds=3 \
		size=1048576 timeout_ms=30000 gate="$gate" >"$cout" 2>&1 &
	cpid=$!
	VT_PIDS+=("$cpid")
	for i in $(seq 100); do
		grep -q 'round 0' "$cout" && break
		sleep 0.05
	done
	grep -q 'round 0' "$cout"
	sleep 0.3
	[ "$(sm_stat insert)" -eq 0 ]

	# velo's own program back on both cgroups, as a repair would put it.
	bpftool cgroup attach "$A_CG" sock_ops pinned "$SM_BPFFS"/progs_g*/velo_sockops multi
	bpftool cgroup attach "$B_CG" sock_ops pinned "$SM_BPFFS"/progs_g*/velo_sockops multi
	# A new connection is redirected...
	edge stream "$B4" conns=2 size=1048576 reply=65536
	edge_redirected 0 4
	[ "$(sm_stat insert)" -eq 4 ]
	redirected="$(sm_stat redirect)"

	# ...the old one finishes its rounds on the routed path, every byte checked.
	touch "$gate"
	wait "$cpid" || { echo "client: $(cat "$cout")"; echo "server: $(cat "$sout")"; false; }
	wait "$spid" || { echo "server: $(cat "$sout")"; false; }
	grep -q 'round 2' "$cout"
	[ "$(sm_stat insert)" -eq 4 ]
	[ "$(sm_stat redirect)" -eq "$redirected" ]
	[ "$(sm_stat pass)" -eq 0 ]
	[ "$(sm_sockets)" -eq 0 ]
}

@test "a pod that puts another pod's address on itself gets no socket inserted under that pod's key" {
	two_pods
	local inserts not_pod
	# Pod A takes B's IPv4 address on its loopback and talks to it: every socket of the
	# connection claims B's address from A's netns, whose cookie is not the one velo
	# recorded for that address.
	vt_pod "$A" ip addr add "$B4/32" dev lo
	inserts="$(sm_stat insert)"
	not_pod="$(sm_stat not_pod)"
	sm_stream "$A" "$A_CG" "$B4" "$A" "$A_CG" 5 1048576 65536
	echo "insert $inserts -> $(sm_stat insert), not_pod $not_pod -> $(sm_stat not_pod)"
	[ "$(sm_stat insert)" -eq "$inserts" ]
	[ "$(sm_stat not_pod)" -ge $((not_pod + 10)) ]
	[ "$(sm_sockets)" -eq 0 ]
}
