#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velod: reconciliation of endpoints whose pod vanished without a DEL, and its
# HTTP endpoints. velod runs inside the test's node netns (where the veths
# are) and serves on that netns's loopback only.

load ../lib/lib
load ../lib/cgroup_lib

VD_PORT=19099

setup() {
	vt_setup_velo
	vt_need_velod VD_BIN
	command -v curl >/dev/null || skip "curl not installed"
}

# vd_config [GRACE_SECONDS [BPFFS_DIR]]: writes $VT/velod.json for this test's state and node.
vd_config() {
	jq -n --arg t "$VT" --arg bin "$VT_BIN" --arg n "$VT_NETWORK" \
		--arg listen "127.0.0.1:$VD_PORT" --argjson grace "${1:-0}" \
		--arg bpffs "${2:-$VT/bpffs-unused}" '{
		network: $n, stateDir: ($t + "/state"), runDir: ($t + "/run"), cniPath: $bin,
		bpffsDir: $bpffs,
		listen: $listen, reconcileIntervalSeconds: 1, gracePeriodSeconds: $grace,
		sampleIntervalSeconds: 2, sampleWindowSeconds: 0.5, logLevel: "debug"}' \
		>"$VT/velod.json"
}

# One reconciliation pass in the node; its log in $VT/velod.log.
vd_once() {
	vt_node "$VD_BIN" --config "$VT/velod.json" --once 2>>"$VT/velod.log"
}

vd_show_log() {
	echo "velod log:"
	tail -n 20 "$VT/velod.log" 2>/dev/null
	echo "plugin log:"
	tail -n 10 "$VT_LOG" 2>/dev/null
}

# vd_assert_kept CONTAINER IP [novet]: the endpoint's veth, record and lease all exist
# ("novet": its netns was deleted, which takes the veth pair with it; record and lease stay).
vd_assert_kept() {
	local host
	host="$(vt_host_ifname vt "$1" eth0)"
	if [ "${3:-}" != novet ] && ! vt_node ip link show "$host" >/dev/null 2>&1; then
		echo "veth $host of $1 gone"
		vd_show_log
		return 1
	fi
	[ -f "$VT_STATE/$VT_NETWORK/$1:eth0.json" ] || { echo "record of $1 gone"; vd_show_log; return 1; }
	vt_lease_exists "$2" || { echo "lease $2 of $1 gone"; vd_show_log; return 1; }
}

# vd_assert_released CONTAINER IP: nothing of the endpoint is left.
vd_assert_released() {
	local host
	host="$(vt_host_ifname vt "$1" eth0)"
	if vt_node ip link show "$host" >/dev/null 2>&1; then echo "veth $host of $1 kept"; vd_show_log; return 1; fi
	if [ -f "$VT_STATE/$VT_NETWORK/$1:eth0.json" ]; then echo "record of $1 kept"; vd_show_log; return 1; fi
	if vt_lease_exists "$2"; then echo "lease $2 of $1 kept"; vd_show_log; return 1; fi
}

# vd_metric NAME_WITH_LABELS: the sample's value from /metrics ("" when absent).
vd_metric() {
	vt_node curl -sf --max-time 5 "http://127.0.0.1:$VD_PORT/metrics" |
		awk -v m="$1" '$1 == m { print $2 }'
}

@test "velod releases a pod whose netns vanished without DEL (veth, record, lease) and keeps the live pod" {
	local conf gone live ip_gone ip_live
	conf="$(vt_config -f 4)"
	vt_pod_add gone ip_gone "$conf" ctr-gone
	vt_pod_add live ip_live "$conf" ctr-live
	vd_config 0

	vd_once || { vd_show_log; false; }
	vd_assert_kept ctr-gone "$ip_gone"
	vd_assert_kept ctr-live "$ip_live"

	ip netns del "$gone" # the runtime lost the pod: no DEL ever comes
	vd_once || { vd_show_log; false; }
	vd_assert_released ctr-gone "$ip_gone"
	vd_assert_kept ctr-live "$ip_live"
	vt_ping_from_node "$ip_live"
	grep -q 'released' "$VT/velod.log"
}

@test "velo IPAM: velod releases the leases of a pod whose netns vanished without DEL, not the live pod's" {
	local conf gone live ip_gone ip6_gone ip_live
	conf="$(vt_config -i velo -f dual)"
	vt_pod_add gone ip_gone "$conf" ctr-gone
	ip6_gone="$(vt_ip "$VT_RESULT" 6)"
	vt_pod_add live ip_live "$conf" ctr-live
	vd_config 0

	ip netns del "$gone"
	vd_once || { vd_show_log; false; }
	vd_assert_released ctr-gone "$ip_gone"
	if vt_lease_exists "$ip6_gone"; then echo "lease $ip6_gone kept"; vd_show_log; false; fi
	vd_assert_kept ctr-live "$ip_live"
	[ "$(vt_leases | wc -l)" -eq 2 ] || { echo "leases: $(vt_leases)"; false; }
}

@test "velod keeps a vanished pod's endpoint while it is younger than the grace period" {
	local conf pod ip
	conf="$(vt_config -f 4)"
	vt_pod_add pod ip "$conf" ctr-young
	ip netns del "$pod"
	vd_config 3600
	vd_once || { vd_show_log; false; }
	vd_assert_kept ctr-young "$ip" novet
}

@test "velod skips an endpoint whose attachment lock is held (ADD/DEL in flight), releases it once free" {
	local conf pod ip lock fd
	conf="$(vt_config -f 4)"
	vt_pod_add pod ip "$conf" ctr-busy
	ip netns del "$pod"
	vd_config 0
	lock="$VT/run/locks/$VT_NETWORK/ctr-busy:eth0.lock"
	mkdir -p "$(dirname "$lock")"
	exec {fd}>"$lock"
	flock -n "$fd"
	vd_once || { vd_show_log; false; }
	vd_assert_kept ctr-busy "$ip" novet
	grep -q 'busy' "$VT/velod.log"
	exec {fd}>&-
	vd_once || { vd_show_log; false; }
	vd_assert_released ctr-busy "$ip"
}

@test "velod releases an endpoint whose netns path now names another namespace (inode differs)" {
	local conf pod ip
	conf="$(vt_config -f 4)"
	vt_pod_add pod ip "$conf" ctr-reused
	ip netns del "$pod"
	ip netns add "$pod" # same path, a new namespace: not the pod's any more
	vd_config 0
	vd_once || { vd_show_log; false; }
	vd_assert_released ctr-reused "$ip"
}

@test "reconciling during 16 parallel ADDs releases none of them; every pod keeps its address" {
	local conf i pods=() ips stop="$VT/work/stop" loop_pid
	conf="$(vt_config -f 4)"
	for i in $(seq 16); do
		pods+=("$(vt_pod_new)")
	done
	vd_config 0
	(
		while [ ! -e "$stop" ]; do
			vd_once
		done
	) &
	loop_pid=$!
	VT_PIDS+=("$loop_pid")
	for i in $(seq 16); do
		(
			RANDOM=$i
			vt_cni ADD "ctr-race-$i" "${pods[i - 1]}" eth0 "$conf"
			echo "$VT_RC" >"$VT/work/rc.$i"
			printf '%s' "$VT_OUT" >"$VT/work/res.$i"
		) &
	done
	for i in $(seq 16); do
		while [ ! -s "$VT/work/rc.$i" ]; do sleep 0.1; done
	done
	vd_once # one more pass after every ADD finished
	touch "$stop"
	wait "$loop_pid" || true
	vt_assert_calls_ok ADD 16
	ips="$(for i in $(seq 16); do vt_ip "$(cat "$VT/work/res.$i")" 4; done | sort -u | wc -l)"
	[ "$ips" -eq 16 ] || { echo "distinct IPv4 addresses: $ips"; false; }
	for i in $(seq 16); do
		vd_assert_kept "ctr-race-$i" "$(vt_ip "$(cat "$VT/work/res.$i")" 4)"
		vt_pod "${pods[i - 1]}" ip -4 addr show dev eth0 |
			grep -q "$(vt_ip "$(cat "$VT/work/res.$i")" 4)/" ||
			{ echo "pod $i lost its address"; false; }
	done
	if grep -q 'reconcile: released' "$VT/velod.log"; then vd_show_log; false; fi
}

@test "velod serves /metrics and /healthz on loopback, reconciles on its interval and exits 0 on SIGTERM" {
	local conf a b ip_b pid i released="" ready="" rc=0
	conf="$(vt_config -f 4)"
	vt_pod_add a - "$conf" ctr-ma
	vt_pod_add b ip_b "$conf" ctr-mb
	vd_config 0
	# nsenter execs velod, so $! is velod itself (a function would fork a subshell).
	nsenter --net="/run/netns/$VT_NODE" "$VD_BIN" --config "$VT/velod.json" 2>>"$VT/velod.log" &
	pid=$!
	VT_PIDS+=("$pid")
	for i in $(seq 50); do
		vt_node curl -sf --max-time 2 "http://127.0.0.1:$VD_PORT/healthz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	[ "$(vt_node curl -s --max-time 5 "http://127.0.0.1:$VD_PORT/healthz")" = ok ] ||
		{ vd_show_log; false; }
	[ "$(vt_node curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$VD_PORT/nope")" = 404 ]
	[ "$(vd_metric "velo_endpoints{network=\"$VT_NETWORK\",phase=\"ready\"}")" = 2 ]
	vt_node curl -sf "http://127.0.0.1:$VD_PORT/metrics" | grep -q '^velo_build_info{version="[^"]*",component="velod"} 1$'
	# Not reachable from outside the node's loopback.
	if nsenter --net="/run/netns/$a" curl -s --max-time 1 "http://169.254.1.1:$VD_PORT/healthz" >/dev/null 2>&1; then
		echo "velod answered on a pod-facing address"
		false
	fi

	ip netns del "$a"
	for i in $(seq 50); do
		released="$(vd_metric velo_reconcile_released_total)"
		[ "$released" = 1 ] && break
		sleep 0.2
	done
	[ "$released" = 1 ] || { echo "released: $released"; vd_show_log; false; }
	ready="$(vd_metric "velo_endpoints{network=\"$VT_NETWORK\",phase=\"ready\"}")"
	[ "$ready" = 1 ] || { echo "ready endpoints: $ready"; false; }
	vd_assert_kept ctr-mb "$ip_b"

	kill -TERM "$pid"
	for i in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then echo "velod still running 3 s after SIGTERM"; false; fi
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || { echo "velod exited $rc"; vd_show_log; false; }
	grep -q 'velod stopping' "$VT/velod.log"
}

# vd_prog_metric NAME PROG: the value of NAME for the velo BPF program PROG (any type).
vd_prog_metric() {
	vt_node curl -sf --max-time 5 "http://127.0.0.1:$VD_PORT/metrics" |
		awk -v p="$1{prog=\"$2\"," 'index($1, p) == 1 { print $2 }'
}

@test "velod samples what velo's programs cost: velo_tc_ingress runs and run time after the test's own pod traffic" {
	local conf a b ip_b i windows runs secs ns
	vtc_setup
	conf="$(vt_config -f 4 | jq -c --arg b "$VTC_BPFFS" \
		'.bpffsDir = $b | .defaults = {"velo.dev/fastpath": "tc"}')"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	vt_add "$a" ctr-sa "$conf"
	vt_add "$b" ctr-sb "$conf"
	ip_b="$(vt_ip "$VT_RESULT" 4)"
	vd_config 0 "$VTC_BPFFS"
	vd_start
	# 4 s of pings between the pods cover at least one window (0.5 s every 2 s).
	vt_pod "$a" "${VT_PING[@]}" -q -i 0.01 -c 400 "$ip_b" >"$VT/work/ping.out" 2>&1
	for i in $(seq 50); do
		windows="$(vd_metric velo_bpf_stats_windows_total)"
		[ "${windows:-0}" -ge 3 ] && break
		sleep 0.1
	done
	runs="$(vd_prog_metric velo_bpf_prog_run_count_total velo_tc_ingress)"
	secs="$(vd_prog_metric velo_bpf_prog_run_seconds_total velo_tc_ingress)"
	echo "windows $windows: velo_tc_ingress runs $runs, seconds $secs"
	[ "$windows" -ge 3 ]
	[ "${runs:-0}" -gt 0 ] || { vd_show_log; false; }
	ns="$(awk -v s="$secs" -v r="$runs" 'BEGIN { printf "%d", s * 1e9 / r }')"
	echo "ns per run $ns"
	# ns per run is real: a tc program costs more than a nanosecond and less than 100 us.
	[ "$ns" -ge 1 ]
	[ "$ns" -lt 100000 ]
}

# vd_start: velod in the node, in the background, until /healthz answers.
vd_start() {
	local i
	# nsenter execs velod, so $! is velod itself (a function would fork a subshell).
	nsenter --net="/run/netns/$VT_NODE" "$VD_BIN" --config "$VT/velod.json" 2>>"$VT/velod.log" &
	VD_PID=$!
	VT_PIDS+=("$VD_PID")
	for i in $(seq 50); do
		vt_node curl -sf --max-time 2 "http://127.0.0.1:$VD_PORT/healthz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	vd_show_log
	return 1
}

@test "per-pod metrics and veloctl endpoints count the bytes a pod really sent and received" {
	local sink sink_cg sink4 pod cg conf labels segs segs_in tx txb rx rxb ctl expect
	local size=8388608 vc_bin="${VELOCTL_BIN:-$VELOTEST_REPO/build/veloctl}"
	vtc_setup
	sink="$(vt_pod_new)"
	sink_cg="$(vtc_cgroup_new)"
	vt_add "$sink" ctr-msink "$(vtc_config "$(vt_config -f 4)" "$sink_cg" '{}')"
	sink4="$(vt_ip "$VT_RESULT" 4)"
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f 4)" "$cg" '{"velo.dev/accounting": "true"}')"
	vt_add "$pod" ctr-macct "$conf"
	vd_config 3600 "$VTC_BPFFS"
	vd_start
	labels='{namespace="velotest",pod="pod-ctr-macct"}'
	[ "$(vd_metric "velo_pod_transmit_bytes_total$labels")" = 0 ] || { vd_metric "velo_pod_transmit_bytes_total$labels"; false; }
	# The pod without accounting has no series.
	if vt_node curl -sf "http://127.0.0.1:$VD_PORT/metrics" | grep -q 'pod="pod-ctr-msink"'; then
		echo "series for a pod that did not opt in"
		false
	fi

	read -r segs segs_in < <(vtc_tcp_send "$pod" "$cg" "$sink" "$sink4" "$size")
	tx="$(vd_metric "velo_pod_transmit_packets_total$labels")"
	txb="$(vd_metric "velo_pod_transmit_bytes_total$labels")"
	rx="$(vd_metric "velo_pod_receive_packets_total$labels")"
	rxb="$(vd_metric "velo_pod_receive_bytes_total$labels")"
	echo "segments out $segs in $segs_in; metrics tx $tx/$txb B rx $rx/$rxb B"
	# Bytes: the payload plus IPv4 + TCP headers (20 + 32) per segment, within 3%.
	expect=$((size + segs * 52))
	[ $((txb * 100)) -ge $((expect * 97)) ]
	[ $((txb * 100)) -le $((expect * 103)) ]
	# Packets: the kernel's own segment counts, within 2%; received ones are ACKs (52 B each).
	[ $((tx * 100)) -ge $((segs * 98)) ]
	[ $((tx * 100)) -le $((segs * 102)) ]
	[ $((rx * 100)) -ge $((segs_in * 98)) ]
	[ $((rx * 100)) -le $((segs_in * 102)) ]
	[ "$rxb" -ge $((rx * 40)) ]
	[ "$rxb" -le $((rx * 60)) ]
	[ "$(vd_metric "velo_pod_egress_denied_packets_total$labels")" = 0 ]

	# veloctl reads the same maps: the same numbers, with no traffic in between.
	ctl="$(vt_node "$vc_bin" -j --state-dir "$VT/state" --run-dir "$VT/run" --bpffs "$VTC_BPFFS" \
		endpoints)"
	jq -e --argjson tx "$txb" --argjson rx "$rxb" '
		(.[] | select(.containerId == "ctr-macct") | .counters | .txBytes == $tx and .rxBytes == $rx)
		and (.[] | select(.containerId == "ctr-msink") | .counters == {})' <<<"$ctl" ||
		{ echo "$ctl"; false; }
}

@test "velod restarting (SIGKILL, SIGTERM) loses no packet of a pod's traffic; ADD works while it is down" {
	local conf a b c cga cgb ip_a ip_b labels before after pid_ping
	vtc_setup
	cga="$(vtc_cgroup_new)"
	cgb="$(vtc_cgroup_new)"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	conf='{"velo.dev/accounting": "true", "velo.dev/fastpath": "tc"}'
	vt_add "$a" ctr-ra "$(vtc_config "$(vt_config -f 4)" "$cga" "$conf")"
	ip_a="$(vt_ip "$VT_RESULT" 4)"
	vt_add "$b" ctr-rb "$(vtc_config "$(vt_config -f 4)" "$cgb" "$conf")"
	ip_b="$(vt_ip "$VT_RESULT" 4)"
	vd_config 0 "$VTC_BPFFS"
	vd_start
	labels='{namespace="velotest",pod="pod-ctr-ra"}'

	# 400 pings 10 ms apart from inside pod a's cgroup, across every restart below.
	vtc_run "$a" "$cga" "${VT_PING[@]}" -q -i 0.01 -c 400 -W 1 "$ip_b" >"$VT/work/ping.out" 2>&1 &
	pid_ping=$!
	VT_PIDS+=("$pid_ping")
	sleep 0.5
	before="$(vd_metric "velo_pod_transmit_packets_total$labels")"
	kill -KILL "$VD_PID"
	wait "$VD_PID" 2>/dev/null || true
	# The CNI binary doesn't need velod.
	c="$(vt_pod_new)"
	vt_add "$c" ctr-rc "$(vt_config -f 4)"
	vt_ping_from_pod "$c" "$ip_b"
	vd_start
	after="$(vd_metric "velo_pod_transmit_packets_total$labels")"
	kill -TERM "$VD_PID"
	wait "$VD_PID" || { echo "velod exited $?"; vd_show_log; false; }
	vd_start
	wait "$pid_ping" || true
	cat "$VT/work/ping.out"
	grep -q '400 packets transmitted, 400 received' "$VT/work/ping.out"
	# The counters live in pinned maps, not in velod: they carried on across the restart.
	echo "tx packets before the restart $before, after $after"
	[ "$before" -gt 0 ]
	[ "$after" -gt "$before" ]
	vd_assert_kept ctr-ra "$ip_a"
}

@test "after a simulated reboot (every pod netns gone), velod's first pass releases the old records and leases, not the new pod" {
	local conf i ips=() new ip_new
	conf="$(vt_config -f 4)"
	for i in 1 2 3; do
		vt_add "$(vt_pod_new)" "ctr-old$i" "$conf"
		ips+=("$(vt_ip "$VT_RESULT" 4)")
	done
	# The reboot: no pod namespace survives (their veth pairs go with them); velo's records
	# and host-local's leases are on disk and do.
	for i in $(ip netns list | awk '{print $1}' | grep "^velotest-pod-$VT_TAG-$BATS_TEST_NUMBER-"); do ip netns del "$i"; done
	vt_pod_add new ip_new "$conf" ctr-new
	vd_config 0
	vd_once || { vd_show_log; false; }
	for i in 1 2 3; do vd_assert_released "ctr-old$i" "${ips[$((i - 1))]}"; done
	vd_assert_kept ctr-new "$ip_new"
	vt_ping_from_node "$ip_new"
}

# vd_link_group IFNAME: the link's group in the node ("" when the link doesn't exist).
vd_link_group() {
	vt_node ip -j -d link show "$1" 2>/dev/null | jq -r '.[0].group // empty'
}

@test "with velod running, DEL retires the host veth (down, routes gone, lease released) and velod deletes it" {
	local conf pod host ip i rc=0
	conf="$(vt_config -f dual)"
	vt_pod_add pod ip "$conf" ctr-ret
	host="$(vt_host_ifname vt ctr-ret eth0)"
	# A long interval: the retired veth stays until velod stops.
	vd_config 0
	jq '.reapIntervalMs = 600000' "$VT/velod.json" >"$VT/velod.json.new"
	mv "$VT/velod.json.new" "$VT/velod.json"
	vd_start
	# One velod per runDir.
	vt_node "$VD_BIN" --config "$VT/velod.json" 2>"$VT/work/second.log" || rc=$?
	[ "$rc" -eq 1 ]
	grep -q 'another velod holds it' "$VT/work/second.log"

	vt_cni DEL ctr-ret "$pod" eth0 "$conf"
	vt_assert_ok
	# 1986358383 is 0x76656c6f, "velo": the retired group (plugin/retire.h).
	[ "$(vd_link_group "$host")" = 1986358383 ] || { vt_node ip -d link show "$host"; false; }
	vt_node ip link show "$host" | grep -q 'state DOWN'
	if vt_node ip route show | grep -q "^$ip "; then echo "route to $ip left"; false; fi
	if vt_node ip -6 route show | grep -q "dev $host"; then echo "IPv6 route left"; false; fi
	if vt_lease_exists "$ip"; then echo "lease $ip kept"; false; fi
	[ ! -f "$VT_STATE/$VT_NETWORK/ctr-ret:eth0.json" ]

	# The same sandbox ADDed again at once: the retired pair is no conflict.
	vt_add "$pod" ctr-ret "$conf"
	[ "$(vd_link_group "$host")" != 1986358383 ]
	vt_ping_from_node "$(vt_ip "$VT_RESULT" 4)"
	vt_cni DEL ctr-ret "$pod" eth0 "$conf"
	vt_assert_ok
	[ "$(vd_link_group "$host")" = 1986358383 ]
	# SIGTERM: velod lets go of the lock, then deletes what is retired.
	kill -TERM "$VD_PID"
	wait "$VD_PID"
	[ -z "$(vd_link_group "$host")" ] || { echo "retired $host kept after velod stopped"; false; }

	# The default interval (100 ms): a DEL's veth is gone within a second.
	vd_config 0
	vd_start
	vt_add "$pod" ctr-ret2 "$conf"
	host="$(vt_host_ifname vt ctr-ret2 eth0)"
	vt_cni DEL ctr-ret2 "$pod" eth0 "$conf"
	vt_assert_ok
	for i in $(seq 20); do [ -z "$(vd_link_group "$host")" ] && break; sleep 0.05; done
	[ -z "$(vd_link_group "$host")" ] || { echo "$host still there"; false; }
	vt_assert_nothing_left
}

@test "without velod, a child DEL forks deletes the veth; GC deletes veths a vanished velod left retired" {
	local conf pod host
	conf="$(vt_config -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-noagent "$conf"
	host="$(vt_host_ifname vt ctr-noagent eth0)"
	vt_cni DEL ctr-noagent "$pod" eth0 "$conf"
	vt_assert_ok
	[ -z "$(vd_link_group "$host")" ]

	# A veth retired by a DEL while a velod ran that was then killed (SIGKILL: no final reap).
	vd_config 0
	jq '.reapIntervalMs = 600000' "$VT/velod.json" >"$VT/velod.json.new"
	mv "$VT/velod.json.new" "$VT/velod.json"
	vd_start
	vt_add "$pod" ctr-noagent "$conf"
	vt_cni DEL ctr-noagent "$pod" eth0 "$conf"
	vt_assert_ok
	kill -KILL "$VD_PID"
	wait "$VD_PID" || true
	[ "$(vd_link_group "$host")" = 1986358383 ]
	vt_cni_env "$(vt_config -v 1.1.0 -f 4 | jq -c '.["cni.dev/valid-attachments"] = []')" \
		CNI_COMMAND=GC "CNI_PATH=$VT_BIN"
	vt_assert_ok
	[ -z "$(vd_link_group "$host")" ] || { echo "GC left retired $host"; false; }
}

@test "velod refuses a config with an unknown key, naming it" {
	local rc=0
	echo '{"stateDir": "/nonexistent", "reconcileInterval": 5}' >"$VT/velod.json"
	"$VD_BIN" --config "$VT/velod.json" --once 2>"$VT/velod.log" || rc=$?
	[ "$rc" -eq 1 ] || { echo "exit $rc"; false; }
	grep -q 'unknown key.*reconcileInterval' "$VT/velod.log"
}

# ------------------------------------------------------ where velod's routes are served

VD_FOLLOWERS="$VELOTEST_REPO/tests/node/velod/http_followers.py"

# vd_code URL [CURL_ARGS...]: the HTTP status of GET URL from the node.
vd_code() {
	local url=$1
	shift
	vt_node curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$@" "$url"
}

# vd_followers TARGET COUNT: http_followers.py in the node, holding its followers until
# vd_release; waits for its line of statuses, in $VT/followers.out.
vd_followers() {
	local i
	rm -f "$VT/release" "$VT/followers.out"
	nsenter --net="/run/netns/$VT_NODE" python3 "$VD_FOLLOWERS" "$1" "$2" "$VT/release" \
		>"$VT/followers.out" 2>&1 &
	VD_FOLLOWERS_PID=$!
	VT_PIDS+=("$VD_FOLLOWERS_PID")
	for i in $(seq 300); do
		[ -s "$VT/followers.out" ] && break
		sleep 0.1
	done
}

vd_release() {
	touch "$VT/release"
	wait "$VD_FOLLOWERS_PID"
}

@test "velod: /flows and /policy answer only on the local socket (0600); the listen address refuses them with 403 naming it" {
	local sock="$VT/run/velod.sock" out route
	vd_config 0
	vd_start
	# /metrics and /healthz stay where Prometheus and the kubelet reach them.
	[ "$(vd_code "http://127.0.0.1:$VD_PORT/metrics")" = 200 ]
	[ "$(vd_code "http://127.0.0.1:$VD_PORT/healthz")" = 200 ]
	# Every connection of the node and every pod's policy: not on the listen address.
	for route in /flows '/flows?follow=1' /policy '/policy?pod=x/a'; do
		out="$(vt_node curl -s --max-time 5 -w '\n%{http_code}' "http://127.0.0.1:$VD_PORT$route")"
		echo "$route: $out"
		[ "$(tail -n 1 <<<"$out")" = 403 ]
		head -n 1 <<<"$out" | jq -e --arg s "$sock" '.error | contains($s) and contains("serveFlowsOnListen")'
	done
	# The local socket: root's only, and it answers every route.
	[ -S "$sock" ]
	[ "$(stat -c '%a %U' "$sock")" = "600 root" ]
	[ "$(vd_code http://localhost/flows --unix-socket "$sock")" = 200 ]
	[ "$(vd_code http://localhost/healthz --unix-socket "$sock")" = 200 ]
	[ "$(vd_code http://localhost/metrics --unix-socket "$sock")" = 200 ]
	# No policy source in this config: velod's own JSON answer, not a refusal.
	out="$(vt_node curl -s --max-time 5 --unix-socket "$sock" http://localhost/policy)"
	echo "$out"
	jq -e '.error | test("policySource")' <<<"$out"
	grep -q "every route on $sock" "$VT/velod.log"
	kill -TERM "$VD_PID"
	wait "$VD_PID"
	[ ! -e "$sock" ]
}

@test "velod: 33 followers of /flows on the local socket can't starve /healthz: 16 stream, the others get 503, slots come back" {
	local sock="$VT/run/velod.sock" out i
	vd_config 0
	vd_start
	vd_followers "$sock" 33
	out="$(cat "$VT/followers.out")"
	echo "$out"
	[ "$out" = "200=16 503=17" ]
	# With the cap reached: the probes, a scrape, and one-shot requests on the socket.
	[ "$(vt_node curl -s --max-time 5 "http://127.0.0.1:$VD_PORT/healthz")" = ok ]
	[ "$(vd_code "http://127.0.0.1:$VD_PORT/metrics")" = 200 ]
	[ "$(vt_node curl -s --max-time 5 --unix-socket "$sock" http://localhost/healthz)" = ok ]
	[ "$(vd_code http://localhost/flows --unix-socket "$sock")" = 200 ]
	# The 503 says why.
	out="$(vt_node curl -s --max-time 5 -w '\n%{http_code}' --unix-socket "$sock" 'http://localhost/flows?follow=1')"
	echo "$out"
	[ "$(tail -n 1 <<<"$out")" = 503 ]
	grep -q 'at most 16 followers' <<<"$out"
	vd_release
	# The readers left: velod finds out when it next writes them (a heartbeat at the latest).
	for i in $(seq 30); do
		vd_followers "$sock" 16
		vd_release
		out="$(cat "$VT/followers.out")"
		[ "$out" = "200=16" ] && break
		sleep 0.5
	done
	echo "$out"
	[ "$out" = "200=16" ]
}

@test "velod: serveFlowsOnListen opts /flows and /policy into the listen address with a warning; followers there still leave /healthz its room" {
	local out
	vd_config 0
	jq '. + {serveFlowsOnListen: true}' "$VT/velod.json" >"$VT/velod.json.tmp"
	mv "$VT/velod.json.tmp" "$VT/velod.json"
	vd_start
	grep -q 'level=warn.*serveFlowsOnListen: /flows and /policy answer anyone' "$VT/velod.log"
	[ "$(vd_code "http://127.0.0.1:$VD_PORT/flows")" = 200 ]
	# 33 followers on the listen address (32 connections): /healthz answered all the same.
	vd_followers "127.0.0.1:$VD_PORT" 33
	out="$(cat "$VT/followers.out")"
	echo "$out"
	[ "$out" = "200=16 503=17" ]
	[ "$(vt_node curl -s --max-time 5 "http://127.0.0.1:$VD_PORT/healthz")" = ok ]
	vd_release
}

@test "velod: localSocket moves the socket, \"\" turns it off, and a relative path is refused" {
	vd_config 0
	jq --arg s "$VT/elsewhere.sock" '. + {localSocket: $s}' "$VT/velod.json" >"$VT/velod.json.tmp"
	mv "$VT/velod.json.tmp" "$VT/velod.json"
	vd_start
	[ -S "$VT/elsewhere.sock" ]
	[ ! -e "$VT/run/velod.sock" ]
	[ "$(vd_code http://localhost/flows --unix-socket "$VT/elsewhere.sock")" = 200 ]
	kill -TERM "$VD_PID"
	wait "$VD_PID"
	jq '. + {localSocket: ""}' "$VT/velod.json" >"$VT/velod.json.tmp"
	mv "$VT/velod.json.tmp" "$VT/velod.json"
	vd_start
	[ ! -e "$VT/elsewhere.sock" ]
	[ ! -e "$VT/run/velod.sock" ]
	vt_node curl -s --max-time 5 "http://127.0.0.1:$VD_PORT/flows" | jq -e '.error | test("turned off")'
	kill -TERM "$VD_PID"
	wait "$VD_PID"
	jq '. + {localSocket: "velod.sock"}' "$VT/velod.json" >"$VT/velod.json.tmp"
	mv "$VT/velod.json.tmp" "$VT/velod.json"
	run vt_node "$VD_BIN" --config "$VT/velod.json"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q 'localSocket .*velod.sock.*: not an absolute path' <<<"$output"
}
