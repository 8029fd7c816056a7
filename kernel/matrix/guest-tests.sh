#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# velo's node tests inside a kernel matrix guest (run by kernel/matrix/init), as TAP on stdout.
#
# A "node" netns (forwarding off) where velo runs, pod netns wired by velo through the CNI
# protocol, each pod in a cgroup of its own; traffic between pods checked by SHA-256 digest
# (busybox nc) or by the stream checker sockmap_stream (content, order, length). One test per
# datapath: routed, fast path tc, fast path xdp, sockmap (a peer pod deleted mid-stream, and two
# tcp_bpf receive bugs: expected-broken, TAP TODO, where the kernel lacks the fixes), and
# the cgroup features; on request, a throughput benchmark of the sk_msg verdict modes. What velo's
# probes find missing on this kernel must be a clean fallback: ADD succeeds, traffic flows; the
# TAP diagnostics say which way each feature went.
#
# Kernel command line knobs: velotest.permanent=1 expects BPF_F_PERMANENT (the patched kernel),
# velotest.recv_fixed=1 expects the tcp_bpf recv/splice fixes (kernel/patches 0002, 0003),
# velotest.only=NAME runs one test; the tests in ON_REQUEST (the benchmark) run only that way.
# velotest.bench_sizes=64,1024 velotest.bench_reps=3 velotest.bench_secs=2 tune the benchmark.
# After every test the kernel log must hold no new splat (SPLAT_RE): a WARN or BUG fails it.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# What the guest shares with tests/node: CNI invocation, cgroups, the policy grid and its probes.
# shellcheck source=tests/node/lib/guest_shared.bash
. "$(dirname "$0")/guest_shared.bash"

V=/opt/velo
VELOD_PID=
T=/tmp/velotest
NODE=velotest-node
CGROOT=/sys/fs/cgroup
BPFFS=/sys/fs/bpf
KLABEL="linux $(uname -r)"
SM_STATS=(insert not_pod peer_not_pod insert_fail redirect pass_first pass redirect_lost unpaired)
n=0
failed=0
SKIP=77 # a test's status for "does not apply to this kernel"; its last output line says why
BROKEN=78 # "a known kernel bug showed, as expected here": TAP TODO; its last line names it
cmdline=$(cat /proc/cmdline)
opt() { sed -n "s/.*velotest\.$1=\([^ ]*\).*/\1/p" <<<"$cmdline"; }
EXPECT_PERMANENT=$(opt permanent)
RECV_FIXED=$(opt recv_fixed)
ONLY=$(opt only)
ON_REQUEST=" sockmap_bench "
SPLAT_RE='WARNING: CPU|BUG:|kernel BUG|Oops|general protection|Kernel panic|cut here|UBSAN|KASAN'

diag() { sed 's/^/# /'; }
node() { nsenter --net=/run/netns/$NODE "$@"; }
pod() {
	local p=$1
	shift
	nsenter --net="/run/netns/velotest-pod-$p" "$@"
}
# in_cg POD CMD...: CMD in the pod's netns, as a process of the pod's cgroup.
in_cg() {
	local p=$1
	shift
	vs_in_cgroup "/run/netns/velotest-pod-$p" "$CGROOT/velotest-$p" "$@"
}

# ------------------------------------------------------------------ the node and its pods

node_setup() {
	ip netns add $NODE
	node ip link set lo up
	node ip addr add 10.98.0.1/32 dev lo
	node ip addr add fd98::1/128 dev lo nodad
	node sysctl -qw net.ipv4.ip_forward=0 net.ipv4.conf.all.forwarding=0 \
		net.ipv4.conf.default.forwarding=0 net.ipv6.conf.all.forwarding=0 \
		net.ipv6.conf.default.forwarding=0
	mkdir -p $T/ipam $T/state $T/run $T/log $T/work
}

# Kernels before 6.17 have no per-device IPv6 force_forwarding: velo then forwards IPv6 only
# with the config's opt-in, as a node on such a kernel must be configured (README).
ALL_FWD6=false
[ -e /proc/sys/net/ipv6/conf/lo/force_forwarding ] || ALL_FWD6=true

# A pod's bpffs dir and VELO_SOCKMAP_MODE (the benchmark's pods differ): this test's by default;
# its namespace and name (CNI_ARGS' K8S_POD_NAMESPACE, K8S_POD_NAME): velotest and POD by default;
# its IPv4 address: host-local's pick unless POD_ADDR4 pins it.
declare -A POD_BPFFS POD_SMMODE POD_NS POD_NAME POD_ADDR4
pod_bpffs() { echo "${POD_BPFFS[$1]:-$BPFFS/velotest-$TEST}"; }

# config ANNOTATIONS_JSON POD: velo's dual-stack config for one pod of the current test.
config() {
	jq -cn --arg t $T --arg b "$(pod_bpffs "$2")" --argjson a "$1" \
		--arg cg "/velotest-$2" --argjson fwd6 $ALL_FWD6 --arg r4 "${POD_ADDR4[$2]:-}" '{
		cniVersion: "1.0.0", name: "velotest", type: "velo", vethPrefix: "vt",
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b,
		logFile: ($t + "/log/cni.log"), logLevel: "debug", ipv6AllForwarding: $fwd6,
		ipam: {type: "host-local", dataDir: ($t + "/ipam"),
		       ranges: [[{subnet: "10.99.0.0/24"} +
				(if $r4 == "" then {} else {rangeStart: $r4, rangeEnd: $r4} end)],
			[{subnet: "fd99::/120"}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": $a, cgroupPath: $cg}}'
}

# cni VERB POD ANNOTATIONS: runs velo in the node; sets RC, OUT.
cni() {
	local err=$T/work/err-$2 out=$T/work/out-$2
	RC=0
	vs_cni $NODE $V/velo "$(config "$3" "$2")" "$out" "$err" CNI_COMMAND="$1" \
		CNI_CONTAINERID="ctr-$2" CNI_NETNS="/run/netns/velotest-pod-$2" CNI_IFNAME=eth0 \
		CNI_PATH=$V \
		CNI_ARGS="K8S_POD_NAMESPACE=${POD_NS[$2]:-velotest};K8S_POD_NAME=${POD_NAME[$2]:-$2}" \
		VELO_SOCKMAP_MODE="${POD_SMMODE[$2]:-}" || RC=$?
	OUT=$(cat "$out")
	if [ "$RC" -ne 0 ]; then
		echo "$1 of pod $2 failed (rc $RC): $OUT $(cat "$err")"
		return 1
	fi
}

declare -A IP4 IP6 ANN
# add POD ANNOTATIONS: a pod netns and cgroup, wired by velo.
add() {
	ip netns add "velotest-pod-$1" || return 1
	pod "$1" ip link set lo up
	mkdir -p "$CGROOT/velotest-$1"
	ANN[$1]=$2
	cni ADD "$1" "$2" || return 1
	IP4[$1]=$(jq -r '[.ips[].address | select(test(":") | not)][0] | split("/")[0]' <<<"$OUT")
	IP6[$1]=$(jq -r '[.ips[].address | select(test(":"))][0] | split("/")[0]' <<<"$OUT")
	if [ -z "${IP4[$1]}" ] || [ -z "${IP6[$1]}" ]; then
		echo "no addresses in $OUT"
		return 1
	fi
}

# del POD: DEL, then the pod's netns and cgroup go.
del() {
	local ann=${ANN[$1]:-}
	local cg="$CGROOT/velotest-$1" i
	cni DEL "$1" "${ann:-"{}"}" || return 1
	ip netns del "velotest-pod-$1"
	# A server the test's timeout is still reaping keeps the cgroup busy: end it first.
	vs_cgroup_kill "$cg"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$cg" 2>/dev/null && return 0
		sleep 0.2
	done
	rmdir "$cg"
}

# Whatever velo left in the node: host veths, leases, records, this test's link pins.
leftovers() {
	node ip -o link show | awk -F': ' '{print $2}' | grep '^vt' || true
	find $T/ipam -type f \( -name '10.*' -o -name 'fd99*' \) 2>/dev/null
	find $T/state -type f -name '*.json' 2>/dev/null
	find "$BPFFS/velotest-$TEST"/links "$BPFFS/velotest-$TEST"-*/links -type f 2>/dev/null || true
}

# ------------------------------------------------------------------ traffic

# ping_ok FROM(node|POD) ADDR
ping_ok() {
	local from=$1 addr=$2 i
	for i in 1 2 3; do
		if [ "$from" = node ]; then
			node ping -q -c 1 -W 2 "$addr" >/dev/null 2>&1 && return 0
		else
			pod "$from" ping -q -c 1 -W 2 "$addr" >/dev/null 2>&1 && return 0
		fi
	done
	echo "$from cannot ping $addr"
	return 1
}

# listening POD PORT: waits up to 5 s for a TCP listener on PORT in POD.
listening() {
	local i
	for i in $(seq 50); do
		pod "$1" netstat -ltn 2>/dev/null | grep -q ":$2 " && return 0
		sleep 0.1
	done
	echo "nothing listens on port $2 in pod $1"
	return 1
}

# digest FROM TO ADDR PORT [SIZE]: SIZE bytes (4 MiB) of random data from pod FROM to the
# server in pod TO at ADDR:PORT over TCP; the SHA-256 the server computed must match.
digest() {
	local from=$1 to=$2 addr=$3 port=$4 size=${5:-4194304} sent got pid
	local send=$T/work/send.$port sum=$T/work/sum.$port
	head -c "$size" /dev/urandom >"$send"
	rm -f "$sum"
	pod "$to" timeout 40 nc -l -p "$port" -e sh -c "sha256sum >$sum" &
	pid=$!
	listening "$to" "$port" || return 1
	pod "$from" timeout 30 nc "$addr" "$port" <"$send" || echo "client in $from: nc exited $?"
	wait "$pid" || { echo "server in $to at $addr:$port failed"; return 1; }
	sent=$(sha256sum <"$send" | cut -d' ' -f1)
	got=$(cut -d' ' -f1 <"$sum" 2>/dev/null)
	rm -f "$send"
	[ "$sent" = "$got" ] || { echo "$from -> $to $addr: sent $sent, received ${got:-nothing}"; return 1; }
}

# stream SERVER CLIENT ADDR CONNS SIZE WSIZE [duplex]: sockmap_stream, both ends in their cgroups.
stream() {
	local s=$1 c=$2 addr=$3 conns=$4 size=$5 wsize=$6 duplex=${7:-} port out pid i
	port=$((20000 + RANDOM % 20000))
	out=$T/work/server.$port
	in_cg "$s" timeout 200 $V/sockmap_stream server "$addr" "$port" "$conns" "$size" \
		${duplex:+"$duplex"} >"$out" 2>&1 &
	pid=$!
	for i in $(seq 200); do
		grep -q listening "$out" && break
		sleep 0.05
	done
	if ! in_cg "$c" timeout 200 $V/sockmap_stream client "$addr" "$port" "$conns" "$size" \
		"$wsize" ${duplex:+"$duplex"}; then
		echo "client failed; server said: $(cat "$out")"
		kill "$pid" 2>/dev/null
		return 1
	fi
	wait "$pid" || { echo "server failed: $(cat "$out")"; return 1; }
}

# ------------------------------------------------------------------ velo's state

log_has() { grep -q -- "$1" $T/log/cni.log; }

# sm_stat NAME [BPFFS_DIR]: one velo_smstat_v2 counter summed over CPUs.
sm_stat() {
	local i dir=${2:-$BPFFS/velotest-$TEST}
	for i in "${!SM_STATS[@]}"; do
		[ "${SM_STATS[$i]}" = "$1" ] || continue
		bpftool map lookup pinned "$dir/velo_smstat_v2" key "$i" 0 0 0 -j |
			jq '[.formatted.values[].value] | add // 0'
		return
	done
}

# run_cnt PROG [BPFFS_DIR]: the program's BPF_ENABLE_STATS run count (pinned in velo's one
# BPF generation dir, progs_g<hash>).
run_cnt() {
	bpftool prog show pinned "${2:-$BPFFS/velotest-$TEST}"/progs_g*/"$1" -j | jq '.run_cnt // 0'
}

# map_len MAP [BPFFS_DIR]: entries in one of velo's pinned maps.
map_len() {
	bpftool map dump pinned "${2:-$BPFFS/velotest-$TEST}/$1" -j 2>/dev/null | jq 'length'
}

splat_count() { dmesg | grep -cE "$SPLAT_RE"; }

# cg_counter POD FIELD: a velo_cg_counters field of the pod's cgroup, summed over CPUs.
cg_counter() {
	local id key
	id=$(stat -c %i "$CGROOT/velotest-$1")
	key=$(printf '%016x' "$id" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\8 \7 \6 \5 \4 \3 \2 \1/')
	# shellcheck disable=SC2086
	bpftool -j map lookup pinned "$BPFFS/velotest-$TEST/velo_cg_cnt_v1" key hex $key 2>/dev/null |
		jq --arg f "$2" '[(.formatted // .).values[].value | objects | .[$f]] | add // 0' ||
		echo 0
}

cg_attached() {
	bpftool cgroup show "$CGROOT/velotest-$1" 2>/dev/null | awk 'NR > 1 {print $NF}' |
		grep '^velo_' || true
}

# ------------------------------------------------------------------ the tests

# Both directions, both families, by digest; the node reaches the pods.
traffic_ab() {
	local base=$1
	ping_ok node "${IP4[a]}" && ping_ok node "${IP6[b]}" &&
		ping_ok a "${IP4[b]}" && ping_ok b "${IP6[a]}" &&
		digest a b "${IP4[b]}" $((base + 1)) &&
		digest b a "${IP4[a]}" $((base + 2)) &&
		digest a b "${IP6[b]}" $((base + 3)) &&
		digest b a "${IP6[a]}" $((base + 4))
}

t_routed() {
	add a '{}' && add b '{}' || return 1
	traffic_ab 5000 || return 1
	del a && del b
}

# fp_stat NAME: one velo_stats_v2 counter (enum velo_stat) summed over CPUs.
FP_STATS=(tc_redirect tc_pass tc_spoof xdp_redirect xdp_pass xdp_spoof ttl mtu nat no_ct)
fp_stat() {
	local i
	for i in "${!FP_STATS[@]}"; do
		[ "${FP_STATS[$i]}" = "$1" ] || continue
		bpftool map lookup pinned "$BPFFS/velotest-$TEST/velo_stats_v2" key "$i" 0 0 0 -j |
			jq '[.formatted.values[].value] | add // 0'
		return
	done
}

# How many hooks in the node netns run a program named $1 (bpftool names XDP programs by id only).
prog_attachments() {
	local id n=0
	for id in $(node bpftool -j net show | jq -r '.[] | (.xdp + .tc)[] | .id'); do
		[ "$(bpftool -j prog show id "$id" | jq -r .name)" = "$1" ] && n=$((n + 1))
	done
	echo "$n"
}

# A fast path is attached (its link pinned) or cleanly refused (one log line); traffic flows.
fastpath() {
	local mode=$1 base=$2 ann prog
	ann=$(jq -cn --arg m "$mode" '{"velo.dev/fastpath": $m}')
	add a "$ann" && add b "$ann" || return 1
	if log_has "fastpath $mode on"; then
		echo "velo: $(grep -m1 "fastpath $mode on" $T/log/cni.log | sed 's/.*fastpath/fastpath/; s/"$//')"
		prog=velo_tc_ingress
		[ "$mode" = tc ] || prog=velo_xdp_host
		[ "$(prog_attachments "$prog")" -ge 2 ] ||
			{ echo "fastpath $mode said it attached, but $prog is not on both host veths:";
			  node bpftool net show; return 1; }
	elif log_has "fastpath $mode.*stays on the routed path"; then
		echo "fallback: $(grep -m1 "fastpath $mode.*routed path" $T/log/cni.log | sed 's/.*fastpath/fastpath/; s/"$//')"
	else
		echo "velo logged neither an attached fast path nor a fallback"
		return 1
	fi
	traffic_ab "$base" || return 1
	FP_REDIRECTS=0 FP_NO_CT=0
	if log_has "fastpath $mode on"; then
		FP_REDIRECTS=$(fp_stat "${mode}_redirect") FP_NO_CT=$(fp_stat no_ct)
		echo "stats: ${mode}_redirect=$FP_REDIRECTS ${mode}_pass=$(fp_stat "${mode}_pass")" \
			"nat=$(fp_stat nat) no_ct=$FP_NO_CT"
	fi
	del a && del b
}
t_tc() { fastpath tc 6000; }
t_xdp() { fastpath xdp 7000; }

# With nf_conntrack loaded (as on most nodes) this kernel has all a fast path needs but tcx:
# the fast path must attach (tc on clsact), not fall back.
conntrack_fastpath() {
	if [ ! -d /sys/module/nf_conntrack ]; then
		if ! modinfo nf_conntrack >/dev/null 2>&1; then
			echo "this kernel has no nf_conntrack"
			return $SKIP
		fi
		modprobe nf_conntrack || { echo "modprobe nf_conntrack failed"; return 1; }
	fi
	fastpath "$1" "$2" || return 1
	log_has "fastpath $1 on" || { echo "fell back, though this kernel has what it needs"; return 1; }
	# Asked conntrack (no NAT here) and shortcut the streams.
	[ "$FP_NO_CT" -eq 0 ] || { echo "the conntrack lookup was not used"; return 1; }
	[ "$FP_REDIRECTS" -gt 0 ] || { echo "nothing took the shortcut"; return 1; }
}
t_tc_ct() { conntrack_fastpath tc 6100; }
t_xdp_ct() { conntrack_fastpath xdp 7100; }

t_sockmap() {
	local ann='{"velo.dev/sockmap": "true"}' before after r runs size
	add a "$ann" && add b "$ann" || return 1
	if ! log_has "sockmap on "; then
		log_has "sockmap: .*stays on the routed path" ||
			{ echo "velo logged neither sockmap on nor a fallback"; return 1; }
		echo "fallback: $(grep -m1 'sockmap: .*routed path' $T/log/cni.log | sed 's/.*sockmap/sockmap/; s/"$//')"
		# The patched kernel has every fix velo's probes look for: it must not fall back.
		[ "$RECV_FIXED" != 1 ] || { echo "velo kept the pods routed on the patched kernel"; return 1; }
		stream b a "${IP4[b]}" 3 1048576 65536 duplex || return 1
		del a && del b
		return
	fi
	echo "velo: $(grep -m1 'sockmap on ' $T/log/cni.log | sed 's/.*sockmap on/sockmap on/; s/"$//')"
	if [ "$EXPECT_PERMANENT" = 1 ]; then
		log_has "BPF_F_PERMANENT used" ||
			{ echo "this kernel has BPF_F_PERMANENT but velo did not detect it"; return 1; }
	fi
	# Digest-checked streams, both families, then the connect race (writes right after connect).
	for size in 1 65537 4194304; do
		stream b a "${IP4[b]}" 2 "$size" 65536 || return 1
	done
	stream b a "${IP6[b]}" 2 1048576 4096 duplex || return 1
	stream b a "${IP4[b]}" 200 3000 1000 || return 1
	echo "sockmap stats: $(for s in "${SM_STATS[@]}"; do printf '%s=%s ' "$s" "$(sm_stat "$s")"; done)"
	[ "$(sm_stat redirect)" -gt 0 ] || { echo "nothing was redirected"; return 1; }
	[ "$(sm_stat redirect_lost)" -eq 0 ] || { echo "redirects lost"; return 1; }
	# The verdict program's run count for 4 streams of 4 MiB (64 KiB writes): once per
	# apply_bytes step (1 MiB) per socket upstream, once per socket with BPF_F_PERMANENT.
	sysctl -qw kernel.bpf_stats_enabled=1
	before=$(run_cnt velo_sk_msg)
	r=$(sm_stat redirect)
	stream b a "${IP4[b]}" 4 4194304 65536 || return 1
	after=$(run_cnt velo_sk_msg)
	sysctl -qw kernel.bpf_stats_enabled=0
	runs=$((after - before))
	echo "sk_msg runs for 4 sockets x 4 MiB in 64 KiB writes: $runs (redirects +$(($(sm_stat redirect) - r)))"
	if [ "$EXPECT_PERMANENT" = 1 ]; then
		[ "$runs" -eq 4 ] || { echo "expected one run per socket (4), got $runs"; return 1; }
	else
		[ "$runs" -ge 16 ] || { echo "expected a run per 1 MiB step (>= 16), got $runs"; return 1; }
	fi
	del a && del b
}

# A peer pod deleted mid-stream, as a runtime deletes it: its processes are killed, DEL, its
# netns removed. The sender must get an error or EOF, not hang; its socket and the dead
# peer's must leave the sockhash; the peer's addresses leave velo's pod map (run() checks
# that the kernel logged no splat).
t_sockmap_peer_gone() {
	local ann='{"velo.dev/sockmap": "true"}' cg=$CGROOT/velotest-b port sink blast pid p i
	local rc=0 pods_before pods_after socks
	add a "$ann" && add b "$ann" || return 1
	if ! log_has "sockmap on "; then
		echo "sockmap fell back to the routed path on this kernel: nothing is redirected"
		return $SKIP
	fi
	port=$((20000 + RANDOM % 20000))
	sink=$T/work/sink.$port blast=$T/work/blast.$port
	in_cg b timeout 120 $V/sockmap_stream sink "${IP4[b]}" "$port" >"$sink" 2>&1 &
	for i in $(seq 200); do
		grep -q listening "$sink" && break
		sleep 0.05
	done
	in_cg a timeout 60 $V/sockmap_stream blast "${IP4[b]}" "$port" 65536 8 >"$blast" 2>&1 &
	pid=$!
	# Mid-stream: wait until redirected bytes flow.
	for i in $(seq 100); do
		[ "$(sm_stat redirect)" -ge 1 ] && break
		sleep 0.1
	done
	[ "$(sm_stat redirect)" -ge 1 ] || { echo "the stream was not redirected"; return 1; }
	sleep 1
	pods_before=$(map_len velo_smpod_v1)
	echo "mid-stream: sockets in the sockhash $(map_len velo_sock_v1), pod map entries $pods_before"
	vs_cgroup_kill "$cg" || return 1
	cni DEL b "${ANN[b]}" || return 1
	ip netns del velotest-pod-b
	wait "$pid" || rc=$?
	echo "sender: exit $rc: $(tr '\n' ' ' <"$blast")"
	[ "$rc" -ne 124 ] || { echo "the sender hung until its timeout"; return 1; }
	[ "$rc" -ne 0 ] || { echo "the sender reported success to a deleted peer"; return 1; }
	for i in $(seq 50); do
		socks=$(map_len velo_sock_v1)
		[ "$socks" -eq 0 ] && break
		sleep 0.1
	done
	pods_after=$(map_len velo_smpod_v1)
	echo "after: sockets in the sockhash $socks, pod map entries $pods_after;" \
		"stats: $(for st in "${SM_STATS[@]}"; do printf '%s=%s ' "$st" "$(sm_stat "$st")"; done)"
	[ "$socks" -eq 0 ] || { echo "sockets left in the sockhash:"; bpftool map dump pinned \
		"$BPFFS/velotest-$TEST/velo_sock_v1"; return 1; }
	[ "$pods_after" -lt "$pods_before" ] || { echo "the deleted pod is still in velo_smpod_v1"; return 1; }
	rmdir "$cg" || return 1
	del a
}

# Two tcp_bpf bugs of sockhash sockets, fixed by kernel/patches/0002 and 0003:
# (a) recv_eagain: a blocking recv() woken by the ACK of the socket's own FIN returns EAGAIN
#     (sockmap_stream bclient: 16 MiB written, shutdown(SHUT_WR), the answer read by blocking
#     recv(); exit 3 = every stream intact but EAGAIN seen);
# (b) splice_ingress: splice() into a pipe reads only the TCP receive queue, never the psock's
#     queue the redirected bytes wait in (sockmap_edge recv=splice: EOF at byte 0).
# With velotest.recv_fixed=1 (the patched kernel) both must pass; elsewhere a bug seen with its
# exact signature is expected-broken (TAP TODO, named), anything else fails.
t_sockmap_recv() {
	local ann='{"velo.dev/sockmap": "true"}' port out pid rc src r0 broken=()
	add a "$ann" && add b "$ann" || return 1
	if ! log_has "sockmap on "; then
		echo "sockmap fell back to the routed path on this kernel: nothing is redirected"
		return $SKIP
	fi
	r0=$(sm_stat redirect)
	port=$((20000 + RANDOM % 20000))
	out=$T/work/bserver.$port
	in_cg b timeout 200 $V/sockmap_stream bserver "${IP4[b]}" "$port" 8 16777216 65536 \
		>"$out" 2>&1 &
	pid=$!
	listening b "$port" || return 1
	rc=0 src=0
	in_cg a timeout 200 $V/sockmap_stream bclient "${IP4[b]}" "$port" 8 16777216 65536 \
		>"$out.c" 2>&1 || rc=$?
	wait "$pid" || src=$?
	echo "recv_eagain: client exit $rc: $(tr '\n' ' ' <"$out.c")"
	echo "recv_eagain: server exit $src: $(grep -v listening "$out" | tr '\n' ' ')"
	[ "$src" -eq 0 ] || [ "$src" -eq 3 ] || return 1
	case $rc in
	0) ;;
	3) broken+=("recv_eagain: $(grep -o '[0-9]* EAGAIN from blocking recv' "$out.c")") ;;
	*) return 1 ;;
	esac
	port=$((20000 + RANDOM % 20000))
	out=$T/work/edge.$port
	in_cg b timeout 60 $V/sockmap_edge server stream "${IP4[b]}" "$port" recv=splice \
		chunk=65536 size=4194304 reply=4096 wsize=65536 >"$out" 2>&1 &
	pid=$!
	listening b "$port" || return 1
	rc=0 src=0
	in_cg a timeout 60 $V/sockmap_edge client stream "${IP4[b]}" "$port" recv=splice \
		chunk=65536 size=4194304 reply=4096 wsize=65536 >"$out.c" 2>&1 || rc=$?
	wait "$pid" || src=$?
	echo "splice_ingress: client exit $rc: $(tr '\n' ' ' <"$out.c")"
	echo "splice_ingress: server exit $src: $(tr '\n' ' ' <"$out")"
	if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ]; then
		# Only the kernel's exact signature is expected-broken; anything else fails.
		grep -q 'server: stream ended at 0 of 4194304 bytes' "$out" || return 1
		broken+=("splice_ingress: splice() returned EOF at byte 0 of 4194304")
	fi
	echo "redirected: +$(($(sm_stat redirect) - r0))"
	[ "$(sm_stat redirect)" -gt "$r0" ] || { echo "nothing was redirected"; return 1; }
	del a && del b || return 1
	[ ${#broken[@]} -gt 0 ] || return 0
	if [ "$RECV_FIXED" = 1 ]; then
		echo "this kernel has the tcp_bpf fixes: ${broken[*]}"
		return 1
	fi
	echo "${broken[*]}"
	return $BROKEN
}

# ------------------------------------------------------------------ the socket battery

# battery ADDR: build/tests/sock_battery (tests/node/sockmap/sock_battery.bats on the host), its
# server in pod b and its client in pod a, both in their cgroups: every case must answer ok on both
# ends. The per-case lines of the client are the diagnostics.
battery() {
	local addr=$1 port out pid rc=0 cases fails
	port=$((20000 + RANDOM % 20000))
	out=$T/work/battery.$port
	# Each case's deadline: 15 s on the host, 4x here, where the CPU is emulated (TCG) and
	# 20000 7-byte TCP_NODELAY writes took over 15 s on a loaded host. A hang still fails.
	SOCK_BATTERY_CASE_SECONDS=60 in_cg b timeout 600 $V/sock_battery server "$addr" "$port" \
		>"$out" 2>&1 &
	pid=$!
	listening b "$port" || return 1
	SOCK_BATTERY_CASE_SECONDS=60 in_cg a timeout 600 $V/sock_battery client "$addr" "$port" \
		>"$out.c" 2>&1 || rc=$?
	# The server forks a child per case and never exits by itself: end the whole pod's tree.
	echo 1 >"$CGROOT/velotest-b/cgroup.kill"
	wait "$pid" 2>/dev/null
	cases=$($V/sock_battery list | wc -l)
	fails=$(grep -h '^FAIL' "$out.c" "$out")
	echo "$addr: client exit $rc, $(grep -c '^ok ' "$out.c") of $cases ok" \
		"($(grep '^ok ' "$out.c" | awk '{print $2}' | tr '\n' ' '))"
	[ -z "$fails" ] || { echo "$fails"; return 1; }
	if [ "$rc" -ne 0 ] || [ "$(grep -c '^ok ' "$out.c")" -ne "$cases" ]; then
		echo "not every case ran: $(tr '\n' ' ' <"$out.c")"
		return 1
	fi
}

# battery_path ANNOTATIONS_JSON: the battery between two pods with those annotations, IPv4 and
# IPv6. Pods a and b stay for the caller's checks; it deletes them.
battery_path() {
	add a "$1" && add b "$1" || return 1
	battery "${IP4[b]}" && battery "${IP6[b]}"
}

t_battery_routed() {
	battery_path '{}' || return 1
	del a && del b
}

t_battery_tc() {
	battery_path '{"velo.dev/fastpath": "tc"}' || return 1
	echo "velo: $(grep -m1 -o 'fastpath tc [^"]*' $T/log/cni.log)"
	del a && del b
}

t_battery_xdp() {
	battery_path '{"velo.dev/fastpath": "xdp"}' || return 1
	echo "velo: $(grep -m1 -o 'fastpath xdp [^"]*' $T/log/cni.log)"
	del a && del b
}

# sockmap as velo decides it, no kernel bug accepted (the guest's config accepts none): where
# velo's probes all pass (velotest.recv_fixed=1: the patched kernel) the pods must be on the
# short-circuit, "kernel bugs accepted: none", and the battery's connections redirected; on
# other kernels velo must keep the pods routed, naming the failed probes, and nothing is
# redirected. The battery must pass either way. MODE: a VELO_SOCKMAP_MODE, or empty.
battery_sockmap() {
	local mode=$1 ann='{"velo.dev/sockmap": "true"}' probe r
	POD_SMMODE[a]=$mode POD_SMMODE[b]=$mode
	battery_path "$ann" || return 1
	probe=$(grep -h 'kernel_bugs=' $T/run/sockmap-probe 2>/dev/null)
	if log_has "sockmap on "; then
		echo "velo: $(grep -m1 -o 'sockmap on [^"]*' $T/log/cni.log); probe cache: $probe"
		log_has "kernel bugs accepted: none" || { echo "velo accepted kernel bugs"; return 1; }
		r=$(sm_stat redirect)
		echo "sockmap stats: $(for st in "${SM_STATS[@]}"; do printf '%s=%s ' "$st" "$(sm_stat "$st")"; done)"
		# redirect_lost counts sends after the peer closed (linger0-rst, peer-close-unread:
		# they go to TCP, which answers RST as routed); the battery checked every byte.
		[ "$r" -gt 0 ] || { echo "sockmap on, but nothing was redirected"; return 1; }
	else
		echo "velo: $(grep -m1 -o 'sockmap: kernel probe failed[^"]*' $T/log/cni.log); probe cache: $probe"
		log_has "sockmap: kernel probe failed: " ||
			{ echo "sockmap stayed routed, but not for a failed kernel probe"; return 1; }
		if [ "$RECV_FIXED" = 1 ]; then
			echo "this kernel has the tcp_bpf fixes, but velo's probes failed"
			return 1
		fi
		[ ! -e "$BPFFS/velotest-$TEST/velo_sock_v1" ] || [ "$(sm_stat redirect)" -eq 0 ] ||
			{ echo "pods kept routed, yet sockets were redirected"; return 1; }
	fi
	del a && del b
}
t_battery_sockmap() { battery_sockmap ""; }
t_battery_sockmap_msg() {
	if [ "$RECV_FIXED" != 1 ]; then
		echo "sockmap pods stay routed on this kernel: the verdict mode does not matter"
		return $SKIP
	fi
	battery_sockmap per-message
}

# ------------------------------------------------------------------ benchmark (on request)

# Stream throughput by write size for the three sk_msg verdict modes side by side: a pod pair
# per mode (VELO_SOCKMAP_MODE at ADD, each mode in its own bpffs dir, as bench/sockmap.sh),
# sockmap_stream blast (Nagle on, SIZE-byte writes) into sink (1 MiB reads) for SECS s, REPS
# repetitions with the mode order rotated; median Gbit/s and ratios. Under TCG the absolute
# numbers are ~10x too low: only the ratios mean anything. Then, untimed, the verdict program's
# run count per mode for one 4 MiB stream in 64 KiB writes (BPF_ENABLE_STATS).
t_sockmap_bench() {
	local ann='{"velo.dev/sockmap": "true"}' modes=(per-message apply-bytes permanent)
	local sizes reps secs m size rep i k gbps order before after start
	local -A smport res
	sizes=$(opt bench_sizes | tr , ' ')
	sizes=${sizes:-64 128 512 1024 65536 1048576}
	reps=$(opt bench_reps) secs=$(opt bench_secs)
	reps=${reps:-3} secs=${secs:-2}
	for m in "${modes[@]}"; do
		for k in srv cli; do
			POD_BPFFS[${m}_$k]=$BPFFS/velotest-$TEST-$m POD_SMMODE[${m}_$k]=$m
			add "${m}_$k" "$ann" || return 1
		done
	done
	if ! [ "$(grep -c 'sockmap on ' $T/log/cni.log)" -eq 6 ]; then
		echo "sockmap is not on for every pod:"
		grep sockmap $T/log/cni.log | tail -n 6
		return 1
	fi
	if log_has "=permanent but this kernel has no BPF_F_PERMANENT"; then
		echo "no BPF_F_PERMANENT on this kernel: the permanent mode is left out"
		modes=(per-message apply-bytes)
	fi
	i=30000
	for m in "${modes[@]}"; do
		smport[$m]=$((i++))
		in_cg "${m}_srv" timeout 1800 $V/sockmap_stream sink "${IP4[${m}_srv]}" "${smport[$m]}" \
			>"$T/work/sink.$m" 2>&1 &
	done
	for m in "${modes[@]}"; do
		listening "${m}_srv" "${smport[$m]}" || return 1
	done
	start=$(date +%s)
	for rep in $(seq "$reps"); do
		order=("${modes[@]:$(((rep - 1) % ${#modes[@]}))}" "${modes[@]:0:$(((rep - 1) % ${#modes[@]}))}")
		for size in $sizes; do
			for m in "${order[@]}"; do
				gbps=$(in_cg "${m}_cli" timeout $((secs * 5 + 30)) $V/sockmap_stream blast \
					"${IP4[${m}_srv]}" "${smport[$m]}" "$size" "$secs" 2>>"$T/work/blast.err") ||
					{ echo "blast $m $size B failed: $(cat "$T/work/blast.err")"; return 1; }
				res[$m,$size]+="$gbps "
			done
		done
	done
	echo "$reps reps x ${#modes[@]} modes x $(wc -w <<<"$sizes") sizes x $secs s in $(($(date +%s) - start)) s;" \
		"mode order rotated per rep; cells: median Gbit/s of $reps (min-max)"
	echo
	echo "| size | per-message | apply-bytes | permanent | apply/per-msg | perm/apply | perm/per-msg |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	for size in $sizes; do
		for m in per-message apply-bytes permanent; do
			echo "$m ${res[$m,$size]:-}"
		done | awk -v size="$size" '
		# sorted V[1..N] from the fields 2..NF (busybox awk has no asort)
		function sorted(   i, j, t) {
			n = 0
			for (i = 2; i <= NF; i++) v[++n] = $i + 0
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		}
		function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
		{
			sorted(); m = $1; med[m] = -1; cell[m] = "-"
			if (n) {
				med[m] = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
				cell[m] = sprintf("%.3f (%s-%s)", med[m], v[1], v[n])
			}
		}
		END {
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", size, cell["per-message"],
				cell["apply-bytes"], cell["permanent"],
				ratio(med["apply-bytes"], med["per-message"]),
				ratio(med["permanent"], med["apply-bytes"]),
				ratio(med["permanent"], med["per-message"])
		}'
	done
	echo
	[ ! -s "$T/work/blast.err" ] || echo "blast stderr: $(sort "$T/work/blast.err" | uniq -c | tr '\n' ' ')"
	for m in "${modes[@]}"; do
		[ "$(sm_stat redirect "${POD_BPFFS[${m}_srv]}")" -gt 0 ] ||
			{ echo "$m: nothing was redirected"; return 1; }
		[ "$(sm_stat redirect_lost "${POD_BPFFS[${m}_srv]}")" -eq 0 ] ||
			{ echo "$m: redirects lost"; return 1; }
	done
	# The verdict program's runs for one socket's 4 MiB in 64 KiB writes, per mode (untimed).
	sysctl -qw kernel.bpf_stats_enabled=1
	for m in "${modes[@]}"; do
		before=$(run_cnt velo_sk_msg "${POD_BPFFS[${m}_srv]}")
		stream "${m}_srv" "${m}_cli" "${IP4[${m}_srv]}" 1 4194304 65536 >/dev/null || return 1
		after=$(run_cnt velo_sk_msg "${POD_BPFFS[${m}_srv]}")
		echo "velo_sk_msg runs, $m, one socket, 4 MiB in 64 KiB writes: $((after - before))"
	done
	sysctl -qw kernel.bpf_stats_enabled=0
	for m in "${modes[@]}" permanent; do
		for k in srv cli; do
			[ -z "${ANN[${m}_$k]:-}" ] || del "${m}_$k" || return 1
			ANN[${m}_$k]=
		done
	done
}

# Accounting, egress deny list and TCP congestion control on one pod's cgroup.
t_cgroup() {
	local ann cc
	add denied '{}' && add allowed '{}' || return 1
	ann=$(jq -cn --arg d "${IP4[denied]}/32,${IP6[denied]}/128" '{"velo.dev/accounting": "true",
		"velo.dev/egress-deny": $d, "velo.dev/tcp-congestion": "reno"}')
	add c "$ann" || return 1
	echo "attached to the pod's cgroup: $(cg_attached c | tr '\n' ' ')"
	cc=$(pod c cat /proc/sys/net/ipv4/tcp_congestion_control)
	[ "$cc" = reno ] || { echo "pod congestion control is $cc, not reno"; return 1; }
	# Allowed: data by digest; denied: connect fails, both families.
	digest_cg c allowed "${IP4[allowed]}" 8001 || return 1
	digest_cg c allowed "${IP6[allowed]}" 8002 || return 1
	pod denied timeout 20 nc -l -p 8003 -e true &
	sleep 0.3
	if in_cg c timeout 5 nc -w 2 "${IP4[denied]}" 8003 </dev/null; then
		echo "pod c reached the denied ${IP4[denied]}"
		return 1
	fi
	if in_cg c timeout 5 nc -w 2 "${IP6[denied]}" 8003 </dev/null; then
		echo "pod c reached the denied ${IP6[denied]}"
		return 1
	fi
	echo "accounting: tx_packets=$(cg_counter c tx_packets) rx_packets=$(cg_counter c rx_packets) deny_packets=$(cg_counter c deny_packets)"
	[ "$(cg_counter c tx_packets)" -gt 1000 ] || { echo "accounting counted too little"; return 1; }
	[ "$(cg_counter c deny_packets)" -gt 0 ] || { echo "no denied packet counted"; return 1; }
	del c && del denied && del allowed
}

# Connection events (velo.dev/flows, -udp) on one pod's cgroup: attached, run by this kernel on
# a TCP transfer, and the pod's addresses in velo_fl_pods_v1 (no velod here reads the ring).
t_flows() {
	local ops udp rc
	add b '{}' || return 1
	add a '{"velo.dev/flows": "true", "velo.dev/flows-udp": "true"}' || return 1
	echo "attached to the pod's cgroup: $(cg_attached a | tr '\n' ' ')"
	sysctl -qw kernel.bpf_stats_enabled=1
	digest_cg a b "${IP4[b]}" 8011 && digest_cg a b "${IP6[b]}" 8012
	rc=$?
	ops=$(run_cnt velo_flow_ops) udp=$(run_cnt velo_fl_udp_eg)
	sysctl -qw kernel.bpf_stats_enabled=0
	[ "$rc" -eq 0 ] || return 1
	echo "runs: velo_flow_ops $ops, velo_fl_udp_eg $udp; velo_fl_pods_v1: $(map_len velo_fl_pods_v1) entries"
	[ "$ops" -gt 0 ] || { echo "velo_flow_ops never ran"; return 1; }
	[ "$udp" -gt 0 ] || { echo "velo_fl_udp_eg never ran"; return 1; }
	[ "$(map_len velo_fl_pods_v1)" -eq 2 ] || { echo "velo_fl_pods_v1 lacks pod a's addresses"; return 1; }
	del a && del b
}

# digest_cg FROM TO ADDR PORT: digest() with the client inside FROM's cgroup.
digest_cg() {
	local from=$1 to=$2 addr=$3 port=$4 sent got pid
	local send=$T/work/send.$port sum=$T/work/sum.$port
	head -c 4194304 /dev/urandom >"$send"
	pod "$to" timeout 40 nc -l -p "$port" -e sh -c "sha256sum >$sum" &
	pid=$!
	listening "$to" "$port" || return 1
	in_cg "$from" timeout 30 nc "$addr" "$port" <"$send" || echo "client in $from: nc exited $?"
	wait "$pid" || { echo "server in $to at $addr:$port failed"; return 1; }
	sent=$(sha256sum <"$send" | cut -d' ' -f1)
	got=$(cut -d' ' -f1 <"$sum" 2>/dev/null)
	[ "$sent" = "$got" ] || { echo "$from -> $to $addr: sent $sent, received ${got:-nothing}"; return 1; }
}

# ------------------------------------------------------------------ NetworkPolicy

# velod in the node, NetworkPolicy from $T/policy.json (written by pol_install), its /metrics on
# 127.0.0.1:$POL_PORT.
POL_PORT=9398
velod_start() {
	jq -n --arg t $T --arg b "$BPFFS/velotest-$TEST" --arg l "127.0.0.1:$POL_PORT" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", nodeName: "node-a", logLevel: "debug",
		policySource: "file", policyFile: ($t + "/policy.json"), policySyncMs: 50}' \
		>$T/velod.json
	# nsenter execs velod: $! is velod itself.
	node $V/velod --config $T/velod.json 2>>$T/log/velod.log &
	VELOD_PID=$!
}
velod_stop() {
	[ -n "$VELOD_PID" ] || return 0
	kill "$VELOD_PID"
	wait "$VELOD_PID"
	VELOD_PID=
}

# pol_syncs: velod's velo_policy_syncs_total ("" before it answers).
pol_syncs() {
	node wget -qO- "http://127.0.0.1:$POL_PORT/metrics" 2>/dev/null |
		awk '$1 == "velo_policy_syncs_total" { print int($2) }'
}

# pol_install FILE: FILE becomes the policy file, then waits (60 s: velod's start under TCG) for
# velod's next sync.
pol_install() {
	local before i got
	before=$(pol_syncs)
	cp "$1" $T/policy.json.tmp && mv $T/policy.json.tmp $T/policy.json || return 1
	for i in $(seq 600); do
		got=$(pol_syncs)
		[ -n "$got" ] && [ "$got" -gt "${before:-0}" ] && return 0
		kill -0 "$VELOD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "velod did not sync the policy file (velo_policy_syncs_total: ${got:-none}):"
	tail -n 15 $T/log/velod.log
	return 1
}

# pol_apply POLICIES_JSON_ARRAY: the grid's policy file with these policies (guest_shared.bash's
# pol_file), installed.
pol_apply() {
	pol_file "$1" >$T/work/policy.json || return 1
	pol_install $T/work/policy.json
}

# pol_attached N: the programs of N pods are on their host veths: tcx links pinned, or where the
# kernel has no tcx, clsact filters (bpftool net lists those by name, and no tcx links).
pol_attached() {
	local want=$1 tcx from to pins
	tcx=$(awk '{print $3}' $T/run/bpf-probes 2>/dev/null)
	pins=$(find "$BPFFS/velotest-$TEST/links" -name '*_pol_*' 2>/dev/null | wc -l)
	# libbpf names a filter "<program>:[<id>]".
	read -r from to <<<"$(node bpftool -j net show | jq -r '[.[].tc[]?.name // "" | sub(":.*"; "")] |
		"\(map(select(. == "velo_pol_from")) | length) \(map(select(. == "velo_pol_to")) | length)"')"
	echo "tcx=${tcx:-?}: link pins $pins, clsact filters velo_pol_from $from, velo_pol_to $to"
	if [ "$tcx" = 1 ]; then
		[ "$pins" -eq $((2 * want)) ]
	else
		[ "$pins" -eq 0 ] && [ "$from" -eq "$want" ] && [ "$to" -eq "$want" ]
	fi
}

# The truth table tests/node/policy/policy_truth.bats runs on the host, made for this grid by
# kernel/matrix/policy-table.sh with policy_model.py when the initramfs was built (no python
# here): per case the policy file and every probe's verdict.
POL_TABLE=$(dirname "$0")/policy
POL_TIMEOUT_MS=2000
declare -A POL_IP POL_NS POL_CG
POL_KEYS=()
POL_PODS_JSON=
POL_SERVICES=0
POL_CG_MOUNT=$CGROOT
POL_NODE_NETNS=$NODE
POL_WORK=$T/work
VT_SUBNET4=10.99.0.0/24

# pol_grid ANNOTATIONS_JSON: the nine pods x/a .. z/c, each at the address the table was
# computed for (host-local's rangeStart = rangeEnd), their servers started. One ADD at a time:
# nine at once under TCG outwait velo's bounded lock waits (10 s: "try again later").
pol_grid() {
	local key ip p lines line
	mapfile -t lines <"$POL_TABLE/grid"
	for line in "${lines[@]}"; do
		read -r key ip <<<"$line"
		p=${key/\//-}
		POD_NS[$p]=${key%/*} POD_NAME[$p]=${key#*/} POD_ADDR4[$p]=$ip
		add "$p" "$1" || return 1
		[ "${IP4[$p]}" = "$ip" ] || { echo "pod $key got ${IP4[$p]}, not $ip"; return 1; }
		POL_KEYS+=("$key")
		POL_IP[$key]=$ip POL_NS[$key]=velotest-pod-$p POL_CG[$key]=/velotest-$p
		pol_run "$key" $V/policy_probe serve "${POL_PORTS[@]}" >"$T/work/serve-$p" 2>&1 &
	done
	POL_PODS_JSON=
	for key in "${POL_KEYS[@]}"; do
		pol_listening "$T/work/serve-${key/\//-}" "servers in $key" || return 1
	done
}

# pol_grid_del: the grid's pods deleted (their addresses free for the next grid).
pol_grid_del() {
	local key
	for key in "${POL_KEYS[@]}"; do
		del "${key/\//-}" || return 1
	done
	POL_KEYS=()
}

# pol_table PATH: every case, all probes at once (every pod and the node to every pod, TCP, UDP
# and SCTP on ports 53 and 80), each verdict compared with the model's; after deny-all-ingress,
# only x's pods carry the programs. Fails at the end naming the cases that differed.
pol_table() {
	local path=$1 dir=$T/work/table name start wrong differ=()
	mkdir -p "$dir"
	cp "$POL_TABLE"/probes-* "$dir/"
	while read -r name; do
		start=$SECONDS
		pol_install "$POL_TABLE/$name.json" || return 1
		pol_probe_all "$dir" $V/policy_probe || { differ+=("$name(prober)"); continue; }
		# A probe's verdict: ok is a connection (its replies passed), anything else none.
		wrong=$(awk 'NR == FNR { want[$1] = $2; next } { got[$1] = $2 }
			END { for (id in want) { g = (id in got) ? got[id] : "nothing"
				if ((g == "ok") != (want[id] == "allow"))
					print id " got " g ", the model says " want[id] } }' \
			"$POL_TABLE/$name.expect" "$dir/results")
		if [ -n "$wrong" ]; then
			differ+=("$name")
			echo "$path: case $name: $(wc -l <<<"$wrong") of $(wc -l <"$POL_TABLE/$name.expect") probes differ from the model:"
			sort <<<"$wrong" | head -n 30
		else
			echo "$path: case $name: $(wc -l <"$POL_TABLE/$name.expect") probes as the model says" \
				"($(grep -c ' deny$' "$POL_TABLE/$name.expect") denied; $((SECONDS - start)) s)"
		fi
		if [ "$name" = deny-all-ingress ]; then
			pol_attached 3 || differ+=("$name(programs not on x's 3 pods only)")
		fi
	done <"$POL_TABLE/cases"
	[ "${#differ[@]}" -eq 0 ] || { echo "$path: cases that differ: ${differ[*]}"; return 1; }
}

# pol_path NAME ANNOTATIONS_JSON: the grid on one path, the table, the held connections. The
# first grid is added before velod knows any policy: ADD puts the programs on (fail closed).
pol_path() {
	local start=$SECONDS
	pol_grid "$2" || return 1
	echo "$1: 9 pods added in $((SECONDS - start)) s"
	if [ ! -e $T/policy.json ]; then
		pol_attached 9 || { echo "ADD did not attach the policy programs"; return 1; }
	fi
	if [ "$1" = tc ]; then
		log_has "fastpath tc on" || { echo "tc: the pods fell back to the routed path:" \
			"$(grep -m1 'fastpath tc' $T/log/cni.log)"; return 1; }
	fi
	pol_table "$1" || return 1
	pol_held pol_apply $V/policy_probe || return 1
	start=$SECONDS
	pol_grid_del || return 1
	echo "$1: 9 pods deleted in $((SECONDS - start)) s"
}

# NetworkPolicy on this kernel (tcx, or clsact where tcx is missing): velod with a policy file,
# the host's truth table on a grid of routed pods, then on the tc fast path (velo_pol_from must
# judge before velo_tc_ingress redirects), and the held connections a change cuts or keeps.
t_policy() {
	local i start
	# velod's libnftables exits the process where nf_tables is missing (a distro kernel
	# loads it on demand; this guest has no module autoload); the tc fast path needs conntrack.
	for i in nf_tables nf_conntrack; do
		if [ ! -d /sys/module/$i ] && modinfo $i >/dev/null 2>&1; then
			modprobe $i || { echo "modprobe $i failed"; return 1; }
		fi
	done
	# velod's policySource is NetworkPolicy's one switch: velod turns it on at start (60 s:
	# velod's start under TCG), and ADD reads it.
	start=$SECONDS
	velod_start
	for i in $(seq 600); do
		[ "$(cat $T/state/.policy-switch 2>/dev/null)" = on ] && break
		sleep 0.1
	done
	[ "$(cat $T/state/.policy-switch 2>/dev/null)" = on ] ||
		{ echo "velod did not turn the switch on: $(tail -n 5 $T/log/velod.log)"; return 1; }
	echo "velod turned the switch on after $((SECONDS - start)) s"
	# Without SCTP sockets (no sctp module here) the probes carry SCTP as raw packets.
	echo "SCTP: $($V/policy_probe sctp)"
	pol_path routed '{}' || return 1
	pol_path tc '{"velo.dev/fastpath": "tc"}' || return 1
	# Egress through a ClusterIP is judged in netfilter once a pod's egress is isolated
	# (Linux >= 6.4); where the kernel has no BPF netfilter links, velod says what stays
	# unjudged.
	grep -m 1 -e "can't run velo_pol_nf" -e "velo_pol_nf on netfilter" $T/log/velod.log ||
		{ echo "velod said nothing about velo_pol_nf: $(tail -n 5 $T/log/velod.log)"; return 1; }
	velod_stop
}

# velo's BPF objects (when the build kept them) through this kernel's verifier, one by one:
# a fast path that falls back because its program is rejected is velo's bug, not the kernel's.
t_objects() {
	local obj name err bad=0
	for obj in "$V"/bpf/*.bpf.o; do
		[ -f "$obj" ] || { echo "no BPF objects in the initramfs (build/bpf/*.bpf.o)"; return 0; }
		name=$(basename "$obj" .bpf.o)
		err=$T/work/verifier.$name
		if [ "$name" = policy_nf ]; then
			# SEC("netfilter") is newer than bpftool's libbpf (1.1), which can't guess its
			# type; velod sets it. t_policy checks what velod makes of it on this kernel.
			echo "$name: loaded by velod only (t_policy)"
			continue
		fi
		mkdir -p "$BPFFS/velotest-objects"
		if bpftool prog loadall "$obj" "$BPFFS/velotest-objects/$name" >"$err" 2>&1; then
			echo "$name: loads"
		elif [ "$name" = iter_tcp ] && grep -q 'bpf_sock_destroy' "$err"; then
			# Optional: velo probes the kfunc (Linux 6.5) at run time and, without it, leaves
			# connections to a removed Service backend open (docs/services.md).
			echo "$name: this kernel has no bpf_sock_destroy (velo probes it; optional)"
		elif [ "$name" = iter_svc_sk ] && grep -q 'load failed: Invalid argument' "$err" &&
			! grep -q 'BEGIN PROG LOAD LOG' "$err"; then
			# Refused before the verifier ran: the kernel took no iter/tcp program (the test
			# kernel's tiny config, not understood yet). Optional too: veloctl sockets then
			# lists the connections without the Service they came through, and says so.
			echo "$name: this kernel refuses iter/tcp programs before verifying them (optional)"
		else
			bad=1
			echo "$name: rejected; the verifier's last words:"
			grep -v '^libbpf: ' "$err" | grep -v '^$' | tail -n 12
		fi
		# Maps pinned by name land in the bpffs root: only this guest's.
		rm -rf "$BPFFS/velotest-objects" "$BPFFS"/velo_*
	done
	return $bad
}

# ------------------------------------------------------------------ runner

# cleanup: whatever a failed test left (pods, cgroups, pins).
cleanup() {
	local ns cg
	velod_stop
	for ns in $(ip netns list | awk '{print $1}' | grep '^velotest-pod-'); do
		ip netns del "$ns"
	done
	for cg in "$CGROOT"/velotest-*; do
		[ -d "$cg" ] || continue
		vs_cgroup_kill "$cg"
		rmdir "$cg" 2>/dev/null
	done
	# The whole state dir: velod's policy switch (.policy-switch) outlives velod, as on a node.
	rm -rf "$BPFFS/velotest-$TEST" "$BPFFS/velotest-$TEST"-* $T/state $T/ipam/*
	mkdir -p $T/state
	POD_BPFFS=() POD_SMMODE=() POD_NS=() POD_NAME=() POD_ADDR4=()
	POL_KEYS=() POL_PODS_JSON=
	node ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^vt' |
		while read -r l; do node ip link del "$l"; done
}

# run NAME DESCRIPTION: one TAP line; output of a failing test and the log's tail as diagnostics.
run() {
	local name=$1 desc=$2 out=$T/work/out.$1 left="" start rc splats
	[ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || return 0
	[ -n "$ONLY" ] || [[ $ON_REQUEST != *" $name "* ]] || return 0
	TEST=$name
	n=$((n + 1))
	echo "velotest: test $n: $name" >&2
	: >$T/log/cni.log
	start=$(date +%s)
	splats=$(splat_count)
	"t_$name" >"$out" 2>&1
	rc=$?
	# Whatever the test thought, a kernel that WARNed or BUGged during it failed it.
	if [ "$(splat_count)" -gt "$splats" ]; then
		{ echo "kernel splat during the test:"; dmesg | grep -E -A12 "$SPLAT_RE" | tail -n 40; } >>"$out"
		rc=1
	fi
	if [ "$rc" -eq $SKIP ]; then
		echo "ok $n - $KLABEL: $desc # skip $(tail -n 1 "$out")"
	elif [ "$rc" -eq $BROKEN ] && left=$(leftovers) && [ -z "$left" ]; then
		echo "not ok $n - $KLABEL: $desc # TODO expected-broken: $(tail -n 1 "$out")"
		diag <"$out"
	elif [ "$rc" -eq 0 ] && left=$(leftovers) && [ -z "$left" ]; then
		echo "ok $n - $KLABEL: $desc ($(($(date +%s) - start)) s)"
		diag <"$out"
	else
		failed=$((failed + 1))
		echo "not ok $n - $KLABEL: $desc"
		diag <"$out"
		[ -z "${left:-}" ] || echo "left behind: $left" | diag
		echo "velo log:" | diag
		tail -n 25 $T/log/cni.log | diag
	fi
	cleanup >/dev/null 2>&1
}

node_setup
echo "# $KLABEL, $(nproc) CPUs, modules: $(lsmod 2>/dev/null | awk 'NR > 1 {print $1}' | tr '\n' ' ')"
run routed "routed path: ADD, ping, TCP by digest both ways over IPv4 and IPv6, DEL leaves nothing"
run tc "fast path tc: attached or clean fallback, traffic by digest, DEL leaves nothing"
run xdp "fast path xdp: attached or clean fallback, traffic by digest, DEL leaves nothing"
run sockmap "sockmap: attached or clean fallback, checked streams, connect race, sk_msg runs"
run sockmap_peer_gone "sockmap: a peer pod deleted mid-stream: the sender gets an error, no leak, no splat"
run sockmap_recv "sockmap: blocking recv() after shutdown(SHUT_WR) never EAGAIN; splice() reads redirected data"
run battery_routed "socket battery, routed path: every case, IPv4 and IPv6"
run battery_tc "socket battery, fast path tc: every case, IPv4 and IPv6"
run battery_xdp "socket battery, fast path xdp: every case, IPv4 and IPv6"
run battery_sockmap "socket battery, sockmap as velo's probes decide (no bug accepted): every case, IPv4 and IPv6"
run battery_sockmap_msg "socket battery, sockmap with per-message verdicts: every case, IPv4 and IPv6"
run cgroup "cgroup features: accounting, egress-deny, tcp-congestion reno"
run flows "connection events: velo.dev/flows and flows-udp attached and run on a transfer"
run objects "velo's BPF objects pass this kernel's verifier (nf_conntrack not loaded)"
run policy "NetworkPolicy truth table (tests/node's cases, policy_model.py's verdicts), routed and fast path tc: programs on (tcx or clsact), TCP/UDP/SCTP, replies pass, held connections cut or kept"
run tc_ct "fast path tc with nf_conntrack loaded: attached, traffic by digest"
run xdp_ct "fast path xdp with nf_conntrack loaded: attached, traffic by digest"
run sockmap_bench "benchmark: stream throughput by write size, per-message vs apply-bytes vs permanent"
for f in bpf-probes sockmap-probe; do
	[ -f "$T/run/$f" ] && echo "velo's $f cache: $(tr '\n' ' ' <"$T/run/$f")" | diag
done
echo "1..$n"
ip netns del $NODE
[ "$failed" -eq 0 ]
