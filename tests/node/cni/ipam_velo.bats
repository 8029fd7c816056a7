#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velo's own IPAM ("ipam": {"type": "velo"}), through the CNI protocol: leases in the
# allocation files of $VT_IPAM owned by container id and ifname, released by DEL, GC
# and nobody else's DEL, verified by CHECK. The crash trials are in crash.bats.

load ../lib/lib

setup() { vt_setup_velo; }

# Leases as "ADDRESS CONTAINER IFNAME", all files of the network.
owners() {
	local file
	for file in "$VT_IPAM/$VT_NETWORK"/*; do
		[ -f "$file" ] && vt_pool_leases "$file"
	done | sort
}

@test "velo IPAM: dual-stack ADD gets an address of each range set, owned by the attachment; DEL frees both" {
	local conf pod ip4 ip6
	conf="$(vt_config -i velo -f dual)"
	vt_pod_add pod ip4 "$conf" ctr-a
	ip6="$(vt_ip "$VT_RESULT" 6)"
	[ "$ip4" = 10.99.0.2 ] || { echo "v4: $ip4"; false; }
	[ "$ip6" = fd99::2 ] || { echo "v6: $ip6"; false; }
	[ "$(owners)" = "$(printf '10.99.0.2 ctr-a eth0\nfd99::2 ctr-a eth0')" ] ||
		{ echo "leases: $(owners)"; false; }
	vt_ping_from_node "$ip4"
	vt_ping_from_node "$ip6"
	# No host-local ran: velo answered alone.
	[ ! -e "$VT_IPAM/$VT_NETWORK/last_reserved_ip.0" ]
	vt_cni DEL ctr-a "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "velo IPAM: 12 parallel ADDs get 12 distinct addresses; their DELs leave nothing" {
	local conf i pods=() n
	conf="$(vt_config -i velo -f 4)"
	for i in $(seq 0 11); do pods+=("$(vt_pod_new)"); done
	for i in $(seq 0 11); do
		vt_cni ADD "par-$i" "${pods[$i]}" eth0 "$conf" &
	done
	wait
	n="$(owners | cut -d' ' -f1 | sort -u | wc -l)"
	[ "$n" -eq 12 ] || { echo "distinct leased addresses: $n"; owners; false; }
	[ "$(owners | cut -d' ' -f2 | sort -u | wc -l)" -eq 12 ]
	[ "$(vt_host_links | wc -l)" -eq 12 ]
	for i in $(seq 0 11); do
		vt_cni DEL "par-$i" "${pods[$i]}" eth0 "$conf" &
	done
	wait
	vt_assert_nothing_left
}

@test "velo IPAM: a late DEL of an old sandbox keeps the lease the new one got of the same address" {
	local conf old new ip_old
	conf="$(vt_config -i velo -f 4 -r 10.99.0.50-10.99.0.50)"
	old="$(vt_pod_new)"
	new="$(vt_pod_new)"
	vt_add "$old" ctr-old "$conf"
	ip_old="$(vt_ip "$VT_RESULT" 4)"
	vt_cni DEL ctr-old "$old" eth0 "$conf"
	vt_assert_ok
	vt_add "$new" ctr-new "$conf"
	[ "$(vt_ip "$VT_RESULT" 4)" = "$ip_old" ]
	vt_cni DEL ctr-old "$old" eth0 "$conf"
	vt_assert_ok
	[ "$(owners)" = "10.99.0.50 ctr-new eth0" ] || { echo "leases: $(owners)"; false; }
	vt_cni CHECK ctr-new "$new" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
}

@test "velo IPAM: an exhausted range is code 101 naming it, and the failed ADD leaves nothing" {
	local conf a b
	conf="$(vt_config -i velo -f 4 -r 10.99.0.7-10.99.0.7)"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	vt_add "$a" ctr-a "$conf"
	vt_cni ADD ctr-b "$b" eth0 "$conf"
	vt_assert_error 101 'ipam.ranges\[0\]: 10\.99\.0\.0/24 \(10\.99\.0\.7-10\.99\.0\.7\) is exhausted'
	[ "$(vt_host_links)" = "$(vt_host_ifname vt ctr-a eth0)" ] || { vt_host_links; false; }
	[ "$(vt_records)" = "$VT_NETWORK/ctr-a:eth0.json" ] || { vt_records; false; }
	vt_cni DEL ctr-a "$a" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "velo IPAM: CHECK verifies the lease and names the address when it is gone" {
	local conf pod result file
	conf="$(vt_config -i velo -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-c "$conf"
	result="$VT_RESULT"
	vt_cni CHECK ctr-c "$pod" eth0 "$(vt_with_prev "$conf" "$result")"
	vt_assert_ok
	# The lease's state byte (slot 1 = 10.99.0.2) cleared behind velo's back.
	file="$VT_IPAM/$VT_NETWORK/10.99.0.0_24"
	printf '\0' | dd of="$file" bs=1 seek=$((256 + 288)) conv=notrunc status=none
	vt_cni CHECK ctr-c "$pod" eth0 "$(vt_with_prev "$conf" "$result")"
	vt_assert_error 101 '10\.99\.0\.2 is not leased to ctr-c/eth0'
}

@test "velo IPAM: GC releases leases of attachments not valid, with or without a record" {
	local conf keep stale orphan gc_conf
	conf="$(vt_config -i velo -v 1.1.0 -f dual)"
	keep="$(vt_pod_new)"
	stale="$(vt_pod_new)"
	orphan="$(vt_pod_new)"
	vt_add "$keep" ctr-keep "$conf"
	vt_add "$stale" ctr-stale "$conf"
	vt_add "$orphan" ctr-orphan "$conf"
	# The orphan's record and veth vanish (as after a crash at the wrong moment): only its
	# leases remain for GC to find.
	rm "$VT_STATE/$VT_NETWORK/ctr-orphan:eth0.json"
	vt_node ip link del "$(vt_host_ifname vt ctr-orphan eth0)"
	gc_conf="$(jq -c '.["cni.dev/valid-attachments"] = [{"containerID": "ctr-keep", "ifname": "eth0"}]' <<<"$conf")"
	vt_cni_env "$gc_conf" CNI_COMMAND=GC "CNI_PATH=$VT_BIN"
	vt_assert_ok
	[ "$(owners | cut -d' ' -f2 | sort -u)" = ctr-keep ] || { echo "leases: $(owners)"; false; }
	[ "$(owners | wc -l)" -eq 2 ]
	[ "$(vt_host_links)" = "$(vt_host_ifname vt ctr-keep eth0)" ] || { vt_host_links; false; }
}

@test "velo IPAM: an address with a host-local lease file is never handed out" {
	local conf pod
	conf="$(vt_config -i velo -f 4)"
	conf="$(jq -c --arg d "$VT/host-local" '.ipam.hostLocalDataDir = $d' <<<"$conf")"
	mkdir -p "$VT/host-local/$VT_NETWORK"
	echo ctr-old > "$VT/host-local/$VT_NETWORK/10.99.0.2"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-h "$conf"
	[ "$(vt_ip "$VT_RESULT" 4)" = 10.99.0.3 ] || { echo "got $(vt_ip "$VT_RESULT" 4)"; false; }
}

@test "velo IPAM: bad ranges are code 7 naming the field, before any side effect" {
	local conf pod
	pod="$(vt_pod_new)"
	conf="$(vt_config -i velo -f dual)"
	conf="$(jq -c '.ipam.ranges[1] = [{"subnet": "10.99.0.128/25"}]' <<<"$conf")"
	vt_cni ADD ctr-bad "$pod" eth0 "$conf"
	vt_assert_error 7 'ipam.ranges\[1\]\[0\].subnet: overlaps ipam.ranges\[0\]\[0\].subnet'
	conf="$(jq -c '.ipam.ranges = [[{"subnet": "10.99.0.0/24", "rangeEnd": "10.98.0.9"}]]' <<<"$conf")"
	vt_cni ADD ctr-bad "$pod" eth0 "$conf"
	vt_assert_error 7 'ipam.ranges\[0\]\[0\].rangeEnd: outside'
	vt_assert_nothing_left
}

@test "velo IPAM: ADD again with the same container id and ifname after DEL, then DEL: nothing left" {
	local conf pod
	conf="$(vt_config -i velo -f dual)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-same "$conf"
	vt_cni DEL ctr-same "$pod" eth0 "$conf"
	vt_assert_ok
	vt_add "$pod" ctr-same "$conf"
	vt_ping_from_node "$(vt_ip "$VT_RESULT" 4)"
	vt_cni DEL ctr-same "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
	run vt_pod "$pod" ip link show eth0
	[ "$status" -ne 0 ] || { echo "eth0 left in the pod"; false; }
}

@test "velo IPAM: after a switch from host-local velo skips the old pods' addresses and their DEL frees the host-local lease" {
	local hl velo old new ip_old ip_new
	hl="$(vt_config -i host-local -f 4)"
	velo="$(vt_config -i velo -f 4 | jq -c --arg d "$VT_IPAM" '.ipam.hostLocalDataDir = $d')"
	old="$(vt_pod_new)"
	new="$(vt_pod_new)"
	vt_add "$old" ctr-old "$hl"
	ip_old="$(vt_ip "$VT_RESULT" 4)"
	[ -f "$VT_IPAM/$VT_NETWORK/$ip_old" ]
	vt_add "$new" ctr-new "$velo"
	ip_new="$(vt_ip "$VT_RESULT" 4)"
	[ "$ip_new" != "$ip_old" ] || { echo "both got $ip_new"; false; }
	# The old pod's DEL comes with today's (velo) config; host-local leased, host-local releases.
	vt_cni DEL ctr-old "$old" eth0 "$velo"
	vt_assert_ok
	[ ! -e "$VT_IPAM/$VT_NETWORK/$ip_old" ] || { echo "host-local lease of $ip_old kept"; false; }
	[ "$(vt_leases)" = "$ip_new" ] || { echo "leases: $(vt_leases)"; false; }
	vt_cni DEL ctr-new "$new" eth0 "$velo"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "velo IPAM: a symlink or directory where an allocation file belongs: DEL and GC skip it, saying so; ADD refuses it, never following the link" {
	local conf pod kind file target sum
	conf="$(vt_config -i velo -v 1.1.0 -f 4)"
	file="$VT_IPAM/$VT_NETWORK/10.99.0.0_24"
	for kind in symlink directory; do
		pod="$(vt_pod_new)"
		vt_add "$pod" "ctr-$kind" "$conf"
		target="$VT/work/pool-$kind"
		mv "$file" "$target"
		if [ "$kind" = symlink ]; then ln -s "$target" "$file"; else mkdir "$file"; fi
		sum="$(sha256sum <"$target")"
		vt_cni DEL "ctr-$kind" "$pod" eth0 "$conf"
		vt_assert_ok
		grep -Eq "release of ctr-$kind/eth0 skipped: .*10\.99\.0\.0_24.*: (a symbolic link, not followed|a directory)" "$VT_LOG" ||
			{ echo "no skip logged"; tail -n 5 "$VT_LOG"; false; }
		# A second DEL (the runtime's retry) is just as fine.
		vt_cni DEL "ctr-$kind" "$pod" eth0 "$conf"
		vt_assert_ok
		vt_gc "$conf" '[]'
		vt_assert_ok
		vt_cni ADD ctr-new "$pod" eth0 "$conf"
		vt_assert_error 101 "allocation file .*10\.99\.0\.0_24 .*(a symbolic link, not followed|a directory); nothing allocated"
		# Nothing went through the link: the file behind it still has the old lease only.
		[ "$(sha256sum <"$target")" = "$sum" ] || { echo "$target changed"; false; }
		[ "$(vt_pool_leases "$target")" = "10.99.0.2 ctr-$kind eth0" ] ||
			{ echo "leases behind the link: $(vt_pool_leases "$target")"; false; }
		[ -z "$(vt_host_links)" ] || { echo "links: $(vt_host_links)"; false; }
		[ -z "$(vt_records)" ] || { echo "records: $(vt_records)"; false; }
		rm -rf "$file" "$target"
	done
}

@test "velo IPAM: 0.0.0.0/0 or ::/0 as a subnet is code 7 naming the field, before any side effect" {
	local conf pod
	pod="$(vt_pod_new)"
	conf="$(jq -c '.ipam.ranges = [[{"subnet": "0.0.0.0/0"}]]' <<<"$(vt_config -i velo -f 4)")"
	vt_cni ADD ctr-all "$pod" eth0 "$conf"
	vt_assert_error 7 'ipam.ranges\[0\]\[0\].subnet: 0\.0\.0\.0/0 is every IPv4 address, not a pod subnet'
	conf="$(jq -c '.ipam.ranges = [[{"subnet": "10.99.0.0/24"}], [{"subnet": "::/0"}]]' <<<"$conf")"
	vt_cni ADD ctr-all "$pod" eth0 "$conf"
	vt_assert_error 7 'ipam.ranges\[1\]\[0\].subnet: ::/0 is every IPv6 address, not a pod subnet'
	vt_assert_nothing_left
	[ -z "$(ls -A "$VT_IPAM/$VT_NETWORK" 2>/dev/null)" ] || { ls -l "$VT_IPAM/$VT_NETWORK"; false; }
}

@test "velo IPAM: a slot with a state byte no ADD writes is held until GC, which frees it and says so" {
	local conf a b file
	conf="$(vt_config -i velo -v 1.1.0 -f 4 -r 10.99.0.2-10.99.0.3)"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	file="$VT_IPAM/$VT_NETWORK/10.99.0.0_24"
	vt_add "$a" ctr-a "$conf"
	[ "$(vt_ip "$VT_RESULT" 4)" = 10.99.0.2 ] || { echo "got $(vt_ip "$VT_RESULT" 4)"; false; }
	vt_cni DEL ctr-a "$a" eth0 "$conf"
	vt_assert_ok
	# Slot 0 (10.99.0.2) gets state 7: neither free (0) nor leased (1).
	printf '\7' | dd of="$file" bs=1 seek=256 conv=notrunc status=none
	vt_add "$b" ctr-b "$conf"
	[ "$(vt_ip "$VT_RESULT" 4)" = 10.99.0.3 ] || { echo "got $(vt_ip "$VT_RESULT" 4)"; false; }
	vt_cni ADD ctr-a "$a" eth0 "$conf"
	vt_assert_error 101 'is exhausted'
	vt_gc "$conf" '[{"containerID": "ctr-b", "ifname": "eth0"}]'
	vt_assert_ok
	vt_add "$a" ctr-a "$conf"
	[ "$(vt_ip "$VT_RESULT" 4)" = 10.99.0.2 ] || { echo "got $(vt_ip "$VT_RESULT" 4)"; false; }
	grep -q 'IPAM GC: freed 1 damaged slot(s) of range 10.99.0.0/24' "$VT_LOG" ||
		{ echo "no repair logged"; tail -n 5 "$VT_LOG"; false; }
	[ "$(owners)" = "$(printf '10.99.0.2 ctr-a eth0\n10.99.0.3 ctr-b eth0')" ] || { echo "leases: $(owners)"; false; }
}
