# SPDX-License-Identifier: Apache-2.0
# velo against Cilium and flannel, each in the kind cluster in turn (issue 42): bench/cluster.sh.
# Not part of `make bench` (an hour or more, and a cold build of each peer the first time).

.PHONY: bench-peers

bench-peers: ## velo against Cilium and flannel in kind clusters (root; ~1 h warm)
	bench/cluster.sh
