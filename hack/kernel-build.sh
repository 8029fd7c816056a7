#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the BPF_F_PERMANENT test kernel: Debian's linux-source-6.1 with kernel/patches/*.patch,
# tinyconfig plus kernel/patches/tiny.config, into build/kernel/permanent/bzImage (~5 min with
# -j2 the first time; a changed patch is reverted and the new one applied, and make rebuilds
# only what changed). Not part of `make test`: the suite boots the kernel when it is cached.
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

if [ ! -f "$src/Makefile" ]; then
	echo "kernel-build: unpacking $tarball" >&2
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
fi

# The applied patches are kept beside the tree: a changed one is reverted before the new goes on.
applied=$out/applied.patch
wanted=$(cat "$top"/kernel/patches/*.patch 2>/dev/null || true)
if [ ! -f "$applied" ] || [ "$wanted" != "$(cat "$applied")" ]; then
	if [ -s "$applied" ]; then
		printf '%s\n' "$(cat "$applied")" | patch -d "$src" -p1 -R --silent ||
			die "could not revert the old patch"
	fi
	: >"$applied"
	if [ -n "$wanted" ]; then
		printf '%s\n' "$wanted" | patch -d "$src" -p1 --silent --forward ||
			die "kernel/patches does not apply to $(basename "$tarball")"
	fi
	printf '%s' "$wanted" >"$applied"
fi

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
echo "kernel-build: $out/bzImage in $(($(date +%s) - start)) s" >&2
