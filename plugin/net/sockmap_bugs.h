/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel bugs of sockets in a sockhash that velo probes for before it
 * puts a pod on the socket short-circuit: their bits, their names (what an
 * operator lists in the conflist's sockmapAcceptKernelBugs) and the
 * functional probes that find them. A probe is a TCP pair on loopback in a
 * private netns, both sockets in a private sockhash whose sk_msg program
 * redirects each send into the peer's receive queue as velo_sk_msg does, then
 * the pattern applications use that breaks. No version check: a kernel with
 * the fix passes, one without fails.
 */
#ifndef VELO_NET_SOCKMAP_BUGS_H
#define VELO_NET_SOCKMAP_BUGS_H

#include <stddef.h>

#include <cJSON.h>

enum velo_sm_bug {
	/* A blocking recv() after our own shutdown(SHUT_WR) returns EAGAIN (tcp_bpf_recvmsg). */
	VELO_SM_BUG_HALFCLOSE_EAGAIN = 1u << 0,
	/* splice() from the socket reads only the TCP queue, never the redirected bytes. */
	VELO_SM_BUG_SPLICE_INGRESS = 1u << 1,
	/* recv(MSG_WAITALL) returns what is queued instead of waiting for all of it. */
	VELO_SM_BUG_WAITALL_SHORT = 1u << 2,
	/* poll() says readable below SO_RCVLOWAT. */
	VELO_SM_BUG_RCVLOWAT_IGNORED = 1u << 3,
};
#define VELO_SM_BUG_COUNT 4
#define VELO_SM_BUGS_ALL ((1u << VELO_SM_BUG_COUNT) - 1)

/* The name of bug number i (0 .. VELO_SM_BUG_COUNT - 1). */
const char *velo_sm_bug_name(unsigned i);
/* "halfclose-eagain, splice-ingress" (or "none") for a set of bug bits. */
void velo_sm_bugs_str(unsigned bugs, char *buf, size_t len);
/* The conflist's array of names into bits; code 7 naming an unknown or non-string entry. */
int velo_sm_bugs_parse(const char *field, const cJSON *item, unsigned *out);

/*
 * The enum velo_sm_bug bits whose probe saw the bug. A probe that could not
 * run counts as failed (its bug bit set): only a probe that passed clears it.
 */
unsigned velo_sockmap_bugs_probe(void);

#endif
