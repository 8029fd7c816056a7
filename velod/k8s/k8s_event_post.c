// SPDX-License-Identifier: Apache-2.0
/*
 * velod's Events (k8s_event_post.h). velod's loop keeps what it has said (by
 * Event name) and queues requests; the thread sends them one at a time
 * (libcurl with the plugin's client setup, plugin/k8s/k8s_curl.c) and hands
 * back each answer, which the loop reads at its next sync: the logger and the
 * table are the loop's alone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "k8s/curl_lazy.h"
#include "k8s/k8s_curl.h"
#include "k8s_api_target.h"
#include "k8s_event_post.h"

#define NS_PER_S 1000000000ull
#define CONNECT_TIMEOUT_MS 5000
#define REQUEST_TIMEOUT_MS 10000
#define NS_MAX 64 /* a namespace: a DNS label */
#define WHY_MAX 200

/* One request for the thread, and then its answer for the loop. */
struct request {
	bool patch; /* else POST */
	char ns[NS_MAX];
	char name[K8S_EVENT_NAME_MAX];
	char *body;
	long status; /* the answer's HTTP status; 0: none (why says what failed) */
	char why[WHY_MAX];
};

enum said {
	SAID_QUEUED, /* a request is on its way */
	SAID_POSTED, /* this velod made the Event: it counts it again when due */
	SAID_LEFT, /* the Event existed (409): another velod's, or this node's before a restart */
	SAID_FAILED, /* tried again at next_ns */
};

/* What this velod said about one problem: the loop's own. */
struct entry {
	char name[K8S_EVENT_NAME_MAX];
	enum said said;
	unsigned count;
	uint64_t next_ns;
	bool seen; /* among the notes of this sync */
};

struct k8s_event_post {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop; /* under lock; the transfer's progress callback reads it atomically */
	const struct curl_api *curl;
	struct k8s_api_source source;
	char node[NODE_NAME_MAX];
	/* Under lock: requests waiting (a FIFO), answers back. */
	struct request queue[K8S_EVENT_QUEUE];
	unsigned head, n_queued;
	struct request done[K8S_EVENT_QUEUE + 1]; /* the queue's and the one in flight */
	unsigned n_done;
	/* The loop's. */
	struct entry *entries;
	unsigned n_entries, cap;
	unsigned dropped; /* since the last log line that said so */
	uint64_t next_sync_ns;
};

/* ------------------------------------------------------------ the thread */

static int on_progress(void *opaque, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct k8s_event_post *post = opaque;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return __atomic_load_n(&post->stop, __ATOMIC_RELAXED) ? 1 : 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *opaque)
{
	(void)data;
	(void)opaque;
	return size * nmemb; /* the created Event or a Status: the status code says enough */
}

/* req->status, or req->why when no answer came. */
static void send_one(struct k8s_event_post *post, struct request *req)
{
	const struct curl_api *curl = post->curl;
	char errbuf[CURL_ERROR_SIZE] = "", why[WHY_MAX] = "", *url = NULL;
	struct curl_slist *headers = NULL, *grown;
	struct k8s_api_target target;
	CURL *handle = NULL;
	CURLcode code;
	int ret;

	ret = k8s_api_source_load(&post->source, &target, why, sizeof(why));
	if (ret) {
		snprintf(req->why, sizeof(req->why), "%s", why);
		return;
	}
	if (asprintf(&url, "%s/api/v1/namespaces/%s/events%s%s", target.server, req->ns,
		     req->patch ? "/" : "", req->patch ? req->name : "") < 0) {
		url = NULL;
		ret = -ENOMEM;
		goto out;
	}
	handle = curl->easy_init();
	if (!handle) {
		ret = -ENOMEM;
		goto out;
	}
	ret = velo_k8s_curl_setup(curl, handle, &target, url, &headers);
	if (ret)
		goto out;
	grown = curl->slist_append(headers, req->patch
						    ? "Content-Type: application/merge-patch+json"
						    : "Content-Type: application/json");
	if (!grown) {
		ret = -ENOMEM;
		goto out;
	}
	headers = grown;
	curl->easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
	curl->easy_setopt(handle, CURLOPT_CUSTOMREQUEST, req->patch ? "PATCH" : "POST");
	curl->easy_setopt(handle, CURLOPT_POSTFIELDS, req->body);
	curl->easy_setopt(handle, CURLOPT_USERAGENT, "velod");
	curl->easy_setopt(handle, CURLOPT_ERRORBUFFER, errbuf);
	curl->easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	curl->easy_setopt(handle, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
	curl->easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_data);
	curl->easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
	curl->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl->easy_setopt(handle, CURLOPT_XFERINFODATA, post);
	code = curl->easy_perform(handle);
	if (code == CURLE_OK)
		curl->easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &req->status);
	else
		snprintf(req->why, sizeof(req->why), "%s",
			 errbuf[0] ? errbuf : curl->easy_strerror(code));
out:
	if (ret)
		snprintf(req->why, sizeof(req->why), "%s",
			 ret == -ENOTSUP ? "libcurl can't take in-memory certificates"
					 : strerror(-ret));
	if (handle)
		curl->easy_cleanup(handle);
	curl->slist_free_all(headers);
	free(url);
	velo_k8s_target_free(&target);
}

static void *run(void *arg)
{
	struct k8s_event_post *post = arg;

	pthread_mutex_lock(&post->lock);
	for (;;) {
		struct request req;

		while (!post->stop && !post->n_queued)
			pthread_cond_wait(&post->wake, &post->lock);
		if (post->stop)
			break;
		req = post->queue[post->head];
		post->head = (post->head + 1) % K8S_EVENT_QUEUE;
		post->n_queued--;
		pthread_mutex_unlock(&post->lock);
		send_one(post, &req);
		free(req.body);
		req.body = NULL;
		pthread_mutex_lock(&post->lock);
		post->done[post->n_done++] = req;
	}
	pthread_mutex_unlock(&post->lock);
	return NULL;
}

/* ------------------------------------------------------------ velod's loop */

static struct entry *find(struct k8s_event_post *post, const char *name)
{
	for (unsigned i = 0; i < post->n_entries; i++)
		if (!strcmp(post->entries[i].name, name))
			return &post->entries[i];
	return NULL;
}

/* Queues a request whose body the queue then owns; false (body freed) when it is full. */
static bool enqueue(struct k8s_event_post *post, bool patch, const char *ns, const char *name,
		    char *body)
{
	struct request *req;
	bool queued = false;

	pthread_mutex_lock(&post->lock);
	/* The answers' room is the queue's and one: never more out than that. */
	if (post->n_queued < K8S_EVENT_QUEUE && post->n_queued + post->n_done < K8S_EVENT_QUEUE) {
		req = &post->queue[(post->head + post->n_queued) % K8S_EVENT_QUEUE];
		memset(req, 0, sizeof(*req));
		req->patch = patch;
		snprintf(req->ns, sizeof(req->ns), "%s", ns);
		snprintf(req->name, sizeof(req->name), "%s", name);
		req->body = body;
		post->n_queued++;
		queued = true;
		pthread_cond_signal(&post->wake);
	}
	pthread_mutex_unlock(&post->lock);
	if (!queued) {
		free(body);
		post->dropped++;
	}
	return queued;
}

/* Names the API takes in a path as they are: nothing to escape. */
static bool plain(const char *text, size_t max)
{
	size_t len = strlen(text);

	return len && len < max && strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789.-") == len;
}

static void now_text(char *buf, size_t size)
{
	k8s_event_time((long long)time(NULL), buf, size);
}

/* A problem new to this velod (or failed before and due): POSTed. */
static void post_new(struct k8s_event_post *post, struct entry *entry,
		     const struct k8s_event_note *note)
{
	char when[32], *body;

	now_text(when, sizeof(when));
	body = k8s_event_body(note, post->node, when);
	if (body && enqueue(post, false, note->ns, entry->name, body)) {
		entry->said = SAID_QUEUED;
		entry->count = 1;
	} else {
		entry->said = SAID_FAILED; /* the queue is full: tried at a later sync */
		entry->next_ns = 0;
	}
}

static void count_again(struct k8s_event_post *post, struct entry *entry, const char *ns,
			uint64_t now_ns)
{
	char when[32], *body;

	now_text(when, sizeof(when));
	body = k8s_event_patch(entry->count + 1, when);
	if (body && enqueue(post, true, ns, entry->name, body)) {
		entry->said = SAID_QUEUED;
		entry->count++;
	} else {
		entry->next_ns = now_ns; /* due still: the next sync tries again */
	}
}

static void note_one(struct k8s_event_post *post, const struct k8s_event_note *note,
		     uint64_t now_ns)
{
	char name[K8S_EVENT_NAME_MAX];
	struct entry *entry;

	if (!plain(note->ns, NS_MAX) || !plain(note->name, K8S_EVENT_NAME_MAX))
		return; /* not a name the API would have (a policy file's): no object to name */
	k8s_event_name(note, name);
	entry = find(post, name);
	if (!entry) {
		if (post->n_entries == post->cap) {
			unsigned cap = post->cap ? 2 * post->cap : 16;
			struct entry *grown = realloc(post->entries, cap * sizeof(*grown));

			if (!grown)
				return;
			post->entries = grown;
			post->cap = cap;
		}
		entry = &post->entries[post->n_entries++];
		memset(entry, 0, sizeof(*entry));
		snprintf(entry->name, sizeof(entry->name), "%s", name);
		entry->seen = true;
		post_new(post, entry, note);
		return;
	}
	entry->seen = true;
	if (entry->said == SAID_FAILED && now_ns >= entry->next_ns)
		post_new(post, entry, note);
	else if (entry->said == SAID_POSTED && now_ns >= entry->next_ns)
		count_again(post, entry, note->ns, now_ns);
}

/* An answer from the thread, applied to its entry (gone if its problem went) and logged. */
static void answered(struct k8s_event_post *post, const struct request *req, uint64_t now_ns)
{
	struct entry *entry = find(post, req->name);
	const char *what = req->patch ? "PATCH" : "POST";

	if (req->status >= 200 && req->status < 300) {
		if (req->patch)
			pr_debug("k8s events: PATCH %s/%s: HTTP %ld", req->ns, req->name,
				 req->status);
		else
			pr_info("k8s events: Event %s/%s posted", req->ns, req->name);
		if (entry) {
			entry->said = SAID_POSTED;
			entry->next_ns = now_ns + K8S_EVENT_REPEAT_S * NS_PER_S;
		}
		return;
	}
	if (req->status == 409 && !req->patch) {
		pr_debug("k8s events: %s/%s exists: left to the velod that made it", req->ns,
			 req->name);
		if (entry)
			entry->said = SAID_LEFT;
		return;
	}
	if (req->status == 404 && req->patch) {
		/* Expired (the API keeps Events an hour): posted anew at the next sync. */
		if (entry) {
			entry->said = SAID_FAILED;
			entry->next_ns = 0;
		}
		return;
	}
	if (req->status)
		pr_warn("k8s events: %s %s/%s: HTTP %ld%s", what, req->ns, req->name, req->status,
			req->status == 403 ? " (velod's service account needs create and patch "
					     "on events)"
					   : "");
	else
		pr_warn("k8s events: %s %s/%s: %s", what, req->ns, req->name, req->why);
	if (entry) {
		entry->said = SAID_FAILED;
		entry->next_ns = now_ns + K8S_EVENT_RETRY_S * NS_PER_S;
	}
}

bool k8s_event_post_due(struct k8s_event_post *post, uint64_t now_ns)
{
	bool answered;

	if (!post)
		return false;
	pthread_mutex_lock(&post->lock);
	answered = post->n_done > 0;
	pthread_mutex_unlock(&post->lock);
	if (!answered && now_ns < post->next_sync_ns)
		return false;
	post->next_sync_ns = now_ns + NS_PER_S;
	return true;
}

void k8s_event_post_sync(struct k8s_event_post *post, const struct k8s_event_note *notes,
			 unsigned n, uint64_t now_ns)
{
	struct request done[K8S_EVENT_QUEUE + 1];
	unsigned n_done, kept = 0;

	if (!post)
		return;
	pthread_mutex_lock(&post->lock);
	n_done = post->n_done;
	memcpy(done, post->done, n_done * sizeof(*done));
	post->n_done = 0;
	pthread_mutex_unlock(&post->lock);
	for (unsigned i = 0; i < n_done; i++)
		answered(post, &done[i], now_ns);

	for (unsigned i = 0; i < post->n_entries; i++)
		post->entries[i].seen = false;
	for (unsigned i = 0; i < n; i++)
		note_one(post, &notes[i], now_ns);
	/* A problem gone is forgotten: if it comes back, it is said again. */
	for (unsigned i = 0; i < post->n_entries; i++)
		if (post->entries[i].seen)
			post->entries[kept++] = post->entries[i];
	post->n_entries = kept;
	if (post->dropped) {
		pr_warn("k8s events: %u request(s) didn't fit the queue of %d: tried again later",
			post->dropped, K8S_EVENT_QUEUE);
		post->dropped = 0;
	}
}

struct k8s_event_post *k8s_event_post_start(const struct agent_config *config)
{
	pthread_condattr_t attr;
	struct k8s_event_post *post;
	int ret;

	post = calloc(1, sizeof(*post));
	if (!post)
		return NULL;
	ret = k8s_api_source_init(&post->source, config->kubeconfig);
	if (ret)
		goto err;
	snprintf(post->node, sizeof(post->node), "%s", config->node_name);
	post->curl = curl_api_get();
	if (!post->curl) {
		pr_err("Events need libcurl (libcurl4), which is not installed");
		ret = ENOENT;
		goto err;
	}
	/* Reference-counted; called here after the watches' (older libcurl: not thread-safe). */
	if (post->curl->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ret = ENOMEM;
		goto err;
	}
	pthread_mutex_init(&post->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&post->wake, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&post->thread, NULL, run, post);
	if (ret) {
		pthread_cond_destroy(&post->wake);
		pthread_mutex_destroy(&post->lock);
		goto err;
	}
	return post;
err:
	free(post);
	errno = ret;
	return NULL;
}

void k8s_event_post_stop(struct k8s_event_post *post)
{
	if (!post)
		return;
	pthread_mutex_lock(&post->lock);
	__atomic_store_n(&post->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&post->wake);
	pthread_mutex_unlock(&post->lock);
	pthread_join(post->thread, NULL);
	for (unsigned i = 0; i < post->n_queued; i++)
		free(post->queue[(post->head + i) % K8S_EVENT_QUEUE].body);
	pthread_cond_destroy(&post->wake);
	pthread_mutex_destroy(&post->lock);
	free(post->entries);
	free(post);
}
