/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One IPAM request as the verbs hand it on: the facade (ipam.h) takes it, and
 * each backend (velo.h in process, plugin.h delegated) reads it without
 * including the facade.
 */
#ifndef VELO_IPAM_CALL_H
#define VELO_IPAM_CALL_H

#include "base/addr.h"
#include "cni/config.h"

struct ipam_call {
	const struct velo_config *config;
	const char *container_id;
	const char *netns; /* may be "" */
	const char *ifname;
	const char *args; /* CNI_ARGS, may be NULL */
	const char *cni_path;
	/* The endpoint record's addresses (DEL, CHECK); velo's IPAM uses them, others don't. */
	const struct velo_ip *ips;
	unsigned n_ips;
	/* DEL: the config text of the ADD (the record's), so the IPAM that leased releases. */
	const char *netconf;
};

#endif
