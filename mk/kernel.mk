# SPDX-License-Identifier: Apache-2.0
# The kernel matrix: velo's node tests in qemu guests (Debian 12's 6.1 cloud kernel, unpacked
# from its deb, and the BPF_F_PERMANENT test kernel when built). Debian packages:
# qemu-system-x86 busybox-static cpio kmod (hack/install-deps.sh); linux-source-6.1, flex,
# bison, bc, libssl-dev, dwarves only for kernel-permanent.

KERNELS ?= debian-6.1 permanent

.PHONY: kernel-matrix kernel-permanent kernel-bench

kernel-matrix: $(BUILD)/velo $(BUILD)/velod $(SOCKMAP_STREAM) $(SOCKMAP_EDGE) ## velo's node tests in qemu guests per kernel (root; ~4.5 min per kernel)
	hack/kernel-matrix.sh $(KERNELS)

# The sk_msg verdict modes side by side in the BPF_F_PERMANENT guest (~2.5 min; not in the
# suite). One vCPU by default: on a shared 2-CPU host two TCG vCPUs gave spreads of 10x.
kernel-bench: $(BUILD)/velo $(SOCKMAP_STREAM) $(SOCKMAP_EDGE) $(BPF_OBJS) ## sockmap throughput per verdict mode in the permanent kernel's guest (root)
	KERNEL_SMP=$${KERNEL_SMP:-1} KERNEL_ONLY=sockmap_bench hack/kernel-matrix.sh permanent

# Slow (~9 min with -j2): hack/test.sh (CI) builds it in the background beside the first suites;
# the kernel suite waits for it (tests/run.sh) and boots it when it is there.
kernel-permanent: ## build the BPF_F_PERMANENT test kernel into build/kernel/permanent/bzImage
	hack/kernel-build.sh

# The guest runs velo's BPF objects through its own verifier: keep them after the skeletons.
.SECONDARY: $(BPF_OBJS)
kernel-matrix: $(BPF_OBJS)
