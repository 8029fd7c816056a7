// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Socket option hook on a pod's own cgroup: keeps TCP_CONGESTION on the
 * pod's algorithm by rewriting the option in place (the kernel gives the
 * program room for 16 bytes, TCP_CA_NAME_MAX, for exactly this). The
 * application's call succeeds; the socket gets the pod's algorithm.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/cgroup.h"

#define VELO_SOL_TCP 6
#define VELO_TCP_CONGESTION 13
#define VELO_PAGE_SIZE 4096

char LICENSE[] SEC("license") = "GPL";

SEC("cgroup/setsockopt")
int velo_cg_sockopt(struct bpf_sockopt *ctx)
{
	struct velo_cg_config *config = velo_cg_config();
	struct velo_cg_counters *counters;
	char *optval = ctx->optval;
	char *optval_end = ctx->optval_end;
	int len = 0;

	if (ctx->level != VELO_SOL_TCP || ctx->optname != VELO_TCP_CONGESTION ||
	    !config->tcp_cc[0]) {
		/* Larger than the page the program sees: let the kernel use the caller's buffer. */
		if (ctx->optlen > VELO_PAGE_SIZE)
			ctx->optlen = 0;
		return 1;
	}
	if (optval + VELO_CG_TCP_CC_MAX > optval_end)
		return 0; /* can't rewrite: refuse (EPERM) rather than let it switch */
	for (int i = 0; i < VELO_CG_TCP_CC_MAX; i++) {
		char c = config->tcp_cc[i];

		optval[i] = c;
		if (c && len == i)
			len = i + 1;
	}
	ctx->optlen = len;
	counters = velo_cg_counters();
	counters->cc_rewrites++;
	return 1;
}
