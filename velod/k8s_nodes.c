// SPDX-License-Identifier: Apache-2.0
/*
 * The Node watch (k8s_nodes.h). One thread does blocking libcurl requests with
 * the plugin's client setup (plugin/k8s/kubeconfig.c, k8s_curl.c: cluster-CA-only TLS,
 * bearer token): LIST /api/v1/nodes in pages, then WATCH from the list's
 * resourceVersion with bookmarks. 410 Gone, as an HTTP status or an ERROR
 * event, means the version is too old: relist. A watch that ends (the server's
 * timeoutSeconds, a dropped connection) resumes from the last version seen,
 * after a capped backoff when it failed. The kubeconfig, and so a tokenFile,
 * or the service account's token is read again for every request: projected
 * tokens rotate. Only a change of a node's name, pod CIDRs or InternalIPs
 * wakes velod's loop; status heartbeats don't. velo's logger is
 * single-threaded: the thread queues its lines and velod's loop writes them.
 */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "k8s/curl_lazy.h"
#include "k8s/k8s_curl.h"
#include "k8s/kubeconfig.h"
#include "k8s_nodes.h"
#include "base/log.h"

#define LIST_PAGE 500
#define LIST_TIMEOUT_MS 60000
#define CONNECT_TIMEOUT_MS 10000
#define BODY_MAX (64u << 20) /* a page of 500 Nodes with their image lists */
#define WATCH_MIN_S 300 /* the server ends a watch after timeoutSeconds; client-go picks 5-10 min */
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define RV_MAX 128
#define CONTINUE_MAX 4096
#define LOG_QUEUE 32

struct k8s_nodes {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop; /* under lock; the transfer's progress callback reads it atomically */
	int event_fd;
	const struct curl_api *curl;
	char kubeconfig[PATH_MAX]; /* "" = in cluster */
	char service_host[256], service_port[16];
	/* The thread's own. */
	struct node_list *current, *scratch;
	char rv[RV_MAX];
	/* Shared with velod's loop, under lock. */
	struct node_list *shared;
	bool listed;
	uint64_t generation, taken;
	struct k8s_nodes_stats stats;
	struct {
		enum velo_log_level level;
		char text[400];
	} log_queue[LOG_QUEUE];
	unsigned n_logged, n_dropped;
};

/* From the watch thread: a log line for velod's loop to write (k8s_nodes_take). */
static void __attribute__((format(printf, 3, 4)))
wlog(struct k8s_nodes *watch, enum velo_log_level level, const char *fmt, ...)
{
	uint64_t one = 1;
	va_list ap;

	pthread_mutex_lock(&watch->lock);
	if (watch->n_logged == LOG_QUEUE) {
		watch->n_dropped++;
	} else {
		watch->log_queue[watch->n_logged].level = level;
		va_start(ap, fmt);
		vsnprintf(watch->log_queue[watch->n_logged].text, sizeof(watch->log_queue[0].text),
			  fmt, ap);
		va_end(ap);
		watch->n_logged++;
	}
	pthread_mutex_unlock(&watch->lock);
	if (write(watch->event_fd, &one, sizeof(one)) < 0) {
		/* The counter is already non-zero: the loop wakes anyway. */
	}
}

/* One request's answer: the whole body (LIST), or lines handed on as they come (WATCH). */
struct transfer {
	struct k8s_nodes *watch;
	CURL *handle;
	long status;
	bool streaming;
	char *data;
	size_t len;
	bool too_big;
	int result; /* a watch event that ends the watch: -ESTALE, -EPROTO */
	uint64_t events;
};

/* One page of a NodeList appended to list; rv and cont from its metadata. */
static int parse_list_page(struct k8s_nodes *watch, struct node_list *list, const char *body,
			   size_t len, char *rv, size_t rv_size, char *cont, size_t cont_size,
			   char *why, size_t why_size)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	const cJSON *next = cJSON_GetObjectItemCaseSensitive(metadata, "continue"), *item;
	char node_why[200];
	struct node node;
	int ret = 0;

	if (!cJSON_IsArray(items) && !cJSON_IsNull(items)) {
		snprintf(why, why_size, "the answer to LIST nodes is not a NodeList");
		cJSON_Delete(root);
		return -EPROTO;
	}
	k8s_resource_version(root, rv, rv_size);
	cont[0] = '\0';
	if (cJSON_IsString(next) && strlen(next->valuestring) < cont_size)
		snprintf(cont, cont_size, "%s", next->valuestring);
	cJSON_ArrayForEach (item, items) {
		if (k8s_node_parse(item, &node, node_why, sizeof(node_why))) {
			wlog(watch, VELO_LOG_WARN, "k8s nodes: %s: left out", node_why);
			continue;
		}
		ret = k8s_node_list_upsert(list, &node, why, why_size);
		if (ret < 0)
			break;
		ret = 0;
	}
	cJSON_Delete(root);
	return ret;
}

static bool stopping(struct k8s_nodes *watch)
{
	return __atomic_load_n(&watch->stop, __ATOMIC_RELAXED);
}

static void publish(struct k8s_nodes *watch)
{
	uint64_t one = 1;

	pthread_mutex_lock(&watch->lock);
	watch->shared->n = watch->current->n;
	memcpy(watch->shared->nodes, watch->current->nodes,
	       watch->current->n * sizeof(watch->current->nodes[0]));
	watch->listed = true;
	watch->generation++;
	watch->stats.nodes = watch->current->n;
	pthread_mutex_unlock(&watch->lock);
	if (write(watch->event_fd, &one, sizeof(one)) < 0) {
		/* The counter is already non-zero: the loop wakes anyway. */
	}
}

/* Applies the complete lines of a watch stream as they arrive; keeps a partial one. */
static int consume_lines(struct transfer *t)
{
	struct k8s_nodes *watch = t->watch;
	char *start = t->data, *end, why[300];
	int ret;

	while ((end = memchr(start, '\n', t->len - (size_t)(start - t->data)))) {
		if (end > start) {
			ret = k8s_nodes_apply_event(watch->current, start, (size_t)(end - start),
						    watch->rv, sizeof(watch->rv), why, sizeof(why));
			t->events++;
			if (ret == 1)
				publish(watch);
			if (ret == -EINVAL || ret == -ENOSPC) {
				wlog(watch, VELO_LOG_WARN,
				     "k8s nodes: %s: node list left as it was", why);
				pthread_mutex_lock(&watch->lock);
				watch->stats.errors++;
				pthread_mutex_unlock(&watch->lock);
			} else if (ret < 0) {
				wlog(watch, VELO_LOG_INFO, "k8s nodes: %s", why);
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
	return stopping(opaque) ? 1 : 0;
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
static int request(struct k8s_nodes *watch, const struct k8s_api_target *target, const char *url,
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
							     : -EPROTO;
		snprintf(why, why_size, "GET %.200s: HTTP %ld%s%s", url, t->status,
			 ret == -EACCES ? " (velod's service account needs list and watch on nodes)"
					: "",
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

/* LIST every page into scratch, then make it the current list. 410: the pages expired. */
static int list_nodes(struct k8s_nodes *watch, const struct k8s_api_target *target, char *why,
		      size_t why_size)
{
	static char cont[CONTINUE_MAX], escaped[3 * CONTINUE_MAX + 1];
	char rv[RV_MAX] = "", *url;
	struct node_list *done;
	int ret;

	watch->scratch->n = 0;
	cont[0] = '\0';
	do {
		struct transfer t = { .watch = watch };

		url_escape(cont, escaped, sizeof(escaped));
		if (asprintf(&url, "%s/api/v1/nodes?limit=%d%s%s", target->server, LIST_PAGE,
			     cont[0] ? "&continue=" : "", escaped) < 0)
			return -ENOMEM;
		ret = request(watch, target, url, LIST_TIMEOUT_MS, &t, why, why_size);
		free(url);
		if (!ret)
			ret = parse_list_page(watch, watch->scratch, t.data ? t.data : "", t.len,
					      rv, sizeof(rv), cont, sizeof(cont), why, why_size);
		free(t.data);
		if (ret)
			return ret;
	} while (cont[0]);
	if (!rv[0]) {
		snprintf(why, why_size, "the NodeList has no metadata.resourceVersion");
		return -EPROTO;
	}
	done = watch->current;
	watch->current = watch->scratch;
	watch->scratch = done;
	snprintf(watch->rv, sizeof(watch->rv), "%s", rv);
	publish(watch);
	return 0;
}

static int watch_nodes(struct k8s_nodes *watch, const struct k8s_api_target *target,
		       uint64_t *events, char *why, size_t why_size)
{
	struct transfer t = { .watch = watch, .streaming = true };
	unsigned timeout_s = WATCH_MIN_S + (unsigned)(random() % WATCH_MIN_S);
	char escaped[3 * RV_MAX + 1], *url;
	int ret;

	url_escape(watch->rv, escaped, sizeof(escaped));
	if (asprintf(&url,
		     "%s/api/v1/nodes?watch=1&resourceVersion=%s&allowWatchBookmarks=true"
		     "&timeoutSeconds=%u",
		     target->server, escaped, timeout_s) < 0)
		return -ENOMEM;
	ret = request(watch, target, url, (long)(timeout_s + 60) * 1000, &t, why, why_size);
	free(url);
	free(t.data);
	*events = t.events;
	pthread_mutex_lock(&watch->lock);
	watch->stats.events += t.events;
	pthread_mutex_unlock(&watch->lock);
	return ret;
}

/* The service account as a kubeconfig: the plugin's parser reads the token and checks it. */
static int in_cluster_target(const struct k8s_nodes *watch, struct k8s_api_target *target,
			     char *why, size_t why_size)
{
	bool v6 = strchr(watch->service_host, ':') != NULL;
	char *text;
	int ret;

	if (asprintf(&text,
		     "{\"clusters\": [{\"name\": \"in-cluster\", \"cluster\": {"
		     "\"server\": \"https://%s%s%s:%s\", "
		     "\"certificate-authority\": \"" K8S_SERVICE_ACCOUNT_DIR "/ca.crt\"}}], "
		     "\"users\": [{\"name\": \"velo\", \"user\": {"
		     "\"tokenFile\": \"" K8S_SERVICE_ACCOUNT_DIR "/token\"}}]}",
		     v6 ? "[" : "", watch->service_host, v6 ? "]" : "", watch->service_port) < 0)
		return -ENOMEM;
	ret = velo_k8s_kubeconfig_parse(K8S_SERVICE_ACCOUNT_DIR "/", text, strlen(text), target,
					why, why_size);
	free(text);
	return ret;
}

static int load_target(const struct k8s_nodes *watch, struct k8s_api_target *target, char *why,
		       size_t why_size)
{
	if (watch->kubeconfig[0])
		return velo_k8s_kubeconfig_load(watch->kubeconfig, target, why, why_size);
	return in_cluster_target(watch, target, why, why_size);
}

/* Sleeps ms unless stop comes first. */
static void pause_ms(struct k8s_nodes *watch, unsigned ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&watch->lock);
	while (!watch->stop && pthread_cond_timedwait(&watch->wake, &watch->lock, &until) == 0)
		;
	pthread_mutex_unlock(&watch->lock);
}

static void note_error(struct k8s_nodes *watch, const char *why)
{
	pthread_mutex_lock(&watch->lock);
	watch->stats.errors++;
	snprintf(watch->stats.last_error, sizeof(watch->stats.last_error), "%s", why);
	pthread_mutex_unlock(&watch->lock);
}

static void *run(void *arg)
{
	struct k8s_nodes *watch = arg;
	unsigned backoff_ms = 0;
	bool need_list = true, listed_once = false;

	while (!stopping(watch)) {
		struct k8s_api_target target;
		uint64_t started = velo_monotonic_ns(), events = 0;
		char why[400] = "";
		int ret;

		ret = load_target(watch, &target, why, sizeof(why));
		if (!ret && need_list) {
			ret = list_nodes(watch, &target, why, sizeof(why));
			if (!ret) {
				wlog(watch, VELO_LOG_INFO,
				     "k8s nodes: listed %u nodes (resourceVersion %s)",
				     watch->current->n, watch->rv);
				pthread_mutex_lock(&watch->lock);
				watch->stats.lists++;
				watch->stats.relists += listed_once;
				watch->stats.last_error[0] = '\0';
				pthread_mutex_unlock(&watch->lock);
				need_list = false;
				listed_once = true;
				backoff_ms = 0;
			} else if (ret == -ESTALE) {
				ret = -EPROTO; /* the pages expired mid-LIST: list again, after a pause */
			}
		}
		if (!ret) {
			ret = watch_nodes(watch, &target, &events, why, sizeof(why));
			if (!stopping(watch)) {
				pthread_mutex_lock(&watch->lock);
				watch->stats.watch_restarts++;
				pthread_mutex_unlock(&watch->lock);
			}
		}
		velo_k8s_target_free(&target);
		if (stopping(watch))
			break;
		if (ret == -ESTALE) {
			wlog(watch, VELO_LOG_INFO,
			     "k8s nodes: resourceVersion %s is too old (410 Gone): relisting",
			     watch->rv);
			need_list = true;
			/* A server that answers 410 to a fresh list's version must not spin us. */
			if (events)
				continue;
		}
		if (ret && ret != -ESTALE) {
			wlog(watch, VELO_LOG_WARN, "k8s nodes: %s", why);
			note_error(watch, why);
		} else if (!ret) {
			wlog(watch, VELO_LOG_DEBUG,
			     "k8s nodes: watch ended after %llu events; resuming at %s",
			     (unsigned long long)events, watch->rv);
		}
		/* A watch that worked for a while resumes at once; failures back off, capped. */
		if (!ret && (events || velo_monotonic_ns() - started > 10000000000ull)) {
			backoff_ms = 0;
			continue;
		}
		backoff_ms = backoff_ms ? backoff_ms * 2 : BACKOFF_MIN_MS;
		if (backoff_ms > BACKOFF_MAX_MS)
			backoff_ms = BACKOFF_MAX_MS;
		pause_ms(watch, backoff_ms);
	}
	return NULL;
}

static void free_watch(struct k8s_nodes *watch)
{
	if (watch->event_fd >= 0)
		close(watch->event_fd);
	free(watch->current);
	free(watch->scratch);
	free(watch->shared);
	free(watch);
}

struct k8s_nodes *k8s_nodes_start(const struct agent_config *config)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"),
		   *port = getenv("KUBERNETES_SERVICE_PORT");
	pthread_condattr_t attr;
	struct k8s_nodes *watch;
	int ret;

	watch = calloc(1, sizeof(*watch));
	if (!watch)
		return NULL;
	watch->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	watch->current = malloc(sizeof(*watch->current));
	watch->scratch = malloc(sizeof(*watch->scratch));
	watch->shared = malloc(sizeof(*watch->shared));
	if (watch->event_fd < 0 || !watch->current || !watch->scratch || !watch->shared) {
		ret = errno ? errno : ENOMEM;
		goto err;
	}
	watch->current->n = 0;
	snprintf(watch->kubeconfig, sizeof(watch->kubeconfig), "%s", config->kubeconfig);
	if (!config->kubeconfig[0]) {
		/* Only what a Service address can be: the kubeconfig text is built from them. */
		if (!host || !port || strlen(host) >= sizeof(watch->service_host) ||
		    strlen(port) >= sizeof(watch->service_port) ||
		    strspn(host, "0123456789abcdefABCDEF.:-") != strlen(host) ||
		    strspn(port, "0123456789") != strlen(port) || !host[0] || !port[0]) {
			pr_err("inCluster: KUBERNETES_SERVICE_HOST/PORT are missing or malformed");
			ret = EINVAL;
			goto err;
		}
		snprintf(watch->service_host, sizeof(watch->service_host), "%s", host);
		snprintf(watch->service_port, sizeof(watch->service_port), "%s", port);
	}
	watch->curl = curl_api_get();
	if (!watch->curl) {
		pr_err("the Node watch needs libcurl (libcurl4), which is not installed");
		ret = ENOENT;
		goto err;
	}
	/* Before any thread exists: older libcurl's global init is not thread-safe. */
	if (watch->curl->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ret = ENOMEM;
		goto err;
	}
	pthread_mutex_init(&watch->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&watch->wake, &attr);
	pthread_condattr_destroy(&attr);
	srandom((unsigned)velo_monotonic_ns());
	ret = pthread_create(&watch->thread, NULL, run, watch);
	if (ret) {
		pthread_cond_destroy(&watch->wake);
		pthread_mutex_destroy(&watch->lock);
		goto err;
	}
	pr_info("k8s nodes: watching Nodes (%s)",
		config->kubeconfig[0] ? config->kubeconfig : "in-cluster service account");
	return watch;
err:
	free_watch(watch);
	errno = ret;
	return NULL;
}

int k8s_nodes_fd(const struct k8s_nodes *watch)
{
	return watch->event_fd;
}

int k8s_nodes_take(struct k8s_nodes *watch, struct node_list *list)
{
	uint64_t count;
	int ret = 0;

	if (read(watch->event_fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing new signalled; the generation below decides anyway. */
	}
	pthread_mutex_lock(&watch->lock);
	for (unsigned i = 0; i < watch->n_logged; i++)
		log_msg(watch->log_queue[i].level, "%s", watch->log_queue[i].text);
	if (watch->n_dropped)
		pr_warn("k8s nodes: %u log lines dropped", watch->n_dropped);
	watch->n_logged = watch->n_dropped = 0;
	if (!watch->listed) {
		ret = -EAGAIN;
	} else if (watch->generation != watch->taken) {
		list->n = watch->shared->n;
		list->self = NULL;
		memcpy(list->nodes, watch->shared->nodes, list->n * sizeof(list->nodes[0]));
		watch->taken = watch->generation;
		ret = 1;
	}
	pthread_mutex_unlock(&watch->lock);
	return ret;
}

void k8s_nodes_stats(struct k8s_nodes *watch, struct k8s_nodes_stats *stats)
{
	pthread_mutex_lock(&watch->lock);
	*stats = watch->stats;
	pthread_mutex_unlock(&watch->lock);
}

void k8s_nodes_stop(struct k8s_nodes *watch)
{
	if (!watch)
		return;
	pthread_mutex_lock(&watch->lock);
	__atomic_store_n(&watch->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&watch->wake);
	pthread_mutex_unlock(&watch->lock);
	pthread_join(watch->thread, NULL);
	pthread_cond_destroy(&watch->wake);
	pthread_mutex_destroy(&watch->lock);
	free_watch(watch);
}
