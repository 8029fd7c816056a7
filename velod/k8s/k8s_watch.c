// SPDX-License-Identifier: Apache-2.0
/*
 * A resource's watch thread (k8s_watch.h). It LISTs, then WATCHes
 * (k8s_list_watch.c, blocking libcurl requests with the plugin's client setup:
 * plugin/k8s/kubeconfig.c, k8s_curl.c). 410 Gone, as an HTTP status or an
 * ERROR event, means the version is too old: relist. A watch that ends (the
 * server's timeoutSeconds, a dropped connection) resumes from the last
 * version seen, after a capped backoff when it failed. The kubeconfig, and so
 * a tokenFile, or the service account's token is read again for every
 * request: projected tokens rotate. velo's logger is single-threaded: the
 * thread queues its lines and velod's loop writes them (k8s_watch_take).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "k8s/curl_lazy.h"
#include "k8s/kubeconfig.h"
#include "k8s_api_target.h"
#include "k8s_watch.h"
#include "k8s_watch_shared.h"

#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000

/* Sleeps ms unless stop comes first. */
static void pause_ms(struct k8s_watch *watch, unsigned ms)
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

static void note_error(struct k8s_watch *watch, const char *why)
{
	pthread_mutex_lock(&watch->lock);
	watch->stats.errors++;
	snprintf(watch->stats.last_error, sizeof(watch->stats.last_error), "%s", why);
	pthread_mutex_unlock(&watch->lock);
}

static void note_listed(struct k8s_watch *watch, bool relist)
{
	k8s_watch_shared_log(watch, VELO_LOG_INFO, "k8s %s: listed %u (resourceVersion %s)",
			     watch->resource.name, watch->n_listed, watch->rv);
	pthread_mutex_lock(&watch->lock);
	watch->stats.lists++;
	watch->stats.relists += relist;
	watch->stats.last_error[0] = '\0';
	pthread_mutex_unlock(&watch->lock);
}

/* An optional resource the server won't give: said once, taken as empty, nothing waits on it. */
static void note_unserved(struct k8s_watch *watch, const char *why)
{
	k8s_watch_shared_log(watch, VELO_LOG_WARN,
			     "k8s %s: %s: carrying on without them; asking again every %d s",
			     watch->resource.name, why, K8S_UNSERVED_RETRY_S);
	note_error(watch, why);
	k8s_watch_shared_unserved(watch);
}

static void *run(void *arg)
{
	struct k8s_watch *watch = arg;
	const char *name = watch->resource.name;
	unsigned backoff_ms = 0;
	bool need_list = true, listed_once = false, unserved = false;

	while (!k8s_watch_shared_stopping(watch)) {
		struct k8s_api_target target;
		uint64_t started = velo_monotonic_ns(), events = 0;
		char why[400] = "";
		int ret;

		ret = k8s_api_source_load(&watch->source, &target, why, sizeof(why));
		if (!ret && need_list) {
			ret = k8s_list_watch_list(watch, &target, why, sizeof(why));
			if (!ret) {
				note_listed(watch, listed_once);
				need_list = false;
				listed_once = true;
				unserved = false;
				backoff_ms = 0;
			} else if (ret == -ESTALE) {
				ret = -EPROTO; /* the pages expired mid-LIST: list again, after a pause */
			} else if ((ret == -ENOENT || ret == -EACCES) && watch->resource.optional) {
				if (!unserved)
					note_unserved(watch, why);
				unserved = true;
				velo_k8s_target_free(&target);
				pause_ms(watch, K8S_UNSERVED_RETRY_S * 1000);
				continue;
			}
		}
		if (!ret) {
			ret = k8s_list_watch_stream(watch, &target, &events, why, sizeof(why));
			if (!k8s_watch_shared_stopping(watch)) {
				pthread_mutex_lock(&watch->lock);
				watch->stats.watch_restarts++;
				pthread_mutex_unlock(&watch->lock);
			}
		}
		velo_k8s_target_free(&target);
		if (k8s_watch_shared_stopping(watch))
			break;
		if (ret == -ESTALE) {
			k8s_watch_shared_log(watch, VELO_LOG_INFO,
					     "k8s %s: resourceVersion %s is too old (410 Gone): "
					     "relisting",
					     name, watch->rv);
			need_list = true;
			/* A server that answers 410 to a fresh list's version must not spin us. */
			if (events)
				continue;
		}
		if (ret && ret != -ESTALE) {
			k8s_watch_shared_log(watch, VELO_LOG_WARN, "k8s %s: %s", name, why);
			note_error(watch, why);
		} else if (!ret) {
			k8s_watch_shared_log(
				watch, VELO_LOG_DEBUG,
				"k8s %s: watch ended after %llu events; resuming at %s", name,
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

static void free_watch(struct k8s_watch *watch)
{
	if (watch->event_fd >= 0)
		close(watch->event_fd);
	free(watch);
}

/* Once, before the first thread exists: older libcurl's global init is not thread-safe. */
static int curl_init(const struct curl_api *curl)
{
	static bool done;

	if (!done && curl->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return ENOMEM;
	done = true;
	return 0;
}

struct k8s_watch *k8s_watch_start(const struct k8s_resource *resource,
				  const struct agent_config *config)
{
	pthread_condattr_t attr;
	struct k8s_watch *watch;
	int ret;

	watch = calloc(1, sizeof(*watch));
	if (!watch)
		return NULL;
	watch->resource = *resource;
	watch->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (watch->event_fd < 0) {
		ret = errno;
		goto err;
	}
	ret = k8s_api_source_init(&watch->source, config->kubeconfig);
	if (ret)
		goto err;
	watch->curl = curl_api_get();
	if (!watch->curl) {
		pr_err("the %s watch needs libcurl (libcurl4), which is not installed",
		       resource->name);
		ret = ENOENT;
		goto err;
	}
	ret = curl_init(watch->curl);
	if (ret)
		goto err;
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
	pr_info("k8s %s: watching %s (%s)", resource->name, resource->path,
		config->kubeconfig[0] ? config->kubeconfig : "in-cluster service account");
	return watch;
err:
	free_watch(watch);
	errno = ret;
	return NULL;
}

int k8s_watch_fd(const struct k8s_watch *watch)
{
	return watch->event_fd;
}

void k8s_watch_wake(struct k8s_watch *watch)
{
	/* Fails only when the counter is already near its maximum: the loop wakes anyway. */
	(void)eventfd_write(watch->event_fd, 1);
}

void k8s_watch_take(struct k8s_watch *watch)
{
	uint64_t count;

	if (read(watch->event_fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing new signalled; the resource's state says what changed. */
	}
	pthread_mutex_lock(&watch->lock);
	for (unsigned i = 0; i < watch->n_logged; i++)
		log_msg(watch->log_queue[i].level, "%s", watch->log_queue[i].text);
	if (watch->n_dropped)
		pr_warn("k8s %s: %u log lines dropped", watch->resource.name, watch->n_dropped);
	watch->n_logged = watch->n_dropped = 0;
	pthread_mutex_unlock(&watch->lock);
}

void k8s_watch_stats(struct k8s_watch *watch, struct k8s_watch_stats *stats)
{
	pthread_mutex_lock(&watch->lock);
	*stats = watch->stats;
	pthread_mutex_unlock(&watch->lock);
}

void k8s_watch_cancel(struct k8s_watch *watch)
{
	if (!watch)
		return;
	pthread_mutex_lock(&watch->lock);
	__atomic_store_n(&watch->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&watch->wake);
	pthread_mutex_unlock(&watch->lock);
}

void k8s_watch_stop(struct k8s_watch *watch)
{
	if (!watch)
		return;
	k8s_watch_cancel(watch);
	pthread_join(watch->thread, NULL);
	pthread_cond_destroy(&watch->wake);
	pthread_mutex_destroy(&watch->lock);
	free_watch(watch);
}
