#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Concurrency: a busy attachment gives code 11 after lockTimeoutMs, never a hang,
# and GC leaves an attachment whose ADD or DEL is in flight alone.

load ../lib/lib
load ../lib/cgroup_lib

# No cgroup unless a test makes one: cgroup_lib's teardown (vtc_teardown) does nothing unless
# the test called vtc_setup.
setup() { vt_setup_velo; }

# lock_path CONTAINER: the attachment lock velo takes (docs/design.md).
lock_path() { echo "$VT/run/locks/$VT_NETWORK/${1}:eth0.lock"; }

# hold_file_lock PATH: holds a flock on PATH in the background; sets HOLDER.
hold_file_lock() {
	local path="$1"
	mkdir -p "$(dirname "$path")"
	# The sleeping process itself holds the lock, so killing it releases the lock.
	# shellcheck disable=SC2016
	bash -c 'exec 9>"$1" && flock 9 && exec sleep 30' _ "$path" &
	HOLDER=$!
	VT_PIDS+=("$HOLDER")
	# Wait until the lock is really taken.
	for _ in $(seq 100); do
		flock -n "$path" true || return 0
		sleep 0.02
	done
	echo "lock $path never taken" >&2
	return 1
}

# hold_lock CONTAINER: holds the attachment's flock in the background; sets HOLDER.
hold_lock() { hold_file_lock "$(lock_path "$1")"; }

# release_lock: ends HOLDER, which releases its lock.
release_lock() {
	kill "$HOLDER"
	wait "$HOLDER" || true
}

@test "ADD on a busy attachment answers code 11 after lockTimeoutMs and changes nothing" {
	local conf pod start end
	conf="$(vt_config | jq -c '.lockTimeoutMs = 300')"
	pod="$(vt_pod_new)"
	hold_lock ctr-busy
	start=$(date +%s%N)
	vt_cni ADD ctr-busy "$pod" eth0 "$conf"
	end=$(date +%s%N)
	vt_assert_error 11
	# Bounded: well under a second with a 300 ms timeout, never a hang.
	[ $(((end - start) / 1000000)) -lt 3000 ]
	[ "$(vt_leases | wc -l)" -eq 0 ]
	[ "$(vt_records | wc -l)" -eq 0 ]
	release_lock
	vt_cni ADD ctr-busy "$pod" eth0 "$conf"
	vt_assert_ok
	vt_cni DEL ctr-busy "$pod" eth0 "$conf"
	vt_assert_ok
}

@test "GC skips an attachment whose lock is held (ADD/DEL in flight) and releases it once free" {
	local conf pod
	conf="$(vt_config -v 1.1.0)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-inflight "$conf"
	hold_lock ctr-inflight
	vt_cni_env "$(jq -c '.["cni.dev/valid-attachments"] = []' <<<"$conf")" CNI_COMMAND=GC \
		"CNI_PATH=$VT_BIN"
	vt_assert_ok
	[ "$(vt_records | wc -l)" -eq 1 ]
	[ "$(vt_host_links | wc -l)" -eq 1 ]
	release_lock
	vt_cni_env "$(jq -c '.["cni.dev/valid-attachments"] = []' <<<"$conf")" CNI_COMMAND=GC \
		"CNI_PATH=$VT_BIN"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "a busy BPF loader lock: ADD with fastpath, egress-deny or sockmap answers 11 and leaves nothing" {
	vtc_setup
	local pod cg conf base i
	local -a annotations=('{"velo.dev/fastpath": "tc"}' '{"velo.dev/egress-deny": "192.0.2.0/24"}'
		'{"velo.dev/sockmap": "true"}')
	# Kernel bugs accepted: sockmap must get as far as loading its objects, not stay routed.
	base="$(vt_accept_kernel_bugs "$(vt_config -f 4 | jq -c '.lockTimeoutMs = 300')")"
	cg="$(vtc_cgroup_new)"
	pod="$(vt_pod_new)"
	# A fresh bpffsDir: every feature's first ADD must load, under runDir/bpf.lock.
	hold_file_lock "$VT/run/bpf.lock"
	for i in 0 1 2; do
		conf="$(vtc_config "$base" "$cg" "${annotations[$i]}")"
		vt_cni ADD "ctr-bpflock$i" "$pod" eth0 "$conf"
		vt_assert_error 11 'try again'
		vt_assert_nothing_left
		[ -z "$(vt_pod "$pod" ip -o link show eth0 2>/dev/null)" ]
	done
	release_lock
	for i in 0 1 2; do
		conf="$(vtc_config "$base" "$cg" "${annotations[$i]}")"
		vt_cni ADD "ctr-bpflock$i" "$pod" eth0 "$conf"
		vt_assert_ok
		vt_cni DEL "ctr-bpflock$i" "$pod" eth0 "$conf"
		vt_assert_ok
	done
	vt_assert_nothing_left
}

@test "a busy cgroup lock: ADD with accounting answers 11 and leaves nothing" {
	vtc_setup
	local pod cg conf
	conf="$(vtc_config "$(vt_config -f 4 | jq -c '.lockTimeoutMs = 300')" "$(vtc_cgroup_new)" \
		'{"velo.dev/accounting": "true"}')"
	pod="$(vt_pod_new)"
	hold_file_lock "$VT/run/cgroup.lock"
	vt_cni ADD ctr-cglock "$pod" eth0 "$conf"
	vt_assert_error 11 'try again'
	vt_assert_nothing_left
	release_lock
	vt_cni ADD ctr-cglock "$pod" eth0 "$conf"
	vt_assert_ok
	vt_cni DEL ctr-cglock "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}
