/* SPDX-License-Identifier: Apache-2.0 */
/* The attachment lifecycle the verbs share: its lock, and undoing all of it. */
#ifndef VELO_CMD_ATTACHMENT_H
#define VELO_CMD_ATTACHMENT_H

#include <stdbool.h>

#include "cni/request.h"

/* The attachment lock (code 11 on timeout). */
int attachment_lock(struct velo_request *request, const char *container_id, const char *ifname);
void attachment_unlock(struct velo_request *request, const char *container_id, const char *ifname,
		       bool remove);
/*
 * Undoes the attachment in request->record: features, the veth, the IPAM
 * lease, the record itself. Used by DEL, GC and a failed ADD. Best effort: a
 * feature that fails to detach keeps only the record (code 11 when its lock
 * was busy); veth and lease go anyway.
 */
int attachment_release(struct velo_request *request);
/* The same with IPAM DEL given ipam_config (NULL: request->config), e.g. the record's. */
int attachment_release_ipam(struct velo_request *request, const struct velo_config *ipam_config);
/* Removes the record's host veth: retired when velod reaps, else deleted (retire.h). */
int attachment_remove_veth(struct velo_request *request);

#endif
