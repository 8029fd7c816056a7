#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Crash safety: velo killed with SIGKILL at a random point during ADD, then cleaned
# up as a runtime would (DEL, or GC with a 1.1.0 config and no valid attachments).
# Every trial must leave nothing: no vt* veth or pod route in the node, no host-local
# lease, no endpoint record (or temp file), no lock file, no per-pod pin or endpoint
# map entry; and the next ADD for a new pod must succeed.
#
# VELOTEST_CRASH_TRIALS (default 20; `make stress` runs 150) trials per test;
# VELOTEST_CRASH_MAX_MS (default 40): kill after a uniform random 0..MAX ms.
# Per test it prints (to the TAP stream) in which phase each ADD was killed, from the
# endpoint record ADD writes before each side effect.

load ../lib/lib

CR_TRIALS="${VELOTEST_CRASH_TRIALS:-20}"
CR_MAX_MS="${VELOTEST_CRASH_MAX_MS:-40}"

setup() {
	vt_setup_velo
	CR_BPFFS=""
	declare -gA CR_PHASES=()
}

teardown() {
	cr_wait_orphans
	vt_teardown
	[ -z "${CR_BPFFS:-}" ] || rm -rf "$CR_BPFFS"
	return 0
}

# IPAM plugins velo started and that outlived it (a killed parent doesn't kill its child).
cr_orphans() { pgrep -f "^$VT_BIN/" || true; }

# Waits (up to 5 s) until no plugin process of this test runs.
cr_wait_orphans() {
	local _
	[ -n "${VT_BIN:-}" ] || return 0
	for _ in $(seq 50); do
		[ -n "$(cr_orphans)" ] || return 0
		sleep 0.1
	done
	echo "plugin processes still running after 5 s: $(cr_orphans | tr '\n' ' ')"
}

# cr_kill_add POD CID CONFIG DELAY_SECONDS: ADD in the background, SIGKILL after DELAY.
# nsenter and env exec, so $! ends up being velo itself.
cr_kill_add() {
	local pod="$1" cid="$2" config="$3" delay="$4" pid
	nsenter --net="/run/netns/$VT_NODE" env -i PATH="$PATH" CNI_COMMAND=ADD \
		"CNI_CONTAINERID=$cid" "CNI_NETNS=/run/netns/$pod" CNI_IFNAME=eth0 \
		"CNI_PATH=$VT_BIN" \
		"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=velotest;K8S_POD_NAME=pod-$cid" \
		"$VT_BIN/velo" <<<"$config" >"$VT/work/add.out" 2>"$VT/work/add.err" &
	pid=$!
	sleep "$delay"
	# (bash reports the killed job on stderr; that is expected here.)
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# The phase the killed ADD had reached: none (no record), ipam, wiring, features, ready,
# or "done" when it printed its result before the kill.
cr_phase() {
	local cid="$1" record="$VT_STATE/$VT_NETWORK/${1}:eth0.json"
	# Until the ADD is ready its record is in runDir (state.h).
	[ -f "$record" ] || record="$VT/run/pending/$VT_NETWORK/${cid}:eth0.json"
	if [ -s "$VT/work/add.out" ] && jq -e '.ips' "$VT/work/add.out" >/dev/null 2>&1; then
		echo "done"
	elif [ -f "$record" ]; then
		jq -r '.phase // "unreadable"' "$record" 2>/dev/null || echo unreadable
	else
		echo none
	fi
}

# Pin paths and endpoint-map entry counts, one per line (for before/after comparison).
cr_bpf_snapshot() {
	local pin
	[ -n "$CR_BPFFS" ] && [ -d "$CR_BPFFS" ] || return 0
	find "$CR_BPFFS" -mindepth 1 | sort
	for pin in $(find "$CR_BPFFS" -type f -name 'velo_*' | sort); do
		printf '%s entries=%s\n' "$pin" \
			"$(bpftool -j map dump pinned "$pin" 2>/dev/null | jq 'length' 2>/dev/null || echo n/a)"
	done
}

# Everything a pod leaves in the node, one "kind: item" per line; empty when clean.
cr_residue() {
	local baseline="${1:-}"
	vt_host_links | sed 's/^/veth: /'
	{
		vt_node ip -4 route show proto 118
		vt_node ip -6 route show proto 118
		vt_node ip -4 route show | grep -F "${VT_SUBNET4%.*}."
		vt_node ip -6 route show | grep -F "${VT_SUBNET6%%::*}::"
	} 2>/dev/null | sort -u | sed 's/^/route: /'
	vt_leases | sed 's/^/lease: /'
	[ ! -d "$VT_STATE" ] || find "$VT_STATE" -type f -printf 'state file: %P\n'
	[ ! -d "$VT/run/pending" ] || find "$VT/run/pending" -type f -printf 'pending record: %P\n'
	# (Node-wide caches in runDir, e.g. bpf-probes and ipam-versions/, are not per pod.)
	[ ! -d "$VT/run/locks" ] || find "$VT/run/locks" -type f -printf 'lock file: %P\n'
	if [ -n "$CR_BPFFS" ]; then
		diff <(printf '%s\n' "$baseline" | sed '/^$/d') <(cr_bpf_snapshot) |
			sed -n 's/^> /bpf: /p'
	fi
	return 0
}

# cr_scrub: removes residue so the next trial starts clean (after it has been reported).
cr_scrub() {
	local link
	for link in $(vt_host_links); do vt_node ip link del "$link" 2>/dev/null || true; done
	[ ! -d "$VT_STATE" ] || find "$VT_STATE" -type f -delete
	[ ! -d "$VT/run/pending" ] || find "$VT/run/pending" -type f -delete
	[ ! -d "$VT/run/locks" ] || find "$VT/run/locks" -type f -delete
	[ ! -d "$VT_IPAM/$VT_NETWORK" ] || find "$VT_IPAM/$VT_NETWORK" -type f \
		! -name 'last_reserved_ip*' ! -name lock -delete
}

# cr_trials CONFIG CLEANUP [GC_CONFIG]: the trials; CLEANUP is del or gc. Every trial runs
# even after one leaves something behind; the end lists what remained after which phase.
cr_trials() {
	local config="$1" cleanup="$2" gc_config="${3:-}" baseline="" i pod cid delay phase left
	local fresh summary="" bad=0 kind
	local -A residue=()

	if [ -n "$CR_BPFFS" ]; then
		# One pod in and out first, so the shared maps exist in the baseline.
		pod="$(vt_pod_new)"
		vt_add "$pod" crash-warmup "$config"
		vt_cni DEL crash-warmup "$pod" eth0 "$config"
		vt_assert_ok
		ip netns del "$pod"
		baseline="$(cr_bpf_snapshot)"
	fi
	left="$(cr_residue "$baseline")"
	[ -z "$left" ] || { echo "not clean before the trials:"; echo "$left"; return 1; }

	for ((i = 0; i < CR_TRIALS; i++)); do
		pod="$(vt_pod_new)"
		cid="crash-$i-$RANDOM"
		printf -v delay '0.%03d' $((RANDOM % (CR_MAX_MS + 1)))
		cr_kill_add "$pod" "$cid" "$config" "$delay"
		phase="$(cr_phase "$cid")"
		CR_PHASES[$phase]=$((${CR_PHASES[$phase]:-0} + 1))

		if [ "$cleanup" = del ]; then
			vt_cni DEL "$cid" "$pod" eth0 "$config"
		else
			vt_cni_env "$gc_config" CNI_COMMAND=GC "CNI_PATH=$VT_BIN"
		fi
		if [ "$VT_RC" -ne 0 ]; then
			echo "trial $i: $cleanup after a kill at ${delay}s (phase $phase) failed"
			vt_show
			return 1
		fi
		# A lease an orphaned IPAM ADD takes after the cleanup is a leak as well.
		cr_wait_orphans
		ip netns del "$pod"
		left="$(cr_residue "$baseline")"
		if [ -n "$left" ]; then
			bad=$((bad + 1))
			echo "trial $i: left behind after kill -9 at ${delay}s (phase $phase) and $cleanup:"
			echo "$left" | sed 's/^/    /'
			while read -r kind; do
				residue["$kind after phase $phase"]=$((${residue["$kind after phase $phase"]:-0} + 1))
			done < <(cut -d: -f1 <<<"$left")
			cr_scrub
		fi

		# The node still works: a new pod gets wired and released.
		fresh="$(vt_pod_new)"
		vt_add "$fresh" "fresh-$i" "$config" || { echo "trial $i: next ADD failed"; return 1; }
		vt_cni DEL "fresh-$i" "$fresh" eth0 "$config"
		vt_assert_ok || { echo "trial $i: DEL of the next pod failed"; return 1; }
		ip netns del "$fresh"
	done
	for phase in "${!CR_PHASES[@]}"; do summary+=" $phase=${CR_PHASES[$phase]}"; done
	echo "# $CR_TRIALS trials ($cleanup), killed in phase:$summary; $bad left something" >&3
	if [ "$bad" -gt 0 ]; then
		echo "$bad of $CR_TRIALS trials left something behind:"
		for kind in "${!residue[@]}"; do echo "  ${residue[$kind]}x $kind"; done
		return 1
	fi
	left="$(cr_residue "$baseline")"
	[ -z "$left" ] || { echo "left at the end:"; echo "$left"; return 1; }
}

@test "kill -9 during ADD, then DEL: nothing left, the next ADD works" {
	cr_trials "$(vt_config -f dual)" del
}

@test "kill -9 during ADD, then GC (1.1.0, no valid attachments): nothing left" {
	local config gc_config
	config="$(vt_config -v 1.1.0 -f dual)"
	gc_config="$(jq -c '.["cni.dev/valid-attachments"] = []' <<<"$config")"
	cr_trials "$config" gc "$gc_config"
}

# velo's IPAM makes ADD a few ms long: kills within VELOTEST_CRASH_MAX_MS_VELO_IPAM (default 8)
# land in every phase.
@test "velo IPAM: kill -9 during ADD, then DEL: nothing left, the next ADD works" {
	CR_MAX_MS="${VELOTEST_CRASH_MAX_MS_VELO_IPAM:-8}"
	cr_trials "$(vt_config -i velo -f dual)" del
}

@test "velo IPAM: kill -9 during ADD, then GC (1.1.0, no valid attachments): nothing left" {
	local config gc_config
	CR_MAX_MS="${VELOTEST_CRASH_MAX_MS_VELO_IPAM:-8}"
	config="$(vt_config -i velo -v 1.1.0 -f dual)"
	gc_config="$(jq -c '.["cni.dev/valid-attachments"] = []' <<<"$config")"
	cr_trials "$config" gc "$gc_config"
}

@test "kill -9 during ADD with the tc fast path, then DEL: no pin or map entry left" {
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	mountpoint -q /sys/fs/bpf || skip "bpffs not mounted at /sys/fs/bpf"
	CR_BPFFS="/sys/fs/bpf/velotest-crash-$VT_TAG-$BATS_TEST_NUMBER"
	cr_trials "$(vt_annotated "$(vt_config -f dual | jq -c --arg b "$CR_BPFFS" '.bpffsDir = $b')" \
		'{"velo.dev/fastpath": "tc"}')" del
}
