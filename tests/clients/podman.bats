#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# podman 4.3 with its CNI backend drives the plugin under test (VELOTEST_PLUGIN=velo|ptp):
# two containers on one network exchange data over IPv4 and IPv6, then stop/rm leave
# no host veth, no IPAM lease and no velo endpoint record behind.
# podman runs in a node netns the test creates (lib.bash: velotest_node_create), so the
# pods' host side and their forwarding are there, not in the root namespace.

load lib

NET=velotest-podman
SUBNET4="${VELOTEST_PODMAN_SUBNET4:-10.244.250.0/24}"
SUBNET6="${VELOTEST_PODMAN_SUBNET6:-fd00:7665:6c6f:fa::/64}"
IMAGE=localhost/velotest-busybox:latest

setup() {
	velotest_require podman runc conmon jq nsenter ip
	velotest_setup_dirs
	velotest_node_create
	velotest_add_blackholes "$SUBNET4" "$SUBNET6"
	velotest_podman_setup
	VT_NETNS_BEFORE="$(ls /run/netns 2>/dev/null || true)"
	# podman rejects 1.1.0 results: run the network at CNI 1.0.0.
	velotest_write_conflist "$NET" 1.0.0 "$SUBNET4" "$SUBNET6" "$VT_NETD/$NET.conflist"
	velotest_make_rootfs "$VT/rootfs"
	tar -C "$VT/rootfs" -c . | vpodman import -q - "$IMAGE" >/dev/null
}

teardown() {
	local ns

	velotest_podman_teardown
	# A netns podman created for this test and failed to remove.
	for ns in /run/netns/*; do
		ns="${ns##*/}"
		case "$ns" in
		netns-* | cni-*)
			grep -qxF "$ns" <<<"$VT_NETNS_BEFORE" || ip netns del "$ns" || true
			;;
		esac
	done
	velotest_cleanup_dirs
}

@test "podman: two containers exchange data, stop/rm leave nothing behind" {
	local pid ip4 ip6 script

	vpodman network ls --format '{{.Name}} {{.Driver}}' | grep -qx "$NET $VELOTEST_PLUGIN"

	# What the server receives goes to a file on the host: podman logs of a container that just
	# exited can miss its first lines under load, which made this test flaky.
	mkdir -p "$VT/srv"
	vpodman run -d --name velotest-srv --network "$NET" -v "$VT/srv:/out" "$IMAGE" \
		sh -c "{ $(velotest_server_script); } >/out/received" >/dev/null
	pid="$(velotest_podman_pid velotest-srv)"
	ip4="$(velotest_wait_pod_addr "$pid" 4)"
	ip6="$(velotest_wait_pod_addr "$pid" 6)"
	# podman's view of the network matches the pod's own.
	[ "$(vpodman inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" \
		velotest-srv)" = "$ip4" ]
	velotest_track_host_veth "$(velotest_host_ifindex_of_pid "$pid")"
	# Leased by the test's host-local, so from the test subnets.
	velotest_assert_lease "$NET" "$ip4"
	velotest_assert_lease "$NET" "$ip6"
	velotest_assert_records "$NET" 1

	script="$(velotest_client_script "$ip4" "$ip6")"
	run vpodman run --name velotest-cli --network "$NET" "$IMAGE" sh -c "$script"
	echo "client: $output"
	[ "$status" -eq 0 ]
	velotest_remember_host_ifindex "$(sed -n 's/^iflink=//p' <<<"$output")"

	[ "$(vpodman wait velotest-srv)" = 0 ]
	echo "server received: $(cat "$VT/srv/received")"
	[ "$(cat "$VT/srv/received")" = "$(printf '%s\n%s' "$VELOTEST_PAYLOAD4" "$VELOTEST_PAYLOAD6")" ]

	vpodman stop -t 5 velotest-srv velotest-cli >/dev/null
	vpodman rm velotest-srv velotest-cli >/dev/null
	[ -z "$(vpodman ps -a -q)" ]

	velotest_assert_host_veths_gone
	velotest_assert_no_leases "$NET"
	velotest_assert_records "$NET" 0
}
