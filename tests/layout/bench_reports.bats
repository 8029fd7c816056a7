#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# bench/cluster.sh's reports (issue 42) from samples written here: cluster_report.py's medians,
# spreads and verdicts (a class is won or lost only where the min-max spreads part), the e2e
# suites' rows, and cluster_profiles.py's side-by-side profile table. No root, no traffic.

REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"

setup() {
	VT=$(mktemp -d /tmp/velotest-bench-reports.XXXXXX)
}

teardown() {
	[ -z "${VT:-}" ] || rm -rf "$VT"
}

@test "cluster_report: medians with spreads, verdicts only where the spreads part" {
	cat >"$VT/s.csv" <<'EOF'
round,cni,class,value
1,velo,tcp128k-cross-pod,12.5
1,velo,tcp128k-cross-pod,12.6
1,velo,tcp128k-cross-pod,13.2
1,cilium,tcp128k-cross-pod,11.3
1,cilium,tcp128k-cross-pod,12.0
1,cilium,tcp128k-cross-pod,12.4
1,velo,tcp1k-cross-pod,1.2
1,velo,tcp1k-cross-pod,1.8
1,velo,tcp1k-cross-pod,3.7
1,cilium,tcp1k-cross-pod,1.0
1,cilium,tcp1k-cross-pod,1.1
1,cilium,tcp1k-cross-pod,1.9
1,velo,rr50-same-pod,19.6
1,velo,rr50-same-pod,20.1
1,cilium,rr50-same-pod,18.0
1,cilium,rr50-same-pod,18.4
1,velo,start99,6.76
1,cilium,start99,18.5
1,velo,netpol_passed,47
1,velo,netpol_failed,0
1,cilium,netpol_passed,44
1,cilium,netpol_failed,3
1,cilium,conformance_passed,NA
EOF
	run python3 "$REPO/bench/cluster_report.py" "$VT/s.csv"
	echo "$output"
	[ "$status" -eq 0 ]
	# Each CNI's median (min-max), in the order the CNIs first ran.
	[[ "$output" == *"| class | unit | velo | cilium |"* ]]
	[[ "$output" == *"| TCP stream, 128 KiB writes, across nodes | Gbit/s | 12.6 (12.5-13.2) | 12 (11.3-12.4) |"* ]]
	# Higher is better and the spreads part: velo ahead; overlapping: no verdict.
	[[ "$output" == *"| TCP stream, 128 KiB writes, across nodes | 0.95x **ahead** |"* ]]
	[[ "$output" == *"| TCP stream, 1 KiB writes, across nodes | 0.61x ~ |"* ]]
	# Lower is better (microseconds): Cilium's lower spread puts velo behind.
	[[ "$output" == *"| TCP 64 B request/response p50, same node | 0.92x **behind** |"* ]]
	# One sample each: no spread, no verdict.
	[[ "$output" == *"| 50 pods at once: Ready after the create, p99 | 2.74x n=1 |"* ]]
	# The suites' counts are rows of the first table, never ratios; NA is no number.
	[[ "$output" == *"| NetworkPolicy e2e passed |  | 47 | 44 |"* ]]
	[[ "$output" == *"| NetworkPolicy e2e failed |  | 0 | 3 |"* ]]
	run grep -c 'NetworkPolicy e2e' <<<"$output"
	[ "$output" -eq 2 ]
}

@test "cluster_profiles: every CNI's share of a symbol side by side, above the limit in one" {
	printf 'round,cni,class,value\n1,velo-best,up_s,72\n1,cilium-best,up_s,123\n' \
		>"$VT/cluster_samples.csv"
	cat >"$VT/profile-velo-best.txt" <<'EOF'
    26.35%  [kernel.kallsyms]  [k] pv_native_safe_halt
     0.78%  [kernel.kallsyms]  [k] ip_route_input_slow
     0.31%  [kernel.kallsyms]  [k] tcp_ack
EOF
	cat >"$VT/profile-cilium-best.txt" <<'EOF'
    28.43%  [kernel.kallsyms]  [k] pv_native_safe_halt
     0.57%  [kernel.kallsyms]  [k] bpf_prog_881df0a08b205163_tail_handle_ipv4
     0.45%  [kernel.kallsyms]  [k] tcp_ack
EOF
	run python3 "$REPO/bench/cluster_profiles.py" "$VT" 0.5
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "| symbol | velo-best | cilium-best |" ]
	# Sorted by the largest share; blank where a profile lacks the symbol.
	[ "${lines[2]}" = '| `pv_native_safe_halt` | 26.35 | 28.43 |' ]
	[ "${lines[3]}" = '| `ip_route_input_slow` | 0.78 |  |' ]
	[ "${lines[4]}" = '| `bpf_prog_881df0a08b205163_tail_handle_ipv4` |  | 0.57 |' ]
	# tcp_ack is under the limit in both.
	[ "${#lines[@]}" -eq 5 ]
}

@test "cluster_profiles: no profile is an error, not an empty table" {
	printf 'round,cni,class,value\n1,velo,up_s,84\n' >"$VT/cluster_samples.csv"
	run python3 "$REPO/bench/cluster_profiles.py" "$VT"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no profile-CNI.txt"* ]]
}
