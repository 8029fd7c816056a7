/* SPDX-License-Identifier: Apache-2.0 */
/* The CNI verbs. Each returns 0 or -errno with the CNI error recorded (error.h). */
#ifndef VELO_COMMANDS_H
#define VELO_COMMANDS_H

#include "cni/request.h"

int cmd_add(struct velo_request *request);
int cmd_del(struct velo_request *request);
int cmd_check(struct velo_request *request);
int cmd_gc(struct velo_request *request);
int cmd_status(struct velo_request *request);

/* Shared by the verbs: the attachment lock (code 11 on timeout). */
int attachment_lock(struct velo_request *request, const char *container_id, const char *ifname);
void attachment_unlock(struct velo_request *request, const char *container_id, const char *ifname,
		       bool remove);
/*
 * Undoes the attachment in request->record: features, the veth, the IPAM
 * lease, the record itself. Used by DEL, GC and a failed ADD.
 */
int attachment_release(struct velo_request *request);
/* Removes the record's host veth: retired when velod reaps, else deleted (retire.h). */
int attachment_remove_veth(struct velo_request *request);

#endif
