/* SPDX-License-Identifier: Apache-2.0 */
/* Reading what a finished IPAM plugin run answered, and recording its errors. */
#ifndef VELO_IPAM_ANSWER_H
#define VELO_IPAM_ANSWER_H

#include <stdbool.h>

#include "ipam/exec.h"

/* What a failed run said: its error JSON, else its exit and stderr. */
struct plugin_error {
	int code; /* the plugin's CNI code, 0 when it gave none */
	char msg[320];
	char details[512];
};

/* The plugin exited with status 0. */
bool run_succeeded(const struct plugin_run *run);
void plugin_error_read(const struct plugin_run *run, struct plugin_error *error);
/*
 * Records the failed run's error under cni_code: -EREMOTEIO when the plugin
 * answered with a CNI error, -EIO when it gave none.
 */
int fail_with_plugin_error(const struct plugin_run *run, int cni_code);

#endif
