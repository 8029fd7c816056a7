/* SPDX-License-Identifier: Apache-2.0 */
/* Finding the delegated IPAM plugin, agreeing on a version with it and calling it. */
#ifndef VELO_IPAM_PLUGIN_H
#define VELO_IPAM_PLUGIN_H

#include <limits.h>

#include "base/cni.h"
#include "ipam/call.h"
#include "ipam/exec.h"

struct ipam_plugin {
	char path[PATH_MAX];
	const char *name;
	enum cni_version version; /* negotiated */
};

/* Locates type on cni_path into buf; -ENOENT if absent, -EINVAL for a non-bare name. */
int ipam_find_plugin(const char *type, const char *cni_path, char *buf, unsigned len);
/*
 * Finds the plugin and negotiates its version; a missing plugin is recorded
 * with missing_code.
 */
int plugin_prepare(const struct ipam_call *call, struct ipam_plugin *plugin, int missing_code);
/* Starts command; 0 when it runs (plugin_call_wait must follow), or the recorded failure. */
int plugin_call_start(const struct ipam_call *call, const struct ipam_plugin *plugin,
		      const char *command, struct plugin_run *run);
/* 0 with run->out holding the answer, or the recorded failure. */
int plugin_call_wait(struct plugin_run *run);
/* plugin_call_start and plugin_call_wait in one. */
int plugin_call(const struct ipam_call *call, const struct ipam_plugin *plugin, const char *command,
		struct plugin_run *run);

#endif
