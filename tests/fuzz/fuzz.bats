#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The short version of `make fuzz` for the default suite: per parser, every seed in
# tests/fuzz/corpus/<target>/ runs clean, then VELOTEST_FUZZ_SECONDS (default 10) of
# fuzzing finds nothing. Builds the fuzzers with clang (make fuzz-build) unless
# VELOTEST_FUZZ_DIR points at built ones; skips when clang's libFuzzer is missing.

FZ_REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
FZ_SECONDS="${VELOTEST_FUZZ_SECONDS:-10}"

setup_file() {
	local build="${BUILD:-$FZ_REPO/build}"
	export FZ_DIR="${VELOTEST_FUZZ_DIR:-$build/fuzz}"
	export FZ_SKIP=""
	if [ -z "${VELOTEST_FUZZ_DIR:-}" ]; then
		if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
			clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
			FZ_SKIP="clang with libFuzzer not available"
			return 0
		fi
		make -C "$FZ_REPO" BUILD="$build" fuzz-build >"$BATS_FILE_TMPDIR/build.log" 2>&1 ||
			FZ_SKIP="make fuzz-build failed: $(tail -n 3 "$BATS_FILE_TMPDIR/build.log")"
	fi
}

setup() {
	[ -z "$FZ_SKIP" ] || skip "$FZ_SKIP"
}

# fz_run TARGET: the seeds, then FZ_SECONDS of fuzzing; shows the findings on failure.
fz_run() {
	local target="$1" out
	[ -x "$FZ_DIR/fuzz_$target" ] || { echo "no $FZ_DIR/fuzz_$target"; return 1; }
	if ! out="$("$FZ_REPO/tests/fuzz/run.sh" "$FZ_DIR" "$FZ_SECONDS" "$target" 2>&1)"; then
		echo "$out"
		echo "--- libFuzzer log:"
		grep -B2 -A25 -m1 -E 'ERROR: |runtime error|deadly signal' "$FZ_DIR/logs/$target.log" ||
			tail -n 30 "$FZ_DIR/logs/$target.log"
		return 1
	fi
	echo "# $(sed -n 2p <<<"$out")" >&3
}

@test "fuzz: network config (velo_config_parse)" { fz_run config; }
@test "fuzz: CNI_ARGS (cni_args_parse)" { fz_run cni_args; }
@test "fuzz: pod annotations and defaults (velo_annotations_parse)" { fz_run annotations; }
@test "fuzz: IPAM results and prevResult (velo_result_parse)" { fz_run result; }
@test "fuzz: endpoint records (state_record_from_json)" { fz_run state; }
@test "fuzz: kubeconfig (velo_k8s_kubeconfig_parse)" { fz_run kubeconfig; }
@test "fuzz: API pod answer (velo_k8s_pod_annotations_parse)" { fz_run k8s_pod; }
@test "fuzz: IPAM allocation files (pool_parse)" { fz_run pool; }
@test "fuzz: velod services file (velo_svc_state_parse, velo_svc_table_build)" { fz_run services; }
@test "fuzz: velod policy file (velo_pol_objects_parse, velo_pol_tables_build)" { fz_run policy; }
