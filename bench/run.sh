#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every benchmark in bench/: each bench/<name>.sh other than this one, called with
# -o OUTDIR, writes its results there as <name>.md and <name>.csv. Benchmarks are not tests:
# a benchmark fails only when it could not measure (a plugin invocation failed, say), never
# because a target was missed; missed targets show as "NO" in its table.
# Usage (as root): bench/run.sh [OUTDIR]        (default build/bench; `make bench` runs this)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-$top/build/bench}

[ "$(id -u)" = 0 ] || { echo "bench/run.sh: needs root" >&2; exit 1; }
# The node lock tests/run.sh's node and clients suites hold: a benchmark beside them would
# measure their load too (and they would see its programs).
node_lock=${VELO_NODE_LOCK:-/run/velo-node.lock}
if [ "${VELO_NODE_LOCK_HELD:-}" != 1 ]; then
	exec 8>>"$node_lock"
	if ! flock -n 8; then
		echo "bench/run.sh: waiting for the node lock $node_lock"
		flock 8
	fi
	export VELO_NODE_LOCK_HELD=1
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

ran=0 failed=0
for bench in "$top"/bench/*.sh; do
	name=$(basename "$bench" .sh)
	[ "$name" = run ] && continue
	echo "== $name"
	ran=$((ran + 1))
	if ! "$bench" -o "$outdir"; then
		failed=$((failed + 1))
		echo "== $name FAILED" >&2
	fi
done
echo "results in $outdir"
echo "$ran benchmarks ran, $failed failed"
[ "$failed" = 0 ]
