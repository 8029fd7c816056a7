#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# containerd 1.6 (`ctr run --cni`, a private daemon) drives the plugin under test
# (VELOTEST_PLUGIN=velo|ptp): two containers exchange data over IPv4 and IPv6; when
# they exit ctr calls DEL (with an empty CNI_NETNS) and removes them, leaving no host
# veth, no IPAM lease and no velo endpoint record behind.
# containerd and ctr run in a node netns the test creates (lib.bash: velotest_node_create),
# so the pods' host side and their forwarding are there, not in the root namespace.

load lib

NET=velotest-ctd
SUBNET4="${VELOTEST_CTD_SUBNET4:-10.244.251.0/24}"
SUBNET6="${VELOTEST_CTD_SUBNET6:-fd00:7665:6c6f:fb::/64}"

setup() {
	velotest_require containerd containerd-shim-runc-v2 ctr runc jq nsenter unshare ip
	velotest_setup_dirs
	velotest_node_create
	velotest_add_blackholes "$SUBNET4" "$SUBNET6"
	# containerd 1.6's libcni knows CNI versions up to 1.0.0.
	velotest_write_conflist "$NET" 1.0.0 "$SUBNET4" "$SUBNET6" "$VT_NETD/$NET.conflist"
	velotest_make_rootfs "$VT/rootfs-srv"
	velotest_make_rootfs "$VT/rootfs-cli"
	velotest_containerd_start
}

teardown() {
	if [ -n "${SRV_CTR_PID:-}" ]; then
		kill "$SRV_CTR_PID" 2>/dev/null || true
		wait "$SRV_CTR_PID" 2>/dev/null || true
	fi
	velotest_containerd_stop
	velotest_cleanup_dirs
}

# ctr_run NAME COMMAND...: a foreground `ctr run --cni` on the test's rootfs.
ctr_run() {
	local name="$1"

	shift
	vctr_cni run --rm --cni --env PATH=/bin --runc-root "$VT_CTD/runc" \
		--fifo-dir "$VT_CTD/fifo" \
		--pid-file "$VT/$name.pid" --rootfs "$VT/rootfs-$name" "velotest-$name" "$@"
}

wait_pid_file() {
	for _ in $(seq 1 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	echo "no pid file $1" >&2
	return 1
}

@test "containerd: two ctr run --cni containers exchange data, exit leaves nothing behind" {
	local pid ip4 ip6 script srv_status

	ctr_run srv /bin/sh -c "$(velotest_server_script)" >"$VT/srv.out" 2>"$VT/srv.err" &
	SRV_CTR_PID=$!
	wait_pid_file "$VT/srv.pid"
	pid="$(cat "$VT/srv.pid")"
	ip4="$(velotest_wait_pod_addr "$pid" 4)"
	ip6="$(velotest_wait_pod_addr "$pid" 6)"
	velotest_track_host_veth "$(velotest_host_ifindex_of_pid "$pid")"
	# Leased by the test's host-local, so from the test subnets.
	velotest_assert_lease "$NET" "$ip4"
	velotest_assert_lease "$NET" "$ip6"
	velotest_assert_records "$NET" 1

	script="$(velotest_client_script "$ip4" "$ip6")"
	run ctr_run cli /bin/sh -c "$script"
	echo "client: $output"
	[ "$status" -eq 0 ]
	velotest_remember_host_ifindex "$(sed -n 's/^iflink=//p' <<<"$output")"

	srv_status=0
	wait "$SRV_CTR_PID" || srv_status=$?
	SRV_CTR_PID=
	echo "server received: $(cat "$VT/srv.out")"
	cat "$VT/srv.err"
	[ "$srv_status" -eq 0 ]
	[ "$(cat "$VT/srv.out")" = "$(printf '%s\n%s' "$VELOTEST_PAYLOAD4" "$VELOTEST_PAYLOAD6")" ]
	[ -z "$(vctr containers ls -q)" ]
	[ -z "$(vctr tasks ls -q)" ]

	velotest_assert_host_veths_gone
	velotest_assert_no_leases "$NET"
	velotest_assert_records "$NET" 0
}
