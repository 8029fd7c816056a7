#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The egress deny list on every datapath between local pods (routed, tc, xdp,
# sockmap) for every kind of socket a pod can send with (TCP, UDP, raw IP,
# AF_PACKET): a pod denied another local pod's address reaches it on none,
# while the same pod reaches an allowed pod on the same path with all four
# (the positive control: a broken setup can't pass). Checked at the receivers.

load ../lib/lib
load ../lib/cgroup_lib

# velo_stats_v2 indexes (enum velo_stat in bpf/lib/velo_shared.h).
declare -gA DP_STAT=([tc_redirect]=0 [xdp_redirect]=3)
# velo_smstat_v2 index of VELO_SM_STAT_INSERT (bpf/lib/velo_sockmap.h).
DP_SM_INSERT=0

teardown() {
	dp_kill_pods
	vtc_teardown
	vt_teardown
}

# Every process in this test's cgroups: cgroup.kill, then wait until they are gone.
dp_kill_pods() {
	local cg _
	[ -n "${VTC_MOUNT:-}" ] || return 0
	for cg in "$VTC_MOUNT"/velotest-"$VT_TAG"-"$BATS_TEST_NUMBER"-*; do
		[ -f "$cg/cgroup.kill" ] || continue
		echo 1 >"$cg/cgroup.kill"
		for _ in $(seq 50); do
			[ -z "$(cat "$cg/cgroup.procs")" ] && break
			sleep 0.1
		done
	done
	return 0
}

# dp_pod NAME ANNOTATIONS_JSON: a pod with its own cgroup; prints "netns cgroup ip4".
dp_pod() {
	local pod cg conf
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	# The sockmap case tests the accelerated path, on a kernel whose probes fail too.
	conf="$(vt_accept_kernel_bugs "$(vtc_config "$(vt_config -f 4)" "$cg" "$2")")"
	vt_add "$pod" "ctr-$1" "$conf" >&2 || return 1
	echo "$pod $cg $(vt_ip "$VT_RESULT" 4)"
}

# dp_receive POD CGROUP OUT: for 8 s (a loaded machine starts the sender late), records what arrives at TCP 5001 and UDP 9999 in OUT
# (the payloads, sorted, or "nothing"); inside the pod's cgroup (sockmap needs its sockets).
dp_receive() {
	vtc_run "$1" "$2" timeout 14 python3 -c '
import select, socket, time
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("0.0.0.0", 5001))
t.listen(8)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("0.0.0.0", 9999))
got, end = set(), time.time() + 8
while time.time() < end:
    for s in select.select([t, u], [], [], 0.1)[0]:
        if s is u:
            got.add(u.recv(100).decode())
            continue
        c = t.accept()[0]
        c.settimeout(1)
        try:
            got.add(c.recv(100).decode() or "tcp-empty")
        except OSError:
            got.add("tcp-nodata")
        c.close()
print(" ".join(sorted(got)) or "nothing")
' >"$3" &
	VT_PIDS+=($!)
}

# dp_send POD CGROUP SRC4 DST4...: to each destination, "tcp" over a TCP connection, "udp" in
# datagrams, "raw" in UDP datagrams of a raw IP socket, "packet" in UDP frames written by hand
# to an AF_PACKET socket (the pod's own MAC and address, to the host veth's MAC). Prints what
# the sender saw per destination.
dp_send() {
	local pod="$1" cg="$2"
	shift 2
	vtc_run "$pod" "$cg" python3 - "$@" <<'PY'
import socket, struct, sys, time
def checksum(data):
    total = sum(struct.unpack("!10H", data))
    total = (total >> 16) + (total & 0xffff)
    return ~(total + (total >> 16)) & 0xffff
def udp(payload):
    return struct.pack("!HHHH", 40000, 9999, 8 + len(payload), 0) + payload
def frame(src, dst, payload):
    l4 = udp(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return bytes.fromhex("eeeeeeeeeeee") + mac + b"\x08\x00" + ip + l4
def attempt(send):
    try:
        send()
        return "sent"
    except OSError as e:
        return "failed(%s)" % (e.errno or "timeout")
def tcp(dst):
    s = socket.socket()
    s.settimeout(1.5)
    s.connect((dst, 5001))
    s.sendall(b"tcp")
    time.sleep(0.2)
    s.close()
src = sys.argv[1]
pkt = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
pkt.bind(("eth0", 0))
# The bound socket's address carries eth0's MAC (/sys under nsenter is the root netns's).
mac = pkt.getsockname()[4]
dgram = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
for dst in sys.argv[2:]:
    seen = [attempt(lambda: tcp(dst))]
    for _ in range(3):
        seen.append(attempt(lambda: dgram.sendto(b"udp", (dst, 9999))))
        seen.append(attempt(lambda: raw.sendto(udp(b"raw"), (dst, 0))))
        seen.append(attempt(lambda: pkt.send(frame(src, dst, b"packet"))))
    print(dst, " ".join(seen))
PY
}

# dp_check PATH ANNOTATIONS_JSON: the whole matrix on one path. Sets DP_GOT_DENY, DP_GOT_OK.
dp_check() {
	local annotations="$2" deny deny_cg d4 ok ok_cg o4 pod cg s4 _
	read -r deny deny_cg d4 < <(dp_pod "$1-denied" "$annotations")
	read -r ok ok_cg o4 < <(dp_pod "$1-allowed" "$annotations")
	[ -n "$d4" ] && [ -n "$o4" ] || return 1
	read -r pod cg s4 < <(dp_pod "$1-src" \
		"$(jq -c --arg d "$d4/32" '. + {"velo.dev/egress-deny": $d}' <<<"$annotations")")
	[ -n "$s4" ] || return 1
	dp_receive "$deny" "$deny_cg" "$VT/work/recv.deny"
	dp_receive "$ok" "$ok_cg" "$VT/work/recv.ok"
	for _ in $(seq 50); do
		vt_pod "$deny" ss -Hlun "sport = :9999" | grep -q . &&
			vt_pod "$ok" ss -Hlun "sport = :9999" | grep -q . && break
		sleep 0.1
	done
	dp_send "$pod" "$cg" "$s4" "$d4" "$o4"
	wait "${VT_PIDS[@]: -2}" || true
	DP_GOT_DENY="$(cat "$VT/work/recv.deny")"
	DP_GOT_OK="$(cat "$VT/work/recv.ok")"
	echo "denied pod got: $DP_GOT_DENY; allowed pod got: $DP_GOT_OK"
}

# dp_stat NAME: a velo_stats_v2 counter.
dp_stat() { vt_percpu_u64 "$VTC_BPFFS/velo_stats_v2" "${DP_STAT[$1]}" 0 0 0; }

@test "deny-paths: routed: TCP, UDP, raw IP, AF_PACKET to the denied pod don't arrive" {
	dp_check routed '{}'
	[ "$DP_GOT_OK" = "packet raw tcp udp" ]
	[ "$DP_GOT_DENY" = nothing ]
}

@test "deny-paths: tc fast path: velo_tc_deny runs before the redirect, nothing arrives" {
	dp_check tc '{"velo.dev/fastpath": "tc"}'
	[ "$DP_GOT_OK" = "packet raw tcp udp" ]
	[ "$DP_GOT_DENY" = nothing ]
	# The allowed traffic took the shortcut: the path under test is the tc one.
	[ "$(dp_stat tc_redirect)" -gt 0 ]
}

@test "deny-paths: xdp fast path: a denied frame is never redirected, nothing arrives" {
	dp_check xdp '{"velo.dev/fastpath": "xdp"}'
	[ "$DP_GOT_OK" = "packet raw tcp udp" ]
	[ "$DP_GOT_DENY" = nothing ]
	[ "$(dp_stat xdp_redirect)" -gt 0 ]
}

@test "deny-paths: sockmap: a denied connect never enters the sockhash, nothing arrives" {
	local inserts
	dp_check sockmap '{"velo.dev/sockmap": "true"}'
	[ "$DP_GOT_OK" = "packet raw tcp udp" ]
	[ "$DP_GOT_DENY" = nothing ]
	# Both ends of the allowed connection, nothing of the denied one.
	inserts="$(bpftool -j map lookup pinned "$VTC_BPFFS/velo_smstat_v2" key "$DP_SM_INSERT" 0 0 0 |
		jq '[.formatted.values[].value] | add')"
	echo "sockhash inserts: $inserts"
	[ "$inserts" -eq 2 ]
}
