#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the test kernel: Debian's linux-source-6.1 with kernel/patches/*.patch (BPF_F_PERMANENT,
# tcp_bpf's recv, MSG_WAITALL, FIONREAD, SO_RCVLOWAT and splice fixes), tinyconfig plus kernel/patches/tiny.config, into
# build/kernel/permanent/bzImage (~9 min with -j2 the first time: 525 s on 2 cores; when the patches change, the
# applied ones are reverted, last first, and the new ones applied, and make rebuilds only what
# changed). hack/test.sh (CI) builds it in the background beside the first suites; the kernel
# suite waits for that build (tests/run.sh) and boots the kernel when it is there.
# A finished bzImage is also kept in $KERNEL_CACHE (default /var/cache/velo/kernel) under a hash
# of everything that goes into it, so a new clone on the same machine does not rebuild it.
# Debian packages: linux-source-6.1 flex bison bc libssl-dev libelf-dev dwarves.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/kernel/permanent
src=$out/src
tarball=$(find /usr/src -maxdepth 1 -name 'linux-source-6.1.tar.xz' | head -n 1)
jobs=${KERNEL_JOBS:-$(nproc)}

die() {
	echo "kernel-build: $*" >&2
	exit 1
}

[ -n "$tarball" ] || die "no /usr/src/linux-source-6.1.tar.xz (apt-get install linux-source-6.1)"
for cmd in flex bison bc pahole gcc make; do
	command -v "$cmd" >/dev/null || die "$cmd missing (flex bison bc dwarves build-essential)"
done
mkdir -p "$out"

# The key: the source tarball, the patches in order, the config fragment and this script.
cache=${KERNEL_CACHE:-/var/cache/velo/kernel}
mapfile -t want < <(find "$top/kernel/patches" -maxdepth 1 -name '*.patch' | sort)
key=$({
	stat -c '%n %s %Y' "$tarball"
	cat "${want[@]}" "$top/kernel/patches/tiny.config" "$0"
} | sha256sum | cut -c1-16)
if [ -f "$cache/$key/bzImage" ]; then
	install -m 0644 "$cache/$key/bzImage" "$out/bzImage"
	echo "kernel-build: $out/bzImage from $cache/$key" >&2
	exit 0
fi

if [ ! -f "$src/Makefile" ]; then
	echo "kernel-build: unpacking $tarball" >&2
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
	rm -rf "$out/applied" "$out/applied.patch" # a fresh tree has no patches on
fi

# Copies of the applied patches are kept beside the tree, one file each. When kernel/patches
# changes, the applied ones from the first that differs on are reverted, last first (patches
# that touch the same file only revert cleanly that way), and the wanted ones from there on
# applied: the tree's unchanged files keep their mtimes, so make rebuilds only what changed.
applied=$out/applied
if [ -f "$out/applied.patch" ]; then # older builds kept the patches as one concatenated file
	mkdir -p "$applied"
	if [ "$(cat "$out/applied.patch")" = "$(cat "${want[@]}" 2>/dev/null)" ]; then
		[ ${#want[@]} -eq 0 ] || cp "${want[@]}" "$applied/"
	elif [ -s "$out/applied.patch" ]; then
		patch -d "$src" -p1 -R --silent <"$out/applied.patch" || die "could not revert applied.patch"
	fi
	rm -f "$out/applied.patch"
fi
mkdir -p "$applied"
mapfile -t have < <(find "$applied" -maxdepth 1 -name '*.patch' | sort)
keep=0
while [ "$keep" -lt ${#have[@]} ] && [ "$keep" -lt ${#want[@]} ] &&
	[ "$(basename "${have[$keep]}")" = "$(basename "${want[$keep]}")" ] &&
	cmp -s "${have[$keep]}" "${want[$keep]}"; do
	keep=$((keep + 1))
done
for ((i = ${#have[@]} - 1; i >= keep; i--)); do
	patch -d "$src" -p1 -R --silent <"${have[$i]}" || die "could not revert $(basename "${have[$i]}")"
	rm -f "${have[$i]}"
done
for ((i = keep; i < ${#want[@]}; i++)); do
	patch -d "$src" -p1 --silent --forward <"${want[$i]}" ||
		die "$(basename "${want[$i]}") does not apply to $(basename "$tarball")"
	cp "${want[$i]}" "$applied/"
done

if [ ! -f "$src/.config" ] || [ "$top/kernel/patches/tiny.config" -nt "$src/.config" ]; then
	make -C "$src" -s tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" \
		"$top/kernel/patches/tiny.config" >/dev/null
	make -C "$src" -s olddefconfig
	for opt in BPF_SYSCALL BPF_JIT DEBUG_INFO_BTF VETH BPF_STREAM_PARSER CGROUP_BPF NET_CLS_BPF; do
		grep -q "^CONFIG_$opt=y" "$src/.config" || die "CONFIG_$opt did not stick (missing dependency?)"
	done
fi

start=$(date +%s)
make -C "$src" -s -j"$jobs" bzImage
install -m 0644 "$src/arch/x86/boot/bzImage" "$out/bzImage"
if mkdir -p "$cache/$key.tmp" && cp "$out/bzImage" "$cache/$key.tmp/bzImage"; then
	rm -rf "${cache:?}/$key" && mv "$cache/$key.tmp" "$cache/$key"
fi
echo "kernel-build: $out/bzImage in $(($(date +%s) - start)) s" >&2
