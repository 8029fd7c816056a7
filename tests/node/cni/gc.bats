#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CNI 1.1.0 verbs: STATUS and GC (the reference plugins 1.1.1 don't have them).

load ../lib/lib

setup() { vt_setup_velo; }

@test "STATUS with a 1.1.0 config succeeds and prints nothing" {
	vt_cni_env "$(vt_config -v 1.1.0)" CNI_COMMAND=STATUS "CNI_PATH=$VT_BIN"
	vt_assert_ok
	[ -z "$VT_OUT" ] || { echo "stdout: $VT_OUT"; false; }
}

@test "STATUS and GC with a 1.0.0 config fail with code 1" {
	vt_cni_env "$(vt_config -v 1.0.0)" CNI_COMMAND=STATUS "CNI_PATH=$VT_BIN"
	vt_assert_error 1
	vt_gc "$(vt_config -v 1.0.0)" '[]'
	vt_assert_error 1
}

@test "GC removes an attachment missing from valid-attachments (veth, record, lease) and keeps the valid one" {
	local conf keep stale result_keep ip_keep ip_stale ip6_stale
	conf="$(vt_config -v 1.1.0 -f dual)"
	vt_pod_add keep ip_keep "$conf" ctr-keep
	result_keep="$VT_RESULT"
	vt_pod_add stale ip_stale "$conf" ctr-stale
	ip6_stale="$(vt_ip "$VT_RESULT" 6)"
	[ "$(vt_host_links | wc -l)" -eq 2 ]

	vt_gc "$conf" '[{"containerID": "ctr-keep", "ifname": "eth0"}]'
	vt_assert_ok
	[ -z "$VT_OUT" ] || { echo "stdout: $VT_OUT"; false; }

	[ "$(vt_host_links)" = "$(vt_host_ifname vt ctr-keep eth0)" ] ||
		{ echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_records)" = "$VT_NETWORK/ctr-keep:eth0.json" ] || { echo "records: $(vt_records)"; false; }
	if vt_lease_exists "$ip_stale" || vt_lease_exists "$ip6_stale"; then
		echo "stale leases kept: $(vt_leases)"
		false
	fi
	vt_lease_exists "$ip_keep"
	if vt_pod "$stale" ip link show eth0 >/dev/null 2>&1; then echo "stale eth0 kept"; false; fi
	vt_ping_from_node "$ip_keep"
	vt_cni CHECK ctr-keep "$keep" eth0 "$(vt_with_prev "$conf" "$result_keep")"
	vt_assert_ok
}

@test "GC leaves attachments of other networks alone, and with none valid removes all of its own" {
	local conf pod
	conf="$(vt_config -v 1.1.0 -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-mine "$conf"
	vt_gc "$(jq -c '.name = "othernet"' <<<"$conf")" '[]'
	vt_assert_ok
	[ "$(vt_host_links | wc -l)" -eq 1 ] || { echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_records | wc -l)" -eq 1 ] || { echo "records: $(vt_records)"; false; }
	[ "$(vt_leases | wc -l)" -eq 1 ] || { echo "leases: $(vt_leases)"; false; }
	vt_gc "$conf" '[]'
	vt_assert_ok
	vt_assert_nothing_left
}

@test "GC without cni.dev/valid-attachments fails with 7 naming it and touches nothing; [] releases all" {
	local conf a b ip_a ip_b
	conf="$(vt_config -v 1.1.0 -f 4)"
	vt_pod_add a ip_a "$conf" ctr-a
	vt_pod_add b ip_b "$conf" ctr-b

	vt_cni_env "$conf" CNI_COMMAND=GC "CNI_PATH=$VT_BIN"
	vt_assert_error 7 'cni\.dev/valid-attachments'
	[ "$(vt_host_links | wc -l)" -eq 2 ] || { echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_records | wc -l)" -eq 2 ] || { echo "records: $(vt_records)"; false; }
	vt_lease_exists "$ip_a"
	vt_lease_exists "$ip_b"
	vt_ping_from_node "$ip_a"

	vt_gc "$conf" '[]'
	vt_assert_ok
	vt_assert_nothing_left
}

@test "GC releases a lease with the record's IPAM config when the current one has another dataDir" {
	local conf moved pod ip
	conf="$(vt_config -v 1.1.0 -f 4)"
	moved="$(jq -c --arg d "$VT/ipam-moved" '.ipam.dataDir = $d' <<<"$conf")"
	vt_pod_add pod ip "$conf" ctr-moved
	vt_lease_exists "$ip"

	vt_gc "$moved" '[]'
	vt_assert_ok
	if vt_lease_exists "$ip"; then echo "lease $ip in the ADD's dataDir kept"; false; fi
	vt_assert_nothing_left
}
