# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: Apache-2.0
# The CNIs velo is measured against (issue 42), pinned; sourced after hack/kind/versions.sh.
# Cilium 1.19 supports Kubernetes 1.31-1.34; its LLVM is 19, which Debian 12 packages.
CILIUM_VERSION=v1.19.0
CILIUM_LLVM=19
FLANNEL_VERSION=v0.28.10
HELM_VERSION=v4.3.2
# Builds and images of the peers, beside Kubernetes' in the kind cache.
PEERS_CACHE=$VELO_KIND_CACHE/peers
