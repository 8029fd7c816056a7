# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Shared helpers for the real-client tests (podman, containerd's ctr): a
# test-local CNI bin dir and conflist for the plugin under test, a node network
# namespace for the runtime, a blackhole route for the pod subnet, a busybox
# rootfs, and the checks a user would make after the containers are gone (host
# veth, IPAM lease, velo endpoint record).
#
# The runtime (podman and its conmon, containerd and ctr) runs in a node netns
# the test creates, velotest-cnode-<pid>, so the plugin's "host" side (veths,
# routes, blackholes) is there and pod-to-pod traffic is forwarded there, never
# by the root namespace: a Docker Engine sets the root namespace's FORWARD policy
# to DROP, and tests must not change the root namespace's firewall. The runtime
# enters it with `nsenter --net` (not `ip netns exec`, which remounts /sys and
# hides bpffs and the cgroup mounts). It starts with forwarding off, as a fresh
# node does: the plugin under test turns on what it needs.
#
# VELOTEST_PLUGIN selects the plugin: "velo" (default; the binary is $VELO_BIN
# or <repo>/build/velo) or "ptp" (the reference plugin, to validate the harness).
# Run as root:  VELOTEST_PLUGIN=ptp bats tests/clients/   (hack/install-deps.sh
# installs the clients). Subnets: VELOTEST_{PODMAN,CTD}_SUBNET{4,6}.

VELOTEST_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VELOTEST_PLUGIN="${VELOTEST_PLUGIN:-velo}"
VELOTEST_REF_CNI_DIR="${VELOTEST_REF_CNI_DIR:-/usr/lib/cni}"
VELOTEST_PAYLOAD4="velo-payload-v4-$$-${RANDOM}"
VELOTEST_PAYLOAD6="velo-payload-v6-$$-${RANDOM}"
VELOTEST_PORT4=5555
VELOTEST_PORT6=5556

# Skips unless root and every named command exists.
velotest_require() {
	local cmd

	if [ "$(id -u)" -ne 0 ]; then
		skip "needs root (creates veths, routes, namespaces and containers)"
	fi
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 ||
			skip "$cmd not installed (hack/install-deps.sh installs the clients)"
	done
}

# Sets VT_PLUGIN_BIN to the plugin binary under test; skips when velo is not built.
# (Not a command substitution: skip must run in the test's own shell.)
velotest_resolve_plugin() {
	case "$VELOTEST_PLUGIN" in
	ptp)
		VT_PLUGIN_BIN="$VELOTEST_REF_CNI_DIR/ptp"
		;;
	velo)
		VT_PLUGIN_BIN="${VELO_BIN:-$VELOTEST_REPO/build/velo}"
		;;
	*)
		echo "VELOTEST_PLUGIN must be velo or ptp, not '$VELOTEST_PLUGIN'" >&2
		return 1
		;;
	esac
	[ -x "$VT_PLUGIN_BIN" ] ||
		skip "plugin binary $VT_PLUGIN_BIN not found (build velo with make, or set VELO_BIN)"
}

# Creates the test dir $VT and its CNI bin dir: the plugin under test, host-local, loopback.
velotest_setup_dirs() {
	local name

	velotest_resolve_plugin || return 1
	VT="$(mktemp -d /tmp/velotest-XXXXXX)"
	export VT
	VT_CNI_BIN="$VT/cni-bin"
	VT_NETD="$VT/net.d"
	VT_IPAM="$VT/ipam"
	VT_STATE="$VT/state"
	mkdir -p "$VT_CNI_BIN" "$VT_NETD" "$VT_IPAM"
	install -m 0755 "$VT_PLUGIN_BIN" "$VT_CNI_BIN/$VELOTEST_PLUGIN"
	for name in host-local loopback; do
		[ -x "$VELOTEST_REF_CNI_DIR/$name" ] ||
			skip "$VELOTEST_REF_CNI_DIR/$name missing (containernetworking-plugins)"
		install -m 0755 "$VELOTEST_REF_CNI_DIR/$name" "$VT_CNI_BIN/$name"
	done
	# velo's pins live in a test-local bpffs. Mount it here, in the root mount
	# namespace: were velo to mount it from inside ctr's private mount namespace,
	# the mount (and every pin in it) would vanish when that ctr exits.
	if [ "$VELOTEST_PLUGIN" = velo ]; then
		mkdir -p "$VT/bpffs"
		mount -t bpf velotest-bpffs "$VT/bpffs"
	fi
}

# The veth prefix the host side of a pod carries with the plugin under test.
velotest_host_prefix() {
	if [ "$VELOTEST_PLUGIN" = velo ]; then
		echo vt
	else
		echo veth
	fi
}

# velotest_write_conflist NAME CNIVERSION SUBNET4 SUBNET6 FILE
velotest_write_conflist() {
	local name="$1" version="$2" subnet4="$3" subnet6="$4" file="$5"
	local ranges plugin

	ranges="$(jq -n --arg s4 "$subnet4" --arg s6 "$subnet6" \
		'[[{subnet: $s4}], [{subnet: $s6}]]')"
	if [ "$VELOTEST_PLUGIN" = velo ]; then
		plugin="$(jq -n --argjson ranges "$ranges" --arg vt "$VT" '{
			type: "velo",
			ipam: {type: "host-local", dataDir: ($vt + "/ipam"), ranges: $ranges},
			stateDir: ($vt + "/state"),
			runDir: ($vt + "/run"),
			logFile: ($vt + "/velo.log"),
			bpffsDir: ($vt + "/bpffs/velo"),
			vethPrefix: "vt"
		}')"
	else
		# ptp takes its default routes from IPAM; no masquerade (no iptables).
		plugin="$(jq -n --argjson ranges "$ranges" --arg vt "$VT" '{
			type: "ptp",
			ipMasq: false,
			ipam: {type: "host-local", dataDir: ($vt + "/ipam"), ranges: $ranges,
			       routes: [{dst: "0.0.0.0/0"}, {dst: "::/0"}]}
		}')"
	fi
	jq -n --arg name "$name" --arg v "$version" --argjson p "$plugin" \
		'{cniVersion: $v, name: $name, plugins: [$p]}' >"$file"
}

# --- the node network namespace ---------------------------------------------

# Creates the node netns VT_NODE_NS (lo up, nothing else): the runtime runs in it.
velotest_node_create() {
	VT_NODE_NS="velotest-cnode-$$"
	if [ -e "/run/netns/$VT_NODE_NS" ]; then
		echo "node netns $VT_NODE_NS already exists (a run in this process left it?)" >&2
		VT_NODE_NS=
		return 1
	fi
	ip netns add "$VT_NODE_NS"
	VT_NODE_NETNS="/run/netns/$VT_NODE_NS"
	vnode ip link set dev lo up
}

# vnode CMD...: runs CMD in the node netns (network only; mounts, /sys, cgroups as in the test).
vnode() {
	if [ -z "${VT_NODE_NETNS:-}" ]; then
		echo "vnode: no node netns (velotest_node_create first)" >&2
		return 1
	fi
	nsenter --net="$VT_NODE_NETNS" "$@"
}

# Removes the node netns: after the runtime's containers, netns and host veths are gone.
velotest_node_delete() {
	[ -n "${VT_NODE_NS:-}" ] || return 0
	ip netns del "$VT_NODE_NS" 2>/dev/null || true
	VT_NODE_NS=
	VT_NODE_NETNS=
}

# Blackhole routes for the pod subnets in the node netns, where the runtime wires
# the pods: a missing pod route can never send pod traffic anywhere else.
velotest_add_blackholes() {
	VT_SUBNET4="$1"
	VT_SUBNET6="$2"
	vnode ip route add blackhole "$VT_SUBNET4"
	VT_BLACKHOLE4=1
	vnode ip -6 route add blackhole "$VT_SUBNET6"
	VT_BLACKHOLE6=1
}

velotest_del_blackholes() {
	if [ -n "${VT_BLACKHOLE4:-}" ]; then
		vnode ip route del blackhole "$VT_SUBNET4" || true
		VT_BLACKHOLE4=
	fi
	if [ -n "${VT_BLACKHOLE6:-}" ]; then
		vnode ip -6 route del blackhole "$VT_SUBNET6" || true
		VT_BLACKHOLE6=
	fi
}

# velotest_make_rootfs DIR: a busybox-static rootfs with the applets the tests use.
velotest_make_rootfs() {
	local dir="$1" busybox applet

	busybox="$(command -v busybox)" || skip "busybox-static not installed"
	# The rootfs holds nothing but this one binary: it must not need a libc.
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic executable' ||
		skip "$busybox is dynamically linked: install busybox-static"
	mkdir -p "$dir/bin" "$dir/tmp" "$dir/etc"
	install -m 0755 "$busybox" "$dir/bin/busybox"
	for applet in sh nc cat echo sleep ip cut seq; do
		ln -sf busybox "$dir/bin/$applet"
	done
	echo "root:x:0:0:root:/:/bin/sh" >"$dir/etc/passwd"
	echo "root:x:0:" >"$dir/etc/group"
}

# The client script run inside the sending container: reports its veth peer's
# ifindex, then sends each payload, retrying until the listener is up.
# velotest_client_script IP4 IP6
velotest_client_script() {
	cat <<EOF
echo "iflink=\$(cat /sys/class/net/eth0/iflink)"
# From a file, not a pipe: the listener's stdin is at EOF, so it half-closes at once, and
# busybox nc exits on that FIN without sending when the pipe's data comes later.
send() {
	echo "\$1" >/tmp/payload
	for i in \$(seq 1 20); do
		nc -w 5 "\$2" "\$3" </tmp/payload && return 0
		sleep 0.5
	done
	return 1
}
send $VELOTEST_PAYLOAD4 $1 $VELOTEST_PORT4 || exit 11
send $VELOTEST_PAYLOAD6 $2 $VELOTEST_PORT6 || exit 12
EOF
}

# The server command: two listeners in turn, one per address family test.
velotest_server_script() {
	echo "nc -l -p $VELOTEST_PORT4; nc -l -p $VELOTEST_PORT6"
}

# velotest_pod_addr PID FAMILY(4|6): the global address of eth0 in the task's netns.
velotest_pod_addr() {
	nsenter --net="/proc/$1/ns/net" ip -"$2" -o addr show dev eth0 scope global |
		awk '!/tentative/ { split($4, a, "/"); print a[1]; exit }'
}

# velotest_wait_pod_addr PID FAMILY: waits (10 s) for a usable (not tentative) address.
velotest_wait_pod_addr() {
	local addr

	for _ in $(seq 1 50); do
		addr="$(velotest_pod_addr "$1" "$2" 2>/dev/null)"
		if [ -n "$addr" ]; then
			echo "$addr"
			return 0
		fi
		sleep 0.2
	done
	echo "no IPv$2 address on eth0 in the netns of pid $1" >&2
	return 1
}

# velotest_host_ifindex_of_pid PID: ifindex of the host-side peer of the task's eth0.
velotest_host_ifindex_of_pid() {
	nsenter --net="/proc/$1/ns/net" ip -o link show dev eth0 |
		sed -n 's/^[0-9]*: eth0@if\([0-9]*\):.*/\1/p'
}

# velotest_ifname_of_index IFINDEX: the name of the node netns's link IFINDEX, if any.
velotest_ifname_of_index() {
	vnode ip -o link show | awk -F': ' -v idx="$1" '$1 == idx { split($2, a, "@"); print a[1] }'
}

# velotest_remember_host_ifindex IFINDEX: a pod's host veth, to check (and delete) later.
velotest_remember_host_ifindex() {
	if [ -z "$1" ]; then
		echo "no host-side veth ifindex for the pod" >&2
		return 1
	fi
	VT_HOST_IFINDEXES="${VT_HOST_IFINDEXES:-} $1"
}

# velotest_track_host_veth IFINDEX: remembers it (teardown deletes it if a run leaks it)
# and checks that it is a veth carrying the plugin's host prefix.
velotest_track_host_veth() {
	local ifindex="$1" name prefix

	velotest_remember_host_ifindex "$ifindex" || return 1
	name="$(velotest_ifname_of_index "$ifindex")"
	prefix="$(velotest_host_prefix)"
	case "$name" in
	"$prefix"*) ;;
	*)
		echo "host veth #$ifindex '$name' does not start with '$prefix'" >&2
		return 1
		;;
	esac
}

# velotest_wait_ifindex_gone IFINDEX: the kernel frees a dead netns's veth asynchronously.
velotest_wait_ifindex_gone() {
	for _ in $(seq 1 50); do
		[ -z "$(velotest_ifname_of_index "$1")" ] && return 0
		sleep 0.2
	done
	echo "host veth #$1 still exists after the container is gone:" >&2
	vnode ip -d link show | grep -A3 "^$1: " >&2
	return 1
}

velotest_assert_host_veths_gone() {
	local ifindex

	for ifindex in ${VT_HOST_IFINDEXES:-}; do
		velotest_wait_ifindex_gone "$ifindex" || return 1
	done
}

# velotest_assert_lease NET IP: host-local holds a lease for IP.
velotest_assert_lease() {
	if [ ! -f "$VT_IPAM/$1/$2" ]; then
		echo "no IPAM lease for $2 in $VT_IPAM/$1" >&2
		ls -la "$VT_IPAM/$1" >&2 || true
		return 1
	fi
}

# velotest_assert_no_leases NET: host-local keeps only its bookkeeping files.
velotest_assert_no_leases() {
	local leases

	[ -d "$VT_IPAM/$1" ] || return 0
	leases="$(find "$VT_IPAM/$1" -type f ! -name 'last_reserved_ip.*' ! -name lock)"
	if [ -n "$leases" ]; then
		echo "IPAM leases left after the containers are gone:" >&2
		echo "$leases" >&2
		return 1
	fi
}

# velotest_assert_records NET N: velo holds N endpoint records (velo only).
velotest_assert_records() {
	local count

	[ "$VELOTEST_PLUGIN" = velo ] || return 0
	count="$(find "$VT_STATE/$1" -name '*.json' -type f 2>/dev/null | wc -l)"
	if [ "$count" -ne "$2" ]; then
		echo "expected $2 velo endpoint records in $VT_STATE/$1, found $count" >&2
		find "$VT_STATE" -type f >&2 || true
		return 1
	fi
}

# Unmounts whatever is mounted below $VT (bpffs, container shm), deepest first.
velotest_umount_below() {
	local mnt

	[ -n "${VT:-}" ] || return 0
	awk -v vt="$VT" '$5 == vt || index($5, vt "/") == 1 { print $5 }' /proc/self/mountinfo |
		sort -r | while read -r mnt; do
		umount -l "$mnt" || true
	done
}

# Removes host veths and netns that a failed run left behind, the blackholes, the
# node netns, then $VT.
velotest_cleanup_dirs() {
	local ifindex name

	for ifindex in ${VT_HOST_IFINDEXES:-}; do
		name="$(velotest_ifname_of_index "$ifindex")"
		case "$name" in
		"$(velotest_host_prefix)"*) vnode ip link del dev "$name" 2>/dev/null || true ;;
		esac
	done
	VT_HOST_IFINDEXES=
	velotest_del_blackholes
	velotest_node_delete
	# libcni's result cache, for networks named velotest-*, when a DEL never came.
	rm -f /var/lib/cni/results/velotest-*
	if [ -n "${VT:-}" ] && [ -d "$VT" ]; then
		if [ "$VELOTEST_PLUGIN" = velo ] && [ -f "$VT/velo.log" ] &&
			[ -n "${BATS_TEST_COMPLETED:-}" ] && [ "$BATS_TEST_COMPLETED" != 1 ]; then
			echo "--- velo log ---"
			tail -n 50 "$VT/velo.log"
		fi
		velotest_umount_below
		rm -rf "$VT"
	fi
	VT=
}

# --- podman (CNI backend) -------------------------------------------------

# Test-local containers.conf and storage.conf; nothing under /etc/containers is touched.
velotest_podman_setup() {
	VT_PODMAN="$VT/podman"
	mkdir -p "$VT_PODMAN/tmp" "$VT_PODMAN/storage" "$VT_PODMAN/run"
	cat >"$VT_PODMAN/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$VT_PODMAN/events.log"
tmp_dir = "$VT_PODMAN/tmp"
static_dir = "$VT_PODMAN/storage/libpod"
volume_path = "$VT_PODMAN/storage/volumes"
lock_type = "file"

[network]
network_backend = "cni"
cni_plugin_dirs = ["$VT_CNI_BIN"]
network_config_dir = "$VT_NETD"
default_network = "velotest-unused"
CONF
	cat >"$VT_PODMAN/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$VT_PODMAN/storage"
runroot = "$VT_PODMAN/run"
CONF
	export CONTAINERS_CONF="$VT_PODMAN/containers.conf"
	export CONTAINERS_STORAGE_CONF="$VT_PODMAN/storage.conf"
	export TMPDIR="$VT_PODMAN/tmp"
	# podman import writes its blob-info cache there whatever the config says.
	[ -e /var/lib/containers ] || VT_PODMAN_MADE_LIB=1
}

# podman, bounded in time, always with the test's storage and network dirs, in the
# node netns: conmon and the CNI plugins podman execs inherit it.
vpodman() {
	timeout 120 nsenter --net="$VT_NODE_NETNS" \
		podman --root "$VT_PODMAN/storage" --runroot "$VT_PODMAN/run" --storage-driver vfs \
		--network-config-dir "$VT_NETD" --tmpdir "$VT_PODMAN/tmp" "$@"
}

velotest_podman_pid() {
	vpodman inspect -f '{{.State.Pid}}' "$1"
}

velotest_podman_teardown() {
	[ -n "${VT_PODMAN:-}" ] || return 0
	vpodman rm -a -f -t 0 >/dev/null 2>&1 || true
	vpodman rmi -a -f >/dev/null 2>&1 || true
	unset CONTAINERS_CONF CONTAINERS_STORAGE_CONF TMPDIR
	if [ -n "${VT_PODMAN_MADE_LIB:-}" ]; then
		rm -rf /var/lib/containers/cache
		rmdir /var/lib/containers 2>/dev/null || true
	fi
	VT_PODMAN_MADE_LIB=
	VT_PODMAN=
}

# --- containerd (ctr run --cni) ---------------------------------------------

# Starts a private containerd in the node netns (its shims inherit it): own
# config, root, state, sockets; the CRI plugin is off.
velotest_containerd_start() {
	VT_CTD="$VT/containerd"
	mkdir -p "$VT_CTD/root" "$VT_CTD/state" "$VT_CTD/runc" "$VT_CTD/fifo"
	# The shims' sockets go to /run/containerd/s whatever the config says.
	[ -e /run/containerd ] || VT_CTD_MADE_RUN=1
	cat >"$VT_CTD/config.toml" <<CONF
version = 2
root = "$VT_CTD/root"
state = "$VT_CTD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
	"io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
	"io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "$VT_CTD/containerd.sock"

[ttrpc]
  address = "$VT_CTD/containerd.sock.ttrpc"

[debug]
  address = "$VT_CTD/debug.sock"

[metrics]
  address = ""
CONF
	# nsenter execs containerd: $! is containerd's pid.
	nsenter --net="$VT_NODE_NETNS" containerd --config "$VT_CTD/config.toml" \
		>"$VT_CTD/containerd.log" 2>&1 &
	VT_CTD_PID=$!
	for _ in $(seq 1 100); do
		if [ -S "$VT_CTD/containerd.sock" ] && vctr version >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$VT_CTD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "containerd did not come up:" >&2
	tail -n 30 "$VT_CTD/containerd.log" >&2
	return 1
}

# ctr against the private containerd, in its own namespace.
vctr() {
	timeout 120 ctr --address "$VT_CTD/containerd.sock" --namespace velotest "$@"
}

# ctr run --cni reads its conflist from /etc/cni/net.d and its plugins from the
# built-in plugin dirs, with no flag to change either: run it in a private mount
# namespace where the test's dirs are bind-mounted over those paths. ctr makes
# the CNI calls itself: it runs in the node netns, where the pods' host side goes.
vctr_cni() {
	local binds="mount --bind $VT_NETD /etc/cni/net.d"
	local dir

	for dir in /opt/cni/bin /usr/lib/cni; do
		[ -d "$dir" ] && binds="$binds && mount --bind $VT_CNI_BIN $dir"
	done
	timeout 120 nsenter --net="$VT_NODE_NETNS" unshare --mount --propagation private sh -c \
		"$binds && exec ctr --address '$VT_CTD/containerd.sock' --namespace velotest \"\$@\"" \
		vctr_cni "$@"
}

velotest_containerd_stop() {
	local id dir

	[ -n "${VT_CTD:-}" ] || return 0
	if [ -n "${VT_CTD_PID:-}" ] && kill -0 "$VT_CTD_PID" 2>/dev/null; then
		for id in $(vctr tasks ls -q 2>/dev/null); do
			vctr tasks kill -s KILL "$id" >/dev/null 2>&1 || true
			vctr tasks delete -f "$id" >/dev/null 2>&1 || true
		done
		for id in $(vctr containers ls -q 2>/dev/null); do
			vctr containers delete "$id" >/dev/null 2>&1 || true
		done
		kill "$VT_CTD_PID" 2>/dev/null || true
		wait "$VT_CTD_PID" 2>/dev/null || true
	fi
	VT_CTD_PID=
	# The cgroups ctr made for the namespace (hybrid v1 layout: one per controller).
	for dir in /sys/fs/cgroup/*/velotest /sys/fs/cgroup/velotest; do
		[ -d "$dir" ] && rmdir "$dir" 2>/dev/null
	done
	if [ -n "${VT_CTD_MADE_RUN:-}" ]; then
		rmdir /run/containerd/s /run/containerd/fifo /run/containerd 2>/dev/null || true
	fi
	VT_CTD_MADE_RUN=
	VT_CTD=
}
