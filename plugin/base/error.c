// SPDX-License-Identifier: Apache-2.0
/*
 * The request's CNI error: one per process, since one velo process serves
 * one request. The first message wins because the innermost caller, which
 * records first, knows the cause best; outer callers only add context.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/error.h"
#include "base/log.h"

#define DETAIL_SEP "; "
#define TRUNCATED "..."

static struct cni_error request_error;
static bool details_full; /* a detail was cut short: later ones are dropped */

/* Cuts a UTF-8 sequence that truncation split, so the JSON stays valid text. */
static void trim_partial_utf8(char *text, size_t len)
{
	size_t start = len;
	size_t need;
	unsigned char lead;

	while (start > 0 && ((unsigned char)text[start - 1] & 0xc0) == 0x80)
		start--;
	if (start == 0)
		return;
	lead = (unsigned char)text[start - 1];
	if (lead < 0xc0)
		return;
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	if (len - (start - 1) < need)
		text[start - 1] = '\0';
}

/*
 * n is what vsnprintf returned for buf: on truncation ends the text with
 * "..." at a character boundary. Returns whether the text fit.
 */
static bool finish_format(char *buf, size_t size, int n)
{
	size_t keep;

	if (n < 0) {
		buf[0] = '\0';
		return false;
	}
	if ((size_t)n < size)
		return true;
	keep = size - sizeof(TRUNCATED);
	buf[keep] = '\0';
	trim_partial_utf8(buf, keep);
	strcat(buf, TRUNCATED);
	return false;
}

int cni_fail(int ret, int code, const char *fmt, ...)
{
	char msg[sizeof(request_error.msg)];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	finish_format(msg, sizeof(msg), n);
	pr_err("%s (code %d)", msg, code);
	if (!request_error.code) {
		request_error.code = code;
		memcpy(request_error.msg, msg, sizeof(msg));
	}
	return ret;
}

void cni_error_detail(const char *fmt, ...)
{
	char *details = request_error.details;
	size_t len = strlen(details);
	size_t sep = len ? strlen(DETAIL_SEP) : 0;
	size_t room;
	va_list ap;
	int n;

	if (details_full)
		return;
	/* Room for the separator, at least one character and the truncation mark. */
	if (len + sep + sizeof(TRUNCATED) + 1 > sizeof(request_error.details)) {
		details_full = true;
		return;
	}
	if (sep)
		memcpy(details + len, DETAIL_SEP, sep + 1);
	room = sizeof(request_error.details) - len - sep;
	va_start(ap, fmt);
	n = vsnprintf(details + len + sep, room, fmt, ap);
	va_end(ap);
	if (!finish_format(details + len + sep, room, n))
		details_full = true;
}

bool cni_error_is_set(void)
{
	return request_error.code != 0;
}

const struct cni_error *cni_error_get(void)
{
	return &request_error;
}

void cni_error_reset(void)
{
	memset(&request_error, 0, sizeof(request_error));
	details_full = false;
}

char *cni_error_json(const struct cni_error *error, const char *version)
{
	cJSON *root = cJSON_CreateObject();
	char *printed = NULL, *text = NULL;

	if (!root)
		goto out;
	if (!cJSON_AddStringToObject(root, "cniVersion",
				     version ? version : cni_version_str(CNI_V_NEWEST)) ||
	    !cJSON_AddNumberToObject(root, "code", error->code) ||
	    !cJSON_AddStringToObject(root, "msg", error->msg))
		goto out;
	if (error->details[0] && !cJSON_AddStringToObject(root, "details", error->details))
		goto out;
	printed = cJSON_PrintUnformatted(root);
	if (printed)
		text = strdup(printed); /* the header promises free(), whatever cJSON's hooks are */
out:
	cJSON_free(printed);
	cJSON_Delete(root);
	if (!text)
		errno = ENOMEM;
	return text;
}

int cni_error_print(const struct cni_error *error, const char *version)
{
	char *text = cni_error_json(error, version);
	int ret = 0;

	if (!text)
		return -errno;
	if (puts(text) == EOF || fflush(stdout) == EOF)
		ret = -EIO;
	free(text);
	return ret;
}
