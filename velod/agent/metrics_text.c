// SPDX-License-Identifier: Apache-2.0
/* Building the Prometheus text (metrics_text.h): growing lines, escaped label values. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "metrics_text.h"

void metrics_put(struct metrics_text *text, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (text->failed)
		return;
	for (;;) {
		size_t room = text->cap - text->len;

		va_start(ap, fmt);
		n = vsnprintf(text->buf ? text->buf + text->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			text->failed = true;
			return;
		}
		if ((size_t)n < room) {
			text->len += (size_t)n;
			return;
		}
		size_t cap = text->cap ? text->cap * 2 : 16384;
		char *grown;

		while (cap - text->len <= (size_t)n)
			cap *= 2;
		grown = realloc(text->buf, cap);
		if (!grown) {
			text->failed = true;
			return;
		}
		text->buf = grown;
		text->cap = cap;
	}
}

/* A label value with \, " and newline escaped (the format's rule). */
const char *metrics_label(const char *value, char *buf, size_t len)
{
	size_t used = 0;

	for (; *value && used + 2 < len; value++) {
		if (*value == '\\' || *value == '"' || *value == '\n') {
			buf[used++] = '\\';
			buf[used++] = *value == '\n' ? 'n' : *value;
		} else {
			buf[used++] = *value;
		}
	}
	buf[used] = '\0';
	return buf;
}

void metrics_header(struct metrics_text *text, const char *name, const char *type, const char *help)
{
	metrics_put(text, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_family_value(struct metrics_text *text, const char *name, const char *type,
			  const char *help, unsigned long long value)
{
	metrics_header(text, name, type, help);
	metrics_put(text, "%s %llu\n", name, value);
}

char *metrics_text_end(struct metrics_text *text)
{
	if (text->failed || !text->buf) {
		free(text->buf);
		text->buf = NULL;
		errno = ENOMEM;
		return NULL;
	}
	return text->buf;
}
