/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo's log: one write() per line on an O_APPEND descriptor so concurrent
 * invocations never tear or interleave lines; rotated to <file>.1 under a
 * lock when it grows past its cap. Every line carries the request's fields.
 * Warnings and errors also go to stderr. stdout is never used.
 */
#ifndef VELO_BASE_LOG_H
#define VELO_BASE_LOG_H

#include <stdint.h>

enum velo_log_level {
	VELO_LOG_ERROR = 0,
	VELO_LOG_WARN,
	VELO_LOG_INFO,
	VELO_LOG_DEBUG,
};

/* Opens path (creating its directory); a failure leaves logging on stderr only. */
void log_open(const char *path, enum velo_log_level level, unsigned long max_bytes);
void log_close(void);
/* Request fields carried on every line; NULL or "" leaves a field out. */
void log_set_request(const char *command, const char *container_id, const char *ifname);
void log_set_pod(const char *pod_namespace, const char *pod_name);

/*
 * The UTC date and second of the day of a Unix time, for the log's
 * timestamps. Not gmtime_r(): glibc's loads /etc/localtime on the first
 * call, which every ADD would pay for.
 */
void log_utc_fields(int64_t secs, int *year, int *month, int *day, int *second_of_day);
void log_msg(enum velo_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(...) log_msg(VELO_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) log_msg(VELO_LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(VELO_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(VELO_LOG_DEBUG, __VA_ARGS__)

#endif
