#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# velo's kernel matrix: boots each kernel under qemu (TCG) from an initramfs the project builds,
# runs kernel/matrix/guest-tests.sh inside, and prints the guests' TAP, renumbered, on stdout.
#
# Usage: hack/kernel-matrix.sh [KERNEL...]
#   debian-6.1          Debian 12's newest linux-image-6.1.*-cloud-amd64, apt-get download'ed
#                       into build/kernel/ and unpacked with dpkg-deb (not installed) (default)
#   permanent           build/kernel/permanent/bzImage (hack/kernel-build.sh): BPF_F_PERMANENT
#   /path/to/bzImage    any kernel with everything built in
# Env: BUILD, KERNEL_TIMEOUT (seconds per boot, default 600), KERNEL_SMP (default 2),
#      KERNEL_ONLY (one guest test by name; sockmap_bench, the benchmark, runs only this way),
#      KERNEL_APPEND (more kernel command line, e.g. velotest.bench_sizes=64,1024).
# A kernel splat (WARN, BUG, Oops, panic) on a guest's console fails that kernel.
# Exits 0 when every test passed; a kernel that can't be had prints a TAP skip, not a failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kdir=$build/kernel
timeout_s=${KERNEL_TIMEOUT:-600}
smp=${KERNEL_SMP:-2}
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(debian-6.1)
tap_all=$(mktemp "${TMPDIR:-/tmp}/velotest-matrix.XXXXXX")
trap 'rm -f "$tap_all"' EXIT
mkdir -p "$kdir"

# What the kernel prints when it hurts itself (kernel/matrix/init copies dmesg's to the console).
SPLAT_RE='WARNING: CPU|BUG:|kernel BUG|Oops|general protection|Kernel panic|cut here|UBSAN|KASAN'

skip() { printf 'ok - %s # skip %s\n' "$1" "$2" >>"$tap_all"; }
fail() { printf 'not ok - %s\n# %s\n' "$1" "$2" >>"$tap_all"; }

# debian_kernel VERSION: unpacks Debian's newest VERSION cloud kernel; prints "vmlinuz root kver".
debian_kernel() {
	local series=$1 pkg deb root kver
	pkg=$(apt-cache pkgnames "linux-image-$series" 2>/dev/null |
		grep -E "^linux-image-${series//./\\.}\.0-[0-9]+-cloud-amd64$" | sort -V | tail -n 1)
	deb=
	if [ -n "$pkg" ]; then
		deb=$(find "$kdir" -maxdepth 1 -name "${pkg}_*.deb" | sort -V | tail -n 1)
		if [ -z "$deb" ]; then
			(cd "$kdir" && apt-get download "$pkg") >&2 2>"$kdir/apt-download.log" || true
			deb=$(find "$kdir" -maxdepth 1 -name "${pkg}_*.deb" | sort -V | tail -n 1)
		fi
	fi
	# Offline with a cached deb: use the newest one there.
	[ -n "$deb" ] || deb=$(find "$kdir" -maxdepth 1 -name "linux-image-$series.*-cloud-amd64_*.deb" |
		sort -V | tail -n 1)
	[ -n "$deb" ] || return 1
	kver=$(basename "$deb" | sed 's/^linux-image-\([^_]*\)_.*/\1/')
	root=$kdir/root-$kver
	if [ ! -f "$root/boot/vmlinuz-$kver" ]; then
		rm -rf "$root.tmp" && dpkg-deb -x "$deb" "$root.tmp" && mv "$root.tmp" "$root" || return 1
	fi
	echo "$root/boot/vmlinuz-$kver $root $kver"
}

# boot NAME VMLINUZ INITRD [CMDLINE_EXTRA]: one guest; its TAP goes to $tap_all.
boot() {
	local name=$1 kernel=$2 initrd=$3 extra=${4:-} tap=$kdir/$1.tap log=$kdir/$1.console rc start
	rm -f "$tap" "$log"
	start=$(date +%s)
	timeout "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m 1024 \
		-nographic -monitor none -no-reboot -serial "file:$log" -serial "file:$tap" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init $extra ${KERNEL_APPEND:-}" \
		</dev/null >/dev/null 2>&1
	rc=$?
	echo "== $name: qemu exited $rc after $(($(date +%s) - start)) s; console: $log" >&2
	grep -Ev '^1\.\.[0-9]+' "$tap" >>"$tap_all" 2>/dev/null
	# A guest that died before its plan line failed, whatever it printed so far.
	if ! grep -q '^1\.\.[0-9]' "$tap" 2>/dev/null; then
		fail "$name: the guest did not finish its tests (qemu rc $rc)" \
			"last console lines: $(tail -n 5 "$log" 2>/dev/null | tr '\n' '|')"
	fi
	if grep -qE "$SPLAT_RE" "$log" 2>/dev/null; then
		fail "$name: kernel splat on the console ($log)" \
			"$(grep -E -m 8 "$SPLAT_RE" "$log" | tr -d '\r' | tr '\n' '|')"
	else
		printf 'ok - %s: no kernel splat (WARN, BUG, Oops) on the console\n' "$name" >>"$tap_all"
	fi
}

run_kernel() {
	local k=$1 vmlinuz root kver initrd
	case "$k" in
	debian-*)
		if ! read -r vmlinuz root kver < <(debian_kernel "${k#debian-}"); then
			skip "$k" "no linux-image-${k#debian-}.*-cloud-amd64 deb (apt-get download failed, none cached in $kdir)"
			return
		fi
		initrd=$kdir/initramfs-$kver.cpio.gz
		"$top/hack/kernel-initramfs.sh" "$initrd" "$root" "$kver" || {
			fail "$k: initramfs" "hack/kernel-initramfs.sh failed"
			return
		}
		boot "$k" "$vmlinuz" "$initrd" "${KERNEL_ONLY:+velotest.only=$KERNEL_ONLY}"
		;;
	permanent | /*)
		vmlinuz=$k
		[ "$k" = permanent ] && vmlinuz=$kdir/permanent/bzImage
		if [ ! -f "$vmlinuz" ]; then
			skip "$k" "no $vmlinuz (make kernel-permanent builds it, ~9 min)"
			return
		fi
		initrd=$kdir/initramfs-builtin.cpio.gz
		"$top/hack/kernel-initramfs.sh" "$initrd" || {
			fail "$k: initramfs" "hack/kernel-initramfs.sh failed"
			return
		}
		boot "$(basename "$k")" "$vmlinuz" "$initrd" \
			"$([ "$k" = permanent ] && echo velotest.permanent=1 velotest.recv_fixed=1) ${KERNEL_ONLY:+velotest.only=$KERNEL_ONLY}"
		;;
	*)
		echo "unknown kernel: $k" >&2
		exit 2
		;;
	esac
}

if ! command -v qemu-system-x86_64 >/dev/null; then
	for k in "${kernels[@]}"; do skip "$k" "qemu-system-x86_64 not installed (qemu-system-x86)"; done
else
	for k in "${kernels[@]}"; do run_kernel "$k"; done
fi

# Renumber the guests' TAP into one plan.
awk '/^ok/ { sub(/^ok( [0-9]+)?/, "ok " ++n) } /^not ok/ { sub(/^not ok( [0-9]+)?/, "not ok " ++n) }
	{ print } END { print "1.." n + 0 }' "$tap_all"
# A "not ok ... # TODO" is a known kernel bug, expected on that kernel: reported, not a failure.
! grep -v '# TODO' "$tap_all" | grep -q '^not ok'
