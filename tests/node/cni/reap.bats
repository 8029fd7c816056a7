#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# DEL without velod: the host veth is retired (down, into velo's link group) and a child that
# velo doesn't wait for deletes it (net/retire.c). What DEL owes is done when it returns (routes,
# neighbours, lease, record gone); the veth pair is gone shortly after, in a netns nobody
# deletes too, and an ADD of the same attachment right after the DEL works. VT_NO_REAP_WAIT=1
# keeps the harness from waiting for the reaper after each invocation.

load ../lib/lib

setup() {
	vt_setup_velo
	export VT_NO_REAP_WAIT=1
}

# reap_gone HOST POD: waits (5 s) until neither the host veth nor the pod's eth0 exists.
reap_gone() {
	local i
	for i in $(seq 100); do
		if ! vt_node ip link show "$1" >/dev/null 2>&1 &&
			! vt_pod "$2" ip link show eth0 >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.05
	done
	echo "left after 5 s:"
	vt_node ip -d link show "$1"
	vt_pod "$2" ip -d link show eth0
	return 1
}

@test "DEL without velod: pod unreachable and lease gone on return, the pair deleted after by the reaper, netns kept" {
	local conf pod host ip4 ip6 group pid i
	conf="$(vt_config -i velo -f dual)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-reap "$conf"
	ip4="$(vt_ip "$VT_RESULT" 4)"
	ip6="$(vt_ip "$VT_RESULT" 6)"
	host="$(vt_host_ifname vt ctr-reap eth0)"
	vt_ping_from_node "$ip4"
	run vt_velod_running
	[ "$status" -ne 0 ]

	vt_cni DEL ctr-reap "$pod" eth0 "$conf"
	vt_assert_ok
	# On return: the host veth is gone already or retired and down, never still up.
	group="$(vt_node ip -j -d link show "$host" 2>/dev/null | jq -r '.[0].group // empty')"
	if [ -n "$group" ]; then
		[ "$group" = 1986358383 ] || { vt_node ip -d link show "$host"; false; }
		vt_node ip link show "$host" | grep -q 'state DOWN'
	fi
	if vt_node ip route show | grep -q "^$ip4 "; then echo "route to $ip4 left"; false; fi
	if vt_node ip -6 route show | grep -q "^$ip6 "; then echo "route to $ip6 left"; false; fi
	if vt_node ip neigh show | grep -q "dev $host "; then echo "neighbour on $host left"; false; fi
	if vt_node ip -6 neigh show | grep -q "dev $host "; then echo "IPv6 neighbour left"; false; fi
	run vt_ping_from_node "$ip4"
	[ "$status" -ne 0 ]
	if vt_lease_exists "$ip4"; then echo "lease $ip4 kept"; false; fi
	if vt_lease_exists "$ip6"; then echo "lease $ip6 kept"; false; fi
	[ -z "$(vt_records)" ]
	pid="$(sed -n 's/.*retired veths left to a reaper (pid \([0-9]*\)).*/\1/p' "$VT_LOG" | tail -n 1)"
	[ -n "$pid" ] || { tail -n 5 "$VT_LOG"; false; }

	# After: both ends gone though the pod netns stays, and the reaper has exited.
	reap_gone "$host" "$pod"
	vt_retired_wait
	for i in $(seq 100); do
		case "$(ps -o stat= -p "$pid" 2>/dev/null)" in "" | Z*) break ;; esac
		sleep 0.05
	done
	case "$(ps -o stat= -p "$pid" 2>/dev/null)" in
	"" | Z*) ;;
	*) echo "reaper $pid still running"; false ;;
	esac
	vt_assert_nothing_left
	if vt_node ip -o addr show | grep -qF "$ip4"; then echo "address $ip4 left on the node"; false; fi
}

@test "DEL then ADD of the same container id and ifname at once, same netns and a new one, repeatedly" {
	local conf pod new host i
	conf="$(vt_config -i velo -f dual)"
	pod="$(vt_pod_new)"
	host="$(vt_host_ifname vt ctr-again eth0)"
	# Each ADD comes while the last DEL's reaper may still be deleting: it meets the retired pair
	# in its way, or the reaper is faster; both must work.
	for i in 1 2 3 4 5; do
		vt_add "$pod" ctr-again "$conf"
		vt_ping_from_node "$(vt_ip "$VT_RESULT" 4)"
		vt_cni DEL ctr-again "$pod" eth0 "$conf"
		vt_assert_ok
	done
	# A new sandbox (new netns) of the same container id: the host name is what is in the way.
	new="$(vt_pod_new)"
	vt_add "$new" ctr-again "$conf"
	vt_ping_from_node "$(vt_ip "$VT_RESULT" 4)"
	vt_cni DEL ctr-again "$new" eth0 "$conf"
	vt_assert_ok
	reap_gone "$host" "$pod"
	reap_gone "$host" "$new"
	vt_retired_wait
	vt_assert_nothing_left
}

@test "a burst of DELs without velod: every pair deleted, nothing left" {
	local conf i
	local -a pods=()
	conf="$(vt_config -i velo -f 4)"
	for i in $(seq 8); do
		pods[i]="$(vt_pod_new)"
		vt_add "${pods[i]}" "ctr-burst$i" "$conf"
	done
	for i in $(seq 8); do
		(
			vt_cni DEL "ctr-burst$i" "${pods[i]}" eth0 "$conf"
			echo "$VT_RC $VT_OUT" >"$VT/work/del.$i"
		) &
	done
	wait
	for i in $(seq 8); do
		[ "$(cat "$VT/work/del.$i")" = "0 " ] || { cat "$VT/work/del.$i"; false; }
	done
	for i in $(seq 8); do
		reap_gone "$(vt_host_ifname vt "ctr-burst$i" eth0)" "${pods[i]}"
	done
	vt_retired_wait
	vt_assert_nothing_left
}

@test "DEL without velod under a child subreaper (containerd, CRI-O): no reaper child left running or a zombie, pair deleted" {
	local conf pod host i wrap
	local run="$VELOTEST_REPO/build/tests/subreaper_run"
	[ -x "$run" ] || skip "$run missing (make $run)"
	conf="$(vt_config -i velo -f dual)"
	host="$(vt_host_ifname vt ctr-subreap1 eth0)"
	# The runtime: a subreaper that waits for velo's pid only, as a Go runtime's exec does.
	wrap="$VT/work/velo-under-subreaper"
	printf '#!/bin/sh\nexec %s %s "$@"\n' "$run" "$VT_BIN/$VELOTEST_PLUGIN" >"$wrap"
	chmod +x "$wrap"
	for i in 1 2 3; do
		pod="$(vt_pod_new)"
		vt_add "$pod" "ctr-subreap$i" "$conf"
		host="$(vt_host_ifname vt "ctr-subreap$i" eth0)"
		VT_EXEC="$wrap" vt_cni DEL "ctr-subreap$i" "$pod" eth0 "$conf"
		# 3: the subreaper adopted a process velo left behind (listed on stderr).
		[ "$VT_RC" -eq 0 ] || { echo "rc $VT_RC: $VT_ERR"; false; }
		[ -z "$VT_OUT" ]
		# velo waited for its reaper: the pair is gone when DEL returns.
		run vt_node ip link show "$host"
		[ "$status" -ne 0 ]
		reap_gone "$host" "$pod"
	done
	vt_assert_nothing_left
}
