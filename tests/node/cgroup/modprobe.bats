#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# velo.dev/tcp-congestion loads a missing algorithm's module with /sbin/modprobe only, never a
# modprobe found through PATH (docs/threat-model.md). A fake modprobe first in PATH writes a
# marker; it must never run, whether /sbin/modprobe exists or not (hidden by a tmpfs in a
# mount namespace of velo's own).

load ../lib/lib
load ../lib/cgroup_lib

setup() {
	vt_setup_velo
	vtc_setup
	command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
	MP_MARKER="$VT/work/fake-modprobe-ran"
	mkdir -p "$VT/fakebin"
	printf '#!/bin/sh\necho "$@" >>%s\n' "$MP_MARKER" >"$VT/fakebin/modprobe"
	chmod 0755 "$VT/fakebin/modprobe"
	MP_PATH="$VT/fakebin:$PATH"
	# velo in a mount namespace where the directory of /sbin/modprobe is an empty tmpfs.
	MP_SBIN="$(readlink -f /sbin)"
	cat >"$VT_BIN/velo-nosbin" <<-EOF
		#!/bin/sh
		exec unshare -m --propagation private sh -c \\
			'mount -t tmpfs velotest-nosbin "\$0" && exec "\$@"' "$MP_SBIN" "$VT_BIN/velo"
	EOF
	chmod 0755 "$VT_BIN/velo-nosbin"
}

# mp_add EXEC ALGORITHM: an ADD with that tcp-congestion, the fake modprobe first in PATH.
mp_add() {
	local cg conf
	MP_POD="$(vt_pod_new)"
	cg="$(vtc_cgroup_new)"
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" "{\"velo.dev/tcp-congestion\": \"$2\"}")"
	MP_CONF="$conf"
	PATH="$MP_PATH" VT_EXEC="$1" vt_cni ADD ctr-mp "$MP_POD" eth0 "$conf"
}

# The fake modprobe never ran.
mp_fake_not_run() {
	if [ -e "$MP_MARKER" ]; then
		echo "velo ran modprobe from PATH: $(cat "$MP_MARKER")"
		return 1
	fi
}

@test "tcp-congestion: a missing algorithm is loaded with /sbin/modprobe, never PATH's" {
	[ -x /sbin/modprobe ] || skip "this machine has no /sbin/modprobe (the next test covers that)"
	mp_add "$VT_BIN/velo" nosuchcc
	vt_assert_error 107 'nosuchcc'
	mp_fake_not_run
	vt_assert_nothing_left
}

@test "tcp-congestion without /sbin/modprobe: no modprobe runs, the sysctl write decides" {
	mp_add "$VT_BIN/velo-nosbin" nosuchcc
	vt_assert_error 107 'this kernel has no "nosuchcc"'
	mp_fake_not_run
	vt_assert_nothing_left
	# An algorithm the kernel has still works there.
	mp_add "$VT_BIN/velo-nosbin" reno
	vt_assert_ok
	mp_fake_not_run
	run vt_pod "$MP_POD" sysctl -n net.ipv4.tcp_congestion_control
	[ "$output" = reno ]
	PATH="$MP_PATH" VT_EXEC="$VT_BIN/velo-nosbin" vt_cni DEL ctr-mp "$MP_POD" eth0 "$MP_CONF"
	vt_assert_ok
	vt_assert_nothing_left
}
