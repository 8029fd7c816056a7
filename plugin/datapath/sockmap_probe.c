// SPDX-License-Identifier: Apache-2.0
/* Probes for the socket short-circuit: BPF_F_PERMANENT by BTF name, confirmed by a live send. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/lock.h"
#include "base/log.h"
#include "datapath/sockmap_cache.h"
#include "datapath/sockmap_probe.h"
#include "net/netns.h"
#include "net/sockmap_bugs.h"
#include "sockmap_probe.skel.h"

#define PERMANENT_NAME "BPF_F_PERMANENT"
#define CACHE_NAME "sockmap-probe"
#define PROBE_TIMEOUT_MS 2000

/* Child exit codes of the functional probe. */
enum { PROBE_WORKS = 0, PROBE_EACCES = 1, PROBE_BROKEN = 2 };

int velo_sockmap_btf_flag(const char *name, uint64_t *value)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int ret = -ENOENT;

	if (!btf)
		return -errno;
	for (__u32 id = 1; id < btf__type_cnt(btf) && ret == -ENOENT; id++) {
		const struct btf_type *type = btf__type_by_id(btf, id);

		/* The redirect flags are an anonymous enum: no name to look the type up by. */
		if (type->name_off || (!btf_is_enum(type) && !btf_is_enum64(type)))
			continue;
		for (__u16 i = 0; i < btf_vlen(type); i++) {
			const char *enumerator;

			if (btf_is_enum(type)) {
				enumerator = btf__name_by_offset(btf, btf_enum(type)[i].name_off);
				*value = (uint32_t)btf_enum(type)[i].val;
			} else {
				enumerator = btf__name_by_offset(btf, btf_enum64(type)[i].name_off);
				*value = btf_enum64_value(&btf_enum64(type)[i]);
			}
			if (enumerator && !strcmp(enumerator, name)) {
				ret = 0;
				break;
			}
		}
	}
	btf__free(btf);
	return ret;
}

/* A connected TCP pair on 127.0.0.1 of the current (private) netns. */
static int tcp_pair(int fds[2])
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int listener, ret = 0;

	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0)
		return -errno;
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fds[0] < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(listener, 1) || getsockname(listener, (struct sockaddr *)&addr, &len) ||
	    connect(fds[0], (struct sockaddr *)&addr, sizeof(addr))) {
		ret = -errno;
		goto out;
	}
	fds[1] = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (fds[1] < 0)
		ret = -errno;
out:
	close(listener);
	return ret;
}

/* In the child, in a private netns: one redirected send. Returns a PROBE_* code. */
static int probe_child(uint64_t flag)
{
	struct sockmap_probe *skel;
	int fds[2] = { -1, -1 }, map_fd, ret = PROBE_BROKEN;
	struct pollfd pfd;
	char byte = 'v';

	if (unshare(CLONE_NEWNET) || netns_loopback_up())
		return PROBE_BROKEN;
	skel = sockmap_probe__open();
	if (!skel)
		return PROBE_BROKEN;
	skel->rodata->probe_flag = flag;
	if (sockmap_probe__load(skel))
		goto out;
	map_fd = bpf_map__fd(skel->maps.velo_smprobe);
	/* The program first: sockets pick up the map's programs when they are added. */
	if (bpf_prog_attach(bpf_program__fd(skel->progs.velo_smprobe_msg), map_fd,
			    BPF_SK_MSG_VERDICT, 0))
		goto out;
	if (tcp_pair(fds))
		goto out;
	for (__u32 i = 0; i < 2; i++) {
		__u64 fd = (__u64)fds[i];

		if (bpf_map_update_elem(map_fd, &i, &fd, BPF_ANY))
			goto out;
	}
	if (send(fds[0], &byte, 1, MSG_DONTWAIT) != 1) {
		ret = errno == EACCES ? PROBE_EACCES : PROBE_BROKEN;
		goto out;
	}
	pfd = (struct pollfd){ .fd = fds[1], .events = POLLIN };
	if (poll(&pfd, 1, PROBE_TIMEOUT_MS) == 1 && recv(fds[1], &byte, 1, MSG_DONTWAIT) == 1 &&
	    byte == 'v')
		ret = PROBE_WORKS;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	sockmap_probe__destroy(skel);
	return ret;
}

int velo_sockmap_flag_probe(uint64_t flag)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		libbpf_set_print(NULL); /* a refused load is an answer, not a warning */
		_exit(probe_child(flag));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	switch (WEXITSTATUS(status)) {
	case PROBE_WORKS:
		return 0;
	case PROBE_EACCES:
		return -EACCES;
	default:
		return -EIO;
	}
}

void velo_sockmap_probe_uncached(struct velo_sockmap_features *out)
{
	uint64_t value;
	int ret;

	memset(out, 0, sizeof(*out));
	out->bugs = velo_sockmap_bugs_probe();
	if (velo_sockmap_btf_flag(PERMANENT_NAME, &value))
		return;
	out->permanent_in_btf = true;
	ret = velo_sockmap_flag_probe(value);
	if (ret)
		pr_warn("sockmap: the kernel BTF names %s (%#llx) but a redirect with it fails: %s",
			PERMANENT_NAME, (unsigned long long)value, strerror(-ret));
	else
		out->permanent_flag = value;
}

/*
 * A cached non-zero permanent_flag goes into BPF rodata: it must still be the
 * value this kernel's BTF gives BPF_F_PERMANENT.
 */
static bool flag_matches_btf(uint64_t flag)
{
	uint64_t value;

	return !flag || (!velo_sockmap_btf_flag(PERMANENT_NAME, &value) && value == flag);
}

static long long monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * velo_sockmap_probe_uncached in a child of its own process group, cut at
 * budget_ms: the group is killed (the probes' own children with it) and
 * -ETIMEDOUT returned.
 */
static int probe_capped(long long budget_ms, struct velo_sockmap_features *out)
{
	struct velo_sockmap_features found;
	struct pollfd pfd;
	int pipe_fds[2], status, ret = -ETIMEDOUT;
	ssize_t n = 0;
	pid_t pid;

	if (pipe2(pipe_fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return ret;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(pipe_fds[0]);
		velo_sockmap_probe_uncached(&found);
		_exit(write(pipe_fds[1], &found, sizeof(found)) == (ssize_t)sizeof(found) ? 0 : 1);
	}
	setpgid(pid, pid); /* as the child does: no window where the kill misses it */
	close(pipe_fds[1]);
	pfd = (struct pollfd){ .fd = pipe_fds[0], .events = POLLIN };
	for (long long deadline = monotonic_ms() + budget_ms;;) {
		long long left = deadline - monotonic_ms();
		int ready;

		if (left <= 0)
			break;
		ready = poll(&pfd, 1, (int)left);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready > 0)
			n = read(pipe_fds[0], &found, sizeof(found));
		break;
	}
	close(pipe_fds[0]);
	if (n == (ssize_t)sizeof(found)) {
		*out = found;
		ret = 0;
	} else if (n != 0 || pfd.revents) {
		ret = -EIO; /* the child died without an answer */
	}
	if (ret == -ETIMEDOUT)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return ret;
}

/* What a pod gets when the probes did not finish: routed, whatever the conflist accepts. */
static void unknown(struct velo_sockmap_features *out)
{
	memset(out, 0, sizeof(*out));
	out->bugs = VELO_SM_BUGS_ALL;
	out->incomplete = true;
}

/* The cache at path if it can be trusted: 0, else why not into *why (NULL: there is none). */
static int cache_trusted(const char *path, const struct sockmap_cache_key *key,
			 struct velo_sockmap_features *out, const char **why)
{
	int ret = sockmap_cache_read(path, key, out, why);

	if (!ret && !flag_matches_btf(out->permanent_flag)) {
		memset(out, 0, sizeof(*out));
		*why = "permanent_flag is not the kernel BTF's " PERMANENT_NAME;
		return -EINVAL;
	}
	if (ret == -ENOENT)
		*why = NULL;
	else if (ret && !*why)
		*why = strerror(-ret);
	return ret;
}

void velo_sockmap_probe_within(const struct velo_paths *paths, unsigned timeout_ms,
			       struct velo_sockmap_features *out)
{
	long long start = monotonic_ms();
	char path[PATH_MAX], lock[PATH_MAX + 8];
	struct sockmap_cache_key key;
	const char *why;
	int lock_fd, ret;

	memset(out, 0, sizeof(*out));
	if (sockmap_cache_key(&key) ||
	    snprintf(path, sizeof(path), "%s/%s", paths->run_dir, CACHE_NAME) >=
		    (int)sizeof(path) ||
	    snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock)) {
		if (probe_capped(timeout_ms, out))
			unknown(out);
		return;
	}
	if (!cache_trusted(path, &key, out, &why))
		return;
	if (why)
		pr_info("sockmap: probe cache %s not used (%s); probing again", path, why);
	/* One prober at a time: the first ADDs of a boot wait for its answer. */
	lock_fd = lock_acquire(lock, timeout_ms);
	if (lock_fd >= 0 && !cache_trusted(path, &key, out, &why)) {
		pr_debug("sockmap: probe cache written by another prober meanwhile");
		lock_release(lock_fd);
		return;
	}
	ret = lock_fd < 0 ? lock_fd : probe_capped(timeout_ms - (monotonic_ms() - start), out);
	if (ret) {
		pr_warn("sockmap: kernel probes %s within %u ms (sockmapProbeTimeoutMs): %s; "
			"not cached, sockmap pods stay routed until a probe finishes",
			lock_fd < 0 ? "waited for another prober, no answer" : "did not finish",
			timeout_ms, strerror(-ret));
		unknown(out);
	} else {
		pr_info("sockmap: kernel probed in %lld ms: BPF_F_PERMANENT %s, bugs %#x",
			monotonic_ms() - start, out->permanent_flag ? "usable" : "absent",
			out->bugs);
		ret = sockmap_cache_write(paths->run_dir, path, &key, out);
		if (ret)
			pr_warn("sockmap: probe cache %s not written: %s", path, strerror(-ret));
	}
	lock_release(lock_fd);
}

void velo_sockmap_probe(const struct velo_paths *paths, struct velo_sockmap_features *out)
{
	velo_sockmap_probe_within(paths, VELO_SOCKMAP_PROBE_TIMEOUT_MS, out);
}
