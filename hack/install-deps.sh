#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages velo's build, tests and benchmarks need.
# Only Debian's archive is used; nothing is downloaded from anywhere else.
set -euo pipefail

packages=(
	# build
	build-essential make pkg-config clang llvm libbpf-dev libelf-dev zlib1g-dev
	libcjson-dev libnl-3-dev libnl-route-3-dev bpftool linux-libc-dev libmicrohttpd-dev
	libnftables-dev
	libcurl4-openssl-dev openssl
	# tests (libclang-rt-14-dev: clang's libFuzzer, for tests/fuzz)
	libcmocka-dev libclang-rt-14-dev bats python3 iputils-ping iproute2 ethtool jq socat netcat-openbsd procps util-linux
	containernetworking-plugins kmod valgrind nftables
	# real CNI clients (runc named so podman doesn't pick crun)
	podman runc conmon containerd busybox-static
	# the kernel matrix (qemu guests of Debian's own kernels) and its patched test kernel
	qemu-system-x86 cpio linux-source-6.1 flex bison bc libssl-dev dwarves
	# lint
	clang-tidy clang-format cppcheck shellcheck yamllint python3-yaml universal-ctags
	# benchmarks
	iperf3 gnuplot-nox
	# the kind cluster (hack/kind.sh): its Debian base image; Docker and Go come with the machine
	debootstrap
)

if [ "${1:-}" = "--print" ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${packages[@]}"
