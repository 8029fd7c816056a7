#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs velo's libFuzzer targets: each over its seed corpus (tests/fuzz/corpus/<target>/), then
# fuzzing for SECONDS. Prints one line per target (executions, corpus size, findings) and a
# total; exits 1 when any target found something. Findings land in <fuzz dir>/artifacts/<target>/.
# Usage: tests/fuzz/run.sh FUZZ_DIR [SECONDS [TARGET...]]   (SECONDS 0: seed corpus only)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fuzz_dir=${1:?usage: run.sh FUZZ_DIR [SECONDS [TARGET...]]}
seconds=${2:-60}
shift 2 2>/dev/null || shift $#
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for bin in "$fuzz_dir"/fuzz_*; do
		[ -x "$bin" ] && targets+=("$(basename "$bin" | sed 's/^fuzz_//')")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzzers in $fuzz_dir (make fuzz-build)" >&2; exit 2; }

total_execs=0 total_findings=0
printf '%-12s %12s %8s %8s %s\n' target executions corpus findings seconds
for target in "${targets[@]}"; do
	bin=$fuzz_dir/fuzz_$target
	seeds=$here/corpus/$target
	work=$fuzz_dir/corpus/$target
	artifacts=$fuzz_dir/artifacts/$target
	log=$fuzz_dir/logs/$target.log
	mkdir -p "$work" "$artifacts" "$(dirname "$log")"
	before=$(find "$artifacts" -type f ! -name .stamp | wc -l)
	: >"$log"
	touch "$artifacts/.stamp"
	# The seeds first, one run each: a seed that crashes is a regression (and a finding).
	seed_crash=0
	if ! "$bin" -runs=0 -close_fd_mask=3 -artifact_prefix="$artifacts/" \
		"$seeds"/* >>"$log" 2>&1; then
		echo "$target: a seed input crashed (see $log)" >&2
		seed_crash=1
	fi
	execs=0
	if [ "$seconds" -gt 0 ]; then
		# Finds go to the work corpus (build dir); the repo's seed corpus stays as written.
		"$bin" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
			-close_fd_mask=3 -print_final_stats=1 -dict="$here/velo.dict" \
			-artifact_prefix="$artifacts/" "$work" "$seeds" >>"$log" 2>&1
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		# On a crash libFuzzer prints no final stats; its last status line has the count.
		[ -n "$execs" ] || execs=$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
	fi
	findings=$(($(find "$artifacts" -type f ! -name .stamp | wc -l) - before))
	[ "$findings" -gt 0 ] || findings=$seed_crash
	corpus=$(find "$work" -type f | wc -l)
	printf '%-12s %12s %8s %8s %s\n' "$target" "${execs:-0}" "$corpus" "$findings" "$seconds"
	if [ "$findings" -gt 0 ]; then
		find "$artifacts" -type f -newer "$artifacts/.stamp" -printf '    %p\n' 2>/dev/null
		grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer)|runtime error' \
			"$log" | sed 's/^/    /'
	fi
	total_execs=$((total_execs + ${execs:-0}))
	total_findings=$((total_findings + findings))
done
echo "total: $total_execs executions, $total_findings findings"
[ "$total_findings" -eq 0 ]
