/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the socket short-circuit can use on this kernel. BPF_F_PERMANENT (a
 * redirect flag that makes one verdict hold for the socket's life) is looked
 * up by name in the kernel BTF's anonymous enums, never hard-coded, then
 * confirmed with a redirected send between a socket pair in a private netns.
 * The kernel bug probes (net/sockmap_bugs.h) run with it. The answers
 * are cached per boot and velo build in <run_dir>/sockmap-probe
 * (datapath/sockmap_cache.h); a cached flag is checked against the BTF again.
 */
#ifndef VELO_DATAPATH_SOCKMAP_PROBE_H
#define VELO_DATAPATH_SOCKMAP_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "cni/config.h"

struct velo_sockmap_features {
	bool permanent_in_btf; /* the kernel's BTF names BPF_F_PERMANENT */
	uint64_t permanent_flag; /* its value where the probe confirmed it, else 0 */
	unsigned bugs; /* enum velo_sm_bug bits whose functional probe failed (sockmap_bugs.h) */
	/* The probes did not finish in time: nothing is known (bugs all set), nothing cached. */
	bool incomplete;
};

/* BPF_F_PERMANENT's value from the kernel BTF into *value; -ENOENT when it has none. */
int velo_sockmap_btf_flag(const char *name, uint64_t *value);
/*
 * Loads a redirect-with-flag sk_msg program in a private netns (forked
 * child) and sends through it: 0 when the send works and the data arrives,
 * -EACCES when the kernel refused the flag, another -errno when the probe
 * itself failed.
 */
int velo_sockmap_flag_probe(uint64_t flag);
/*
 * From the cache, else probes and writes it. Never fails: an unknown flag is
 * "absent", a bug probe that could not run "failed". One prober at a time
 * (<run_dir>/sockmap-probe.lock, a leaf lock: nothing is taken under it);
 * the others wait for its answer. The whole wait, the probe included, is cut
 * at timeout_ms: then out->incomplete, and nothing is cached.
 */
void velo_sockmap_probe_within(const struct velo_paths *paths, unsigned timeout_ms,
			       struct velo_sockmap_features *out);
/* velo_sockmap_probe_within with VELO_SOCKMAP_PROBE_TIMEOUT_MS (cni/config.h). */
void velo_sockmap_probe(const struct velo_paths *paths, struct velo_sockmap_features *out);
void velo_sockmap_probe_uncached(struct velo_sockmap_features *out);

#endif
