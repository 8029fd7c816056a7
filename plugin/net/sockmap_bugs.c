// SPDX-License-Identifier: Apache-2.0
/*
 * The sockhash kernel bugs: their names (the conflist's accept list), and the
 * functional probes, in a forked child in a private netns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cni.h"
#include "base/error.h"
#include "base/log.h"
#include "net/netns.h"
#include "net/sockmap_bugs.h"
#include "sockmap_bugs.skel.h"

static const char *const names[VELO_SM_BUG_COUNT] = {
	"halfclose-eagain",
	"splice-ingress",
	"waitall-short",
	"rcvlowat-ignored",
};

const char *velo_sm_bug_name(unsigned i)
{
	return i < VELO_SM_BUG_COUNT ? names[i] : NULL;
}

void velo_sm_bugs_str(unsigned bugs, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "none");
	for (unsigned i = 0; i < VELO_SM_BUG_COUNT && len; i++) {
		int n;

		if (!(bugs & (1u << i)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", names[i]);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

int velo_sm_bugs_parse(const char *field, const cJSON *item, unsigned *out)
{
	const cJSON *entry;

	*out = 0;
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsArray(item))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "%s: expected an array of names",
				field);
	cJSON_ArrayForEach (entry, item) {
		unsigned i;

		if (!cJSON_IsString(entry))
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"%s: expected names (strings), got a non-string entry",
					field);
		for (i = 0; i < VELO_SM_BUG_COUNT; i++)
			if (!strcmp(entry->valuestring, names[i]))
				break;
		if (i == VELO_SM_BUG_COUNT) {
			char known[128];

			velo_sm_bugs_str(VELO_SM_BUGS_ALL, known, sizeof(known));
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"%s: unknown kernel bug \"%.64s\" (known: %s)", field,
					entry->valuestring, known);
		}
		*out |= 1u << i;
	}
	return 0;
}

/*
 * The half-close pattern: an upload, then a blocking read of the answer that is
 * already waiting when the socket's own FIN is acked. The ack wakes tcp_bpf's
 * wait with no data: EAGAIN on a kernel with the bug, every time. (Reading
 * after SHUT_WR, as clients do, only loses the race most of the time.)
 */
#define UPLOAD_BYTES (1u << 20)
#define WRITE_BYTES (64u << 10)
#define READ_BYTES 4096
#define ANSWER_DELAY_US 100000
#define HALFCLOSE_TRIES 3
#define SPLICE_BYTES 4096
#define POLL_MS 2000
/* Every probe together must end by then; the child is killed (probes failed) if not. */
#define CHILD_SECONDS 20
/* Exit code bit of the child: a probe could not run (setup failed). */
#define PROBE_FAILED 0x40

/* A connected TCP pair on 127.0.0.1, both sockets in the sockhash keyed by local port. */
static int sockhash_pair(int map_fd, int fds[2])
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int listener;

	fds[0] = fds[1] = -1;
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0)
		return -1;
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fds[0] < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(listener, 1) || getsockname(listener, (struct sockaddr *)&addr, &len) ||
	    connect(fds[0], (struct sockaddr *)&addr, sizeof(addr)))
		goto err;
	fds[1] = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (fds[1] < 0)
		goto err;
	close(listener);
	for (int i = 0; i < 2; i++) {
		__u64 fd = (__u64)fds[i];
		__u32 port;

		len = sizeof(addr);
		if (getsockname(fds[i], (struct sockaddr *)&addr, &len))
			return -1;
		port = ntohs(addr.sin_port);
		if (bpf_map_update_elem(map_fd, &port, &fd, BPF_ANY))
			return -1;
	}
	return 0;
err:
	close(listener);
	return -1;
}

static void pair_close(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * The server of the half-close probe: reads to EOF (poll, so it never fails
 * itself), then answers a little later, when the client's FIN has been acked.
 */
static void halfclose_server(int fd)
{
	static char buf[READ_BYTES];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	alarm(CHILD_SECONDS);
	for (;;) {
		if (poll(&pfd, 1, POLL_MS) != 1)
			_exit(1);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			_exit(1);
	}
	usleep(ANSWER_DELAY_US);
	_exit(send(fd, "ok", 2, MSG_NOSIGNAL) == 2 ? 0 : 1);
}

/* The client's reader: what curl, Go and plain C clients do, a blocking recv, no timeout. */
static void halfclose_reader(int fd)
{
	char answer[2];
	ssize_t n;

	alarm(CHILD_SECONDS);
	n = recv(fd, answer, sizeof(answer), 0);
	if (n == 1)
		n = 1 + recv(fd, answer + 1, 1, 0);
	if (n < 0 && errno == EAGAIN)
		_exit(1);
	_exit(n == 2 && !memcmp(answer, "ok", 2) ? 0 : 2);
}

/* pid sleeps (state S in /proc/<pid>/stat): the reader waits in recv. */
static bool sleeping(pid_t pid)
{
	char path[64], buf[512], *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	end = strrchr(buf, ')'); /* the command name may hold anything */
	return end && end[1] == ' ' && end[2] == 'S';
}

/* One upload, a reader waiting, then SHUT_WR. 1: EAGAIN seen, 0: the answer came, -1: failed. */
static int halfclose_once(int map_fd)
{
	static char buf[WRITE_BYTES];
	pid_t server = -1, reader = -1;
	int fds[2], status, ret = -1;
	ssize_t n;

	if (sockhash_pair(map_fd, fds)) {
		pair_close(fds);
		return -1;
	}
	server = fork();
	if (server == 0) {
		close(fds[0]);
		halfclose_server(fds[1]);
	}
	close(fds[1]);
	fds[1] = -1;
	if (server < 0)
		goto out;
	memset(buf, 'v', sizeof(buf));
	for (unsigned sent = 0; sent < UPLOAD_BYTES; sent += (unsigned)n) {
		n = send(fds[0], buf, sizeof(buf), MSG_NOSIGNAL);
		if (n <= 0)
			goto out;
	}
	reader = fork();
	if (reader == 0)
		halfclose_reader(fds[0]);
	if (reader < 0)
		goto out;
	for (int i = 0; i < 1000 && !sleeping(reader); i++)
		usleep(1000);
	if (shutdown(fds[0], SHUT_WR))
		goto out;
	if (waitpid(reader, &status, 0) == reader && WIFEXITED(status))
		ret = WEXITSTATUS(status) == 1 ? 1 : WEXITSTATUS(status) == 0 ? 0 : -1;
	reader = -1;
out:
	if (reader > 0) {
		kill(reader, SIGKILL);
		waitpid(reader, &status, 0);
	}
	pair_close(fds);
	if (server > 0 &&
	    (waitpid(server, &status, 0) != server || !WIFEXITED(status) || WEXITSTATUS(status)))
		ret = ret == 1 ? 1 : -1;
	return ret;
}

/* Redirected bytes, then splice(2) into a pipe. 1: it read none of them, 0: it did, -1. */
static int splice_once(int map_fd)
{
	char out[SPLICE_BYTES], in[SPLICE_BYTES];
	struct pollfd pfd;
	int fds[2], pipefd[2] = { -1, -1 }, ret = -1;
	ssize_t n;

	memset(out, 's', sizeof(out));
	if (sockhash_pair(map_fd, fds) || pipe2(pipefd, O_CLOEXEC) ||
	    send(fds[0], out, sizeof(out), MSG_NOSIGNAL) != (ssize_t)sizeof(out))
		goto out;
	pfd = (struct pollfd){ .fd = fds[1], .events = POLLIN };
	/* SPLICE_F_NONBLOCK is the pipe's; the socket's own flag decides whether splice waits. */
	if (poll(&pfd, 1, POLL_MS) != 1 || fcntl(fds[1], F_SETFL, O_NONBLOCK))
		goto out;
	n = splice(fds[1], NULL, pipefd[1], NULL, sizeof(in), SPLICE_F_NONBLOCK);
	if (n > 0)
		ret = read(pipefd[0], in, sizeof(in)) == n && !memcmp(in, out, (size_t)n) ? 0 : -1;
	/* The bug's signature: splice gets nothing while recv() gets the bytes. */
	else if (recv(fds[1], in, sizeof(in), MSG_DONTWAIT) > 0)
		ret = 1;
out:
	pair_close(fds);
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	return ret;
}

/* The sender of the MSG_WAITALL probe: two halves, the second one later. */
static void trickle(int fd)
{
	char buf[SPLICE_BYTES / 2];

	alarm(CHILD_SECONDS);
	memset(buf, 'w', sizeof(buf));
	if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) != (ssize_t)sizeof(buf))
		_exit(1);
	usleep(20000);
	_exit(send(fd, buf, sizeof(buf), MSG_NOSIGNAL) == (ssize_t)sizeof(buf) ? 0 : 1);
}

/* recv(MSG_WAITALL) of two sends 20 ms apart. 1: it returned the first only, 0: both, -1. */
static int waitall_once(int map_fd)
{
	char buf[SPLICE_BYTES];
	int fds[2], status, ret = -1;
	ssize_t n;
	pid_t pid;

	if (sockhash_pair(map_fd, fds)) {
		pair_close(fds);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		trickle(fds[0]);
	}
	if (pid > 0) {
		n = recv(fds[1], buf, sizeof(buf), MSG_WAITALL);
		ret = n == (ssize_t)sizeof(buf) ? 0 : n > 0 ? 1 : -1;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			ret = -1;
	}
	pair_close(fds);
	return ret;
}

/* SO_RCVLOWAT 1000 with 500 bytes queued. 1: poll said readable, 0: it did not, -1. */
static int rcvlowat_once(int map_fd)
{
	char buf[500];
	int fds[2], lowat = 1000, ret = -1;
	struct pollfd pfd;

	memset(buf, 'l', sizeof(buf));
	if (!sockhash_pair(map_fd, fds) &&
	    !setsockopt(fds[1], SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)) &&
	    send(fds[0], buf, sizeof(buf), MSG_NOSIGNAL) == (ssize_t)sizeof(buf)) {
		pfd = (struct pollfd){ .fd = fds[1], .events = POLLIN };
		ret = poll(&pfd, 1, 100);
		ret = ret < 0 ? -1 : ret;
	}
	pair_close(fds);
	return ret;
}

static int probe_child(void)
{
	struct sockmap_bugs *skel;
	int map_fd, ret, code = 0;

	alarm(CHILD_SECONDS);
	signal(SIGPIPE, SIG_IGN);
	if (unshare(CLONE_NEWNET) || netns_loopback_up())
		return PROBE_FAILED | VELO_SM_BUGS_ALL;
	skel = sockmap_bugs__open_and_load();
	if (!skel)
		return PROBE_FAILED | VELO_SM_BUGS_ALL;
	map_fd = bpf_map__fd(skel->maps.velo_smbugs);
	/* The program first: sockets pick up the map's programs when they are added. */
	if (bpf_prog_attach(bpf_program__fd(skel->progs.velo_smbugs_msg), map_fd,
			    BPF_SK_MSG_VERDICT, 0)) {
		sockmap_bugs__destroy(skel);
		return PROBE_FAILED | VELO_SM_BUGS_ALL;
	}
	/* A few tries, in case the reader was not waiting yet when the ack came. */
	for (int i = 0; i < HALFCLOSE_TRIES; i++) {
		ret = halfclose_once(map_fd);
		if (ret) {
			code |= VELO_SM_BUG_HALFCLOSE_EAGAIN | (ret < 0 ? PROBE_FAILED : 0);
			break;
		}
	}
	ret = splice_once(map_fd);
	if (ret)
		code |= VELO_SM_BUG_SPLICE_INGRESS | (ret < 0 ? PROBE_FAILED : 0);
	ret = waitall_once(map_fd);
	if (ret)
		code |= VELO_SM_BUG_WAITALL_SHORT | (ret < 0 ? PROBE_FAILED : 0);
	ret = rcvlowat_once(map_fd);
	if (ret)
		code |= VELO_SM_BUG_RCVLOWAT_IGNORED | (ret < 0 ? PROBE_FAILED : 0);
	sockmap_bugs__destroy(skel);
	return code;
}

unsigned velo_sockmap_bugs_probe(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		pr_warn("sockmap: kernel bug probes: fork: %s", strerror(errno));
		return VELO_SM_BUGS_ALL;
	}
	if (pid == 0) {
		libbpf_set_print(NULL);
		_exit(probe_child());
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return VELO_SM_BUGS_ALL;
	if (!WIFEXITED(status)) {
		pr_warn("sockmap: kernel bug probes did not finish (signal %d)",
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		return VELO_SM_BUGS_ALL;
	}
	if (WEXITSTATUS(status) & PROBE_FAILED)
		pr_warn("sockmap: a kernel bug probe could not run; counted as failed");
	return WEXITSTATUS(status) & VELO_SM_BUGS_ALL;
}
