// SPDX-License-Identifier: Apache-2.0
/* This build's BPF generation: a hash of the objects whose programs are pinned per generation. */
#include <errno.h>
#include <stdio.h>

#include "datapath/generation.h"

/* Tests build a second velo with another generation name to stand in for the next release. */
#ifdef VELO_BPF_GEN_OVERRIDE
#define VELO_BPF_GEN VELO_BPF_GEN_OVERRIDE
#else
#include "velo_bpf_gen.h" /* generated: VELO_BPF_GEN, a hash of both groups' objects */
#endif

const char *velo_bpf_generation(void)
{
	return VELO_BPF_GEN;
}

int velo_bpf_gen_dir(const struct velo_paths *paths, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" VELO_BPF_GEN_PREFIX "%s", paths->bpffs_dir, VELO_BPF_GEN);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
