/* SPDX-License-Identifier: Apache-2.0 */
/* Entering a container's network namespace. velo is single-threaded, so setns() on the process is safe. */
#ifndef VELO_NET_NETNS_H
#define VELO_NET_NETNS_H

#include <stdint.h>

struct netns_guard {
	int saved_fd; /* the namespace to return to */
	int target_fd;
};

/* Opens path and enters it; records code 103 on failure. */
int netns_enter(const char *path, struct netns_guard *guard);
/* Returns to the saved namespace; safe to call twice. */
void netns_leave(struct netns_guard *guard);
/* The namespace's inode (st_ino of the nsfs file). */
int netns_inode(const char *path, uint64_t *ino);
/* Brings up lo in the current namespace (a fresh one starts with it down): 0 or -errno. */
int netns_loopback_up(void);

#endif
