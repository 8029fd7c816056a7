#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What BPF run-time stats cost every BPF program on the node while a BPF_ENABLE_STATS fd is
# held (velod's sampling windows, veloctl top): bench/stats_overhead.c runs a trivial program
# with BPF_PROG_TEST_RUN, stats off and on alternately, and prints the medians. No traffic,
# no namespaces; the program is unloaded when the tool exits.
# Usage (as root): bench/stats_overhead.sh [-o OUTDIR] [-n REPEAT] [-r ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/bench repeat=5000000 rounds=7
while getopts "o:n:r:" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	n) repeat=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench/stats_overhead.sh: needs root" >&2; exit 1; }
work=$(mktemp -d /tmp/velobench-stats-XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2046 # pkg-config prints several flags
${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -Werror -o "$work/stats_overhead" \
	"$top/bench/stats_overhead.c" $(pkg-config --cflags --libs libbpf)
mkdir -p "$outdir"
"$work/stats_overhead" "$repeat" "$rounds" >"$outdir/stats_overhead.csv"
summary=$(grep '^#' "$outdir/stats_overhead.csv")
sed -i '/^#/d' "$outdir/stats_overhead.csv"
{
	echo "# BPF_ENABLE_STATS overhead per program run"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs."
	echo "Command (as root): \`bench/stats_overhead.sh -n $repeat -r $rounds\`"
	echo
	echo "${summary#\# }"
} >"$outdir/stats_overhead.md"
cat "$outdir/stats_overhead.md"
