# SPDX-License-Identifier: Apache-2.0
# Helpers the benchmark scripts share (sourced, not run).

# The sockhash kernel bugs velo probes for (docs/sockmap.md), as sockmapAcceptKernelBugs takes
# them. Where the kernel has one, velo keeps sockmap pods routed unless the conflist accepts it
# by name; the benches accept them all, as an operator whose pods avoid those patterns may, so
# that they measure the short-circuit.
# shellcheck disable=SC2034 # used by the scripts that source this
BENCH_ACCEPT_BUGS='["halfclose-eagain", "splice-ingress", "waitall-short", "rcvlowat-ignored"]'

# cgroup_kill CG: as a runtime does: cgroup.kill (a loop over cgroup.procs misses pids when the
# list shifts), then wait (5 s at most) for cgroup.procs to be empty.
cgroup_kill() {
	echo 1 >"$1/cgroup.kill" || return 1
	for _ in $(seq 100); do
		[ -n "$(cat "$1/cgroup.procs")" ] || return 0
		sleep 0.05
	done
	echo "cgroup $1 still has processes: $(tr '\n' ' ' <"$1/cgroup.procs")" >&2
	return 1
}
