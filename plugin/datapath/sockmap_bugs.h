/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Functional probes for kernel bugs of sockets in a sockhash (cni/kernel_bugs.h
 * names them): a TCP pair on loopback in a private netns, both sockets in a
 * private sockhash whose sk_msg program redirects each send into the peer's
 * receive queue as velo_sk_msg does, then the pattern applications use that
 * breaks. No version check: a kernel with the fix passes, one without fails.
 */
#ifndef VELO_SOCKMAP_BUGS_H
#define VELO_SOCKMAP_BUGS_H

/*
 * The enum velo_sm_bug bits whose probe saw the bug. A probe that could not
 * run counts as failed (its bug bit set): only a probe that passed clears it.
 */
unsigned velo_sockmap_bugs_probe(void);

#endif
