// SPDX-License-Identifier: Apache-2.0
/*
 * IPAM through the CNI exec protocol: the plugin runs with a clean
 * environment, the config on stdin and a deadline; its stdout (bounded) is
 * the answer, its stderr goes to the log. Before the first call velo asks it
 * which versions it speaks (VERSION) and caches the answer per binary, so a
 * 1.1.0 config reaches a plugin that only knows 1.0.0 as 1.0.0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "cni/ipam.h"
#include "cni/ipam_internal.h"
#include "base/log.h"

#define IPAM_STDOUT_MAX (1024 * 1024)
#define IPAM_STDERR_MAX (64 * 1024)
#define VERSION_CACHE_MAX (64 * 1024)
#define VERSION_CACHE_DIR "ipam-versions"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static unsigned ipam_timeout_ms = IPAM_TIMEOUT_MS_DEFAULT;

void ipam_set_timeout_ms(unsigned timeout_ms)
{
	ipam_timeout_ms = timeout_ms ? timeout_ms : IPAM_TIMEOUT_MS_DEFAULT;
}

/* ---- finding the plugin ---- */

int ipam_find_plugin(const char *type, const char *cni_path, char *buf, unsigned len)
{
	const char *dir, *end;

	if (!type || !*type || strchr(type, '/') || !strcmp(type, ".") || !strcmp(type, ".."))
		return -EINVAL;
	if (!cni_path)
		return -ENOENT;
	for (dir = cni_path; *dir; dir = *end ? end + 1 : end) {
		struct stat st;
		int n;

		end = strchrnul(dir, ':');
		if (end == dir)
			continue;
		n = snprintf(buf, len, "%.*s/%s", (int)(end - dir), dir, type);
		if (n < 0 || (unsigned)n >= len)
			continue;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
	}
	if (len)
		buf[0] = '\0';
	return -ENOENT;
}

/* ---- running it ---- */

struct bounded_buf {
	char *data;
	size_t len;
	size_t max;
	bool overflow;
};

struct plugin_run {
	const char *path;
	const char *name;
	const char *command;
	const struct ipam_call *call;
	const char *input;
	/* out: */
	struct bounded_buf out;
	struct bounded_buf err;
	int status; /* from waitpid */
	/* between plugin_start and plugin_wait: */
	pid_t pid;
	int exec_status_fd; /* the child's exec errno, or EOF once it exec'd */
	int in_fd, out_fd, err_fd;
	size_t in_off; /* stdin bytes written so far */
	long long deadline_ms;
	struct sigaction old_pipe;
};

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

static void run_free(struct plugin_run *run)
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

/*
 * Starts the plugin and hands it as much of its stdin as the pipe takes, so
 * the caller can do other work while it runs. Every successful start must be
 * followed by plugin_wait. Records nothing.
 */
static int plugin_start(struct plugin_run *run)
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

/* Feeds the rest of stdin, collects the answer and reaps the plugin. */
static int plugin_wait(struct plugin_run *run)
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

/* Runs the plugin once. Records nothing: the caller knows what a failure means. */
static int plugin_run(struct plugin_run *run)
{
	int ret = plugin_start(run);

	return ret ? ret : plugin_wait(run);
}

static bool run_succeeded(const struct plugin_run *run)
{
	return WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0;
}

/* What a failed run said: its error JSON, else its exit and stderr. */
struct plugin_error {
	int code; /* the plugin's CNI code, 0 when it gave none */
	char msg[320];
	char details[512];
};

static void plugin_error_read(const struct plugin_run *run, struct plugin_error *error)
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

static int fail_with_plugin_error(const struct plugin_run *run, int cni_code)
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

/* Records why a run did not finish (timeout, oversize answer, spawn failure). */
static int fail_run(const struct plugin_run *run, int ret)
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

/* ---- VERSION, cached ---- */

struct binary_key {
	char path[PATH_MAX]; /* absolute, symlinks resolved */
	long long size;
	long long mtime_sec;
	long mtime_nsec;
};

static int binary_key_get(const char *path, struct binary_key *key)
{
	struct stat st;

	if (!realpath(path, key->path) || stat(key->path, &st))
		return -errno;
	key->size = (long long)st.st_size;
	key->mtime_sec = (long long)st.st_mtim.tv_sec;
	key->mtime_nsec = st.st_mtim.tv_nsec;
	return 0;
}

#define VERSION_BIT(v) (1U << (v))

/* supportedVersions as a bit per known version; unknown strings are skipped. */
static int versions_read(const cJSON *json, unsigned *mask)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(json, "supportedVersions");
	const cJSON *entry;

	*mask = 0;
	if (!cJSON_IsArray(list))
		return -EINVAL;
	cJSON_ArrayForEach (entry, list) {
		if (!cJSON_IsString(entry))
			return -EINVAL;
		*mask |= VERSION_BIT(cni_version_parse(entry->valuestring)) &
			 ~VERSION_BIT(CNI_V_UNKNOWN);
	}
	return 0;
}

static int cache_path(const struct ipam_call *call, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" VERSION_CACHE_DIR "/%s.json", call->config->paths.run_dir,
			 name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int cache_read(const char *path, const struct binary_key *key, unsigned *mask)
{
	char text[VERSION_CACHE_MAX];
	const cJSON *item;
	cJSON *json;
	ssize_t n;
	int fd, ret = -ESTALE;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	text[n] = '\0';
	json = cJSON_Parse(text);
	if (!json)
		return -EINVAL;
	item = cJSON_GetObjectItemCaseSensitive(json, "path");
	if (cJSON_IsString(item) && !strcmp(item->valuestring, key->path) &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(json, "size")) ==
		    (double)key->size &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(json, "mtimeSec")) ==
		    (double)key->mtime_sec &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(json, "mtimeNsec")) ==
		    (double)key->mtime_nsec)
		ret = versions_read(json, mask);
	cJSON_Delete(json);
	return ret;
}

static int mkdir_one(const char *path)
{
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

/* Temp file and rename: a reader sees the old cache or the new one. */
static int cache_write(const struct ipam_call *call, const char *path, const struct binary_key *key,
		       const cJSON *supported)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 8];
	cJSON *json = cJSON_CreateObject();
	char *text = NULL;
	int fd = -1, ret = -ENOMEM;
	size_t len;

	ret = -ENAMETOOLONG;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" VERSION_CACHE_DIR,
			     call->config->paths.run_dir) >= sizeof(dir) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
		goto out;
	ret = mkdir_one(call->config->paths.run_dir);
	if (!ret)
		ret = mkdir_one(dir);
	if (ret)
		goto out;
	ret = -ENOMEM;
	if (!json || !cJSON_AddStringToObject(json, "path", key->path) ||
	    !cJSON_AddNumberToObject(json, "size", (double)key->size) ||
	    !cJSON_AddNumberToObject(json, "mtimeSec", (double)key->mtime_sec) ||
	    !cJSON_AddNumberToObject(json, "mtimeNsec", (double)key->mtime_nsec) ||
	    !cJSON_AddItemToObject(json, "supportedVersions", cJSON_Duplicate(supported, true)))
		goto out;
	text = cJSON_PrintUnformatted(json);
	if (!text)
		goto out;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	len = strlen(text);
	if (fchmod(fd, 0644) || write(fd, text, len) != (ssize_t)len || rename(tmp, path)) {
		ret = errno ? -errno : -EIO;
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	cJSON_free(text);
	cJSON_Delete(json);
	return ret;
}

/*
 * The versions the plugin speaks. A plugin that fails VERSION gets the
 * config's version (the real call then reports what is wrong), except one
 * that hangs: waiting for it twice would only double the wait.
 */
static int plugin_versions(const struct ipam_call *call, const char *path, const char *name,
			   unsigned *mask)
{
	struct plugin_run run = { .path = path, .name = name, .command = "VERSION", .call = call };
	char cache[PATH_MAX + 64], input[64];
	struct binary_key key;
	cJSON *json = NULL;
	int ret, cached;

	ret = binary_key_get(path, &key);
	cached = ret ? ret : cache_path(call, name, cache, sizeof(cache));
	if (!cached && !cache_read(cache, &key, mask)) {
		pr_debug("IPAM plugin %s: versions from %s", name, cache);
		return 0;
	}

	snprintf(input, sizeof(input), "{\"cniVersion\":\"%s\"}",
		 cni_version_str(call->config->version));
	run.input = input;
	ret = plugin_run(&run);
	if (ret == -ETIMEDOUT)
		goto out_fail;
	if (!ret && run_succeeded(&run))
		json = cJSON_Parse(run.out.data ? run.out.data : "");
	if (ret || !json || versions_read(json, mask)) {
		pr_warn("IPAM plugin %s: no usable VERSION answer; using cniVersion %s", name,
			cni_version_str(call->config->version));
		*mask = VERSION_BIT(call->config->version);
		ret = 0;
		goto out;
	}
	if (!cached)
		cached = cache_write(call, cache, &key,
				     cJSON_GetObjectItemCaseSensitive(json, "supportedVersions"));
	if (cached)
		pr_warn("IPAM plugin %s: cannot cache its versions: %s", name, strerror(-cached));
out:
	cJSON_Delete(json);
	run_free(&run);
	return ret;
out_fail:
	ret = fail_run(&run, ret);
	run_free(&run);
	return ret;
}

/* ---- the calls ---- */

struct ipam_plugin {
	char path[PATH_MAX];
	const char *name;
	enum cni_version version; /* negotiated */
};

static int plugin_locate(const struct ipam_call *call, struct ipam_plugin *plugin, int missing_code)
{
	const char *type = call->config->ipam_type;
	int ret;

	plugin->name = type;
	ret = ipam_find_plugin(type, call->cni_path, plugin->path, sizeof(plugin->path));
	if (ret == -EINVAL)
		return cni_fail(ret, CNI_ERR_INVALID_CONFIG,
				"ipam.type: must be a plugin name, not a path: \"%s\"", type);
	if (ret)
		return cni_fail(ret, missing_code, "IPAM plugin %s not found in CNI_PATH \"%s\"",
				type, call->cni_path ? call->cni_path : "");
	return 0;
}

/* The newest version both speak, never newer than the config's. */
static int plugin_negotiate(const struct ipam_call *call, struct ipam_plugin *plugin)
{
	enum cni_version version;
	unsigned mask = 0;
	int ret;

	ret = plugin_versions(call, plugin->path, plugin->name, &mask);
	if (ret)
		return ret;
	for (version = call->config->version; version >= CNI_V_OLDEST_ACCEPTED; version--) {
		if (mask & VERSION_BIT(version)) {
			plugin->version = version;
			if (version != call->config->version)
				pr_debug("IPAM plugin %s: speaking %s (config has %s)",
					 plugin->name, cni_version_str(version),
					 cni_version_str(call->config->version));
			return 0;
		}
	}
	return cni_fail(-ENOTSUP, CNI_ERR_INCOMPATIBLE_VERSION,
			"IPAM plugin %s speaks no CNI version from %s to %s", plugin->name,
			cni_version_str(CNI_V_OLDEST_ACCEPTED),
			cni_version_str(call->config->version));
}

static int plugin_prepare(const struct ipam_call *call, struct ipam_plugin *plugin,
			  int missing_code)
{
	int ret;

	if (!call->config->ipam_type[0])
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "ipam.type: required");
	ret = plugin_locate(call, plugin, missing_code);
	if (!ret)
		ret = plugin_negotiate(call, plugin);
	return ret;
}

/* The config as velo got it, but in the version the plugin speaks; root stays untouched. */
static char *plugin_input(const struct ipam_call *call, enum cni_version version)
{
	cJSON *copy = cJSON_Duplicate(call->config->root, true);
	cJSON *version_item = cJSON_CreateString(cni_version_str(version));
	char *text = NULL;

	if (!copy || !version_item)
		goto out;
	if (!(cJSON_HasObjectItem(copy, "cniVersion")
		      ? cJSON_ReplaceItemInObjectCaseSensitive(copy, "cniVersion", version_item)
		      : cJSON_AddItemToObject(copy, "cniVersion", version_item)))
		goto out;
	version_item = NULL;
	text = cJSON_PrintUnformatted(copy);
out:
	cJSON_Delete(version_item);
	cJSON_Delete(copy);
	if (!text)
		errno = ENOMEM;
	return text;
}

/* Starts command; 0 when it runs (plugin_call_wait must follow), or the recorded failure. */
static int plugin_call_start(const struct ipam_call *call, const struct ipam_plugin *plugin,
			     const char *command, struct plugin_run *run)
{
	char *input = plugin_input(call, plugin->version);
	int ret;

	*run = (struct plugin_run){
		.path = plugin->path,
		.name = plugin->name,
		.command = command,
		.call = call,
	};
	if (!input)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	run->input = input;
	ret = plugin_start(run);
	if (ret) {
		cJSON_free(input);
		run->input = NULL;
		return fail_run(run, ret);
	}
	return 0;
}

/* 0 with run->out holding the answer, or the recorded failure. */
static int plugin_call_wait(struct plugin_run *run)
{
	int ret = plugin_wait(run);

	cJSON_free((char *)run->input);
	run->input = NULL;
	return ret ? fail_run(run, ret) : 0;
}

static int plugin_call(const struct ipam_call *call, const struct ipam_plugin *plugin,
		       const char *command, struct plugin_run *run)
{
	int ret = plugin_call_start(call, plugin, command, run);

	return ret ? ret : plugin_call_wait(run);
}

struct ipam_pending {
	struct ipam_plugin plugin;
	struct plugin_run run;
};

int ipam_add_start(const struct ipam_call *call, struct ipam_pending **pending)
{
	struct ipam_pending *op = calloc(1, sizeof(*op));
	int ret;

	*pending = NULL;
	if (!op)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	ret = plugin_prepare(call, &op->plugin, VELO_ERR_IPAM);
	if (!ret)
		ret = plugin_call_start(call, &op->plugin, "ADD", &op->run);
	if (ret) {
		run_free(&op->run);
		free(op);
		return ret;
	}
	*pending = op;
	return 0;
}

int ipam_add_finish(struct ipam_pending *pending, struct velo_result *result)
{
	struct plugin_run *run = &pending->run;
	cJSON *json;
	int ret;

	memset(result, 0, sizeof(*result));
	ret = plugin_call_wait(run);
	if (ret)
		goto out;
	if (!run_succeeded(run)) {
		ret = fail_with_plugin_error(run, VELO_ERR_IPAM);
		goto out;
	}
	json = cJSON_Parse(run->out.data ? run->out.data : "");
	if (!json) {
		ret = cni_fail(-EINVAL, VELO_ERR_IPAM, "IPAM plugin %s: answer is not JSON",
			       pending->plugin.name);
		goto out;
	}
	ret = velo_result_parse(json, result);
	cJSON_Delete(json);
	if (!ret)
		pr_debug("IPAM plugin %s: ADD gave %u address(es)", pending->plugin.name,
			 result->n_ips);
out:
	run_free(run);
	free(pending);
	return ret;
}

int ipam_add(const struct ipam_call *call, struct velo_result *result)
{
	struct ipam_pending *pending;
	int ret;

	memset(result, 0, sizeof(*result));
	ret = ipam_add_start(call, &pending);
	return ret ? ret : ipam_add_finish(pending, result);
}

static bool error_means_gone(const struct plugin_error *error)
{
	return error->code == CNI_ERR_UNKNOWN_CONTAINER || strcasestr(error->msg, "not found");
}

int ipam_del(const struct ipam_call *call)
{
	struct plugin_error error;
	struct ipam_plugin plugin = { 0 };
	struct plugin_run run;
	int ret;

	ret = plugin_prepare(call, &plugin, VELO_ERR_IPAM);
	if (ret)
		return ret;
	ret = plugin_call(call, &plugin, "DEL", &run);
	if (ret || run_succeeded(&run))
		goto out;
	plugin_error_read(&run, &error);
	if (error_means_gone(&error)) {
		pr_debug("IPAM plugin %s: DEL: %s (already released)", plugin.name, error.msg);
		goto out;
	}
	ret = fail_with_plugin_error(&run, VELO_ERR_IPAM);
out:
	run_free(&run);
	return ret;
}

int ipam_check(const struct ipam_call *call)
{
	struct ipam_plugin plugin = { 0 };
	struct plugin_run run;
	int ret;

	ret = plugin_prepare(call, &plugin, VELO_ERR_IPAM);
	if (ret)
		return ret;
	if (plugin.version < CNI_V_0_4_0) {
		pr_debug("IPAM plugin %s speaks %s, older than CHECK: skipped", plugin.name,
			 cni_version_str(plugin.version));
		return 0;
	}
	ret = plugin_call(call, &plugin, "CHECK", &run);
	if (!ret && !run_succeeded(&run))
		ret = fail_with_plugin_error(&run, VELO_ERR_IPAM);
	run_free(&run);
	return ret;
}

int ipam_status(const struct ipam_call *call)
{
	struct ipam_plugin plugin = { 0 };
	struct plugin_run run;
	int ret;

	ret = plugin_prepare(call, &plugin, CNI_ERR_NOT_AVAILABLE);
	if (ret)
		return ret;
	if (plugin.version < CNI_V_1_1_0) {
		pr_debug("IPAM plugin %s speaks %s, older than STATUS: counted as ready",
			 plugin.name, cni_version_str(plugin.version));
		return 0;
	}
	ret = plugin_call(call, &plugin, "STATUS", &run);
	if (!ret && !run_succeeded(&run))
		ret = fail_with_plugin_error(&run, CNI_ERR_NOT_AVAILABLE);
	run_free(&run);
	return ret;
}
