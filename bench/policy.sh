#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy's costs (docs/policy.md), side by side in one run, as ratios:
#  1. per packet: ns/run (BPF_ENABLE_STATS, bench/dp_stats.c) of the policy programs on a pod
#     some policy selects with 1, 100 and 10,000 rules, against today's velo_tc_ingress (a tc
#     shortcut pair without policy), over TCP 64 B request/response;
#  2. routed TCP_RR p50 of a pod pair with policy on (the server selected, one rule allowing its
#     client) against the same routed pair shape with no policy, repetitions alternating; and
#     the same pairs' connection rate (bench/sm_rr: connect, 64 B each way, close, in a loop);
#  3. how long a change to a policy selecting 1,000 pods takes to reach the maps (from writing
#     velod's policy file to velo_policy_syncs_total counting it, polled every 5 ms);
#  4. velod's RSS with 10,000 pods and 1,000 policies in its policy file (VmRSS and VmHWM).
# Rules are ipBlock /32 peers outside the pod subnet (each one rule of the selected pod's
# identity), plus the rule that lets the client in; then 100 ClusterNetworkPolicies selecting the
# server beside 100 of those rules, and the change of 3. made to a ClusterNetworkPolicy.
# Targets (issues 28, 38, 40): 1. <= 100 ns/run over velo_tc_ingress; 2. <= 1.05x,
# connections/s >= 0.95x; 3. <= 1 s; 4. reported.
#
# Topology: a node netns velobench-pol-PID (forwarding off at start), pod netns
# velobench-pol-PID-*, velod in the node with its policy file and bpffs under
# /tmp/velobench-pol-XXXXXX. Traffic only between these namespaces. Everything is removed at
# exit, pass or fail.
#
# Usage (as root): bench/policy.sh [-o OUTDIR] [-r REPS] [-n RR_COUNT]
#   -o OUTDIR    policy.md, policy.csv (build/bench)
#   -r REPS      alternating repetitions of the latency runs (5)
#   -n RR_COUNT  round trips per latency run (20000)
#   POL_SYNC_PODS (1000), POL_RSS_PODS (10000), POL_RSS_POLICIES (1000), POL_CNPS (100)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

outdir=$top/build/bench
reps=5
rr_count=20000
while getopts "o:r:n:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	r) reps=$OPTARG ;;
	n) rr_count=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 24,28p' "$0" >&2; exit 2 ;;
	esac
done
sync_pods=${POL_SYNC_PODS:-1000}
rss_pods=${POL_RSS_PODS:-10000}
rss_policies=${POL_RSS_POLICIES:-1000}
cnp_count=${POL_CNPS:-100}
[ "$(id -u)" = 0 ] || { echo "policy: needs root (network namespaces, BPF)" >&2; exit 1; }
velo=${VELO:-$top/build/velo}
velod=${VELOD:-$top/build/velod}
# shellcheck source=bench/lib.bash
source "$top/bench/lib.bash"
bench_need policy "$velo" "$velod" /usr/lib/cni/host-local -- jq curl python3 bpftool

node_name=velobench-node
port=$((20000 + RANDOM % 20000))
velod_pid=
# velod is restarted for each measurement: the one running at exit.
bench_cleanup_more() {
	if [ -n "$velod_pid" ]; then
		kill "$velod_pid" 2>/dev/null
		wait "$velod_pid" 2>/dev/null
	fi
}
bench_node_start policy velobench-pol

traffic=$work/dp_traffic
dp_stats=$work/dp_stats
conn=$work/sm_rr
bench_cc "$traffic" "$top/bench/dp_traffic.c"
bench_cc "$conn" "$top/bench/sm_rr.c"
# shellcheck disable=SC2046
bench_cc "$dp_stats" "$top/bench/dp_stats.c" $(pkg-config --libs libbpf)

# config ANNOTATIONS: velo's config (policy on: only pods some policy selects get programs).
config() {
	jq -cn --arg w "$work" --argjson a "$1" '{
		cniVersion: "1.0.0", name: "velobench-pol", type: "velo", vethPrefix: "vp", mtu: 1500,
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: ($w + "/bpf/velo"),
		logFile: ($w + "/cni.log"), policy: true,
		ipam: {type: "host-local", dataDir: ($w + "/ipam"), ranges: [[{subnet: "10.249.5.0/24"}]]},
		runtimeConfig: {"io.kubernetes.cri.pod-annotations": $a}}'
}

declare -A pod_ns pod_ip
# add_pod NAMESPACE NAME ANNOTATIONS: a pod wired by velo, named as the kubelet names it.
add_pod() {
	local key=$1/$2 ns=velobench-pol-$tag-$1-$2 out
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	out=$(config "$3" | in_node env -i PATH="$PATH" CNI_COMMAND=ADD \
		CNI_CONTAINERID="velobench-pol-$1-$2" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH=/usr/lib/cni \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=$1;K8S_POD_NAME=$2" "$velo") ||
		{ echo "policy: ADD $key failed: $out" >&2; exit 1; }
	pod_ns[$key]=$ns
	pod_ip[$key]=$(jq -r '.ips[0].address | split("/")[0]' <<<"$out")
}
in_pod() {
	local ns=${pod_ns[$1]}
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# The pairs: "open" (no policy ever selects it: today's velo, routed and tc) and "pol" (its
# server selected by the policy under test, routed).
add_pod open srv '{}'
add_pod open cli '{}'
add_pod tc srv '{"velo.dev/fastpath": "tc"}'
add_pod tc cli '{"velo.dev/fastpath": "tc"}'
add_pod pol srv '{}'
add_pod pol cli '{}'
# nsenter execs the server, so $! is the server itself and cleanup's kill ends it (through
# in_pod, $! was a subshell's: the server outlived the run, holding the node lock's fd).
for key in open/srv tc/srv pol/srv; do
	nsenter --net="/run/netns/${pod_ns[$key]}" "$traffic" rr-server 5400 >/dev/null 2>&1 &
	pids+=("$!")
done
# The connection clients reuse TIME_WAIT ports, as the other benches' do: without it their ports
# run out after one round and the rate falls ten-fold for both pairs alike.
for key in open/cli pol/cli; do
	nsenter --net="/run/netns/${pod_ns[$key]}" sysctl -qw net.ipv4.tcp_tw_reuse=1 \
		net.ipv4.ip_local_port_range="1024 65535"
done
for key in open/srv pol/srv; do
	nsenter --net="/run/netns/${pod_ns[$key]}" "$conn" conn-server "${pod_ip[$key]}:5401" \
		>"$work/conn-ready-${key%/*}" 2>>"$work/servers.log" &
	pids+=("$!")
done

# policy_file RULES [EXTRA_PODS [POLICIES [VARIANT]]]: velod's policy file (python3: 10,000 pods
# are fast that way). The local pods; pol/srv selected with RULES ipBlock rules plus one for
# pol/cli; EXTRA_PODS remote pods (node velobench-other, 10.250.0.0/16) labelled app=web and
# id=N, each its own identity, in namespace pol (spread over 100 namespaces when POLICIES > 0),
# and policy pol/web selecting app=web (pol/srv among them) from role=client on port 5400 and
# 8080 + VARIANT; POLICIES more policies over the extra pods.
# CNPS: that many ClusterNetworkPolicies selecting the servers (Admin and Baseline in turn, each
# denying the clients one port of its own, not the measured one), and the "web" policy a
# ClusterNetworkPolicy (Admin, Accept) instead of a NetworkPolicy.
policy_file() {
	python3 - "$1" "${2:-0}" "${3:-0}" "$node_name" \
		"$(for key in "${!pod_ip[@]}"; do echo "$key=${pod_ip[$key]}"; done)" "${4:-0}" \
		"${5:-0}" <<'PY'
import ipaddress, json, sys
rules, extra, policies, node = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
local = dict(line.split("=") for line in sys.argv[5].split())
variant = int(sys.argv[6])
cnps = int(sys.argv[7])
namespaces = sorted({k.split("/")[0] for k in local} | {"ns%d" % i for i in range(100)})
doc = {"namespaces": [{"metadata": {"name": n, "labels": {"ns": n}}} for n in namespaces],
       "pods": [], "networkPolicies": [], "clusterNetworkPolicies": []}
for key, ip in local.items():
    ns, name = key.split("/")
    labels = {"role": "client" if name == "cli" else "server"}
    if key == "pol/srv":
        labels["app"] = "web"
    doc["pods"].append({"metadata": {"namespace": ns, "name": name, "labels": labels},
                        "spec": {"nodeName": node},
                        "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}})
base = int(ipaddress.ip_address("10.250.0.0"))
for i in range(extra):
    ip = str(ipaddress.ip_address(base + 1 + i))
    ns = "ns%d" % (i % 100) if policies else "pol"
    doc["pods"].append({"metadata": {"namespace": ns, "name": "p%d" % i,
                                     "labels": {"app": "web", "id": str(i), "role": "client"}},
                        "spec": {"nodeName": "velobench-other"},
                        "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}})
if rules:
    blocks = [{"ipBlock": {"cidr": str(ipaddress.ip_address(int(ipaddress.ip_address("172.16.0.0")) + i)) + "/32"}}
              for i in range(rules)]
    # At most 1,000 peers a policy (velod caps lists at 4,096).
    for n, start in enumerate(range(0, rules, 1000)):
        doc["networkPolicies"].append({"metadata": {"namespace": "pol", "name": "rules-%d" % n},
            "spec": {"podSelector": {"matchLabels": {"role": "server"}},
                     "ingress": [{"from": blocks[start:start + 1000]}]}})
    doc["networkPolicies"].append({"metadata": {"namespace": "pol", "name": "client"},
        "spec": {"podSelector": {"matchLabels": {"role": "server"}},
                 "ingress": [{"from": [{"podSelector": {"matchLabels": {"role": "client"}}}],
                              "ports": [{"port": 5400}, {"port": 5401}, {"protocol": "UDP", "port": 5400}]}]}})
if extra and not cnps:
    port = 8080 + variant
    doc["networkPolicies"].append({"metadata": {"namespace": "pol", "name": "web"},
        "spec": {"podSelector": {"matchLabels": {"app": "web"}},
                 "ingress": [{"from": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"role": "client"}}}],
                              "ports": [{"port": 5400}, {"port": port}]}]}})
elif extra:
    port = 8080 + variant
    doc["clusterNetworkPolicies"].append({"metadata": {"name": "web"},
        "spec": {"tier": "Admin", "priority": 1,
                 "subject": {"pods": {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app": "web"}}}},
                 "ingress": [{"action": "Accept",
                              "from": [{"pods": {"namespaceSelector": {}, "podSelector": {"matchLabels": {"role": "client"}}}}],
                              "protocols": [{"tcp": {"destinationPort": {"number": 5400}}},
                                            {"tcp": {"destinationPort": {"number": port}}}]}]}})
for i in range(cnps if not extra else 0):
    doc["clusterNetworkPolicies"].append({"metadata": {"name": "cnp%d" % i},
        "spec": {"tier": "Admin" if i % 2 == 0 else "Baseline", "priority": i % 1000,
                 "subject": {"pods": {"namespaceSelector": {}, "podSelector": {"matchLabels": {"role": "server"}}}},
                 "ingress": [{"action": "Deny",
                              "from": [{"pods": {"namespaceSelector": {}, "podSelector": {"matchLabels": {"role": "client"}}}}],
                              "protocols": [{"tcp": {"destinationPort": {"number": 9000 + i}}}]}]}})
for i in range(policies):
    doc["networkPolicies"].append({"metadata": {"namespace": "ns%d" % (i % 100), "name": "np%d" % i},
        "spec": {"podSelector": {"matchLabels": {"id": str(i % max(extra, 1))}},
                 "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "ns%d" % ((i + 1) % 100)}}},
                                       {"podSelector": {"matchExpressions": [{"key": "id", "operator": "In",
                                        "values": [str(j) for j in range(i % 50, i % 50 + 5)]}]}}],
                              "ports": [{"port": 80 + i % 10}]}],
                 "egress": [{"to": [{"ipBlock": {"cidr": "10.%d.0.0/16" % (i % 200), "except": ["10.%d.1.0/24" % (i % 200)]}}]}]}})
json.dump(doc, sys.stdout)
PY
}

metric() {
	in_node curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}
syncs() {
	local v
	v=$(metric velo_policy_syncs_total)
	echo "${v%.*}"
}
# write_policy CONTENT_FILE: moves it in place and waits (60 s) for velod's next sync; prints
# the milliseconds from the move to the sync counted.
write_policy() {
	local before start now
	before=$(syncs)
	start=$(date +%s%N)
	mv "$1" "$work/policy.json"
	while :; do
		now=$(syncs)
		[ -n "$now" ] && [ "$now" -gt "${before:-0}" ] && break
		kill -0 "$velod_pid" 2>/dev/null || { echo "policy: velod exited" >&2; tail "$work/velod.log" >&2; exit 1; }
		if (($(date +%s%N) - start > 60000000000)); then
			echo "policy: velod did not sync in 60 s" >&2
			tail "$work/velod.log" >&2
			exit 1
		fi
		sleep 0.005
	done
	echo $((($(date +%s%N) - start) / 1000000))
}

start_velod() {
	jq -n --arg w "$work" --arg l "127.0.0.1:$port" --arg n "$node_name" '{
		stateDir: ($w + "/state"), runDir: ($w + "/run"), bpffsDir: ($w + "/bpf/velo"),
		listen: $l, reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", nodeName: $n, policySource: "file",
		policyFile: ($w + "/policy.json")}' >"$work/velod.json"
	policy_file 0 >"$work/policy.json"
	nsenter --net="/run/netns/$node" "$velod" --config "$work/velod.json" 2>>"$work/velod.log" &
	velod_pid=$!
	for _ in $(seq 200); do
		[ -n "$(syncs)" ] && [ "$(syncs)" -ge 1 ] && return 0
		kill -0 "$velod_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "policy: velod did not start:" >&2
	tail "$work/velod.log" >&2
	exit 1
}

start_velod
# pol/srv selected with RULES rules; prints the sync time.
set_rules() {
	policy_file "$1" >"$work/next.json"
	write_policy "$work/next.json"
}
set_rules 1 >/dev/null
# reaches PAIR: 100 round trips on the measured port (the policy allows TCP 5400, not ping).
reaches() {
	timeout 10 nsenter --net="/run/netns/${pod_ns[$1/cli]}" "$traffic" rr-client tcp \
		"${pod_ip[$1/srv]}" 5400 100 >/dev/null
}
for key in open tc pol; do
	reaches "$key" || { echo "policy: $key/cli cannot reach its server" >&2; exit 1; }
done

csv=$work/samples.csv
echo "rep,what,metric,value" >"$csv"
# rr PAIR [PREFIX...]: "p50 p99" of TCP 64 B request/response from the pair's client.
rr() {
	local pair=$1
	shift
	"$@" nsenter --net="/run/netns/${pod_ns[$pair/cli]}" taskset -c $(($(nproc) - 1)) \
		"$traffic" rr-client tcp "${pod_ip[$pair/srv]}" 5400 "$rr_count" || echo "NA NA"
}

# 2. Routed TCP_RR, policy off (open) vs on (pol, 1 rule + its client's), alternating.
echo "policy: TCP_RR, $reps repetitions of $rr_count round trips"
for ((rep = 1; rep <= reps; rep++)); do
	order="open pol"
	((rep % 2)) || order="pol open"
	for pair in $order; do
		read -r p50 p99 <<<"$(rr "$pair")"
		echo "$rep,rr-$pair,p50,$p50" >>"$csv"
		echo "$rep,rr-$pair,p99,$p99" >>"$csv"
	done
done

# 2b. Connections/s, the same pairs, policy off (open) vs on (pol), alternating.
conn_secs=2
for pair in open pol; do
	for _ in $(seq 100); do grep -qs ready "$work/conn-ready-$pair" && break; sleep 0.05; done
done
echo "policy: connections/s, $reps repetitions of $conn_secs s"
for ((rep = 1; rep <= reps; rep++)); do
	order="open pol"
	((rep % 2)) || order="pol open"
	for pair in $order; do
		cps=$(timeout $((conn_secs + 10)) nsenter --net="/run/netns/${pod_ns[$pair/cli]}" \
			"$conn" conn-client "${pod_ip[$pair/srv]}:5401" "$conn_secs") || cps=NA
		echo "$rep,conn-$pair,cps,${cps%% *}" >>"$csv"
	done
done

# 1. ns/run: velo_tc_ingress on the tc pair (no policy), the policy programs with N rules.
prog_ids() {
	find "$work/bpf/velo" -type f 2>/dev/null | while read -r pin; do
		bpftool prog show pinned "$pin" -j 2>/dev/null | jq -r '.id // empty' || true
		bpftool link show pinned "$pin" -j 2>/dev/null | jq -r '.prog_id // empty' || true
	done | sort -un | paste -sd, -
}
echo "what,program,run_cnt,run_time_ns,ns_per_run" >"$work/stats.csv"
# stats WHAT PAIR: one RR run under dp_stats; its programs' cost appended to stats.csv.
stats() {
	rr "$2" "$dp_stats" -o "$work/prog.csv" -i "$(prog_ids)" -- >/dev/null
	awk -F, -v w="$1" '{ printf "%s,%s,%s,%s,%.1f\n", w, $2, $3, $4, $4 / $3 }' \
		"$work/prog.csv" >>"$work/stats.csv"
}
echo "policy: per-packet cost"
stats tc tc
declare -A sync_ms
for rules in 1 100 10000; do
	sync_ms[$rules]=$(set_rules "$rules")
	reaches pol || { echo "policy: pol/cli cannot reach its server with $rules rules" >&2; exit 1; }
	stats "rules-$rules" pol
done
# 100 ClusterNetworkPolicies (50 Admin, 50 Baseline) beside 100 NetworkPolicy rules.
policy_file 100 0 0 0 "$cnp_count" >"$work/next.json"
sync_ms[cnp]=$(write_policy "$work/next.json")
reaches pol || { echo "policy: pol/cli cannot reach its server with $cnp_count CNPs" >&2; exit 1; }
stats "cnps-$cnp_count" pol

# 3. A change to a policy selecting 1,000 pods: the file with them, then the policy's ports changed.
echo "policy: sync of a change to a policy selecting $sync_pods pods"
policy_file 1 "$sync_pods" 0 >"$work/next.json"
load_ms=$(write_policy "$work/next.json")
change=()
for i in 1 2 3 4 5; do
	policy_file 1 "$sync_pods" 0 "$((i % 2))" >"$work/next.json"
	change+=("$(write_policy "$work/next.json")")
done
change_ms=$(printf '%s\n' "${change[@]}" | sort -n | sed -n 3p)
# The same change made to a ClusterNetworkPolicy (Admin, Accept) selecting them.
policy_file 1 "$sync_pods" 0 0 1 >"$work/next.json"
cnp_load_ms=$(write_policy "$work/next.json")
change=()
for i in 1 2 3 4 5; do
	policy_file 1 "$sync_pods" 0 "$((i % 2))" 1 >"$work/next.json"
	change+=("$(write_policy "$work/next.json")")
done
cnp_change_ms=$(printf '%s\n' "${change[@]}" | sort -n | sed -n 3p)

# 4. velod's RSS with 10,000 pods and 1,000 policies.
echo "policy: velod with $rss_pods pods and $rss_policies policies"
policy_file 1 "$rss_pods" "$rss_policies" >"$work/next.json"
rss_sync_ms=$(write_policy "$work/next.json")
rss_kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$velod_pid/status")
hwm_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$velod_pid/status")

# The table.
median() { # median WHAT METRIC
	awk -F, -v w="$1" -v m="$2" '$2 == w && $3 == m && $4 != "NA" { print $4 }' "$csv" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "NA" }'
}
ns_of() { # ns_of WHAT PROGRAM_PREFIX: ns/run summed over the matching programs' runs
	awk -F, -v w="$1" -v p="$2" '$1 == w && index($2, p) == 1 { r += $3; t += $4 }
		END { if (r) printf "%.1f", t / r; else print "NA" }' "$work/stats.csv"
}
off50=$(median rr-open p50)
on50=$(median rr-pol p50)
off_cps=$(median conn-open cps)
on_cps=$(median conn-pol cps)
tc_ns=$(ns_of tc velo_tc_ingress)
verdict() { awk -v ok="$1" 'BEGIN { print (ok ? "yes" : "NO") }'; }
mkdir -p "$outdir"
{
	echo "# NetworkPolicy costs"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, velo $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo "Command (as root): \`bench/policy.sh -r $reps -n $rr_count\`"
	echo
	echo "| what | value | against | ratio / delta | target | met |"
	echo "|---|---|---|---|---|---|"
	for rules in 1 100 10000; do
		pol_ns=$(ns_of "rules-$rules" velo_pol_)
		delta=$(awk -v a="$pol_ns" -v b="$tc_ns" 'BEGIN { if (a == "NA" || b == "NA") print "NA"; else printf "%+.1f", a - b }')
		echo "| policy programs, $rules rules: ns/run | $pol_ns | velo_tc_ingress $tc_ns | $delta ns | <= +100 ns | $(verdict "$([ "$delta" != NA ] && awk -v d="$delta" 'BEGIN { print (d <= 100) }' || echo 0)") |"
	done
	pol_ns=$(ns_of "cnps-$cnp_count" velo_pol_)
	delta=$(awk -v a="$pol_ns" -v b="$tc_ns" 'BEGIN { if (a == "NA" || b == "NA") print "NA"; else printf "%+.1f", a - b }')
	echo "| policy programs, $cnp_count ClusterNetworkPolicies + 100 NetworkPolicy rules: ns/run | $pol_ns | velo_tc_ingress $tc_ns | $delta ns | <= +100 ns | $(verdict "$([ "$delta" != NA ] && awk -v d="$delta" 'BEGIN { print (d <= 100) }' || echo 0)") |"
	ratio=$(awk -v a="$on50" -v b="$off50" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.3f", a / b }')
	echo "| routed TCP_RR p50, policy on (us) | $on50 | off $off50 | ${ratio}x | <= 1.05x | $(verdict "$([ "$ratio" != NA ] && awk -v r="$ratio" 'BEGIN { print (r <= 1.05) }' || echo 0)") |"
	ratio=$(awk -v a="$on_cps" -v b="$off_cps" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.3f", a / b }')
	echo "| routed connections/s, policy on | $on_cps | off $off_cps | ${ratio}x | >= 0.95x | $(verdict "$([ "$ratio" != NA ] && awk -v r="$ratio" 'BEGIN { print (r >= 0.95) }' || echo 0)") |"
	echo "| change to a policy selecting $sync_pods pods reaches the maps (ms, median of 5) | $change_ms | first load $load_ms | | <= 1000 ms | $(verdict "$((change_ms <= 1000))") |"
	echo "| change to a ClusterNetworkPolicy selecting $sync_pods pods reaches the maps (ms, median of 5) | $cnp_change_ms | first load $cnp_load_ms | | <= 1000 ms | $(verdict "$((cnp_change_ms <= 1000))") |"
	echo "| velod RSS, $rss_pods pods + $rss_policies policies (MiB) | $((rss_kib / 1024)) | peak $((hwm_kib / 1024)) | sync $rss_sync_ms ms | reported | |"
	echo
	echo "Rule sets reached the maps in ${sync_ms[1]} / ${sync_ms[100]} / ${sync_ms[10000]} ms (1 / 100 / 10,000 rules), $cnp_count ClusterNetworkPolicies in ${sync_ms[cnp]} ms."
	echo "Programs' cost per run (RR under BPF_ENABLE_STATS, which adds its own ~20 ns to each):"
	echo
	echo "| run | program | runs | ns/run |"
	echo "|---|---|---|---|"
	awk -F, 'NR > 1 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $5 }' "$work/stats.csv"
} >"$outdir/policy.md"
cp "$csv" "$outdir/policy.csv"
cp "$work/stats.csv" "$outdir/policy_stats.csv"
cat "$outdir/policy.md"
