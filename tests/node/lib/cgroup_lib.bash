# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for cgroup.bats (per-pod cgroup programs), on top of lib.bash: a
# cgroup per pod (velotest-<tag>-* under the cgroup2 mount, passed to velo as
# runtimeConfig cgroupPath), processes run inside it, a bpffs dir of the test's
# own, and velo's per-pod counters read with bpftool.

# The cgroup2 mount, from mountinfo (never hard-coded).
vtc_mount() { awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo; }

# The hooks of a file that loads this one, unless it defines its own after `load`.
setup() {
	vt_setup_velo
	vtc_setup
}
teardown() {
	vtc_teardown
	vt_teardown
}

# Called from setup after vt_setup: the test's bpffs dir and cgroups.
vtc_setup() {
	VTC_MOUNT="$(vtc_mount)"
	[ -n "$VTC_MOUNT" ] || skip "no cgroup2 mount"
	command -v bpftool >/dev/null || skip "bpftool not installed"
	command -v python3 >/dev/null || skip "python3 not installed"
	VTC_BPFFS="/sys/fs/bpf/velotest-$VT_TAG-$BATS_TEST_NUMBER"
	VTC_CGROUPS=()
}

vtc_teardown() {
	local cg
	local -a mine
	[ -n "${VTC_MOUNT:-}" ] || return 0
	# By name: vtc_cgroup_new runs in $(...), so VTC_CGROUPS can miss what it made.
	mine=("${VTC_CGROUPS[@]}" "$VTC_MOUNT"/velotest-"$VT_TAG"-"$BATS_TEST_NUMBER"-*
		"$VTC_MOUNT"/velotest-"$VT_TAG"-none)
	# Processes in the test cgroups go first (they were started by this test).
	for cg in "${mine[@]}"; do
		vt_cgroup_kill "$cg" || true
	done
	rm -rf "$VTC_BPFFS"
	for cg in "${mine[@]}"; do
		[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
	done
	return 0
}

# vtc_cgroup_new: creates a pod cgroup, prints its path relative to the mount ("/velotest-...").
vtc_cgroup_new() {
	local rel="/velotest-$VT_TAG-$BATS_TEST_NUMBER-${#VTC_CGROUPS[@]}-$RANDOM"
	mkdir "$VTC_MOUNT$rel" || return 1
	VTC_CGROUPS+=("$VTC_MOUNT$rel")
	echo "$rel"
}

# vtc_config BASE_CONFIG CGROUP_REL ANNOTATIONS_JSON: velo's config for one pod, its
# runtimeConfig passed as a runtime does under the shipped conflist.
vtc_config() {
	local conf rt
	conf="$(jq -c --arg b "$VTC_BPFFS" '.bpffsDir = $b' <<<"$1")" || return 1
	rt="$(jq -cn --arg cg "$2" --argjson a "$3" \
		'{cgroupPath: $cg, "io.kubernetes.cri.pod-annotations": $a}')" || return 1
	vt_runtime_config "$conf" "$rt"
}

# vtc_run POD CGROUP_REL CMD...: runs CMD in the pod's netns, inside its cgroup.
vtc_run() {
	local pod="$1" cg="$VTC_MOUNT$2"
	shift 2
	vs_in_cgroup "/run/netns/$pod" "$cg" "$@"
}

# vtc_counter CGROUP_REL FIELD: a velo_cg_counters field summed over CPUs; prints nothing
# and fails when the pod's cgroup has no entry (no program attached). bpftool prints a
# per-CPU value as raw bytes under .values and, decoded with the map's BTF, under
# .formatted.values: [{"cpu": N, "value": {FIELD: n, ...}}, ...].
vtc_counter() {
	local id key out
	id="$(stat -c %i "$VTC_MOUNT$1")"
	key="$(printf '%016x' "$id" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\8 \7 \6 \5 \4 \3 \2 \1/')"
	# shellcheck disable=SC2086
	out="$(bpftool -j map lookup pinned "$VTC_BPFFS/velo_cg_cnt_v1" key hex $key 2>/dev/null)" ||
		{ echo "vtc_counter: no counters for $1" >&2; return 1; }
	# A missing field or missing BTF decoding is an error, never a silent 0.
	jq -e --arg f "$2" '[.formatted.values[].value[$f]] |
		if any(. == null) then error("no field " + $f) else add end' <<<"$out"
}

# vtc_attached CGROUP_REL: velo programs attached to the cgroup itself (one per line).
vtc_attached() {
	bpftool cgroup show "$VTC_MOUNT$1" 2>/dev/null | awk 'NR > 1 { print $NF }' | grep '^velo_' || true
}

# vtc_nstat POD COUNTER: a kernel SNMP counter of the pod's netns (absolute).
vtc_nstat() {
	vt_pod "$1" nstat -az "$2" | awk -v c="$2" '$1 == c { print $2 }'
}

# vtc_tcp_send POD CGROUP_REL SINK_POD SINK_IPV4 BYTES: a TCP stream of BYTES zeros from POD
# (inside its cgroup) to a socat sink in SINK_POD; prints the segments the pod's kernel sent
# and received meanwhile ("OUT IN", from nstat), the truth the counters are checked against.
vtc_tcp_send() {
	local out0 in0 out1 in1
	vt_pod "$3" timeout 30 socat -u TCP4-LISTEN:5001,reuseaddr /dev/null &
	VT_PIDS+=($!)
	sleep 0.3
	out0="$(vtc_nstat "$1" TcpOutSegs)"
	in0="$(vtc_nstat "$1" TcpInSegs)"
	vtc_run "$1" "$2" sh -c "head -c $5 /dev/zero | socat -u - TCP4:$4:5001" || return 1
	sleep 0.3
	out1="$(vtc_nstat "$1" TcpOutSegs)"
	in1="$(vtc_nstat "$1" TcpInSegs)"
	echo "$((out1 - out0)) $((in1 - in0))"
}
