#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CHECK, DEL in every way runtimes call it, ADD conflicts, parallel ADD/DEL.

load ../lib/lib
load ../lib/cgroup_lib

# Not velo-only, no cgroup unless a test makes one: cgroup_lib's teardown (vtc_teardown) does
# nothing unless the test called vtc_setup.
setup() { vt_setup; }

@test "CHECK of a healthy pod passes and prints nothing" {
	local pod conf
	conf="$(vt_config -f dual)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-check "$conf"
	vt_cni CHECK ctr-check "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	[ -z "$VT_OUT" ] || { echo "stdout: $VT_OUT"; false; }
}

@test "CHECK after the pod's default route was deleted fails with 106 naming it" {
	local pod conf
	conf="$(vt_config -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-drift "$conf"
	vt_pod "$pod" ip route del default
	vt_cni CHECK ctr-drift "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	if vt_is_velo; then
		vt_assert_error 106 'route'
		vt_assert_error 106 'default|0\.0\.0\.0/0'
	else
		vt_assert_failed
	fi
}

@test "CHECK after the node's route to the pod was deleted fails with 106 naming it" {
	vt_velo_only
	local pod conf ip host
	conf="$(vt_config -f 4)"
	vt_pod_add pod ip "$conf" ctr-drift-host
	host="$(vt_host_ifname vt ctr-drift-host eth0)"
	vt_node ip route del "$ip/32" dev "$host"
	vt_cni CHECK ctr-drift-host "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_error 106 "$ip"
	vt_assert_error 106 'route'
}

@test "CHECK lists every drift in details and changes nothing" {
	vt_velo_only
	local pod conf ip
	conf="$(vt_config -f dual)"
	vt_pod_add pod ip "$conf" ctr-drift2
	vt_pod "$pod" ip -6 route del default
	vt_pod "$pod" ip neigh del 169.254.1.1 dev eth0
	vt_cni CHECK ctr-drift2 "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_error 106 '169\.254\.1\.1'
	vt_assert_error 106 '::/0|default'
	# Read-only: the deleted neighbour is still missing.
	[ -z "$(vt_pod "$pod" ip neigh show 169.254.1.1 dev eth0)" ]
}

@test "CHECK with a 0.3.1 config fails with code 1" {
	local pod conf
	conf="$(vt_config -v 0.3.1)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-old "$conf"
	vt_cni CHECK ctr-old "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_error 1
}

@test "CHECK of an attachment velo never added fails with code 3" {
	vt_velo_only
	local pod conf prev
	conf="$(vt_config -f 4)"
	pod="$(vt_pod_new)"
	prev='{"cniVersion":"1.0.0","ips":[{"address":"10.99.0.77/24","interface":1}],
		"interfaces":[{"name":"vtx"},{"name":"eth0","sandbox":"/x"}]}'
	vt_cni CHECK ctr-never "$pod" eth0 "$(vt_with_prev "$conf" "$prev")"
	vt_assert_error 3
}

@test "DEL releases everything, and a second DEL succeeds" {
	local pod conf ip prev
	conf="$(vt_config -f dual)"
	vt_pod_add pod ip "$conf" ctr-del2
	prev="$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_lease_exists "$ip"
	vt_cni DEL ctr-del2 "$pod" eth0 "$prev"
	vt_assert_ok
	[ -z "$VT_OUT" ] || { echo "DEL printed: $VT_OUT"; false; }
	vt_assert_nothing_left
	if vt_pod "$pod" ip link show eth0 2>/dev/null; then echo "pod eth0 remains"; false; fi
	vt_cni DEL ctr-del2 "$pod" eth0 "$prev"
	vt_assert_ok
	vt_cni DEL ctr-del2 "" eth0 "$conf"
	vt_assert_ok
}

@test "DEL of a container that was never added succeeds" {
	local pod
	pod="$(vt_pod_new)"
	vt_cni DEL ctr-unknown "$pod" eth0 "$(vt_config -f 4)"
	vt_assert_ok
	vt_cni DEL ctr-unknown "/run/netns/velotest-absent-$VT_TAG" eth0 "$(vt_config -f 4)"
	vt_assert_ok
	vt_cni DEL ctr-unknown "" eth0 "$(vt_config -f 4)"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "DEL with an empty CNI_NETNS and no prevResult releases the lease (containerd's second DEL)" {
	local pod conf ip ip6
	conf="$(vt_config -f dual)"
	vt_pod_add pod ip "$conf" ctr-emptyns
	ip6="$(vt_ip "$VT_RESULT" 6)"
	vt_lease_exists "$ip"
	vt_cni DEL ctr-emptyns "" eth0 "$conf"
	vt_assert_ok
	! vt_lease_exists "$ip" || { echo "lease $ip still held"; vt_leases; false; }
	! vt_lease_exists "$ip6" || { echo "lease $ip6 still held"; vt_leases; false; }
	if vt_is_velo; then
		# velo knows the host veth by name: it goes too, with the pod's end.
		vt_assert_nothing_left
		if vt_pod "$pod" ip link show eth0 2>/dev/null; then echo "pod eth0 remains"; false; fi
	fi
}

@test "DEL after the pod's netns was deleted succeeds and releases everything" {
	local pod conf ip
	conf="$(vt_config -f 4)"
	vt_pod_add pod ip "$conf" ctr-gone
	ip netns del "$pod"
	vt_cni DEL ctr-gone "/run/netns/$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	if vt_lease_exists "$ip"; then echo "lease $ip still held"; false; fi
	vt_assert_nothing_left
}

@test "a late DEL of an old sandbox leaves the new sandbox with the same IP working" {
	local old new conf ip prev_old prev_new host_new
	# One address in the range: the new sandbox must get the old one's IP.
	conf="$(vt_config -f 4 -r 10.99.0.10-10.99.0.10)"
	old="$(vt_pod_new)"
	vt_add "$old" ctr-old-sandbox "$conf"
	prev_old="$(vt_with_prev "$conf" "$VT_RESULT")"
	[ "$(vt_ip "$VT_RESULT" 4)" = 10.99.0.10 ]
	# The old sandbox dies: DEL, netns gone.
	vt_cni DEL ctr-old-sandbox "$old" eth0 "$prev_old"
	vt_assert_ok
	ip netns del "$old"
	vt_pod_add new ip "$conf" ctr-new-sandbox
	[ "$ip" = 10.99.0.10 ]
	prev_new="$(vt_with_prev "$conf" "$VT_RESULT")"

	# Late DELs of the old sandbox, with and without its netns and prevResult.
	vt_cni DEL ctr-old-sandbox "/run/netns/$old" eth0 "$prev_old"
	vt_assert_ok
	vt_cni DEL ctr-old-sandbox "" eth0 "$conf"
	vt_assert_ok

	vt_lease_exists "$ip" || { echo "the new sandbox's lease is gone"; false; }
	vt_ping_from_node "$ip"
	if vt_is_velo; then
		host_new="$(vt_host_ifname vt ctr-new-sandbox eth0)"
		run vt_node ip route show "$ip/32"
		[[ "$output" == *"dev $host_new "* ]] || { echo "route to $ip: $output"; false; }
		[ "$(vt_records)" = "$VT_NETWORK/ctr-new-sandbox:eth0.json" ] ||
			{ echo "records: $(vt_records)"; false; }
		vt_cni CHECK ctr-new-sandbox "$new" eth0 "$prev_new"
		vt_assert_ok
	fi
}

@test "ADD when CNI_IFNAME exists in the pod fails with 104 and leaves that interface alone" {
	local pod conf before after
	conf="$(vt_config -f 4)"
	pod="$(vt_pod_new)"
	vt_pod "$pod" ip link add eth0 address 02:00:00:aa:bb:cc type veth peer name exists-peer
	vt_pod "$pod" ip addr add 192.0.2.7/32 dev eth0
	vt_pod "$pod" ip link set eth0 up
	before="$(vt_pod "$pod" ip -d -o addr show dev eth0; vt_pod "$pod" ip -d -o link show dev eth0)"
	vt_cni ADD ctr-exists "$pod" eth0 "$conf"
	if vt_is_velo; then
		vt_assert_error 104 eth0
	else
		vt_assert_failed
	fi
	after="$(vt_pod "$pod" ip -d -o addr show dev eth0; vt_pod "$pod" ip -d -o link show dev eth0)"
	[ "$before" = "$after" ] || { echo "before: $before"; echo "after: $after"; false; }
	vt_assert_nothing_left
}

@test "ADD twice for the same attachment fails with 104 and keeps the first working" {
	vt_velo_only
	local pod conf ip
	conf="$(vt_config -f 4)"
	vt_pod_add pod ip "$conf" ctr-twice
	vt_cni ADD ctr-twice "$pod" eth0 "$conf"
	vt_assert_error 104
	vt_ping_from_node "$ip"
	[ "$(vt_leases)" = "$ip" ] || { echo "leases: $(vt_leases)"; false; }
}

@test "16 parallel ADDs get 16 distinct addresses; after 16 DELs nothing is left" {
	local conf i pods=() ips
	conf="$(vt_config -f dual)"
	for i in $(seq 16); do
		pods+=("$(vt_pod_new)")
	done
	for i in $(seq 16); do
		(
			vt_cni ADD "ctr-par-$i" "${pods[i - 1]}" eth0 "$conf"
			echo "$VT_RC" >"$VT/work/rc.$i"
			printf '%s' "$VT_OUT" >"$VT/work/res.$i"
		) &
	done
	wait
	vt_assert_calls_ok ADD 16
	ips="$(for i in $(seq 16); do vt_ip "$(cat "$VT/work/res.$i")" 4; done | sort -u | wc -l)"
	[ "$ips" -eq 16 ] || { echo "distinct IPv4 addresses: $ips"; false; }
	ips="$(for i in $(seq 16); do vt_ip "$(cat "$VT/work/res.$i")" 6; done | sort -u | wc -l)"
	[ "$ips" -eq 16 ] || { echo "distinct IPv6 addresses: $ips"; false; }
	[ "$(vt_host_links | wc -l)" -eq 16 ] || { echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_leases | wc -l)" -eq 32 ] || { echo "leases: $(vt_leases)"; false; }
	if vt_is_velo; then
		[ "$(vt_records | wc -l)" -eq 16 ] || { echo "records: $(vt_records)"; false; }
	fi
	vt_ping_from_node "$(vt_ip "$(cat "$VT/work/res.16")" 4)"
	vt_ping_from_pod "${pods[0]}" "$(vt_ip "$(cat "$VT/work/res.9")" 6)"

	for i in $(seq 16); do
		(
			vt_cni DEL "ctr-par-$i" "${pods[i - 1]}" eth0 \
				"$(vt_with_prev "$conf" "$(cat "$VT/work/res.$i")")"
			echo "$VT_RC" >"$VT/work/rc.$i"
			printf '%s' "$VT_OUT" >"$VT/work/res.$i"
		) &
	done
	wait
	vt_assert_calls_ok DEL 16
	vt_assert_nothing_left

	if vt_is_velo; then
		# 32 concurrent invocations logged whole lines, each naming its own
		# container, ifname and pod.
		local torn unlabelled
		torn="$(grep -Evc '^ts=[^ ]+ level=[a-z]+ pid=[0-9]+ .*msg=".*"$' "$VT_LOG" || true)"
		unlabelled="$(grep -Ev ' cmd=(ADD|DEL) container=(ctr-par-[0-9]+) ifname=eth0 pod=velotest/pod-\2 msg=' \
			"$VT_LOG" | head -n 3 || true)"
		[ "$torn" -eq 0 ] || { echo "$torn torn log lines"; false; }
		[ -z "$unlabelled" ] || { echo "log lines without their request's fields:"; echo "$unlabelled"; false; }
		[ "$(grep -Eo 'container=ctr-par-[0-9]+ ' "$VT_LOG" | sort -u | wc -l)" -eq 16 ]
	fi
}

@test "DEL with an empty or garbage endpoint record releases veth and lease by name and removes the record" {
	vt_velo_only
	local pod conf ip host record content i=0
	conf="$(vt_config -f 4)"
	record="$VT_STATE/$VT_NETWORK/ctr-torn:eth0.json"
	# A power loss can leave an empty record (they are not fsynced), or any bytes at all.
	for content in "" 'garbage {"network":'; do
		pod="$(vt_pod_new)"
		vt_add "$pod" ctr-torn "$conf"
		ip="$(vt_ip "$VT_RESULT" 4)"
		host="$(vt_host_ifname vt ctr-torn eth0)"
		[ -f "$record" ]
		vt_lease_exists "$ip"
		[ "$(vt_host_links)" = "$host" ]
		printf '%s' "$content" >"$record"

		vt_cni DEL ctr-torn "$pod" eth0 "$conf"
		vt_assert_ok
		[ -z "$(vt_host_links)" ] || { echo "case $i: host links: $(vt_host_links)"; false; }
		if vt_lease_exists "$ip"; then echo "case $i: lease $ip kept"; false; fi
		[ ! -e "$record" ] || { echo "case $i: record kept: $(cat "$record")"; false; }
		vt_assert_nothing_left
		[ "$(grep -c 'unreadable.*releasing by name' "$VT_LOG")" -eq $((i + 1)) ] ||
			{ echo "case $i: no log line"; tail -n 5 "$VT_LOG"; false; }
		i=$((i + 1))
	done
}

@test "DEL while the cgroup lock is busy removes veth and lease, answers 11, keeps the record; a retry finishes" {
	vt_velo_only
	vtc_setup
	local pod cg conf ip record lock holder
	pod="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f 4 | jq -c '.lockTimeoutMs = 300')" "$cg" \
		'{"velo.dev/accounting": "true"}')"
	vt_add "$pod" ctr-busy "$conf"
	ip="$(vt_ip "$VT_RESULT" 4)"
	record="$VT_STATE/$VT_NETWORK/ctr-busy:eth0.json"
	vtc_attached "$cg" | grep -qx velo_cg_acct_in

	lock="$VT/run/cgroup.lock"
	[ -f "$lock" ]
	# The sleep itself holds the lock (fd 9 survives the exec): killing it releases it.
	(
		exec 9<>"$lock"
		flock -x 9
		exec sleep 60
	) &
	holder=$!
	VT_PIDS+=("$holder")
	for _ in $(seq 50); do
		flock -n "$lock" true || break
		sleep 0.1
	done
	if flock -n "$lock" true; then echo "cgroup lock not held"; false; fi

	vt_cni DEL ctr-busy "$pod" eth0 "$conf"
	vt_assert_error 11 'accounting|cgroup'
	[ -z "$(vt_host_links)" ] || { echo "host links: $(vt_host_links)"; false; }
	if vt_lease_exists "$ip"; then echo "lease $ip kept"; false; fi
	[ -f "$record" ] || { echo "record removed: a retried DEL can't detach"; false; }

	kill "$holder"
	wait "$holder" || true
	flock -n "$lock" true
	vt_cni DEL ctr-busy "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
	[ -z "$(vtc_attached "$cg")" ] || { echo "left on the cgroup: $(vtc_attached "$cg")"; false; }
}

@test "CHECK passes for a pod whose fastpath fell back to routed (BPF can't be loaded)" {
	vt_velo_only
	local pod conf record
	# bpffsDir under a regular file: velo can't mount or pin there, a real load failure.
	: >"$VT/not-a-dir"
	conf="$(vt_annotated "$(vt_config -f 4 | jq -c --arg b "$VT/not-a-dir/bpffs" '.bpffsDir = $b')" \
		'{"velo.dev/fastpath": "tc"}')"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-fellback "$conf"
	grep -q 'stays on the routed path' "$VT_LOG"
	record="$VT_STATE/$VT_NETWORK/ctr-fellback:eth0.json"
	# The ready record says what ADD set up: no fastpath bit (1).
	[ "$(jq '.features % 2' "$record")" -eq 0 ] || { cat "$record"; false; }
	vt_cni CHECK ctr-fellback "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	vt_cni DEL ctr-fellback "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "CHECK still reports drift when an attached fastpath's link pin is removed" {
	vt_velo_only
	vtc_setup
	local pod conf host record
	conf="$(vt_annotated "$(vt_config -f 4 | jq -c --arg b "$VTC_BPFFS" '.bpffsDir = $b')" \
		'{"velo.dev/fastpath": "tc"}')"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-pin "$conf"
	host="$(vt_host_ifname vt ctr-pin eth0)"
	record="$VT_STATE/$VT_NETWORK/ctr-pin:eth0.json"
	[ "$(jq '.features % 2' "$record")" -eq 1 ] || { cat "$record"; false; }
	vt_cni CHECK ctr-pin "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	[ -e "$VTC_BPFFS/links/${host}_tc" ]
	rm "$VTC_BPFFS/links/${host}_tc"
	vt_cni CHECK ctr-pin "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_error 106 'fastpath'
	vt_cni DEL ctr-pin "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}
