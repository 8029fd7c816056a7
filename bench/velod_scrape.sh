#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# velod with many endpoints: /metrics scrape latency and velod's peak RSS. Writes N endpoint
# records (pods whose netns paths don't exist, so every per-endpoint check runs) into a state
# dir of its own, starts velod on a loopback port inside a namespace of its own (no
# reconciliation, so nothing is released), times SCRAPES scrapes with curl and reads VmHWM.
# Usage (as root): bench/velod_scrape.sh [-o OUTDIR] [-n ENDPOINTS] [-s SCRAPES]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench endpoints=1000 scrapes=10
while getopts "o:n:s:" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	n) endpoints=$OPTARG ;;
	s) scrapes=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench/velod_scrape.sh: needs root" >&2; exit 1; }
velod=${VELOD:-$top/build/velod}
[ -x "$velod" ] || { echo "bench/velod_scrape.sh: $velod missing (make)" >&2; exit 1; }

ns=velobench-scrape-$$
work=$(mktemp -d /tmp/velobench-scrape-XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up

mkdir -p "$work/state/velobench"
for ((i = 0; i < endpoints; i++)); do
	jq -n --argjson i "$i" '{
		version: 1, network: "velobench", containerId: "scrape\($i)", ifname: "eth0",
		netns: "/run/netns/velobench-gone-\($i)", netnsIno: 4026500000, hostIfname: "vs\($i)",
		hostIfindex: (100000 + $i), hostMac: "ee:ee:ee:ee:ee:ee", podMac: "02:00:00:00:00:01",
		podNamespace: "bench", podName: "pod-\($i)", podUid: "uid-\($i)", created: 1764547200,
		phase: "ready", features: 0, netconf: "{}",
		ips: [{address: "10.\(240 + ($i / 65536 | floor)).\($i / 256 % 256 | floor).\($i % 256)/32"}]}' \
		>"$work/state/velobench/scrape${i}:eth0.json"
done
jq -n --arg w "$work" '{stateDir: ($w + "/state"), runDir: ($w + "/run"),
	bpffsDir: ($w + "/bpffs"), listen: "127.0.0.1:19199", reconcileIntervalSeconds: 0,
	sampleIntervalSeconds: 0, reapIntervalMs: 0}' >"$work/velod.json"
nsenter --net="/run/netns/$ns" "$velod" --config "$work/velod.json" 2>"$work/velod.log" &
pid=$!
rss_idle=""
for _ in $(seq 50); do
	nsenter --net="/run/netns/$ns" curl -sf -o /dev/null http://127.0.0.1:19199/healthz && break
	sleep 0.1
done
mkdir -p "$outdir"
: >"$work/times"
for ((k = 0; k < scrapes; k++)); do
	nsenter --net="/run/netns/$ns" curl -sf -o "$work/metrics" -w '%{time_total}\n' \
		http://127.0.0.1:19199/metrics >>"$work/times"
done
grep -q "velo_endpoints{network=\"velobench\",phase=\"ready\"} $endpoints" "$work/metrics" ||
	{ echo "bench/velod_scrape.sh: /metrics doesn't count $endpoints endpoints" >&2; exit 1; }
rss_idle=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
read -r med lo hi < <(sort -g "$work/times" | awk '{ v[NR] = $1 * 1000 } END {
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }')
{
	echo "# velod with $endpoints endpoints"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs."
	echo "Command (as root): \`bench/velod_scrape.sh -n $endpoints -s $scrapes\`"
	echo
	echo "| what | value |"
	echo "|---|---|"
	echo "| /metrics scrape, median of $scrapes (min-max) | $med ms ($lo-$hi) |"
	echo "| /metrics size | $(wc -c <"$work/metrics") bytes |"
	echo "| velod RSS after the scrapes | $((rss_idle / 1024)) MiB ($rss_idle kB) |"
	echo "| velod peak RSS (VmHWM) | $((hwm / 1024)) MiB ($hwm kB); target <= 32 MB |"
} >"$outdir/velod_scrape.md"
cat "$outdir/velod_scrape.md"
