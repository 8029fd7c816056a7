/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A /metrics text being built (metrics_text.c), by velod's own metrics
 * (metrics.c, metrics_endpoints.c): it grows as lines are put; a failed
 * allocation marks it failed, and the scrape fails as a whole.
 */
#ifndef VELOD_AGENT_METRICS_TEXT_H
#define VELOD_AGENT_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct metrics_text {
	char *buf;
	size_t len, cap;
	bool failed;
};

/* Appends a printf-formatted line (or part of one). */
void __attribute__((format(printf, 2, 3)))
metrics_put(struct metrics_text *text, const char *fmt, ...);
/* value with \, " and newline escaped (the format's rule), into buf; returns buf. */
const char *metrics_label(const char *value, char *buf, size_t len);
/* A family's # HELP and # TYPE lines. */
void metrics_header(struct metrics_text *text, const char *name, const char *type,
		    const char *help);
/* A family of one unlabelled sample: its header and its value. */
void metrics_family_value(struct metrics_text *text, const char *name, const char *type,
			  const char *help, unsigned long long value);
/* The text built, the caller's to free; NULL with errno ENOMEM when a put failed or none was
 * made (what was built is freed). */
char *metrics_text_end(struct metrics_text *text);

#endif
