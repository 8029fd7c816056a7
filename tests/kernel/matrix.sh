#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The kernel matrix as a TAP suite for tests/run.sh: velo's node tests inside qemu guests for
# Debian 12's 6.1 kernel, and for the patched test kernel (kernel/patches) when build/kernel/
# permanent/bzImage is cached (make kernel-permanent; hack/test.sh builds it). Skips, with the
# reason, when it can't run here. Known kernel bugs expected on a kernel are TAP TODOs.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}

skip_all() {
	echo "ok 1 - kernel matrix # skip $1"
	echo "1..1"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 not installed (qemu-system-x86)"
for f in "$build/velo" "$build/velod" "$build/tests/sockmap_stream" "$build/tests/sockmap_edge" \
	"$build/tests/sock_battery" "$build/tests/policy_probe"; do
	[ -x "$f" ] || skip_all "$f missing (make all $build/tests/sockmap_stream $build/tests/sockmap_edge $build/tests/sock_battery $build/tests/policy_probe)"
done
[ -x /bin/busybox ] || skip_all "busybox-static not installed"
command -v cpio >/dev/null || skip_all "cpio not installed"

kernels=(debian-6.1)
[ -f "$build/kernel/permanent/bzImage" ] && kernels+=(permanent)
exec "$top/hack/kernel-matrix.sh" "${kernels[@]}"
