# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for tests/node/sockmap/sockmap.bats, over lib.bash: pods wired by velo with
# the velo.dev/sockmap annotation and a cgroup of their own (velotest-sm-*
# under the cgroup2 mount, passed as runtimeConfig cgroupPath), velo's BPF
# pins in a bpffs dir of the test's own, and the stream checker
# build/tests/sockmap_stream. Everything is removed, pass or fail.

SM_STREAM="${SM_STREAM:-$VELOTEST_REPO/build/tests/sockmap_stream}"
SM_STATS=(insert not_pod peer_not_pod insert_fail redirect pass_first pass redirect_lost unpaired)
# The kernel bugs (docs/sockmap.md, "Kernel probes") the test pods accept in their conflist
# (sockmapAcceptKernelBugs): the accelerated path is what these tests test, also on kernels
# whose probes fail. SM_ACCEPT="" before sm_pod gives velo's default (such pods stay routed).
SM_ACCEPT="${SM_ACCEPT-halfclose-eagain splice-ingress waitall-short rcvlowat-ignored}"

# The cgroup2 mount, from mountinfo (never hard-coded).
sm_cgroup_mount() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo | head -n 1
}

# sm_need_tool VAR NAME: VAR names build/tests/NAME unless the environment set it; the test
# skips if it is not built.
sm_need_tool() {
	[ -n "${!1:-}" ] || printf -v "$1" '%s' "$VELOTEST_REPO/build/tests/$2"
	[ -x "${!1}" ] || skip "${!1} missing (make ${!1})"
}

# The hooks of a file that loads this one, unless it defines its own after `load`.
setup() { sm_setup; }
teardown() { sm_teardown; }

sm_setup() {
	vt_setup_velo
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	[ -x "$SM_STREAM" ] || skip "$SM_STREAM missing (make $SM_STREAM)"
	SM_CGMOUNT="$(sm_cgroup_mount)"
	[ -n "$SM_CGMOUNT" ] || skip "no cgroup2 mount"
	SM_BPFFS="/sys/fs/bpf/velotest-sm-$VT_TAG-$BATS_TEST_NUMBER"
	SM_CGROUPS=()
	SM_N=0
	SM_STATS_WAS="$(sysctl -n kernel.bpf_stats_enabled)"
}

sm_teardown() {
	local cg

	# A cgroup can only go once its last process has exited: a killed server may take a
	# moment (its sockets' teardown), so wait up to 15 s.
	for cg in "${SM_CGROUPS[@]}"; do
		vt_cgroup_kill "$cg" 15 || true
		[ ! -d "$cg" ] || rmdir "$cg" || echo "cgroup $cg not removed" >&2
	done
	# Unpinning the links detaches the programs; the maps go with their last pin.
	[ -n "${SM_BPFFS:-}" ] && rm -rf "$SM_BPFFS"
	[ -n "${SM_STATS_WAS:-}" ] && sysctl -qw kernel.bpf_stats_enabled="$SM_STATS_WAS"
	vt_teardown
}

# sm_config OPT_IN CGROUP_REL [ANNOTATIONS_JSON]: a dual-stack config with the pod's annotations
# (velo.dev/sockmap set from OPT_IN unless none) and cgroup, as runtimeConfig passed as a runtime
# does under the shipped conflist.
sm_config() {
	local annotations="${3:-"{}"}" accept conf rt
	[ "$1" = none ] || annotations="$(jq -c --arg v "$1" '.["velo.dev/sockmap"] = $v' <<<"$annotations")"
	# shellcheck disable=SC2086 # one name per word
	accept="$(printf '%s\n' $SM_ACCEPT | jq -R 'select(length > 0)' | jq -cs .)"
	conf="$(vt_config -f dual | jq -c --arg b "$SM_BPFFS" --argjson acc "$accept" \
		'.bpffsDir = $b |
		 if ($acc | length) > 0 then .sockmapAcceptKernelBugs = $acc else . end')" || return 1
	rt="$(jq -cn --arg cg "$2" --argjson a "$annotations" \
		'{"io.kubernetes.cri.pod-annotations": $a, cgroupPath: $cg}')" || return 1
	vt_runtime_config "$conf" "$rt"
}

# The sockhash kernel bugs velo's probes found on this kernel (veloctl status), one a line.
sm_kernel_bugs() {
	vt_node "$VELOTEST_REPO/build/veloctl" -j --state-dir "$VT/state" --run-dir "$VT/run" \
		--bpffs "$SM_BPFFS" status | jq -r '.kernel.sockmapKernelBugs[]'
}

# sm_kernel_has BUG: this kernel's probe for BUG failed.
sm_kernel_has() { sm_kernel_bugs | grep -qx "$1"; }

# sm_pod OPT_IN (true|false|none): a pod with its own cgroup, wired by velo.
# Sets SM_POD, SM_CG, SM_IP4, SM_IP6, SM_CID.
# shellcheck disable=SC2034 # read by the .bats file
sm_pod() {
	local rel="/velotest-sm-$VT_TAG-$BATS_TEST_NUMBER-$((SM_N++))"

	SM_POD="$(vt_pod_new)"
	SM_CG="$SM_CGMOUNT$rel"
	mkdir "$SM_CG"
	SM_CGROUPS+=("$SM_CG")
	SM_CID="sm-$SM_N-$RANDOM"
	vt_add "$SM_POD" "$SM_CID" "$(sm_config "$1" "$rel")" || return 1
	SM_IP4="$(vt_ip "$VT_RESULT" 4)"
	SM_IP6="$(vt_ip "$VT_RESULT" 6)"
}

# sm_in POD CGROUP CMD...: CMD in the pod's netns, as a process of the pod's cgroup.
sm_in() {
	local pod="$1" cg="$2"
	shift 2
	# shellcheck disable=SC2016
	nsenter --net="/run/netns/$pod" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" "$@"
}

# sm_serve OUT POD CGROUP CMD...: CMD, a server that prints "listening" once it listens, in the
# background in POD's CGROUP (stopped at teardown), its output in OUT; returns once it listens
# (5 s at most), its pid in SM_SERVER_PID.
sm_serve() {
	local out="$1" pod="$2" cg="$3" i
	shift 3
	sm_in "$pod" "$cg" "$@" >"$out" 2>&1 &
	SM_SERVER_PID=$!
	VT_PIDS+=("$SM_SERVER_PID")
	for i in $(seq 100); do
		grep -q listening "$out" && break
		sleep 0.05
	done
}

# sm_stream SPOD SCG ADDR CPOD CCG CONNS SIZE WSIZE [duplex] [CONNECT_ADDR]:
# a checked server in SPOD and client in CPOD; fails unless every stream is intact.
sm_stream() {
	local spod="$1" scg="$2" addr="$3" cpod="$4" ccg="$5" conns="$6" size="$7" wsize="$8"
	local duplex="${9:-}" target="${10:-$3}" port=$((20000 + RANDOM % 20000)) out pid i

	out="$VT/work/server.$port"
	sm_serve "$out" "$spod" "$scg" timeout 120 "$SM_STREAM" server "$addr" "$port" "$conns" \
		"$size" ${duplex:+"$duplex"}
	pid=$SM_SERVER_PID
	if ! sm_in "$cpod" "$ccg" timeout 120 "$SM_STREAM" client "$target" "$port" "$conns" \
		"$size" "$wsize" ${duplex:+"$duplex"}; then
		echo "client failed; server said: $(cat "$out")"
		return 1
	fi
	if ! wait "$pid"; then
		echo "server failed: $(cat "$out")"
		return 1
	fi
}

# sm_stat NAME: the sum over CPUs of one velo_smstat_v2 counter.
sm_stat() {
	local i
	for i in "${!SM_STATS[@]}"; do
		[ "${SM_STATS[$i]}" = "$1" ] || continue
		bpftool map lookup pinned "$SM_BPFFS/velo_smstat_v2" key "$i" 0 0 0 -j |
			jq '[.formatted.values[].value] | add // 0'
		return
	done
	return 1
}

# Sockets in the sockhash now.
sm_sockets() {
	bpftool map dump pinned "$SM_BPFFS/velo_sock_v1" -j 2>/dev/null | jq 'length'
}

# sm_acct FIELD: per-pod counters summed over CPUs, one line per pod: "<netns cookie> <value>".
sm_acct() {
	bpftool map dump pinned "$SM_BPFFS/velo_smacct_v1" -j |
		jq -r --arg f "$1" '.[] | "\(.formatted.key) \([.formatted.values[].value[$f]] | add)"'
}

# The netns cookie of a pod (what the accounting map is keyed by).
sm_cookie() {
	nsenter --net="/run/netns/$1" python3 -c \
		'import socket,struct; s=socket.socket(); print(struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])'
}

# run_cnt of a program pinned in the BPF generation dir, progs_g<hash> (there is one);
# kernel.bpf_stats_enabled must be on.
sm_run_cnt() {
	bpftool prog show pinned "$SM_BPFFS"/progs_g*/"$1" -j | jq '.run_cnt // 0'
}

# sm_bstream SPOD SCG ADDR CPOD CCG CONNS SIZE WSIZE: the plain blocking pattern (client
# writes, half-closes, reads the answer; no timeouts, no O_NONBLOCK). Returns 1 when a stream
# broke, 3 when every stream was intact but a blocking recv said EAGAIN.
sm_bstream() {
	local spod="$1" scg="$2" addr="$3" cpod="$4" ccg="$5" conns="$6" size="$7" wsize="$8"
	local port=$((20000 + RANDOM % 20000)) out pid i rc=0

	out="$VT/work/bserver.$port"
	sm_serve "$out" "$spod" "$scg" timeout 120 "$SM_STREAM" bserver "$addr" "$port" "$conns" \
		"$size" "$wsize"
	pid=$SM_SERVER_PID
	sm_in "$cpod" "$ccg" timeout 120 "$SM_STREAM" bclient "$addr" "$port" "$conns" "$size" \
		"$wsize" || rc=$?
	wait "$pid" || { local server_rc=$?; [ "$rc" -eq 1 ] || rc=$server_rc; }
	grep -v listening "$out"
	# 1 (or anything but 3) wins: a broken stream matters more than an EAGAIN.
	[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || rc=1
	return "$rc"
}
