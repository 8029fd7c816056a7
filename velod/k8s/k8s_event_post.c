// SPDX-License-Identifier: Apache-2.0
/*
 * velod's Events (k8s_event_post.h). velod's loop keeps what it has said (by
 * Event name) and queues requests; the sender's thread (k8s_event_sender.c)
 * sends them one at a time and hands back each answer, which the loop reads
 * at its next sync: the logger and the table are the loop's alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "k8s_event_post.h"
#include "k8s_event_sender.h"

#define NS_PER_S 1000000000ull

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
	struct k8s_event_sender *sender;
	char node[NODE_NAME_MAX];
	struct entry *entries;
	unsigned n_entries, cap;
	unsigned dropped; /* since the last log line that said so */
	uint64_t next_sync_ns;
};

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
	if (k8s_event_sender_queue(post->sender, patch, ns, name, body))
		return true;
	post->dropped++;
	return false;
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

	if (!plain(note->ns, K8S_EVENT_NS_MAX) || !plain(note->name, K8S_EVENT_NAME_MAX))
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
static void answered(struct k8s_event_post *post, const struct k8s_event_request *req,
		     uint64_t now_ns)
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
	if (!post)
		return false;
	if (!k8s_event_sender_answered(post->sender) && now_ns < post->next_sync_ns)
		return false;
	post->next_sync_ns = now_ns + NS_PER_S;
	return true;
}

void k8s_event_post_sync(struct k8s_event_post *post, const struct k8s_event_note *notes,
			 unsigned n, uint64_t now_ns)
{
	struct k8s_event_request done[K8S_EVENT_QUEUE + 1];
	unsigned n_done, kept = 0;

	if (!post)
		return;
	n_done = k8s_event_sender_answers(post->sender, done);
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
	struct k8s_event_post *post;
	int ret;

	post = calloc(1, sizeof(*post));
	if (!post)
		return NULL;
	snprintf(post->node, sizeof(post->node), "%s", config->node_name);
	post->sender = k8s_event_sender_start(config);
	if (!post->sender) {
		ret = errno;
		free(post);
		errno = ret;
		return NULL;
	}
	return post;
}

void k8s_event_post_stop(struct k8s_event_post *post)
{
	if (!post)
		return;
	k8s_event_sender_stop(post->sender);
	free(post->entries);
	free(post);
}
