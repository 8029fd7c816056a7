// SPDX-License-Identifier: Apache-2.0
/* CNI versions and commands as text. */
#include <string.h>

#include "base/cni.h"

static const char *const version_names[] = {
	[CNI_V_0_1_0] = "0.1.0", [CNI_V_0_2_0] = "0.2.0", [CNI_V_0_3_0] = "0.3.0",
	[CNI_V_0_3_1] = "0.3.1", [CNI_V_0_4_0] = "0.4.0", [CNI_V_1_0_0] = "1.0.0",
	[CNI_V_1_1_0] = "1.1.0",
};

static const char *const command_names[] = {
	[CNI_CMD_ADD] = "ADD",	     [CNI_CMD_DEL] = "DEL", [CNI_CMD_CHECK] = "CHECK",
	[CNI_CMD_STATUS] = "STATUS", [CNI_CMD_GC] = "GC",   [CNI_CMD_VERSION] = "VERSION",
};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* 0.1.0 and 0.2.0 results lack interfaces; velo does not speak them. */
const enum cni_version cni_supported_versions[] = {
	CNI_V_0_3_0, CNI_V_0_3_1, CNI_V_0_4_0, CNI_V_1_0_0, CNI_V_1_1_0,
};
const unsigned cni_supported_versions_len =
	sizeof(cni_supported_versions) / sizeof(cni_supported_versions[0]);

enum cni_version cni_version_parse(const char *text)
{
	if (!text)
		return CNI_V_UNKNOWN;
	for (unsigned i = 1; i < N_ELEMS(version_names); i++)
		if (version_names[i] && !strcmp(text, version_names[i]))
			return (enum cni_version)i;
	return CNI_V_UNKNOWN;
}

const char *cni_version_str(enum cni_version version)
{
	if ((unsigned)version >= N_ELEMS(version_names) || !version_names[version])
		return "unknown";
	return version_names[version];
}

enum cni_command cni_command_parse(const char *text)
{
	if (!text)
		return CNI_CMD_UNKNOWN;
	for (unsigned i = 1; i < N_ELEMS(command_names); i++)
		if (command_names[i] && !strcmp(text, command_names[i]))
			return (enum cni_command)i;
	return CNI_CMD_UNKNOWN;
}

const char *cni_command_str(enum cni_command command)
{
	if ((unsigned)command >= N_ELEMS(command_names) || !command_names[command])
		return "UNKNOWN";
	return command_names[command];
}
