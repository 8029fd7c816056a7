#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the real CNI clients the tests in tests/clients/ drive (Debian 12):
# podman 4.3 (CNI backend) with runc (crun refuses the hybrid cgroup layout),
# containerd 1.6 with ctr, busybox-static for the container rootfs, and the
# reference plugins (ptp, host-local). --print lists the packages only.
set -euo pipefail

packages=(podman runc conmon containerd busybox-static containernetworking-plugins
	jq iproute2 util-linux bats)

if [ "${1:-}" = "--print" ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${packages[@]}"
