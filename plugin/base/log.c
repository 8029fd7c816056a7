// SPDX-License-Identifier: Apache-2.0
/*
 * logfmt lines, each built whole in a buffer and written with one write() on
 * an O_APPEND descriptor: concurrent velo processes never tear a line.
 * Logging never fails its caller: every error here is swallowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/lock.h"
#include "base/log.h"

#define LOG_LINE_MAX 4096
#define LOG_TRUNCATED "..."

static struct {
	int fd;
	bool in_log; /* guards against a log call from inside logging */
	enum velo_log_level level;
	unsigned long max_bytes;
	char path[PATH_MAX];
	char command[16];
	char container_id[256];
	char ifname[16];
	char pod[512];
} logger = { .fd = -1, .level = VELO_LOG_INFO };

static const char *const level_names[] = {
	[VELO_LOG_ERROR] = "error",
	[VELO_LOG_WARN] = "warn",
	[VELO_LOG_INFO] = "info",
	[VELO_LOG_DEBUG] = "debug",
};

struct line {
	char text[LOG_LINE_MAX];
	size_t len;
	size_t cap; /* room left for "...\"\n" after it */
	bool truncated;
};

static void line_put(struct line *line, const char *text, size_t len)
{
	if (line->truncated || line->len + len > line->cap) {
		line->truncated = true;
		return;
	}
	memcpy(line->text + line->len, text, len);
	line->len += len;
}

static bool needs_quotes(const char *value)
{
	if (!*value)
		return true;
	for (const unsigned char *c = (const unsigned char *)value; *c; c++)
		if (*c <= ' ' || *c == '"' || *c == '=' || *c == '\\' || *c == 0x7f)
			return true;
	return false;
}

/* Escapes value into line; each escape sequence goes in whole or not at all. */
static void line_put_escaped(struct line *line, const char *value)
{
	char esc[5];

	for (const unsigned char *c = (const unsigned char *)value; *c && !line->truncated; c++) {
		switch (*c) {
		case '"':
			line_put(line, "\\\"", 2);
			break;
		case '\\':
			line_put(line, "\\\\", 2);
			break;
		case '\n':
			line_put(line, "\\n", 2);
			break;
		case '\r':
			line_put(line, "\\r", 2);
			break;
		case '\t':
			line_put(line, "\\t", 2);
			break;
		default:
			if (*c < ' ' || *c == 0x7f) {
				snprintf(esc, sizeof(esc), "\\x%02x", *c);
				line_put(line, esc, 4);
			} else {
				line_put(line, (const char *)c, 1);
			}
		}
	}
}

/* Appends " key=value" (quoted when needed), or nothing if it doesn't fit whole. */
static void line_put_field(struct line *line, const char *key, const char *value)
{
	size_t start = line->len;

	if (!value || !*value)
		return;
	if (start)
		line_put(line, " ", 1);
	line_put(line, key, strlen(key));
	line_put(line, "=", 1);
	if (needs_quotes(value)) {
		line_put(line, "\"", 1);
		line_put_escaped(line, value);
		line_put(line, "\"", 1);
	} else {
		line_put(line, value, strlen(value));
	}
	if (line->truncated) {
		line->len = start;
		line->truncated = false;
	}
}

/* The days-to-civil algorithm: the proleptic Gregorian calendar in 400-year eras. */
void log_utc_fields(int64_t secs, int *year, int *month, int *day, int *second_of_day)
{
	int64_t days = secs / 86400, era, doe, yoe, doy, mp;
	int sod = (int)(secs % 86400);

	if (sod < 0) {
		sod += 86400;
		days--;
	}
	days += 719468; /* from 0000-03-01 to 1970-01-01 */
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*day = (int)(doy - (153 * mp + 2) / 5 + 1);
	*month = (int)(mp < 10 ? mp + 3 : mp - 9);
	*year = (int)(yoe + era * 400 + (*month <= 2));
	*second_of_day = sod;
}

static void line_put_timestamp(struct line *line)
{
	struct timespec now;
	int year, month, day, sod;
	char ts[64];

	clock_gettime(CLOCK_REALTIME, &now);
	log_utc_fields(now.tv_sec, &year, &month, &day, &sod);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", year, month, day,
		 sod / 3600, sod / 60 % 60, sod % 60, now.tv_nsec / 1000000);
	line_put_field(line, "ts", ts);
}

static void build_line(struct line *line, enum velo_log_level level, const char *msg)
{
	char pid[24];

	line->len = 0;
	line->truncated = false;
	line->cap = sizeof(line->text) - strlen(LOG_TRUNCATED "\"\n");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	line_put_timestamp(line);
	line_put_field(line, "level", level_names[level]);
	line_put_field(line, "pid", pid);
	line_put_field(line, "cmd", logger.command);
	line_put_field(line, "container", logger.container_id);
	line_put_field(line, "ifname", logger.ifname);
	line_put_field(line, "pod", logger.pod);

	/* msg is always quoted and comes last, so a long one is cut rather than dropped. */
	line_put(line, " msg=\"", 6);
	line_put_escaped(line, msg);
	if (line->truncated) {
		memcpy(line->text + line->len, LOG_TRUNCATED, strlen(LOG_TRUNCATED));
		line->len += strlen(LOG_TRUNCATED);
	}
	memcpy(line->text + line->len, "\"\n", 2);
	line->len += 2;
}

static int open_log_file(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
}

/*
 * Moves a full log to <file>.1 under <file>.lock. Busy lock: skip, someone
 * else is rotating. Under the lock the file at path may already be a fresh
 * one (another process rotated): then only reopen it.
 */
static void rotate_if_full(void)
{
	char lock_path[PATH_MAX + 8], old_path[PATH_MAX + 8];
	struct stat held, current;
	int lock_fd, fd;

	if (!logger.max_bytes || fstat(logger.fd, &held) ||
	    (unsigned long long)held.st_size < logger.max_bytes)
		return;
	snprintf(lock_path, sizeof(lock_path), "%s.lock", logger.path);
	lock_fd = lock_try(lock_path);
	if (lock_fd < 0)
		return;
	if (stat(logger.path, &current) == 0 && current.st_dev == held.st_dev &&
	    current.st_ino == held.st_ino &&
	    (unsigned long long)current.st_size >= logger.max_bytes) {
		snprintf(old_path, sizeof(old_path), "%s.1", logger.path);
		if (rename(logger.path, old_path)) {
			lock_release(lock_fd);
			return;
		}
	}
	fd = open_log_file(logger.path);
	if (fd >= 0) {
		close(logger.fd);
		logger.fd = fd;
	}
	lock_release(lock_fd);
}

void log_open(const char *path, enum velo_log_level level, unsigned long max_bytes)
{
	char dir[PATH_MAX];
	const char *slash;
	int saved_errno = errno;

	log_close();
	logger.level = level;
	logger.max_bytes = max_bytes;
	if (!path || !*path || strlen(path) >= sizeof(logger.path))
		goto out;
	snprintf(logger.path, sizeof(logger.path), "%s", path);
	/* The directory exists but on a node's first call: make it only then. */
	logger.fd = open_log_file(path);
	slash = strrchr(path, '/');
	if (logger.fd < 0 && errno == ENOENT && slash && slash != path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		lock_mkdirs(dir);
		logger.fd = open_log_file(path);
	}
out:
	errno = saved_errno;
}

void log_close(void)
{
	if (logger.fd >= 0)
		close(logger.fd);
	logger.fd = -1;
	logger.path[0] = '\0';
}

void log_set_request(const char *command, const char *container_id, const char *ifname)
{
	snprintf(logger.command, sizeof(logger.command), "%s", command ? command : "");
	snprintf(logger.container_id, sizeof(logger.container_id), "%s",
		 container_id ? container_id : "");
	snprintf(logger.ifname, sizeof(logger.ifname), "%s", ifname ? ifname : "");
}

void log_set_pod(const char *pod_namespace, const char *pod_name)
{
	bool has_ns = pod_namespace && *pod_namespace, has_name = pod_name && *pod_name;

	if (!has_ns && !has_name)
		logger.pod[0] = '\0';
	else
		snprintf(logger.pod, sizeof(logger.pod), "%s/%s", has_ns ? pod_namespace : "",
			 has_name ? pod_name : "");
}

void log_msg(enum velo_log_level level, const char *fmt, ...)
{
	static struct line line; /* too big for a small stack; velo is single-threaded */
	char msg[LOG_LINE_MAX];
	int saved_errno = errno;
	va_list ap;

	if (level > logger.level || level < VELO_LOG_ERROR || logger.in_log)
		return;
	logger.in_log = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	build_line(&line, level, msg);

	if (logger.fd >= 0) {
		rotate_if_full();
		if (write(logger.fd, line.text, line.len) < 0) {
			/* Nothing to do: the caller's work matters more than its log. */
		}
	}
	if (level <= VELO_LOG_WARN || logger.fd < 0) {
		if (write(STDERR_FILENO, line.text, line.len) < 0) {
			/* stderr closed: nowhere left to say so. */
		}
	}
	logger.in_log = false;
	errno = saved_errno;
}
