/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What this kernel's BPF can do for velo, probed at run time (test loads,
 * read-only queries, one throwaway veth pair in a private netns), never from
 * the kernel version. Cached per boot in <run_dir>/bpf-probes so an ADD
 * doesn't pay for the probes again.
 */
#ifndef VELO_DATAPATH_PROBE_H
#define VELO_DATAPATH_PROBE_H

#include <stdbool.h>

#include "cni/config.h"

struct velo_bpf_features {
	bool redirect_peer; /* bpf_redirect_peer() in tc programs */
	bool tcx; /* tcx links (BPF_TCX_INGRESS); else clsact + cls_bpf */
	bool check_mtu; /* bpf_check_mtu() in tc and XDP programs */
	bool devmap_prog; /* DEVMAP_HASH entries that carry xdp/devmap programs */
	bool xdp_native_veth; /* XDP in driver mode on veth */
};

/* Fills out from the cache, else probes and writes the cache. Never fails: unknown is false. */
void velo_bpf_probe(const struct velo_paths *paths, struct velo_bpf_features *out);
/* Probes without the cache (veloctl, tests). */
void velo_bpf_probe_uncached(struct velo_bpf_features *out);
/* One line naming what's missing for mode ("tc" / "xdp"), or NULL when all is there. */
const char *velo_bpf_missing(const struct velo_bpf_features *features, bool xdp);

#endif
