# SPDX-License-Identifier: Apache-2.0
# velo against Cilium and flannel, each in the kind cluster in turn (issue 42): bench/cluster.sh,
# with each CNI's [sig-network] [Conformance] run (-C) in the same pass.
# Not part of `make bench` (about an hour warm, and a cold build of each peer the first time).

.PHONY: bench-peers

bench-peers: ## velo against Cilium and flannel in kind clusters, with conformance (root; ~1 h warm)
	bench/cluster.sh -C
