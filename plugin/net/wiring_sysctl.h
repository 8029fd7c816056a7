/* SPDX-License-Identifier: Apache-2.0 */
/* Per-device sysctls under /proc/sys/net/ipv<version>/conf, which show the current netns. */
#ifndef VELO_WIRING_SYSCTL_H
#define VELO_WIRING_SYSCTL_H

#include <stdbool.h>

/* Whether /proc/sys/net/ipv6/conf/<ifname> exists: the kernel may run without IPv6. */
bool wiring_ipv6_conf_exists(const char *ifname);
/* /proc/sys/net/ipv<version>/conf/<ifname>/<key> = value in the current netns; -ENOENT when
 * the kernel has no such key. */
int wiring_dev_sysctl_write(int version, const char *ifname, const char *key, const char *value);
/* wiring_dev_sysctl_write(); a failure is the CNI error naming side ("host", "pod", "node"). */
int wiring_conf_set(const char *side, int version, const char *ifname, const char *key,
		    const char *value);
/* Reads an integer sysctl of the same tree. */
int wiring_conf_read(int version, const char *ifname, const char *key, int *value);

#endif
