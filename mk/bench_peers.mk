# SPDX-License-Identifier: Apache-2.0
# velo against Cilium and flannel, each in the kind cluster in turn (issue 42): bench/cluster.sh,
# with each CNI's [sig-network] [Conformance] run (-C) and NetworkPolicy e2e (-N) in the same pass.
# Not part of `make bench` (about 80 minutes warm, and a cold build of each peer the first time).

.PHONY: bench-peers

bench-peers: ## velo against Cilium and flannel in kind clusters, with both e2e suites (root; ~80 min warm)
	bench/cluster.sh -C -N
