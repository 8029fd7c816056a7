#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the kernel matrix's initramfs: busybox-static, iproute2's ip, nsenter, jq, bash, bpftool,
# velo, velod and their test helpers (each with the libraries ldd names), host-local, the guest test
# script with the helpers it shares with tests/node and the policy truth table, and the modules
# they need from an unpacked kernel (with their dependencies, depmod'ed).
#
# Usage: hack/kernel-initramfs.sh OUT.cpio.gz [MODULES_ROOT KERNEL_RELEASE]
#   MODULES_ROOT holds lib/modules/KERNEL_RELEASE (a dpkg-deb -x of a linux-image deb); without
#   it the kernel must have everything built in (the BPF_F_PERMANENT test kernel).
# Env: BUILD (default <repo>/build), CNI_REF_DIR (default /usr/lib/cni).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
cni_ref=${CNI_REF_DIR:-/usr/lib/cni}
out=$1
mod_root=${2:-}
kver=${3:-}
# What velo's datapaths and probes load as modules on a distro kernel (loaded at boot), and what
# the guest tests load themselves (conntrack, whose kfuncs velo's fast paths use when present;
# nf_tables, which velod's libnftables needs: it exits the process without it).
modules=(veth sch_ingress cls_bpf)
extra_modules=(nf_conntrack nf_tables)

die() {
	echo "kernel-initramfs: $*" >&2
	exit 1
}

for f in "$build/velo" "$build/velod" "$build/tests/sockmap_stream" "$build/tests/sockmap_edge" \
	"$build/tests/sock_battery" "$build/tests/policy_probe" "$cni_ref/host-local" /bin/busybox; do
	[ -x "$f" ] || die "$f missing (make all $build/tests/sockmap_stream $build/tests/sockmap_edge $build/tests/sock_battery $build/tests/policy_probe; hack/install-deps.sh)"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/velotest-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,run,etc,opt/velo,velotest}

# busybox applets, except those that would shadow the full tools copied below.
install -m 0755 /bin/busybox "$stage/bin/busybox"
for applet in $(/bin/busybox --list); do
	case "$applet" in ip | nsenter | bash | busybox) continue ;; esac
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
ln -sf ../bin/busybox "$stage/sbin/modprobe"
ln -sf ../bin/busybox "$stage/sbin/insmod"

# copy_bin SRC DEST: a dynamic binary and every library it needs, at the paths ldd names.
copy_bin() {
	local src=$1 dest=$2 lib
	install -D -m 0755 "$src" "$stage$dest"
	for lib in $(ldd "$src" 2>/dev/null | grep -oE '/[^ ]+\.so[^ ]*'); do
		[ -e "$stage$lib" ] || install -D -m 0755 "$lib" "$stage$lib"
	done
}
copy_bin /bin/bash /bin/bash
copy_bin /usr/sbin/ip /usr/sbin/ip
copy_bin /usr/bin/nsenter /usr/bin/nsenter
copy_bin /usr/bin/jq /usr/bin/jq
copy_bin "$(command -v bpftool || echo /usr/sbin/bpftool)" /usr/sbin/bpftool
copy_bin "$build/velo" /opt/velo/velo
copy_bin "$build/velod" /opt/velo/velod
copy_bin "$build/tests/sockmap_stream" /opt/velo/sockmap_stream
copy_bin "$build/tests/sockmap_edge" /opt/velo/sockmap_edge
copy_bin "$build/tests/sock_battery" /opt/velo/sock_battery
copy_bin "$build/tests/policy_probe" /opt/velo/policy_probe
copy_bin "$cni_ref/host-local" /opt/velo/host-local

# velo's BPF objects, where the build kept them: the guest runs them through its verifier.
for obj in "$build"/bpf/*.bpf.o; do
	[ -f "$obj" ] && install -D -m 0644 "$obj" "$stage/opt/velo/bpf/$(basename "$obj")"
done
install -m 0755 "$top/kernel/matrix/init" "$stage/init"
install -m 0755 "$top/kernel/matrix/guest-tests.sh" "$stage/velotest/guest-tests.sh"
# The helpers the guest shares with tests/node, and the NetworkPolicy truth table with the
# model's verdicts (the guest has no python to compute them).
install -m 0644 "$top/tests/node/lib/guest_shared.bash" "$stage/velotest/guest_shared.bash"
"$top/kernel/matrix/policy-table.sh" "$stage/velotest/policy" || die "kernel/matrix/policy-table.sh failed"

# Modules: the Debian debs ship no modules.dep, so depmod the unpacked tree, take each module
# with its dependencies in load order, and depmod the copy (busybox modprobe reads modules.dep).
: >"$stage/etc/velotest-modules"
if [ -n "$mod_root" ]; then
	[ -d "$mod_root/lib/modules/$kver" ] || die "$mod_root/lib/modules/$kver missing"
	mod_root=$(realpath "$mod_root")
	[ -f "$mod_root/lib/modules/$kver/modules.dep" ] || depmod -b "$mod_root" "$kver"
	for mod in "${modules[@]}" - "${extra_modules[@]}"; do
		if [ "$mod" = - ]; then
			echo -
			continue
		fi
		modprobe -d "$mod_root" -S "$kver" --show-depends "$mod" | awk '$1 == "insmod" {print $2}'
	done | awk '!seen[$0]++' | {
		list="$stage/etc/velotest-modules"
		while read -r ko; do
			if [ "$ko" = - ]; then
				list=/dev/null
				continue
			fi
			rel=${ko#"$mod_root"}
			install -D -m 0644 "$ko" "$stage$rel"
			echo "$rel" >>"$list"
		done
	}
	cp "$mod_root/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$stage/lib/modules/$kver/"
	depmod -b "$stage" "$kver"
fi

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
echo "kernel-initramfs: $out ($(du -h "$out" | cut -f1))" >&2
