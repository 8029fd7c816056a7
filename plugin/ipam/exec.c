// SPDX-License-Identifier: Apache-2.0
/*
 * One run of the delegated IPAM plugin binary: a clean environment, the
 * config on stdin and a deadline; its stdout (bounded) is the answer, its
 * stderr goes to the log. What the command means is the callers' business;
 * success is its exit status, an error is its CNI error JSON (else its exit
 * and stderr), recorded as velo's CNI error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "base/error.h"
#include "base/log.h"
#include "ipam/exec.h"

#define IPAM_STDOUT_MAX (1024 * 1024)
#define IPAM_STDERR_MAX (64 * 1024)
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static unsigned ipam_timeout_ms = IPAM_TIMEOUT_MS_DEFAULT;

void ipam_set_timeout_ms(unsigned timeout_ms)
{
	ipam_timeout_ms = timeout_ms ? timeout_ms : IPAM_TIMEOUT_MS_DEFAULT;
}

static int buf_append(struct bounded_buf *buf, const char *data, size_t len)
{
	char *grown;

	if (buf->len + len > buf->max) {
		buf->overflow = true;
		len = buf->max - buf->len;
		if (!len)
			return 0;
	}
	grown = realloc(buf->data, buf->len + len + 1);
	if (!grown)
		return -ENOMEM;
	memcpy(grown + buf->len, data, len);
	buf->data = grown;
	buf->len += len;
	buf->data[buf->len] = '\0';
	return 0;
}

void run_free(struct plugin_run *run)
{
	free(run->out.data);
	free(run->err.data);
	run->out.data = run->err.data = NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Reads what is there; closes fd at EOF. */
static int drain(int *fd, struct bounded_buf *buf)
{
	char chunk[16384];
	ssize_t n;

	for (;;) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n > 0) {
			if (buf_append(buf, chunk, (size_t)n))
				return -ENOMEM;
			continue;
		}
		if (n == 0) {
			close_fd(fd);
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		close_fd(fd);
		return 0;
	}
}

static int build_env(const struct plugin_run *run, char *env[8])
{
	const struct ipam_call *call = run->call;
	const char *path = getenv("PATH");
	int n = 0;

#define ENV_ADD(fmt, value)                                               \
	do {                                                              \
		if (asprintf(&env[n], fmt, (value) ? (value) : "") < 0) { \
			env[n] = NULL;                                    \
			return -ENOMEM;                                   \
		}                                                         \
		n++;                                                      \
	} while (0)
	ENV_ADD("CNI_COMMAND=%s", run->command);
	ENV_ADD("CNI_CONTAINERID=%s", call->container_id);
	ENV_ADD("CNI_NETNS=%s", call->netns);
	ENV_ADD("CNI_IFNAME=%s", call->ifname);
	/*
	 * The K8S_* keys runtimes pass are for velo; without IgnoreUnknown the
	 * reference plugins refuse them. Keys the IPAM plugin knows (IP=) still work.
	 */
	if (call->args && *call->args && !strcasestr(call->args, "IgnoreUnknown="))
		ENV_ADD("CNI_ARGS=IgnoreUnknown=1;%s", call->args);
	else
		ENV_ADD("CNI_ARGS=%s", call->args);
	ENV_ADD("CNI_PATH=%s", call->cni_path);
	ENV_ADD("PATH=%s", path && *path ? path : DEFAULT_PATH);
#undef ENV_ADD
	env[n] = NULL;
	return 0;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static __attribute__((noreturn)) void exec_plugin(const struct plugin_run *run, char *const argv[],
						  char *const env[], const int fds[3],
						  int status_fd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	ssize_t written;
	sigset_t none;
	int err;

	/* Its own process group, so a timeout kills what a wrapper script started too. */
	setpgid(0, 0);
	sigaction(SIGPIPE, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			goto fail;
	execve(run->path, argv, env);
fail:
	err = errno;
	written = write(status_fd, &err, sizeof(err)); /* nobody to tell if this fails */
	(void)written;
	_exit(127);
}

/*
 * fork, not posix_spawn: posix_spawn (vfork) keeps velo waiting until the
 * child has exec'd, ~0.5-1 ms that ADD would rather spend creating the veth.
 * A failed exec is reported through a close-on-exec pipe that plugin_wait
 * reads (EOF: exec'd).
 */
static int spawn_plugin(struct plugin_run *run, int in_fd, int out_fd, int err_fd, pid_t *pid)
{
	char *argv[] = { (char *)run->path, NULL };
	char *env[8] = { 0 };
	const int fds[3] = { in_fd, out_fd, err_fd };
	int status[2] = { -1, -1 };
	int ret;

	ret = build_env(run, env);
	if (!ret && pipe2(status, O_CLOEXEC))
		ret = -errno;
	if (ret)
		goto out_env;
	*pid = fork();
	if (*pid == 0)
		exec_plugin(run, argv, env, fds, status[1]);
	if (*pid < 0) {
		ret = -errno;
		close_fd(&status[0]);
	}
	close_fd(&status[1]);
	run->exec_status_fd = status[0];
out_env:
	for (int i = 0; env[i]; i++)
		free(env[i]);
	return ret;
}

/* 0 when the plugin was exec'd, else the exec's -errno (the child has exited). */
static int exec_status(struct plugin_run *run)
{
	int err = 0;
	ssize_t n;

	if (run->exec_status_fd < 0)
		return 0;
	do
		n = read(run->exec_status_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close_fd(&run->exec_status_fd);
	return n == (ssize_t)sizeof(err) ? -err : 0;
}

static int pidfd_for(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Feeds stdin, collects stdout and stderr until both close and the plugin
 * has exited. 0 when it ran to its end (any exit status), -ETIMEDOUT when it
 * was killed at the deadline, -EMSGSIZE when its answer was too big.
 */
static int plugin_io(struct plugin_run *run, pid_t pid, int in_fd, int out_fd, int err_fd)
{
	long long deadline = run->deadline_ms;
	size_t in_len = strlen(run->input), in_off = run->in_off;
	int pidfd = pidfd_for(pid);
	bool exited = false;
	int ret = 0;

	while (in_fd >= 0 || out_fd >= 0 || err_fd >= 0 || !exited) {
		struct pollfd fds[4];
		long long left = deadline - now_ms();
		nfds_t n = 0;
		int wait_ms;

		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		wait_ms = (int)left;
		if (in_fd >= 0)
			fds[n++] = (struct pollfd){ .fd = in_fd, .events = POLLOUT };
		if (out_fd >= 0)
			fds[n++] = (struct pollfd){ .fd = out_fd, .events = POLLIN };
		if (err_fd >= 0)
			fds[n++] = (struct pollfd){ .fd = err_fd, .events = POLLIN };
		if (!exited && pidfd >= 0)
			fds[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		else if (!exited && wait_ms > 10)
			wait_ms = 10; /* no pidfd: look for the exit now and then */
		if (poll(fds, n, wait_ms) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (in_fd >= 0) {
			ssize_t w = in_off < in_len
					    ? write(in_fd, run->input + in_off, in_len - in_off)
					    : 0;

			if (w > 0)
				in_off += (size_t)w;
			/* Done, or the plugin closed its stdin (EPIPE): it has what it wanted. */
			if (in_off == in_len || (w < 0 && errno != EAGAIN && errno != EINTR))
				close_fd(&in_fd);
		}
		if ((out_fd >= 0 && drain(&out_fd, &run->out)) ||
		    (err_fd >= 0 && drain(&err_fd, &run->err))) {
			ret = -ENOMEM;
			break;
		}
		if (run->out.overflow) {
			ret = -EMSGSIZE;
			break;
		}
		if (!exited) {
			pid_t waited = waitpid(pid, &run->status, WNOHANG);

			/* ECHILD: SIGCHLD ignored, so the kernel reaped it and its status is gone. */
			if (waited < 0 && errno == ECHILD)
				run->status = 255 << 8;
			exited = waited == pid || (waited < 0 && errno == ECHILD);
		}
	}

	close_fd(&in_fd);
	close_fd(&out_fd);
	close_fd(&err_fd);
	if (pidfd >= 0)
		close(pidfd);
	if (!exited) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &run->status, 0) < 0 && errno == EINTR)
			;
	} else if (ret) {
		kill(-pid, SIGKILL); /* whatever it left behind in its group */
	}
	return ret;
}

int plugin_start(struct plugin_run *run)
{
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	ssize_t written;
	int ret;

	run->out = (struct bounded_buf){ .max = IPAM_STDOUT_MAX };
	run->err = (struct bounded_buf){ .max = IPAM_STDERR_MAX };
	run->status = 0;
	run->in_fd = run->out_fd = run->err_fd = run->exec_status_fd = -1;
	run->in_off = 0;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		ret = -errno;
		goto err_close;
	}
	run->deadline_ms = now_ms() + ipam_timeout_ms;
	ret = spawn_plugin(run, in[0], out[1], err[1], &run->pid);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	if (ret)
		goto err_close;
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	run->in_fd = in[1];
	run->out_fd = out[0];
	run->err_fd = err[0];

	/* A plugin that exits without reading its stdin must not kill velo with SIGPIPE. */
	sigaction(SIGPIPE, &ignore, &run->old_pipe);
	written = write(run->in_fd, run->input, strlen(run->input));
	if (written > 0)
		run->in_off = (size_t)written;
	return 0;

err_close:
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&err[i]);
	}
	return ret;
}

int plugin_wait(struct plugin_run *run)
{
	int ret;

	ret = plugin_io(run, run->pid, run->in_fd, run->out_fd, run->err_fd);
	sigaction(SIGPIPE, &run->old_pipe, NULL);
	run->in_fd = run->out_fd = run->err_fd = -1; /* closed by plugin_io */
	if (!ret)
		ret = exec_status(run);
	close_fd(&run->exec_status_fd);

	if (run->err.len) {
		/* One log line: inner newlines become spaces, trailing ones go. */
		while (run->err.len && strchr(" \t\r\n", run->err.data[run->err.len - 1]))
			run->err.data[--run->err.len] = '\0';
		for (char *c = run->err.data; *c; c++)
			if (*c == '\n')
				*c = ' ';
	}
	if (run->err.len) {
		log_msg(ret || !WIFEXITED(run->status) || WEXITSTATUS(run->status) ? VELO_LOG_WARN
										   : VELO_LOG_DEBUG,
			"IPAM plugin %s %s stderr: %s", run->name, run->command, run->err.data);
	}
	return ret;
}

int plugin_run(struct plugin_run *run)
{
	int ret = plugin_start(run);

	return ret ? ret : plugin_wait(run);
}

int fail_run(const struct plugin_run *run, int ret)
{
	if (ret == -ETIMEDOUT)
		return cni_fail(ret, CNI_ERR_TRY_AGAIN, "IPAM plugin timed out: %s %s after %u ms",
				run->name, run->command, ipam_timeout_ms);
	if (ret == -EMSGSIZE)
		return cni_fail(ret, VELO_ERR_IPAM,
				"IPAM plugin %s: %s answer larger than %d bytes", run->name,
				run->command, IPAM_STDOUT_MAX);
	return cni_fail(ret, VELO_ERR_IPAM, "IPAM plugin %s: cannot run %s: %s", run->name,
			run->path, strerror(-ret));
}

bool run_succeeded(const struct plugin_run *run)
{
	return WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0;
}

void plugin_error_read(const struct plugin_run *run, struct plugin_error *error)
{
	cJSON *json = run->out.data ? cJSON_Parse(run->out.data) : NULL;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(json, "code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(json, "msg");
	const cJSON *details = cJSON_GetObjectItemCaseSensitive(json, "details");

	memset(error, 0, sizeof(*error));
	if (cJSON_IsNumber(code) && cJSON_IsString(msg)) {
		error->code = code->valueint;
		snprintf(error->msg, sizeof(error->msg), "%s", msg->valuestring);
		if (cJSON_IsString(details))
			snprintf(error->details, sizeof(error->details), "%s",
				 details->valuestring);
	} else {
		const char *said = run->err.len ? run->err.data : "no error message";

		if (WIFEXITED(run->status))
			snprintf(error->msg, sizeof(error->msg), "exited with status %d: %s",
				 WEXITSTATUS(run->status), said);
		else
			snprintf(error->msg, sizeof(error->msg), "killed by signal %d: %s",
				 WTERMSIG(run->status), said);
	}
	cJSON_Delete(json);
}

int fail_with_plugin_error(const struct plugin_run *run, int cni_code)
{
	struct plugin_error error;

	plugin_error_read(run, &error);
	if (error.details[0])
		cni_error_detail("%s", error.details);
	/* STATUS: a plugin that is only partly available says so (51); keep that. */
	if (cni_code == CNI_ERR_NOT_AVAILABLE && error.code == CNI_ERR_NOT_AVAILABLE_LIMITED)
		cni_code = CNI_ERR_NOT_AVAILABLE_LIMITED;
	/* -EREMOTEIO: the plugin ran and answered with an error (it holds nothing new). */
	if (error.code)
		return cni_fail(-EREMOTEIO, cni_code, "IPAM plugin %s: %s (code %d)", run->name,
				error.msg, error.code);
	return cni_fail(-EIO, cni_code, "IPAM plugin %s: %s", run->name, error.msg);
}
