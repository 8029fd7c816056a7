#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs velo's test suites and ends with one line: "N passed, N failed, N skipped".
# Usage: tests/run.sh [unit|bpf|fuzz|layout|manifests|node|clients|kernel|cluster ...]
# (default: all of them)
# Every suite speaks TAP; this script counts the TAP lines. A binary that dies
# without reporting a failure counts as one failure, so a crash can't pass.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
log_dir=$build/test-logs
mkdir -p "$log_dir"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit bpf fuzz layout manifests node clients kernel cluster)

passed=0 failed=0 skipped=0

# count_tap FILE: adds FILE's TAP results to the totals; prints failures. A "not ok ... # TODO"
# (a known bug of the system under test, expected there: the kernel matrix) counts as skipped
# and is printed by name.
# With VELOTEST_STRICT_SKIPS=1 (hack/test.sh, so CI) a skip that says something is not installed,
# not built or missing counts as a failure: install-deps.sh and make provide everything, so such a
# skip means a suite silently stopped running.
missing_skip='# skip .*(not installed|not built|missing|not available|install-deps)'
count_tap() {
	local file=$1 p f s t m=0
	p=$(grep -Eic '^ok [0-9]+' "$file" || true)
	s=$(grep -Eic '^ok [0-9]+.*# skip' "$file" || true)
	t=$(grep -Eic '^not ok [0-9]+.*# TODO' "$file" || true)
	f=$(grep -Eic '^not ok [0-9]+' "$file" || true)
	if [ "${VELOTEST_STRICT_SKIPS:-0}" = 1 ]; then
		m=$(grep -Eic "^ok [0-9]+.*$missing_skip" "$file" || true)
		grep -Ei "^ok [0-9]+.*$missing_skip" "$file" | sed 's/^/    not ok (a missing part) /' || true
	fi
	f=$((f - t + m))
	passed=$((passed + p - s)) skipped=$((skipped + s + t - m)) failed=$((failed + f))
	grep -Ei '^not ok [0-9]+' "$file" | grep -Eiv '# TODO' | sed 's/^/    /' || true
	grep -Ei '^not ok [0-9]+.*# TODO' "$file" | sed 's/^/    (expected) /' || true
	LAST_FAILED=$f
}

# The suites that wire pods and run velo's programs on this machine take the node lock for their
# run, and so does bench/run.sh (`make bench`): two of them at once (from two checkouts, say) see
# each other's BPF programs, stats and CPU load, and a benchmark beside a suite measures both.
node_lock=${VELO_NODE_LOCK:-/run/velo-node.lock}
node_locked() {
	# Held already by whoever started us (bench/run.sh, an outer run.sh): nested, not again.
	[ "${VELO_NODE_LOCK_HELD:-}" != 1 ] || { "$@"; return; }
	exec 8>>"$node_lock"
	if ! flock -n 8; then
		printf '== waiting for the node lock %s\n' "$node_lock"
		flock 8
	fi
	VELO_NODE_LOCK_HELD=1 "$@"
	flock -u 8
	exec 8>&-
}

# A suite that runs longer than this is stopped and counted as a failure.
suite_timeout=${VELO_SUITE_TIMEOUT:-900}

run_tap() {
	local name=$1
	shift
	local out=$log_dir/$name.tap rc start=$SECONDS
	CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "$suite_timeout" "$@" >"$out" 2>"$log_dir/$name.stderr"
	rc=$?
	# Printed when done, with its time: what makes the suite long is in the log.
	printf '== %s (%ds)\n' "$name" $((SECONDS - start))
	count_tap "$out"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		printf '    not ok - %s timed out after %ss\n' "$name" "$suite_timeout"
		failed=$((failed + 1))
	elif [ "$rc" -ne 0 ] && [ "$LAST_FAILED" -eq 0 ]; then
		printf '    not ok - %s exited %d without reporting a failure\n' "$name" "$rc"
		failed=$((failed + 1))
	fi
}

run_binaries() {
	local pattern=$1 bin found=0
	for bin in $pattern; do
		[ -x "$bin" ] || continue
		found=1
		run_tap "$(basename "$bin")" "$bin"
	done
	[ "$found" -eq 1 ] || printf '== no binaries match %s (run make first)\n' "$pattern"
}

# One bats file at a time, so a hang costs one file and the logs say which. Files in a
# sub-folder by concern are named after it: node/policy/policy_truth.bats is node-policy-truth,
# node/cgroup/cgroup.bats node-cgroup.
run_bats() {
	local dir=$1 name=$2 file rel folder base
	# The list on fd 3: a test that reads stdin (ctr, podman) must not eat the files after it.
	while IFS= read -r -u 3 file; do
		rel=${file#"$dir"/} base=$(basename "$file" .bats)
		folder=${rel%/*}
		if [ "$folder" = "$rel" ]; then
			run_tap "$name-$base" bats --tap "$file"
		elif [ "$base" = "${folder##*/}" ]; then
			run_tap "$name-${folder//\//-}" bats --tap "$file"
		else
			run_tap "$name-${folder//\//-}-${base#"${folder##*/}"_}" bats --tap "$file"
		fi
	done 3< <(find "$dir" -name '*.bats' -type f | sort)
}

# hack/test.sh builds the patched test kernel in the background and holds this lock meanwhile:
# the matrix boots it only when it is there, so wait for the build, and under
# VELOTEST_STRICT_SKIPS a build that left no kernel is a failure, not a smaller matrix.
kernel_build_wait() {
	local lock=$build/kernel-build.lock start=$SECONDS
	[ -e "$lock" ] || return 0
	flock "$lock" true
	printf '== kernel build (waited %ds)\n' $((SECONDS - start))
	if [ "${VELOTEST_STRICT_SKIPS:-0}" = 1 ] && [ ! -f "$build/kernel/permanent/bzImage" ]; then
		printf '    not ok - the BPF_F_PERMANENT test kernel was not built (%s)\n' \
			"$log_dir/kernel-build.log"
		tail -n 20 "$log_dir/kernel-build.log" 2>/dev/null | sed 's/^/    # /'
		failed=$((failed + 1))
	fi
}

for suite in "${suites[@]}"; do
	case "$suite" in
	unit) run_binaries "$build/tests/test_[!b]*" ;;
	bpf) run_binaries "$build/tests/test_bpf*" ;;
	node) node_locked run_bats "$top/tests/node" node ;;
	clients) node_locked run_bats "$top/tests/clients" clients ;;
	layout) run_bats "$top/tests/layout" layout ;;
	manifests) run_bats "$top/tests/manifests" manifests ;;
	fuzz) run_bats "$top/tests/fuzz" fuzz ;;
	# Two qemu guests (~9 min alone); the kind cluster's build may share the cores meanwhile.
	kernel)
		kernel_build_wait
		suite_timeout=${VELO_KERNEL_TIMEOUT:-1500} run_tap kernel "$top/tests/kernel/matrix.sh"
		;;
	# A cold cache builds Kubernetes from source first (docs/kind.md: ~35 min on 2 cores).
	cluster) suite_timeout=${VELO_CLUSTER_TIMEOUT:-4200} run_tap cluster "$top/tests/cluster/run.sh" ;;
	*) echo "unknown suite: $suite" >&2; exit 2 ;;
	esac
done

if [ $((passed + failed)) -eq 0 ]; then
	echo "no test ran" >&2
	failed=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
