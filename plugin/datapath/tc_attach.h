/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo's programs on a host veth's tc ingress, and the per-endpoint link
 * pins: tcx links where the kernel has them (6.6+), else clsact filters,
 * each at its own priority so the order holds (the egress deny list before
 * the fast path, which may redirect).
 */
#ifndef VELO_DATAPATH_TC_ATTACH_H
#define VELO_DATAPATH_TC_ATTACH_H

#include <stdbool.h>
#include <linux/types.h>

#include "cni/config.h"
#include "datapath/probe.h"
#include "state/state.h"

/* Debug knob: use clsact even where tcx works. */
#define VELO_ENV_CLSACT "VELO_TC_CLSACT"

/*
 * clsact filters: handle and priority of each of velo's tc programs (lower
 * priorities run first). At a host veth's ingress the deny list and
 * NetworkPolicy's velo_pol_from judge before the fast path, which may
 * redirect; the two share priority 1 (one cls_bpf instance): each only drops
 * or passes on, so their order changes no verdict, as with tcx, where both
 * attach in front. At tc egress (a host veth's, the uplink's) only
 * NetworkPolicy's programs run.
 */
#define VELO_TC_DENY_HANDLE 0x7e11
#define VELO_TC_DENY_PRIORITY 1
#define VELO_TC_FASTPATH_HANDLE 0x7e10
#define VELO_TC_FASTPATH_PRIORITY 2
#define VELO_TC_POL_FROM_HANDLE 0x7e12
#define VELO_TC_POL_TO_HANDLE 0x7e13
#define VELO_TC_POL_DELIVER_HANDLE 0x7e14
#define VELO_TC_POL_UPLINK_HANDLE 0x7e15
#define VELO_TC_POL_PRIORITY 1
/* velod's: the cross-node shortcut's receiving half at the uplink's tc ingress. */
#define VELO_TC_UPLINK_HANDLE 0x7e16
#define VELO_TC_UPLINK_PRIORITY 1
/* Where velo before the deny list's tc half put the fast path (detach still looks there). */
#define VELO_TC_FASTPATH_PRIORITY_OLD 1

/* tcx links where the kernel has them, unless VELO_TC_CLSACT asks for clsact. */
bool velo_tc_use_tcx(const struct velo_bpf_features *features);
/* The host veth at the record's ifindex is still this record's (ifindexes are reused). */
bool velo_host_veth_is_ours(const struct velo_record *record);

/* A tcx ingress link (first in the chain when first); the link fd or -errno. */
int velo_tcx_ingress_link(int prog_fd, int ifindex, bool first);
/* The same at tc egress (what the device sends: for a host veth, what its pod receives). */
int velo_tcx_egress_link(int prog_fd, int ifindex, bool first);
/* A cls_bpf filter (direct action) at handle and priority, replacing one there in place. */
int velo_clsact_attach(int prog_fd, int ifindex, bool egress, __u32 handle, __u32 priority);
int velo_clsact_ingress_attach(int prog_fd, int ifindex, __u32 handle, __u32 priority);
/* A missing filter is fine. */
void velo_clsact_detach(int ifindex, bool egress, __u32 handle, __u32 priority);
void velo_clsact_ingress_detach(int ifindex, __u32 handle, __u32 priority);

/* <bpffs>/links/<host_ifname>_<kind>, replacing a pin a crashed ADD left. */
int velo_endpoint_link_pin(const struct velo_paths *paths, const char *host_ifname,
			   const char *kind, int link_fd);
/* The link dies with its pin (its last reference); a missing pin is fine. */
void velo_endpoint_link_unpin(const struct velo_paths *paths, const char *host_ifname,
			      const char *kind);

#endif
