/* SPDX-License-Identifier: Apache-2.0 */
/* The CNI versions an IPAM plugin speaks, from its VERSION answer (cached per binary). */
#ifndef VELO_IPAM_VERSION_H
#define VELO_IPAM_VERSION_H

#include "ipam/call.h"

/* A version's bit in the masks below: one bit per enum cni_version. */
#define VERSION_BIT(v) (1U << (v))

/*
 * The versions the plugin speaks. A plugin that fails VERSION gets the
 * config's version (the real call then reports what is wrong), except one
 * that hangs: waiting for it twice would only double the wait.
 */
int plugin_versions(const struct ipam_call *call, const char *path, const char *name,
		    unsigned *mask);

#endif
