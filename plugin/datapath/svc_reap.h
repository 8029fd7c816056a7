/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Backend churn (bpf/iter_tcp.bpf.c): closing the connections opted-in pods
 * made through a Service to backends that are gone from it, with the kernel's
 * bpf_sock_destroy from TCP and UDP socket iterators (connected UDP sockets
 * get ECONNABORTED and connect again). Probed by loading: a kernel
 * without the kfunc (or without sk_storage in iterators) fails velo_svc_reap_open,
 * and such connections then live on until they end by themselves.
 */
#ifndef VELO_DATAPATH_SVC_REAP_H
#define VELO_DATAPATH_SVC_REAP_H

#include "base/types.h"
#include "bpf/lib/velo_svc.h"

struct velo_svc_reap;

/* Loads the iterator (reusing velo_svc_sk_v2 under paths' bpffs dir): 0 or -errno. */
int velo_svc_reap_open(const struct velo_paths *paths, struct velo_svc_reap **out);
/*
 * Destroys, in each of the n_netns network namespaces (nsfs paths), the TCP
 * and connected UDP sockets translated to one of the n_gone (service port,
 * backend) pairs.
 * Returns how many were destroyed, or -errno when the iterator can't run.
 */
int velo_svc_reap_run(struct velo_svc_reap *reap, const struct velo_svc_bc_key *gone,
		      unsigned n_gone, char *const *netns, unsigned n_netns);
void velo_svc_reap_close(struct velo_svc_reap *reap);

#endif
