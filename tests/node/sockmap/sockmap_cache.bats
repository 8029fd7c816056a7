#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The sockmap probe cache (<runDir>/sockmap-probe, docs/sockmap.md "Kernel probes"): velo
# trusts only its own build's answer in a private root-owned file with every field in range,
# re-checks a cached BPF_F_PERMANENT against the kernel BTF, and writes it 0600 whatever the
# umask. A cache velo must not trust is probed again: on a kernel with the sockhash bugs, a
# pod that accepts none of them stays routed.

load ../lib/lib
load sockmap_lib

setup() {
	sm_setup
	SM_ACCEPT=""
	CACHE="$VT/run/sockmap-probe"
}

sockops_links() { find "$SM_BPFFS/links" -name '*_sockops' 2>/dev/null | wc -l; }

# Skips on a kernel whose probes find no bug: there a cached kernel_bugs=0 is the truth.
need_kernel_bugs() {
	[ -n "$(sm_kernel_bugs)" ] || skip "this kernel has none of the sockhash bugs"
}

# routed_after_reprobe WHY_REGEX: the last pod stayed routed, velo said why it did not use the
# cache, and the cache it wrote again names this kernel's bugs.
routed_after_reprobe() {
	[ "$(sockops_links)" -eq 0 ] || { echo "pod accelerated: $(sockops_links) sock_ops link(s)"; return 1; }
	grep -Eq "sockmap: probe cache .*sockmap-probe not used \($1\); probing again" "$VT_LOG" ||
		{ echo "no re-probe logged for /$1/"; tail -n 5 "$VT_LOG"; return 1; }
	grep -Eq '^kernel_bugs=[1-9a-f]' "$CACHE" || { echo "cache: $(cat "$CACHE")"; return 1; }
	[ "$(stat -c '%a %u' "$CACHE")" = "600 0" ] || { stat -c '%a %u' "$CACHE"; return 1; }
}

# set_field NAME VALUE: one field of the cache, the rest as velo wrote it.
set_field() {
	sed -i "s/^$1=.*/$1=$2/" "$CACHE"
}

@test "a forged cache of this boot without velo's build id (kernel_bugs=0) is probed again: the pod stays routed" {
	need_kernel_bugs
	mkdir -p "$VT/run"
	printf 'boot_id=%s\npermanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0\n' \
		"$(cat /proc/sys/kernel/random/boot_id)" >"$CACHE"
	chmod 0600 "$CACHE"
	sm_pod true
	routed_after_reprobe "another boot's or build's"
}

@test "velo writes the cache (and every file it makes) 0600 under umask 000" {
	local old loose
	old="$(umask)"
	umask 000
	sm_pod true || { umask "$old"; false; }
	umask "$old"
	[ "$(stat -c '%a' "$CACHE")" = 600 ] || { echo "cache mode $(stat -c '%a' "$CACHE")"; false; }
	loose="$(find "$VT/run" "$VT/state" "$VT_LOG" \( -type f ! -perm 600 \) -o \( -type d -perm /077 \))"
	[ -z "$loose" ] || { echo "not private:"; ls -ld $loose; false; }
}

@test "a cache of velo's own build with a permanent flag the kernel BTF doesn't give is probed again" {
	need_kernel_bugs
	sm_pod true
	set_field permanent_in_btf 1
	set_field permanent_flag 10
	set_field kernel_bugs 0
	sm_pod true
	routed_after_reprobe "permanent_flag is not the kernel BTF's BPF_F_PERMANENT"
}

@test "a cache others can write, or with fields out of range, is probed again" {
	need_kernel_bugs
	sm_pod true
	set_field kernel_bugs 0
	chmod 0666 "$CACHE"
	sm_pod true
	routed_after_reprobe "writable by others"
	set_field permanent_flag 3
	sm_pod true
	routed_after_reprobe "permanent_flag is more than one bit"
	set_field kernel_bugs 1f
	sm_pod true
	routed_after_reprobe "kernel_bugs has bits of no known bug"
}

# pod_with CID JQ_FILTER: an opted-in pod (own cgroup) whose config gets JQ_FILTER; ADD in the
# background when ASYNC=1 (its answer in $VT/work/add.CID), else VT_RC/VT_OUT as vt_cni.
pod_with() {
	local rel="/velotest-sm-$VT_TAG-$BATS_TEST_NUMBER-$((SM_N++))" pod conf
	pod="$(vt_pod_new)"
	mkdir "$SM_CGMOUNT$rel"
	SM_CGROUPS+=("$SM_CGMOUNT$rel")
	conf="$(sm_config true "$rel" | jq -c "$2")"
	if [ "${ASYNC:-0}" = 1 ]; then
		(vt_cni ADD "$1" "$pod" eth0 "$conf" && echo "$VT_RC $VT_OUT" >"$VT/work/add.$1") &
	else
		vt_cni ADD "$1" "$pod" eth0 "$conf"
	fi
}

@test "probes cut at sockmapProbeTimeoutMs: the pod stays routed, saying why, and nothing is cached" {
	SM_ACCEPT="halfclose-eagain splice-ingress waitall-short rcvlowat-ignored"
	pod_with sm-cut '.sockmapProbeTimeoutMs = 1'
	vt_assert_ok
	[ "$(sockops_links)" -eq 0 ] || { echo "pod accelerated: $(sockops_links) sock_ops link(s)"; false; }
	grep -q 'sockmap: kernel probes did not finish within 1 ms (sockmapProbeTimeoutMs)' "$VT_LOG" ||
		{ echo "no timeout logged"; tail -n 5 "$VT_LOG"; false; }
	grep -q 'sockmap: the kernel probes did not finish within sockmapProbeTimeoutMs .*stays on the routed path' "$VT_LOG" ||
		{ echo "no fall back logged"; tail -n 5 "$VT_LOG"; false; }
	[ ! -e "$CACHE" ] || { echo "cached: $(cat "$CACHE")"; false; }
	# The default cap is ample: the next ADD probes, caches and (all bugs accepted) accelerates.
	pod_with sm-full '.'
	vt_assert_ok
	[ "$(sockops_links)" -eq 1 ] || { echo "$(sockops_links) sock_ops link(s)"; false; }
	[ -f "$CACHE" ]
}

@test "the first ADDs of a boot wait for one probe: four at once, one probe" {
	local i
	for i in 1 2 3 4; do
		ASYNC=1 pod_with "sm-par-$i" '.'
	done
	wait
	for i in 1 2 3 4; do
		[ "$(cut -d' ' -f1 "$VT/work/add.sm-par-$i")" = 0 ] || { cat "$VT/work/add.sm-par-$i"; false; }
	done
	[ "$(grep -c 'sockmap: kernel probed in' "$VT_LOG")" -eq 1 ] ||
		{ grep 'sockmap: ' "$VT_LOG"; false; }
	[ "$(grep -c 'sockmap: probe cache written by another prober meanwhile' "$VT_LOG")" -le 3 ]
	[ -f "$CACHE" ]
}
