/* SPDX-License-Identifier: Apache-2.0 */
/* Per-device sysctls under /proc/sys/net/ipv<version>/conf, which show the current netns. */
#ifndef VELO_NET_WIRING_SYSCTL_H
#define VELO_NET_WIRING_SYSCTL_H

/* /proc/sys/net/ipv<version>/conf/<ifname>/<key> = value in the current netns; -ENOENT when
 * the kernel has no such key. */
int wiring_dev_sysctl_write(int version, const char *ifname, const char *key, const char *value);
/* wiring_dev_sysctl_write(); a failure is the CNI error naming side ("host", "pod", "node"). */
int wiring_conf_set(const char *side, int version, const char *ifname, const char *key,
		    const char *value);
struct wiring_conf_kv {
	const char *key;
	const char *value;
};

/*
 * Writes n keys of /proc/sys/net/ipv<version>/conf/<ifname>, walking that path once: every
 * netns has its own dentries of "net", "conf", "eth0"..., and a lookup compares them all.
 * -ENOENT, nothing recorded, when the device has no such tree (a kernel without IPv6); any
 * other failure is the CNI error naming side.
 */
int wiring_conf_set_all(const char *side, int version, const char *ifname,
			const struct wiring_conf_kv *kv, unsigned n);
/* Reads an integer sysctl of the same tree. */
int wiring_conf_read(int version, const char *ifname, const char *key, int *value);

#endif
