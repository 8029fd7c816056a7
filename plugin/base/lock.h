/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File locks (flock: released by the kernel if the process dies). Waits are
 * bounded: a lock still busy after the timeout is -EAGAIN, which the caller
 * turns into CNI code 11 (try again later).
 *
 * Lock order (take in this order, never the reverse):
 *   1. the attachment lock   <run_dir>/locks/<network>/<container>:<ifname>.lock
 *   2. the pod cgroup lock   <run_dir>/cgroup.lock
 *   3. the BPF loader lock   <run_dir>/bpf.lock
 *   4. the log rotation lock <log_file>.lock
 * and, a leaf taken holding any of 1-3 but never with anything taken under it,
 * the sockmap probe lock <run_dir>/sockmap-probe.lock (datapath/sockmap_probe.c).
 */
#ifndef VELO_BASE_LOCK_H
#define VELO_BASE_LOCK_H

/* Creates the directories on the way. Returns the locked fd, -EAGAIN on timeout, or -errno. */
int lock_acquire(const char *path, unsigned timeout_ms);
/* Never waits: -EWOULDBLOCK when someone holds it. */
int lock_try(const char *path);
/* Unlinks path while holding the lock (lockers re-check the inode), then releases. */
void lock_release_unlink(int fd, const char *path);
void lock_release(int fd);
/* mkdir -p of dir, each new directory 0700; an existing one is fine. Shared by log and state. */
int lock_mkdirs(const char *dir);

#endif
