// SPDX-License-Identifier: Apache-2.0
/*
 * The thread that sends velod's Event requests (k8s_event_sender.h) one at a
 * time, with libcurl and the plugin's client setup (plugin/k8s/k8s_curl.c),
 * and hands back each answer. Only the queue and the answers are shared, under
 * one lock: the logger is the loop's.
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
#include "k8s_event_sender.h"

#define CONNECT_TIMEOUT_MS 5000
#define REQUEST_TIMEOUT_MS 10000

struct k8s_event_sender {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop; /* under lock; the transfer's progress callback reads it atomically */
	const struct curl_api *curl;
	struct k8s_api_source source;
	/* Under lock: requests waiting (a FIFO), answers back. */
	struct k8s_event_request queue[K8S_EVENT_QUEUE];
	unsigned head, n_queued;
	struct k8s_event_request done[K8S_EVENT_QUEUE + 1]; /* the queue's and the one in flight */
	unsigned n_done;
};

static int on_progress(void *opaque, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct k8s_event_sender *sender = opaque;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return __atomic_load_n(&sender->stop, __ATOMIC_RELAXED) ? 1 : 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *opaque)
{
	(void)data;
	(void)opaque;
	return size * nmemb; /* the created Event or a Status: the status code says enough */
}

/* req->status, or req->why when no answer came. */
static void send_one(struct k8s_event_sender *sender, struct k8s_event_request *req)
{
	const struct curl_api *curl = sender->curl;
	char errbuf[CURL_ERROR_SIZE] = "", why[K8S_EVENT_WHY_MAX] = "", *url = NULL;
	struct curl_slist *headers = NULL, *grown;
	struct k8s_api_target target;
	CURL *handle = NULL;
	CURLcode code;
	int ret;

	ret = k8s_api_source_load(&sender->source, &target, why, sizeof(why));
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
	curl->easy_setopt(handle, CURLOPT_XFERINFODATA, sender);
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
	struct k8s_event_sender *sender = arg;

	pthread_mutex_lock(&sender->lock);
	for (;;) {
		struct k8s_event_request req;

		while (!sender->stop && !sender->n_queued)
			pthread_cond_wait(&sender->wake, &sender->lock);
		if (sender->stop)
			break;
		req = sender->queue[sender->head];
		sender->head = (sender->head + 1) % K8S_EVENT_QUEUE;
		sender->n_queued--;
		pthread_mutex_unlock(&sender->lock);
		send_one(sender, &req);
		free(req.body);
		req.body = NULL;
		pthread_mutex_lock(&sender->lock);
		sender->done[sender->n_done++] = req;
	}
	pthread_mutex_unlock(&sender->lock);
	return NULL;
}

struct k8s_event_sender *k8s_event_sender_start(const struct agent_config *config)
{
	pthread_condattr_t attr;
	struct k8s_event_sender *sender;
	int ret;

	sender = calloc(1, sizeof(*sender));
	if (!sender)
		return NULL;
	ret = k8s_api_source_init(&sender->source, config->kubeconfig);
	if (ret)
		goto err;
	sender->curl = curl_api_get();
	if (!sender->curl) {
		pr_err("Events need libcurl (libcurl4), which is not installed");
		ret = ENOENT;
		goto err;
	}
	/* Reference-counted; called here after the watches' (older libcurl: not thread-safe). */
	if (sender->curl->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ret = ENOMEM;
		goto err;
	}
	pthread_mutex_init(&sender->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sender->wake, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&sender->thread, NULL, run, sender);
	if (ret) {
		pthread_cond_destroy(&sender->wake);
		pthread_mutex_destroy(&sender->lock);
		goto err;
	}
	return sender;
err:
	free(sender);
	errno = ret;
	return NULL;
}

bool k8s_event_sender_queue(struct k8s_event_sender *sender, bool patch, const char *ns,
			    const char *name, char *body)
{
	struct k8s_event_request *req;
	bool queued = false;

	pthread_mutex_lock(&sender->lock);
	/* The answers' room is the queue's and one: never more out than that. */
	if (sender->n_queued < K8S_EVENT_QUEUE &&
	    sender->n_queued + sender->n_done < K8S_EVENT_QUEUE) {
		req = &sender->queue[(sender->head + sender->n_queued) % K8S_EVENT_QUEUE];
		memset(req, 0, sizeof(*req));
		req->patch = patch;
		snprintf(req->ns, sizeof(req->ns), "%s", ns);
		snprintf(req->name, sizeof(req->name), "%s", name);
		req->body = body;
		sender->n_queued++;
		queued = true;
		pthread_cond_signal(&sender->wake);
	}
	pthread_mutex_unlock(&sender->lock);
	if (!queued)
		free(body);
	return queued;
}

bool k8s_event_sender_answered(struct k8s_event_sender *sender)
{
	bool answered;

	pthread_mutex_lock(&sender->lock);
	answered = sender->n_done > 0;
	pthread_mutex_unlock(&sender->lock);
	return answered;
}

unsigned k8s_event_sender_answers(struct k8s_event_sender *sender,
				  struct k8s_event_request done[K8S_EVENT_QUEUE + 1])
{
	unsigned n_done;

	pthread_mutex_lock(&sender->lock);
	n_done = sender->n_done;
	memcpy(done, sender->done, n_done * sizeof(*done));
	sender->n_done = 0;
	pthread_mutex_unlock(&sender->lock);
	return n_done;
}

void k8s_event_sender_stop(struct k8s_event_sender *sender)
{
	if (!sender)
		return;
	pthread_mutex_lock(&sender->lock);
	__atomic_store_n(&sender->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&sender->wake);
	pthread_mutex_unlock(&sender->lock);
	pthread_join(sender->thread, NULL);
	for (unsigned i = 0; i < sender->n_queued; i++)
		free(sender->queue[(sender->head + i) % K8S_EVENT_QUEUE].body);
	pthread_cond_destroy(&sender->wake);
	pthread_mutex_destroy(&sender->lock);
	free(sender);
}
