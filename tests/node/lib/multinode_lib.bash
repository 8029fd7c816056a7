# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Two simulated nodes on one machine, shared by multinode.bats and uplink_xdp.bats: each node a
# network namespace with its own velo paths (state, locks, bpffs, log) and its own velod, joined
# by an underlay bridge in a third namespace, with a host outside the cluster on it. Load after
# lib (it uses vt_* helpers). Traffic stays inside these namespaces: the nodes have no default
# route.

# mn_setup: per-test prerequisites and names (call from setup after vt_setup).
mn_setup() {
	vt_velo_only
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	vt_need_velod MN_VELOD
	MN_BPFFS="/sys/fs/bpf/velotest-mn-$VT_TAG-$BATS_TEST_NUMBER"
}

# mn_teardown: the nodes, the underlay, the outside host and the nodes' bpffs dirs.
mn_teardown() {
	local i
	for i in 1 2; do ip netns del "velotest-mn-n$i-$VT_TAG" 2>/dev/null || true; done
	ip netns del "velotest-mn-out-$VT_TAG" 2>/dev/null || true
	ip netns del "velotest-mn-ul-$VT_TAG" 2>/dev/null || true
	vt_teardown
	rm -rf "${MN_BPFFS:?}"-n1 "${MN_BPFFS:?}"-n2
	return 0
}

mn_node() { echo "velotest-mn-n$1-$VT_TAG"; }
mn_in() {
	local i="$1"
	shift
	nsenter --net="/run/netns/$(mn_node "$i")" "$@"
}

# mn_underlay: nodes 1 and 2 on a bridge, 192.168.77.N/24 and fd00:77::N/64, forwarding off,
# and a host outside the cluster on it (MN_OUT: .100 and ::100).
mn_underlay() {
	local ul="velotest-mn-ul-$VT_TAG" i
	ip netns add "$ul"
	ip -n "$ul" link add br0 type bridge
	ip -n "$ul" link set br0 up
	MN_OUT="velotest-mn-out-$VT_TAG"
	ip netns add "$MN_OUT"
	ip link add vtmnuo netns "$ul" type veth peer name ul0 netns "$MN_OUT"
	ip -n "$ul" link set vtmnuo master br0 up
	ip -n "$MN_OUT" link set lo up
	ip -n "$MN_OUT" addr add 192.168.77.100/24 dev ul0
	ip -n "$MN_OUT" addr add fd00:77::100/64 dev ul0 nodad
	ip -n "$MN_OUT" link set ul0 up
	for i in 1 2; do
		ip netns add "$(mn_node "$i")"
		ip link add "vtmnu$i" netns "$ul" type veth peer name ul0 netns "$(mn_node "$i")"
		ip -n "$ul" link set "vtmnu$i" master br0 up
		ip -n "$(mn_node "$i")" link set lo up
		ip -n "$(mn_node "$i")" addr add "192.168.77.$i/24" dev ul0
		ip -n "$(mn_node "$i")" addr add "fd00:77::$i/64" dev ul0 nodad
		ip -n "$(mn_node "$i")" link set ul0 up
		mn_in "$i" sysctl -qw net.ipv4.ip_forward=0 net.ipv4.conf.all.forwarding=0 \
			net.ipv6.conf.all.forwarding=0
	done
}

# mn_nodes [2]: the node list; with "2", node 2 is in it.
mn_nodes() {
	jq -n --arg two "${1:-}" '{nodes: ([
		{name: "n1", addresses: ["192.168.77.1", "fd00:77::1"],
		 podCIDRs: ["10.77.1.0/24", "fd77:1::/64"]}] +
		(if $two == "2" then [{name: "n2", addresses: ["192.168.77.2", "fd00:77::2"],
		 podCIDRs: ["10.77.2.0/24", "fd77:2::/64"]}] else [] end) +
		[{name: "n3", addresses: ["203.0.113.9"], podCIDRs: ["10.77.1.0/25", "10.77.3.0/24"]}])}' \
		>"$VT/nodes.json.new"
	mv "$VT/nodes.json.new" "$VT/nodes.json"
}

# mn_config N [ANNOTATIONS_JSON] [CGROUP_REL]: velo's config on node N, the annotations (and the
# pod's cgroup, relative to the cgroup2 mount) passed as a runtime does under the shipped conflist.
mn_config() {
	local conf rt
	conf="$(jq -cn --arg t "$VT/n$1" --arg b "$MN_BPFFS-n$1" --arg n "$1" '{
		cniVersion: "1.0.0", name: "velotest-mn", type: "velo", vethPrefix: "vm",
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b,
		logFile: ($t + "/cni.log"),
		ipam: {type: "host-local", dataDir: ($t + "/ipam"),
			ranges: [[{subnet: ("10.77." + $n + ".0/24")}], [{subnet: ("fd77:" + $n + "::/64")}]]}}')" ||
		return 1
	rt="$(jq -cn --argjson a "${2:-{\}}" --arg cg "${3:-}" '{"io.kubernetes.cri.pod-annotations": $a} +
		(if $cg == "" then {} else {cgroupPath: $cg} end)')" || return 1
	vt_runtime_config "$conf" "$rt"
}

# mn_velod N [EXTRA_JSON]: velod on node N with the node list, syncing every second; EXTRA_JSON
# (an object) is merged into its config. Sets MN_VELOD_PID.
mn_velod() {
	jq -n --arg t "$VT/n$1" --arg b "$MN_BPFFS-n$1" --arg bin "$VT_BIN" --arg f "$VT/nodes.json" \
		--arg n "n$1" --argjson x "${2:-{\}}" '{stateDir: ($t + "/state"), runDir: ($t + "/run"),
		bpffsDir: $b, cniPath: $bin, listen: "127.0.0.1:19299", reconcileIntervalSeconds: 0,
		sampleIntervalSeconds: 0, nodeName: $n, nodesFile: $f, routeSyncSeconds: 1,
		masquerade: true, clusterCIDRs: ["10.96.0.0/12"], sourceGuardPrefix: "vm"} + $x' \
		>"$VT/n$1/velod.json"
	# nsenter execs velod, so $! is velod itself.
	nsenter --net="/run/netns/$(mn_node "$1")" "$MN_VELOD" --config "$VT/n$1/velod.json" \
		2>>"$VT/n$1/velod.log" &
	MN_VELOD_PID=$!
	VT_PIDS+=("$MN_VELOD_PID")
}

# mn_metric N NAME_WITH_LABELS: one value from node N's velod /metrics ("" when absent).
mn_metric() {
	mn_in "$1" curl -sf http://127.0.0.1:19299/metrics | awk -v m="$2" '$1 == m {print $2}'
}

# mn_add N CID [ANNOTATIONS_JSON] [CGROUP_REL]: a pod on node N; sets MN_POD, MN_IP4, MN_IP6.
mn_add() {
	local out
	MN_POD="$(vt_pod_new)"
	out="$(mn_in "$1" env -i PATH="$PATH" CNI_COMMAND=ADD CNI_CONTAINERID="$2" \
		CNI_NETNS="/run/netns/$MN_POD" CNI_IFNAME=eth0 CNI_PATH="$VT_BIN" \
		"$VT_BIN/velo" <<<"$(mn_config "$1" "${3:-}" "${4:-}")")" || { echo "ADD $2: $out"; return 1; }
	# shellcheck disable=SC2034 # for the caller
	MN_IP4="$(vt_ip "$out" 4)"
	# shellcheck disable=SC2034
	MN_IP6="$(vt_ip "$out" 6)"
}

# mn_del N CID POD: DEL of pod POD (container CID) on node N.
mn_del() {
	mn_in "$1" env -i PATH="$PATH" CNI_COMMAND=DEL CNI_CONTAINERID="$2" \
		CNI_NETNS="/run/netns/$3" CNI_IFNAME=eth0 CNI_PATH="$VT_BIN" \
		"$VT_BIN/velo" <<<"$(mn_config "$1")"
}

# mn_peer NETNS ADDR CLIENT_POD: the source address a TCP server in NETNS on ADDR sees when
# CLIENT_POD connects to it.
mn_peer() {
	local port=$((30000 + RANDOM % 10000)) pid
	nsenter --net="/run/netns/$1" timeout 10 python3 -c '
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1)
c, peer = s.accept(); print(peer[0])
' "$2" "$port" >"$VT/work/peer" 2>&1 &
	pid=$!
	sleep 0.4
	vt_pod "$3" timeout 5 python3 -c '
import socket, sys
socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()
' "$2" "$port" || { echo "connect to $2 failed"; return 1; }
	wait "$pid"
	cat "$VT/work/peer"
}

# mn_wait_route N PATTERN [absent]: waits up to 5 s for node N's velo routes to (not) match.
mn_wait_route() {
	local i
	for i in $(seq 50); do
		if mn_in "$1" ip route show proto 118 table all | grep -q "$2"; then
			[ "${3:-}" != absent ] && return 0
		else
			[ "${3:-}" = absent ] && return 0
		fi
		sleep 0.1
	done
	echo "node $1 routes (proto 118):"
	mn_in "$1" ip route show proto 118 table all
	return 1
}

# mn_udp FROM_POD TO_ADDR PORT COUNT TO_POD: COUNT datagrams, prints how many arrived intact.
mn_udp() {
	local out="$VT/work/udp.$3"
	vt_pod "$5" timeout 8 python3 -c '
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM); s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", int(sys.argv[2])))
s.settimeout(2); got = 0
try:
    while True:
        data = s.recv(2000)
        got += data == (b"velotest-%05d" % int(data[9:14])) * 40
except socket.timeout:
    pass
print(got)
' "$2" "$3" >"$out" &
	VT_PIDS+=($!)
	sleep 0.5
	vt_pod "$1" python3 -c '
import socket, sys, time
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto((b"velotest-%05d" % i) * 40, (sys.argv[1], int(sys.argv[2])))
    time.sleep(0.001)
' "$2" "$3" "$4"
	wait "${VT_PIDS[@]: -1}" || true
	cat "$out"
}

# mn_kube_proxy_invalid_drop: kube-proxy's "-m conntrack --ctstate INVALID -j DROP" in FORWARD
# (left out only with its conntrack.tcpBeLiberal), in each node's netns, as nftables, in chain
# forward of table inet velotest_kube.
mn_kube_proxy_invalid_drop() {
	local n
	for n in 1 2; do
		mn_in "$n" nft add table inet velotest_kube
		mn_in "$n" nft add chain inet velotest_kube forward \
			'{ type filter hook forward priority filter; }'
		mn_in "$n" nft add rule inet velotest_kube forward ct state invalid counter drop
	done
}

# mn_invalid_dropped NODE: packets the invalid rule dropped on NODE.
mn_invalid_dropped() {
	mn_in "$1" nft list chain inet velotest_kube forward |
		sed -n 's/.*ct state invalid counter packets \([0-9]*\).*/\1/p'
}

# mn_wait_log N PATTERN SECONDS: waits for a line in node N's velod log.
mn_wait_log() {
	local _
	for _ in $(seq $(($3 * 10))); do
		grep -q "$2" "$VT/n$1/velod.log" && return 0
		sleep 0.1
	done
	echo "node $1's velod log has no '$2' after $3 s:"
	tail -n 30 "$VT/n$1/velod.log"
	return 1
}
