/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the per-pod cgroup features share: the pod cgroup, velo's cgroup
 * programs, and bpf_links on that cgroup pinned per endpoint under
 * <bpffs>/links/<host_ifname>_<kind>. Ownership is the pin's name: a
 * restarted sandbox takes over the links an older sandbox left on the same
 * pod cgroup (bpf_link_update to today's program, pinned under its own name,
 * the old name unlinked), so the old sandbox's late DEL finds nothing of its
 * own left to detach. Attach and detach run under <run_dir>/cgroup.lock
 * (taken after the attachment lock, before the BPF loader lock).
 */
#ifndef VELO_CGROUP_LINK_H
#define VELO_CGROUP_LINK_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "cni/request.h"
#include "datapath/loader.h"

struct cgroup_ctx {
	struct velo_request *request;
	struct velo_bpf_cgroup bpf;
	bool bpf_open;
	char path[PATH_MAX]; /* the pod cgroup directory */
	int cgroup_fd;
	uint64_t cgroup_id;
	int lock_fd;
};

/*
 * Finds the pod cgroup, takes the cgroup lock, loads or opens the programs.
 * Records code 107 naming feature on failure.
 */
int cgroup_ctx_open(struct velo_request *request, const char *feature, struct cgroup_ctx *ctx);
void cgroup_ctx_close(struct cgroup_ctx *ctx);

/* Attaches prog_fd to the pod cgroup at type as this endpoint's link kind (take-over, update or create). */
int cgroup_link_attach(struct cgroup_ctx *ctx, const char *kind, int prog_fd,
		       enum bpf_attach_type type);
/* Marks the pod cgroup's settings ready; tcp_cc, when not NULL, becomes the pinned algorithm. */
int cgroup_config_write(struct cgroup_ctx *ctx, const char *tcp_cc);

/* The cgroup lock alone (detach): the fd, or -errno. */
int cgroup_lock(const struct velo_request *request);
/* The same without a request (velod's upgrade pass): -EAGAIN after timeout_ms. */
int cgroup_lock_at(const struct velo_paths *paths, unsigned timeout_ms);
void cgroup_unlock(int lock_fd);
/* Unpins this endpoint's link kind (the link detaches with its last pin). Missing is fine. */
void cgroup_link_unpin(const struct velo_request *request, const char *kind);
/*
 * The endpoint's pin of kind is a live link at type running prog_fd, on
 * cgroup_id when that is not 0. Records a detail and returns -EIO otherwise.
 */
int cgroup_link_check(const struct velo_request *request, const char *feature, const char *kind,
		      enum bpf_attach_type type, int prog_fd, uint64_t cgroup_id);
/* The pod cgroup's id for CHECK (0 when it can't be found, without recording an error). */
uint64_t cgroup_id_of(const char *path);

#endif
