#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Per-pod cgroup programs: accounting, egress deny list, TCP congestion
# control; attached to the pod's own cgroup only, gone after DEL.

load ../lib/lib
load ../lib/cgroup_lib

# A plain pod (no annotations, own cgroup): prints "netns cgroup ip4 ip6".
plain_pod() {
	local pod cg conf
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" '{}')"
	vt_add "$pod" "ctr-$1" "$conf" >&2 || return 1
	echo "$pod $cg $(vt_ip "$VT_RESULT" 4) $(vt_ip "$VT_RESULT" 6)"
}

@test "a pod without annotations gets no program on its cgroup" {
	local pod cg
	read -r pod cg _ _ < <(plain_pod plain)
	[ -n "$cg" ]
	[ -z "$(vtc_attached "$cg")" ] || { vtc_attached "$cg"; false; }
}

@test "accounting counts packets and L3 bytes per direction, TCP GSO by segment" {
	local sink sink_cg sink4 pod cg conf segs segs_in tx rx txb size=8388608
	read -r sink sink_cg sink4 _ < <(plain_pod sink)
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" '{"velo.dev/accounting": "true"}')"
	vt_add "$pod" ctr-acct "$conf"
	vtc_attached "$cg" | grep -qx velo_cg_acct_in
	vtc_attached "$cg" | grep -qx velo_cg_acct_eg

	# The pod's eth0 does TSO: the egress hook sees super-packets.
	vt_pod "$pod" ethtool -k eth0 | grep -q 'tcp-segmentation-offload: on'
	read -r segs segs_in < <(vtc_tcp_send "$pod" "$cg" "$sink" "$sink4" "$size")
	tx="$(vtc_counter "$cg" tx_packets)"
	rx="$(vtc_counter "$cg" rx_packets)"
	txb="$(vtc_counter "$cg" tx_bytes)"
	echo "segments out $segs in $segs_in; counted tx $tx rx $rx, tx bytes $txb"
	# Packets: the kernel's own segment counts, within 2%.
	[ $((tx * 100)) -ge $((segs * 98)) ]
	[ $((tx * 100)) -le $((segs * 102)) ]
	[ $((rx * 100)) -ge $((segs_in * 98)) ]
	[ $((rx * 100)) -le $((segs_in * 102)) ]
	# Bytes: payload plus IPv4 + TCP headers (20 + 32) per segment, within 3%.
	local expect=$((size + segs * 52))
	[ $((txb * 100)) -ge $((expect * 97)) ]
	[ $((txb * 100)) -le $((expect * 103)) ]
}

@test "accounting counts UDP datagrams exactly (L3 bytes with headers)" {
	local sink sink_cg sink4 pod cg conf
	read -r sink sink_cg sink4 _ < <(plain_pod sinku)
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" '{"velo.dev/accounting": "true"}')"
	vt_add "$pod" ctr-udp "$conf"
	vtc_run "$pod" "$cg" python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(1000):
    s.sendto(b'x' * 100, ('$sink4', 9))
"
	[ "$(vtc_counter "$cg" tx_packets)" -eq 1000 ]
	[ "$(vtc_counter "$cg" tx_bytes)" -eq $((1000 * 128)) ]
}

@test "egress-deny: denied CIDRs unreachable (IPv4, IPv6, raw socket), others reachable" {
	local deny d4 d6 ok o4 o6 pod cg conf out
	read -r deny _ d4 d6 < <(plain_pod denied)
	read -r ok _ o4 o6 < <(plain_pod allowed)
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" \
		"{\"velo.dev/egress-deny\": \"$d4/32,$d6/128\", \"velo.dev/accounting\": \"true\"}")"
	vt_add "$pod" ctr-deny "$conf"
	for p in "$deny" "$ok"; do
		vt_pod "$p" timeout 30 socat TCP6-LISTEN:5001,reuseaddr,fork,ipv6only=0 /dev/null &
		VT_PIDS+=($!)
	done
	sleep 0.3
	out="$(vtc_run "$pod" "$cg" python3 - "$d4" "$d6" "$o4" "$o6" <<'PY'
import socket, sys
def tcp(addr):
    fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(1.5)
    try:
        s.connect((addr, 5001))
        return 'open'
    except OSError:
        return 'blocked'
def raw(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    try:
        s.sendto(b'\x08\x00\xf7\xff\x00\x00\x00\x00', (addr, 0))
        return 'sent'
    except OSError:
        return 'blocked'
d4, d6, o4, o6 = sys.argv[1:]
print(tcp(d4), tcp(d6), tcp(o4), tcp(o6), raw(d4), raw(o4))
PY
)"
	echo "denied v4 v6, allowed v4 v6, raw denied, raw allowed: $out"
	[ "$out" = "blocked blocked open open blocked sent" ]
	[ "$(vtc_counter "$cg" deny_packets)" -gt 0 ]
}

@test "egress-deny: a frame written with an AF_PACKET socket can't get around it" {
	local deny d4 ok o4 pod cg conf p got_deny got_ok
	read -r deny _ d4 _ < <(plain_pod pktdenied)
	read -r ok _ o4 _ < <(plain_pod pktallowed)
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" "{\"velo.dev/egress-deny\": \"$d4/32\"}")"
	vt_add "$pod" ctr-pktdeny "$conf"
	for p in "$deny" "$ok"; do
		vt_pod "$p" timeout 5 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9999))
s.settimeout(3)
try:
    print(s.recv(100).decode())
except socket.timeout:
    print("nothing")
' >"$VT/work/recv.$p" &
		VT_PIDS+=($!)
	done
	sleep 0.5
	# IPv4/UDP frames built by hand, from the pod's own MAC and address to the host veth's MAC.
	vtc_run "$pod" "$cg" python3 - "$(vt_ip "$VT_RESULT" 4)" "$d4" "$o4" <<'PY'
import socket, struct, sys
def checksum(data):
    total = sum(struct.unpack("!10H", data))
    total = (total >> 16) + (total & 0xffff)
    return ~(total + (total >> 16)) & 0xffff
def frame(src, dst, payload):
    udp = struct.pack("!HHHH", 40000, 9999, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    mac = bytes.fromhex(open("/sys/class/net/eth0/address").read().strip().replace(":", ""))
    return bytes.fromhex("eeeeeeeeeeee") + mac + b"\x08\x00" + ip + udp
src, denied, allowed = sys.argv[1:]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
for _ in range(3):
    s.send(frame(src, denied, b"to-denied"))
    s.send(frame(src, allowed, b"to-allowed"))
PY
	wait "${VT_PIDS[@]: -2}" || true
	got_deny="$(cat "$VT/work/recv.$deny")"
	got_ok="$(cat "$VT/work/recv.$ok")"
	echo "denied pod got: $got_deny; allowed pod got: $got_ok"
	# The allowed frame arriving proves the frames are good; the denied one must not.
	[ "$got_ok" = to-allowed ]
	[ "$got_deny" = nothing ]
}

@test "egress-deny fails closed: no pod cgroup, ADD fails with 107 and leaves nothing" {
	local pod conf
	pod="$(vt_pod_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "/velotest-$VT_TAG-none" \
		'{"velo.dev/egress-deny": "10.99.0.0/24"}')"
	vt_cni ADD ctr-nocg "$pod" eth0 "$conf"
	vt_assert_error 107 'cgroup'
	vt_assert_nothing_left
}

@test "tcp-congestion: accepted and connected sockets use it, setsockopt can't switch away" {
	local node_cc algo sink sink_cg sink4 pod cg conf out
	node_cc="$(cat /proc/sys/net/ipv4/tcp_congestion_control)"
	algo=reno
	[ "$node_cc" != reno ] || algo=cubic
	read -r sink sink_cg sink4 _ < <(plain_pod ccsink)
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" "{\"velo.dev/tcp-congestion\": \"$algo\"}")"
	vt_add "$pod" ctr-cc "$conf"
	[ "$(vt_pod "$pod" cat /proc/sys/net/ipv4/tcp_congestion_control)" = "$algo" ]
	# Connected: the application asks for the node's default; ss shows the pod's.
	# The peers only read (-u): neither side sends a FIN, so the sockets stay established.
	vt_pod "$sink" timeout 30 socat -u TCP4-LISTEN:5001,reuseaddr,fork /dev/null &
	VT_PIDS+=($!)
	# Wait for the listener and then the connection, not a fixed time: a loaded machine is slow.
	for _ in $(seq 50); do
		[ -z "$(vt_pod "$sink" ss -tlnH 'sport = :5001')" ] || break
		sleep 0.1
	done
	vtc_run "$pod" "$cg" python3 -c "
import socket, time
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b'$node_cc')
s.connect(('$sink4', 5001))
time.sleep(8)
" &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		out="$(vt_pod "$pod" ss -tinH state established)"
		[ -z "$out" ] || break
		sleep 0.1
	done
	echo "$out"
	grep -qw "$algo" <<<"$out"
	# (not `! grep`: bats doesn't fail a test on a negated command)
	[ "$(grep -cw "$node_cc" <<<"$out")" -eq 0 ]
	[ "$(vtc_counter "$cg" cc_rewrites)" -ge 1 ]
	# Accepted: a listener in the pod.
	vtc_run "$pod" "$cg" timeout 10 socat TCP4-LISTEN:5002,reuseaddr SYSTEM:'sleep 5' &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		[ -z "$(vt_pod "$pod" ss -tlnH 'sport = :5002')" ] || break
		sleep 0.1
	done
	vt_pod "$sink" timeout 8 socat -u "TCP4:$(vt_ip "$VT_RESULT" 4):5002" /dev/null &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		out="$(vt_pod "$pod" ss -tinH state established '( sport = :5002 )')"
		[ -z "$out" ] || break
		sleep 0.1
	done
	echo "$out"
	grep -qw "$algo" <<<"$out"
}

@test "tcp-congestion with an algorithm the kernel lacks fails with a clear error" {
	local pod cg conf
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" '{"velo.dev/tcp-congestion": "nosuchcc"}')"
	vt_cni ADD ctr-nocc "$pod" eth0 "$conf"
	vt_assert_error 107 'nosuchcc'
	vt_assert_nothing_left
}

@test "DEL leaves no attachment and no pins; a late DEL of an old sandbox keeps the new one's" {
	local pod cg conf all='{"velo.dev/accounting": "true", "velo.dev/egress-deny": "192.0.2.0/24", "velo.dev/tcp-congestion": "reno"}'
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" "$all")"
	vt_add "$pod" ctr-old "$conf"
	[ "$(vtc_attached "$cg" | wc -l)" -eq 4 ]
	# The sandbox restarts: a new container id on the same pod cgroup, ADD before the old DEL.
	local pod2
	pod2="$(vt_pod_new)"
	vt_add "$pod2" ctr-new "$conf"
	[ "$(vtc_attached "$cg" | wc -l)" -eq 4 ] || { vtc_attached "$cg"; false; }
	vt_cni DEL ctr-old "$pod" eth0 "$conf"
	vt_assert_ok
	[ "$(vtc_attached "$cg" | wc -l)" -eq 4 ] || { vtc_attached "$cg"; false; }
	[ "$(bpftool -j map dump pinned "$VTC_BPFFS/velo_deny_v1" | jq length)" -eq 1 ]
	vt_cni DEL ctr-new "$pod2" eth0 "$conf"
	vt_assert_ok
	[ -z "$(vtc_attached "$cg")" ] || { vtc_attached "$cg"; false; }
	[ -z "$(ls -A "$VTC_BPFFS/links")" ] || { ls "$VTC_BPFFS/links"; false; }
	[ "$(bpftool -j map dump pinned "$VTC_BPFFS/velo_deny_v1" | jq length)" -eq 0 ]
	vt_assert_nothing_left
}

# The rule when the pod's cgroup can't be found (docs/annotations.md): what changes the
# pod's traffic (egress-deny above, tcp-congestion) fails the ADD; what only speeds it up
# or counts it (sockmap, accounting) leaves the pod routed and the record says so.
@test "tcp-congestion without a pod cgroup fails with 107 and leaves nothing" {
	local pod conf
	pod="$(vt_pod_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "/velotest-$VT_TAG-none" \
		'{"velo.dev/tcp-congestion": "reno"}')"
	vt_cni ADD ctr-ccnocg "$pod" eth0 "$conf"
	vt_assert_error 107 'cgroup'
	vt_assert_nothing_left
}

@test "accounting without a pod cgroup: the pod starts uncounted, the record says so, CHECK passes" {
	local pod conf record
	pod="$(vt_pod_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "/velotest-$VT_TAG-none" \
		'{"velo.dev/accounting": "true"}')"
	vt_add "$pod" ctr-acctnocg "$conf"
	grep -q 'accounting.*no pod cgroup' "$VT_LOG"
	record="$VT_STATE/$VT_NETWORK/ctr-acctnocg:eth0.json"
	# Bit 2 (accounting) is clear: nothing was attached.
	[ "$(jq '(.features / 2 | floor) % 2' "$record")" -eq 0 ] || { cat "$record"; false; }
	vt_cni CHECK ctr-acctnocg "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	vt_cni DEL ctr-acctnocg "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "sockmap without a pod cgroup: the pod stays routed, the record says so, CHECK passes" {
	local pod conf record
	pod="$(vt_pod_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "/velotest-$VT_TAG-none" \
		'{"velo.dev/sockmap": "true"}')"
	vt_add "$pod" ctr-smnocg "$conf"
	grep -q "sockmap: the pod's cgroup is unknown" "$VT_LOG"
	record="$VT_STATE/$VT_NETWORK/ctr-smnocg:eth0.json"
	# Bit 16 (sockmap) is clear: nothing was attached.
	[ "$(jq '(.features / 16 | floor) % 2' "$record")" -eq 0 ] || { cat "$record"; false; }
	vt_cni CHECK ctr-smnocg "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	vt_cni DEL ctr-smnocg "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "runtimeConfig reaches velo as libcni passes it: only keys the shipped conflist declares" {
	local caps conf
	caps="$(vt_velo_capabilities)"
	# The test means something only while velo declares cgroupPath and not dns.
	[ "$(jq -r '.cgroupPath' <<<"$caps")" = true ]
	[ "$(jq -r 'has("dns")' <<<"$caps")" = false ]
	run vt_runtime_config '{"type": "velo"}' \
		'{"dns": {"nameservers": ["10.96.0.10"]}, "cgroupPath": "/velotest-x"}'
	[ "$status" -eq 0 ]
	[ "$(jq -c '.runtimeConfig' <<<"$output")" = '{"cgroupPath":"/velotest-x"}' ]
	[ "$(jq -c '.capabilities' <<<"$output")" = "$caps" ]
	# Nothing declared left: libcni sets no runtimeConfig at all.
	run vt_runtime_config '{"type": "velo"}' '{"dns": {}}'
	[ "$status" -eq 0 ]
	[ "$(jq -r 'has("runtimeConfig")' <<<"$output")" = false ]
	# A capability declared false is dropped too.
	VT_VELO_CAPS='{"a": true, "b": false}' run vt_runtime_config '{}' '{"a": 1, "b": 2}'
	[ "$status" -eq 0 ]
	[ "$(jq -c '.runtimeConfig' <<<"$output")" = '{"a":1}' ]
	# The cgroup tests' configs go through it.
	conf="$(vtc_config "$(vt_config -f dual)" /velotest-x '{}')"
	[ "$(jq -c '.capabilities' <<<"$conf")" = "$caps" ]
	[ "$(jq -c '.runtimeConfig | keys' <<<"$conf")" = \
		'["cgroupPath","io.kubernetes.cri.pod-annotations"]' ]
}
