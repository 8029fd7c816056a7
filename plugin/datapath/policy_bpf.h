/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy's BPF objects (bpf/policy.bpf.c), a group of their own like
 * Service translation's: loaded once per node under the BPF loader lock, maps
 * pinned by name (<bpffs>/velo_pol_*_v1, bpf/lib/velo_policy.h), programs
 * per generation. velod writes the maps (policy_maps.h); a pod some policy
 * selects gets the two programs on its host veth (tc ingress: what it sends,
 * tc egress: what it receives): tcx links pinned as
 * <bpffs>/links/<host_ifname>_pol_from and _pol_to, or where the kernel has no
 * tcx, clsact filters (tc_hook.h), in front of velo's other tc programs.
 */
#ifndef VELO_DATAPATH_POLICY_BPF_H
#define VELO_DATAPATH_POLICY_BPF_H

#include <stdbool.h>

#include "base/types.h"
#include "datapath/tc_hook.h"
#include "state/record.h"

struct velo_policy_bpf {
	int ip_fd; /* velo_pol_ip_v1 */
	int subject_fd; /* velo_pol_sub_v1 */
	int rule_fd; /* velo_pol_rule_v1 */
	int tier_fd; /* velo_pol_tier_v1 */
	int state_fd; /* velo_pol_st_v1 */
	int if_fd; /* velo_pol_if_v1 */
	int ct_fd; /* velo_pol_ct_v1 */
	int drop_fd; /* velo_pol_drop_v1 */
	int from_fd; /* velo_pol_from: the host veth's tc ingress */
	int to_fd; /* velo_pol_to: its tc egress */
	int uplink_fd; /* velo_pol_uplink: the node's uplink's tc egress */
};

/* A pod's attachments by hook (tcx: <bpffs>/links/<host_ifname>_<kind>), for upgrade/. */
enum velo_policy_hook {
	VELO_POL_HOOK_FROM,
	VELO_POL_HOOK_TO,
	VELO_POL_HOOK_DELIVER,
	VELO_POL_N_HOOKS
};
const char *velo_policy_hook_kind(enum velo_policy_hook hook);
const struct velo_tc_hook *velo_policy_tc_hook(enum velo_policy_hook hook);
/* The program the hook runs: velo_pol_from, velo_pol_to, velo_pol_uplink. */
int velo_policy_hook_prog(const struct velo_policy_bpf *bpf, enum velo_policy_hook hook);

/* Opens the pins, loading first when any is missing (BPF loader lock, bounded wait). */
int velo_policy_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
			 struct velo_policy_bpf *bpf);
/* Existing pins only: -ENOENT when any is missing. */
int velo_policy_bpf_open_pinned(const struct velo_paths *paths, struct velo_policy_bpf *bpf);
/* Whether the pins still hold the objects bpf has open (velod keeps them open). */
bool velo_policy_bpf_current(const struct velo_paths *paths, const struct velo_policy_bpf *bpf);
void velo_policy_bpf_close(struct velo_policy_bpf *bpf);

/*
 * Both programs on the record's host veth and its velo_pol_if entry (the pod's
 * addresses): idempotent, 0 or -errno. Until velod placed the pod's identity
 * the programs drop what the pod sends and receives (fail closed).
 */
int velo_policy_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
		       const struct velo_record *record);
/* Removes both programs (and velo_pol_uplink's, below), and the entry when bpf is given;
 * missing ones are fine. */
void velo_policy_detach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			const struct velo_record *record);
/* Whether the record's veth has the programs (pinned links or filters): both, or one hook's. */
bool velo_policy_attached(const struct velo_paths *paths, const struct velo_record *record);
bool velo_policy_any_attached(const struct velo_paths *paths, const struct velo_record *record);
bool velo_policy_hook_attached(const struct velo_paths *paths, const struct velo_record *record,
			       enum velo_policy_hook hook);

/*
 * velo_pol_uplink at tc egress of the node's uplink ifname (velod: while some
 * local pod's egress is isolated), pinned as <bpffs>/links/<ifname>_pol_uplink
 * (or a clsact filter). Idempotent: one an older generation attached moves to
 * bpf's program.
 * Detach is fine with nothing attached.
 */
int velo_policy_uplink_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			      const char *ifname, int ifindex);
void velo_policy_uplink_detach(const struct velo_paths *paths, const char *ifname);

/*
 * velo_pol_uplink at the tc egress of a pod no policy selects, while some
 * local pod's egress is isolated: such a pod's flow to a Service IP that
 * kube-proxy DNATs to this pod is judged there (the sender's veth saw only
 * the Service IP, and this pod has no programs of its own). Pinned as
 * <bpffs>/links/<host_ifname>_pol_deliver (or a clsact filter);
 * velo_policy_detach removes it too.
 */
bool velo_policy_deliver_attached(const struct velo_paths *paths, const struct velo_record *record);
int velo_policy_deliver_attach(const struct velo_paths *paths, const struct velo_policy_bpf *bpf,
			       const struct velo_record *record);
void velo_policy_deliver_detach(const struct velo_paths *paths, const struct velo_record *record);

#endif
