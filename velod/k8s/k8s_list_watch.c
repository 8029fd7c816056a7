// SPDX-License-Identifier: Apache-2.0
/*
 * A resource's two requests (k8s_list_watch.h), blocking libcurl transfers
 * with the plugin's client setup (plugin/k8s/k8s_curl.c: cluster-CA-only TLS,
 * bearer token): LIST <path> in pages, then WATCH from the list's
 * resourceVersion with bookmarks, each line of the stream applied as it
 * arrives. A transfer notices stop about once a second, from its progress
 * callback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "k8s/k8s_curl.h"
#include "k8s_list_watch.h"
#include "k8s_watch_shared.h"

#define LIST_PAGE 500
#define LIST_TIMEOUT_MS 60000
#define CONNECT_TIMEOUT_MS 10000
#define BODY_MAX (64u << 20) /* a page of 500 Nodes with their image lists */
#define WATCH_MIN_S 300 /* the server ends a watch after timeoutSeconds; client-go picks 5-10 min */
#define CONTINUE_MAX 4096

/* One request's answer: the whole body (LIST), or lines handed on as they come (WATCH). */
struct transfer {
	struct k8s_watch *watch;
	CURL *handle;
	long status;
	bool streaming;
	char *data;
	size_t len;
	bool too_big;
	int result; /* a watch event that ends the watch: -ESTALE, -EPROTO */
	uint64_t events;
};

/* One page of a LIST handed to the resource; rv and cont from its metadata. */
static int parse_list_page(struct k8s_watch *watch, const char *body, size_t len, char *rv,
			   size_t rv_size, char *cont, size_t cont_size, char *why, size_t why_size)
{
	const struct k8s_resource *resource = &watch->resource;
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	const cJSON *next = cJSON_GetObjectItemCaseSensitive(metadata, "continue"), *item;
	char item_why[200];
	int ret = 0;

	if (!cJSON_IsArray(items) && !cJSON_IsNull(items)) {
		snprintf(why, why_size, "the answer to LIST %s is not a list", resource->name);
		cJSON_Delete(root);
		return -EPROTO;
	}
	k8s_resource_version(root, rv, rv_size);
	cont[0] = '\0';
	if (cJSON_IsString(next) && strlen(next->valuestring) < cont_size)
		snprintf(cont, cont_size, "%s", next->valuestring);
	cJSON_ArrayForEach (item, items) {
		ret = resource->list_item(resource->ctx, item, item_why, sizeof(item_why));
		watch->n_listed += !ret;
		if (ret == -EINVAL) {
			k8s_watch_shared_log(watch, VELO_LOG_WARN, "k8s %s: %s: left out",
					     resource->name, item_why);
			ret = 0;
		} else if (ret < 0) {
			snprintf(why, why_size, "%s", item_why);
			break;
		}
	}
	cJSON_Delete(root);
	return ret;
}

/* Applies the complete lines of a watch stream as they arrive; keeps a partial one. */
static int consume_lines(struct transfer *t)
{
	struct k8s_watch *watch = t->watch;
	const struct k8s_resource *resource = &watch->resource;
	char *start = t->data, *end, why[300];
	int ret;

	while ((end = memchr(start, '\n', t->len - (size_t)(start - t->data)))) {
		if (end > start) {
			ret = k8s_event_apply(start, (size_t)(end - start), watch->rv,
					      sizeof(watch->rv), resource->change, resource->ctx,
					      why, sizeof(why));
			t->events++;
			pthread_mutex_lock(&watch->lock);
			watch->stats.events++; /* at once: /metrics shows a live watch's events */
			pthread_mutex_unlock(&watch->lock);
			if (ret == -EINVAL || ret == -ENOSPC || ret == -ENOMEM) {
				k8s_watch_shared_log(watch, VELO_LOG_WARN,
						     "k8s %s: %s: left as it was", resource->name,
						     why);
				pthread_mutex_lock(&watch->lock);
				watch->stats.errors++;
				pthread_mutex_unlock(&watch->lock);
			} else if (ret < 0) {
				k8s_watch_shared_log(watch, VELO_LOG_INFO, "k8s %s: %s",
						     resource->name, why);
				t->result = ret;
				return ret;
			}
		}
		start = end + 1;
	}
	t->len -= (size_t)(start - t->data);
	memmove(t->data, start, t->len);
	return 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *opaque)
{
	struct transfer *t = opaque;
	size_t n = size * nmemb;
	char *grown;

	if (!t->status)
		t->watch->curl->easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &t->status);
	if (t->len + n > BODY_MAX) {
		t->too_big = true;
		return 0;
	}
	grown = realloc(t->data, t->len + n + 1);
	if (!grown)
		return 0;
	t->data = grown;
	memcpy(t->data + t->len, data, n);
	t->len += n;
	t->data[t->len] = '\0';
	if (t->streaming && t->status == 200 && consume_lines(t))
		return 0;
	return n;
}

static int on_progress(void *opaque, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return k8s_watch_shared_stopping(opaque) ? 1 : 0;
}

/* The API's Status message for an error answer, if the body is one. */
static void status_message(const struct transfer *t, char *buf, size_t size)
{
	cJSON *status = t->data ? cJSON_ParseWithLength(t->data, t->len) : NULL;
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(status, "message");

	buf[0] = '\0';
	if (cJSON_IsString(message))
		snprintf(buf, size, ": %.150s", message->valuestring);
	cJSON_Delete(status);
}

/* One GET; 0 with t->data holding the body (LIST) or the events applied (WATCH). */
static int request(struct k8s_watch *watch, const struct k8s_api_target *target, const char *url,
		   long timeout_ms, struct transfer *t, char *why, size_t why_size)
{
	const struct curl_api *curl = watch->curl;
	char errbuf[CURL_ERROR_SIZE] = "", message[200];
	struct curl_slist *headers = NULL;
	CURLcode code;
	int ret;

	t->handle = curl->easy_init();
	if (!t->handle)
		return -ENOMEM;
	ret = velo_k8s_curl_setup(curl, t->handle, target, url, &headers);
	if (ret) {
		snprintf(why, why_size, "%s",
			 ret == -ENOTSUP ? "libcurl can't take in-memory "
					   "certificates"
					 : strerror(-ret));
		goto out;
	}
	curl->easy_setopt(t->handle, CURLOPT_USERAGENT, "velod");
	curl->easy_setopt(t->handle, CURLOPT_ERRORBUFFER, errbuf);
	curl->easy_setopt(t->handle, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	curl->easy_setopt(t->handle, CURLOPT_TIMEOUT_MS, timeout_ms);
	/* A peer that vanished without a FIN is noticed within about a minute. */
	curl->easy_setopt(t->handle, CURLOPT_TCP_KEEPALIVE, 1L);
	curl->easy_setopt(t->handle, CURLOPT_TCP_KEEPIDLE, 30L);
	curl->easy_setopt(t->handle, CURLOPT_TCP_KEEPINTVL, 10L);
	curl->easy_setopt(t->handle, CURLOPT_WRITEFUNCTION, on_data);
	curl->easy_setopt(t->handle, CURLOPT_WRITEDATA, t);
	/* Called about once a second even when idle: how stop reaches a blocked watch. */
	curl->easy_setopt(t->handle, CURLOPT_NOPROGRESS, 0L);
	curl->easy_setopt(t->handle, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl->easy_setopt(t->handle, CURLOPT_XFERINFODATA, watch);

	code = curl->easy_perform(t->handle);
	curl->easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &t->status);
	if (t->result) {
		ret = t->result; /* why was logged with the event */
		snprintf(why, why_size, "the watch ended with an ERROR event");
		goto out;
	}
	if (code == CURLE_ABORTED_BY_CALLBACK) {
		ret = -ECANCELED;
		snprintf(why, why_size, "stopping");
		goto out;
	}
	if (code != CURLE_OK && t->status != 200 && t->status) {
		/* An error answer cut short still says what it was. */
	} else if (code != CURLE_OK) {
		ret = t->too_big ? -EFBIG : velo_k8s_curl_errno(code);
		snprintf(why, why_size, "GET %.200s: %s", url,
			 t->too_big  ? "answer larger than 64 MiB"
			 : errbuf[0] ? errbuf
				     : curl->easy_strerror(code));
		goto out;
	}
	if (t->status != 200) {
		status_message(t, message, sizeof(message));
		ret = t->status == 410			     ? -ESTALE
		      : t->status == 401 || t->status == 403 ? -EACCES
		      : t->status == 404		     ? -ENOENT
							     : -EPROTO;
		snprintf(why, why_size, "GET %.200s: HTTP %ld%s%s%s%s", url, t->status,
			 ret == -EACCES ? " (velod's service account needs list and watch on " : "",
			 ret == -EACCES ? watch->resource.name : "", ret == -EACCES ? ")" : "",
			 message);
	}
out:
	curl->slist_free_all(headers);
	curl->easy_cleanup(t->handle);
	return ret;
}

/* Query values are opaque to velod (continue tokens are base64): percent-encode them. */
static void url_escape(const char *text, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c && n + 4 < size; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_' || *c == '~') {
			out[n++] = (char)*c;
		} else {
			out[n++] = '%';
			out[n++] = hex[*c >> 4];
			out[n++] = hex[*c & 15];
		}
	}
	out[n] = '\0';
}

/* LIST every page into the resource's scratch, then make it current. 410: the pages expired. */
int k8s_list_watch_list(struct k8s_watch *watch, const struct k8s_api_target *target, char *why,
			size_t why_size)
{
	char rv[K8S_RV_MAX] = "", *url, *cont, *escaped;
	int ret = 0;

	/* Not static: three watch threads list at once. */
	cont = calloc(1, CONTINUE_MAX);
	escaped = calloc(1, 3 * CONTINUE_MAX + 1);
	if (!cont || !escaped) {
		ret = -ENOMEM;
		goto out;
	}
	watch->n_listed = 0;
	watch->resource.list_begin(watch->resource.ctx);
	do {
		struct transfer t = { .watch = watch };

		url_escape(cont, escaped, 3 * CONTINUE_MAX + 1);
		if (asprintf(&url, "%s%s?limit=%d%s%s", target->server, watch->resource.path,
			     LIST_PAGE, cont[0] ? "&continue=" : "", escaped) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		ret = request(watch, target, url, LIST_TIMEOUT_MS, &t, why, why_size);
		free(url);
		if (!ret)
			ret = parse_list_page(watch, t.data ? t.data : "", t.len, rv, sizeof(rv),
					      cont, CONTINUE_MAX, why, why_size);
		free(t.data);
		if (ret)
			goto out;
	} while (cont[0]);
	if (!rv[0]) {
		snprintf(why, why_size, "the %s list has no metadata.resourceVersion",
			 watch->resource.name);
		ret = -EPROTO;
		goto out;
	}
	watch->resource.list_end(watch->resource.ctx);
	snprintf(watch->rv, sizeof(watch->rv), "%s", rv);
out:
	free(cont);
	free(escaped);
	return ret;
}

int k8s_list_watch_stream(struct k8s_watch *watch, const struct k8s_api_target *target,
			  uint64_t *events, char *why, size_t why_size)
{
	struct transfer t = { .watch = watch, .streaming = true };
	unsigned timeout_s = WATCH_MIN_S + (unsigned)(random() % WATCH_MIN_S);
	char escaped[3 * K8S_RV_MAX + 1], *url;
	int ret;

	url_escape(watch->rv, escaped, sizeof(escaped));
	if (asprintf(&url,
		     "%s%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true"
		     "&timeoutSeconds=%u",
		     target->server, watch->resource.path, escaped, timeout_s) < 0)
		return -ENOMEM;
	ret = request(watch, target, url, (long)(timeout_s + 60) * 1000, &t, why, why_size);
	free(url);
	free(t.data);
	*events = t.events;
	return ret;
}
