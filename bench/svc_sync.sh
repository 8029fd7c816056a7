#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# velod's services sync for a large node (issue 31): SERVICES Services with PER backends each
# (10,000 x 5 = 50,000 by default) from a services file, as velod syncs them when servicesFile
# changes: parse the file, build the node's service table, write the pinned maps' layouts. Times
# the full sync into empty maps, a sync of the same file, and CHANGES syncs that each move one
# endpoint of one Service (there and back), and prints them next to the target: one endpoint
# change synced in <= 0.5 s. The driver (build/bench/svc_sync, bench/svc_sync.c) links velo's
# library and writes BPF hash maps of the pinned maps' types and sizes that it creates itself and
# never pins: nothing to clean up, no namespaces, no traffic.
#
# Usage (as root): bench/svc_sync.sh [-o OUTDIR] [-s SERVICES] [-b PER] [-r CHANGES]
#   -o OUTDIR   svc_sync.md, svc_sync.csv (default build/bench)
#   -s SERVICES Services, one TCP port each (10000)
#   -b PER      backends per Service (5)
#   -r CHANGES  one-endpoint-change syncs (7)
# Needs: make build/bench/svc_sync (`make bench` builds it); $SVC_SYNC names another driver.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench services=10000 per=5 changes=7
while getopts "o:s:b:r:h" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	s) services=$OPTARG ;;
	b) per=$OPTARG ;;
	r) changes=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//; 12,17p' "$0" >&2; exit 2 ;;
	esac
done
for n in "$services" "$per" "$changes"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench/svc_sync.sh: sizes are positive integers" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench/svc_sync.sh: needs root" >&2; exit 1; }
driver=${SVC_SYNC:-$top/build/bench/svc_sync}
[ -x "$driver" ] || { echo "bench/svc_sync.sh: $driver missing (make build/bench/svc_sync)" >&2; exit 1; }
mkdir -p "$outdir"
csv=$outdir/svc_sync.csv md=$outdir/svc_sync.md target_ms=500

"$driver" -s "$services" -b "$per" -r "$changes" >"$csv"

# stat PHASE COLUMN: median min max of that column over the phase's rows.
stat() {
	awk -F, -v p="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == p { print $col[c] }' "$csv" | sort -g | awk '{ v[NR] = $1 }
		END {
			if (!NR) { print "NA NA NA"; exit }
			printf "%.1f %.1f %.1f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR]
		}'
}
cell() { local m lo hi; read -r m lo hi <<<"$(stat "$1" "$2")"; [ "$lo" = "$hi" ] && echo "$m" || echo "$m ($lo-$hi)"; }
med() { stat "$1" "$2" | cut -d' ' -f1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
phases=$(awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$csv")
one=$(med one-change total_ms)
{
	echo "# velod's services sync: $services Services, $((services * per)) backends"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, load average" \
		"$(cut -d' ' -f1-3 /proc/loadavg) at the end; velo $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo "Command (as root): \`bench/svc_sync.sh -s $services -b $per -r $changes\`"
	echo "Each sync: parse the services file, build the table, write the maps (velo_svc_maps_update)."
	echo "Cells: median (min-max) over the phase's syncs, ms; total is wall time, CPU the driver's"
	echo "user + system time (the map writes' syscalls included) over the same sync."
	echo "one-change: velod's sync, from what its last sync wrote; one-change-read-back: the same"
	echo "change with the maps read back instead (velod's first sync after a restart)."
	echo
	echo "| sync | syncs | parse | table | maps | total | CPU | added / changed / unchanged |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	for p in $phases; do
		echo "| $p | $(awk -F, -v p="$p" '$1 == p' "$csv" | wc -l) | $(cell "$p" parse_ms) |" \
			"$(cell "$p" build_ms) | $(cell "$p" maps_ms) | $(cell "$p" total_ms) |" \
			"$(cell "$p" cpu_ms) |" \
			"$(med "$p" added | cut -d. -f1) / $(med "$p" changed | cut -d. -f1) /" \
			"$(med "$p" unchanged | cut -d. -f1) |"
	done
	echo
	echo "| ratio | value | target | verdict |"
	echo "|---|---:|---|---|"
	echo "| one-change sync / 0.5 s | $(ratio "$one" "$target_ms") | <= 1 |" \
		"$(awk -v o="$one" -v t="$target_ms" 'BEGIN { print o <= t ? "met" : "NOT MET" }') |"
	echo "| one-change sync / full sync | $(ratio "$one" "$(med full total_ms)") | - | - |"
	echo "| one-change maps / full maps | $(ratio "$(med one-change maps_ms)" "$(med full maps_ms)") | - | - |"
	if grep -q '^one-change-read-back,' "$csv"; then
		echo "| one-change maps / one-change-read-back maps |" \
			"$(ratio "$(med one-change maps_ms)" "$(med one-change-read-back maps_ms)") | - | - |"
	fi
} >"$md"
cat "$md"
echo
echo "bench/svc_sync.sh: results in $md, $csv"
