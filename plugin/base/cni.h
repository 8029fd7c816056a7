/* SPDX-License-Identifier: Apache-2.0 */
/* CNI protocol constants: versions, commands and error codes (spec 1.1.0). */
#ifndef VELO_BASE_CNI_H
#define VELO_BASE_CNI_H

#include <stdbool.h>

/* Ordered so that newer versions compare greater. */
enum cni_version {
	CNI_V_UNKNOWN = 0,
	CNI_V_0_1_0,
	CNI_V_0_2_0,
	CNI_V_0_3_0,
	CNI_V_0_3_1,
	CNI_V_0_4_0,
	CNI_V_1_0_0,
	CNI_V_1_1_0,
};

#define CNI_V_NEWEST CNI_V_1_1_0
/* The oldest config version velo accepts (0.3.0 shares 0.3.1's result format). */
#define CNI_V_OLDEST_ACCEPTED CNI_V_0_3_0

enum cni_command {
	CNI_CMD_UNKNOWN = 0,
	CNI_CMD_ADD,
	CNI_CMD_DEL,
	CNI_CMD_CHECK,
	CNI_CMD_STATUS,
	CNI_CMD_GC,
	CNI_CMD_VERSION,
};

/* Well-known error codes from the CNI spec. */
enum {
	CNI_ERR_INCOMPATIBLE_VERSION = 1,
	CNI_ERR_UNSUPPORTED_FIELD = 2,
	CNI_ERR_UNKNOWN_CONTAINER = 3,
	CNI_ERR_INVALID_ENV = 4,
	CNI_ERR_IO = 5,
	CNI_ERR_DECODE = 6,
	CNI_ERR_INVALID_CONFIG = 7,
	CNI_ERR_TRY_AGAIN = 11,
	CNI_ERR_NOT_AVAILABLE = 50,
	CNI_ERR_NOT_AVAILABLE_LIMITED = 51,
};

/* velo's own codes (>= 100), documented in docs/errors.md. */
enum {
	VELO_ERR_INTERNAL = 100, /* a bug or an unexpected system error */
	VELO_ERR_IPAM = 101, /* the IPAM plugin failed or returned nonsense */
	VELO_ERR_NETLINK = 102, /* the kernel refused a link, address, route or neighbour */
	VELO_ERR_NETNS = 103, /* the container's network namespace can't be entered */
	VELO_ERR_IF_EXISTS = 104, /* the interface already exists in the container */
	VELO_ERR_STATE = 105, /* velo's state files can't be read or written */
	VELO_ERR_CHECK = 106, /* CHECK found drift; details lists each item */
	VELO_ERR_FEATURE = 107, /* a requested fast path or pod feature can't be set up */
	VELO_ERR_ANNOTATION = 108, /* a velo.dev/ annotation has a bad value */
};

/* Parses "1.0.0" etc.; returns CNI_V_UNKNOWN for anything else. */
enum cni_version cni_version_parse(const char *text);
const char *cni_version_str(enum cni_version version);
/* The versions velo speaks, as listed by VERSION. */
extern const enum cni_version cni_supported_versions[];
extern const unsigned cni_supported_versions_len;

enum cni_command cni_command_parse(const char *text);
const char *cni_command_str(enum cni_command command);

#endif
