// SPDX-License-Identifier: Apache-2.0
/* GET /flows, plain and followed (flows_http.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/progs.h"
#include "flows.h"
#include "flows_http.h"

/* A JSON line is < 600 bytes: a chunk holds many, and always one. */
#define LINE_MAX_BYTES 1024
/*
 * Followers at once, over every listener: below each listener's connection
 * limit, so one-shot requests (and /healthz, with serveFlowsOnListen) always
 * find a slot. One more is answered 503.
 */
#define FLOWS_MAX_FOLLOWERS 16u
/*
 * A follower with nothing to read gets an empty line this often: a suspended
 * connection is never written, so one whose reader is gone would hold its slot
 * for good. Written, a gone reader fails the send. A reader that stops reading
 * while flows come fills its socket, and libmicrohttpd closes a connection that
 * moved no byte for HTTP_TIMEOUT_S (http.c).
 */
#define FLOWS_HEARTBEAT_NS (5 * 1000000000ull)

struct follower {
	struct flows *flows;
	struct MHD_Connection *connection;
	uint64_t next_seq;
	double since; /* unix seconds; flows before are skipped */
	bool follow;
	bool suspended;
	bool heartbeat; /* resumed with nothing new: send an empty line */
	uint64_t suspended_ns; /* monotonic, when it last waited */
	struct follower *prev, *next;
};

/* velod has one thread: the followers (of every listener) are a list of its own. */
static struct follower *followers;
static unsigned n_followers; /* with follow, in the list */
static bool stopping;

static void unlink_follower(struct follower *follower)
{
	if (follower->prev)
		follower->prev->next = follower->next;
	else if (followers == follower)
		followers = follower->next;
	if (follower->next)
		follower->next->prev = follower->prev;
	follower->prev = follower->next = NULL;
}

static void free_follower(void *cls)
{
	struct follower *follower = cls;

	if (follower->follow)
		n_followers--;
	unlink_follower(follower);
	free(follower);
}

static ssize_t read_flows(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct follower *follower = cls;
	const struct flow_entry *entry;
	size_t used = 0;

	(void)pos;
	if (follower->next_seq < flows_first_seq(follower->flows))
		follower->next_seq = flows_first_seq(follower->flows); /* overwritten meanwhile */
	while ((entry = flows_get(follower->flows, follower->next_seq))) {
		size_t n;

		if (entry->time_unix < follower->since) {
			follower->next_seq++;
			continue;
		}
		n = flows_entry_json(entry, buf + used, max - used);
		if (n >= max - used)
			break; /* the next chunk takes it */
		used += n;
		follower->next_seq++;
	}
	if (used) {
		follower->heartbeat = false; /* the flows beat for it */
		return (ssize_t)used;
	}
	if (!follower->follow || stopping)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (follower->heartbeat) {
		follower->heartbeat = false;
		buf[0] = '\n'; /* JSON lines readers skip it */
		return 1;
	}
	/* Nothing new: wait, suspended, for flows_http_wake or the heartbeat. */
	follower->suspended = true;
	follower->suspended_ns = velo_monotonic_ns();
	MHD_suspend_connection(follower->connection);
	return 0;
}

static double query_double(struct MHD_Connection *connection, const char *key, double fallback)
{
	const char *text = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, key);
	char *end;
	double value;

	if (!text)
		return fallback;
	value = strtod(text, &end);
	return *end || end == text ? -1 : value;
}

enum MHD_Result flows_http(struct agent *agent, struct MHD_Connection *connection)
{
	struct MHD_Response *response;
	struct follower *follower;
	enum MHD_Result ret;
	double since = query_double(connection, "since", 0);
	double follow = query_double(connection, "follow", 0);
	static const char missing[] = "flows are off (flowBuffer 0)\n";
	static const char bad[] = "since: unix seconds; follow: 0 or 1\n";

	if (!agent->flows || since < 0 || (follow != 0 && follow != 1)) {
		const char *text = agent->flows ? bad : missing;

		response = MHD_create_response_from_buffer(strlen(text), (void *)text,
							   MHD_RESPMEM_PERSISTENT);
		if (!response)
			return MHD_NO;
		ret = MHD_queue_response(connection,
					 agent->flows ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_NOT_FOUND,
					 response);
		MHD_destroy_response(response);
		return ret;
	}
	if (follow == 1 && n_followers >= FLOWS_MAX_FOLLOWERS) {
		char full[128];

		snprintf(full, sizeof(full),
			 "velod serves at most %u followers of /flows at once: try again when one "
			 "has ended\n",
			 FLOWS_MAX_FOLLOWERS);
		response =
			MHD_create_response_from_buffer(strlen(full), full, MHD_RESPMEM_MUST_COPY);
		if (!response)
			return MHD_NO;
		MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, "5");
		ret = MHD_queue_response(connection, MHD_HTTP_SERVICE_UNAVAILABLE, response);
		MHD_destroy_response(response);
		return ret;
	}
	follower = calloc(1, sizeof(*follower));
	if (!follower)
		return MHD_NO;
	follower->flows = agent->flows;
	follower->connection = connection;
	follower->next_seq = flows_first_seq(agent->flows);
	follower->since = since;
	follower->follow = follow == 1;
	response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, LINE_MAX_BYTES * 16,
						     read_flows, follower, free_follower);
	if (!response) {
		free(follower);
		return MHD_NO;
	}
	follower->next = followers;
	if (followers)
		followers->prev = follower;
	followers = follower;
	if (follower->follow)
		n_followers++;
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
	ret = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	return ret;
}

void flows_http_wake(void)
{
	for (struct follower *follower = followers; follower; follower = follower->next)
		if (follower->suspended) {
			follower->suspended = false;
			MHD_resume_connection(follower->connection);
		}
}

uint64_t flows_http_deadline(void)
{
	uint64_t deadline = UINT64_MAX;

	for (struct follower *follower = followers; follower; follower = follower->next)
		if (follower->suspended && follower->suspended_ns + FLOWS_HEARTBEAT_NS < deadline)
			deadline = follower->suspended_ns + FLOWS_HEARTBEAT_NS;
	return deadline;
}

void flows_http_step(uint64_t now_ns)
{
	for (struct follower *follower = followers; follower; follower = follower->next)
		if (follower->suspended && follower->suspended_ns + FLOWS_HEARTBEAT_NS <= now_ns) {
			follower->suspended = false;
			follower->heartbeat = true;
			MHD_resume_connection(follower->connection);
		}
}

void flows_http_stop(void)
{
	stopping = true;
	flows_http_wake();
}
