// SPDX-License-Identifier: Apache-2.0
/* A core/v1 Event's name, body and count patch (k8s_event_body.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "k8s_event_body.h"

#define NAME_PREFIX_MAX 200 /* of the object's name: room for ".velo-" and 16 hex digits */

static uint64_t fnv1a(uint64_t hash, const char *text)
{
	/* The '\0' too: "a" "bc" and "ab" "c" differ. */
	do {
		hash ^= (unsigned char)*text;
		hash *= 0x100000001b3ull;
	} while (*text++);
	return hash;
}

void k8s_event_name(const struct k8s_event_note *note, char name[K8S_EVENT_NAME_MAX])
{
	uint64_t hash = 0xcbf29ce484222325ull;
	size_t len = strlen(note->name);

	hash = fnv1a(hash, note->kind);
	hash = fnv1a(hash, note->ns);
	hash = fnv1a(hash, note->name);
	hash = fnv1a(hash, note->reason);
	hash = fnv1a(hash, note->message);
	/* A cut name may end in '.' or '-', which a DNS label may not: drop those. */
	if (len > NAME_PREFIX_MAX)
		len = NAME_PREFIX_MAX;
	while (len && (note->name[len - 1] == '.' || note->name[len - 1] == '-'))
		len--;
	snprintf(name, K8S_EVENT_NAME_MAX, "%.*s.velo-%016" PRIx64, (int)len, note->name, hash);
}

void k8s_event_time(long long seconds, char *buf, size_t size)
{
	time_t when = (time_t)seconds;
	struct tm tm;

	if (!gmtime_r(&when, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

static char *print(cJSON *root)
{
	char *text = root ? cJSON_PrintUnformatted(root) : NULL;

	cJSON_Delete(root);
	if (!text)
		errno = ENOMEM;
	return text;
}

char *k8s_event_body(const struct k8s_event_note *note, const char *node, const char *time)
{
	cJSON *root = cJSON_CreateObject(), *meta, *object, *source;
	char name[K8S_EVENT_NAME_MAX], message[K8S_EVENT_MESSAGE_MAX];

	if (!root)
		goto fail;
	k8s_event_name(note, name);
	snprintf(message, sizeof(message), "%s", note->message);
	meta = cJSON_AddObjectToObject(root, "metadata");
	object = cJSON_AddObjectToObject(root, "involvedObject");
	source = cJSON_AddObjectToObject(root, "source");
	if (!meta || !object || !source || !cJSON_AddStringToObject(root, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(root, "kind", "Event") ||
	    !cJSON_AddStringToObject(meta, "name", name) ||
	    !cJSON_AddStringToObject(meta, "namespace", note->ns) ||
	    !cJSON_AddStringToObject(object, "kind", note->kind) ||
	    !cJSON_AddStringToObject(object, "apiVersion", note->api_version) ||
	    !cJSON_AddStringToObject(object, "namespace", note->ns) ||
	    !cJSON_AddStringToObject(object, "name", note->name) ||
	    (note->uid && note->uid[0] && !cJSON_AddStringToObject(object, "uid", note->uid)) ||
	    !cJSON_AddStringToObject(root, "type", "Warning") ||
	    !cJSON_AddStringToObject(root, "reason", note->reason) ||
	    !cJSON_AddStringToObject(root, "message", message) ||
	    !cJSON_AddStringToObject(source, "component", "velod") ||
	    (node[0] && !cJSON_AddStringToObject(source, "host", node)) ||
	    !cJSON_AddStringToObject(root, "reportingComponent", "velo.dev/velod") ||
	    !cJSON_AddStringToObject(root, "reportingInstance", node) ||
	    !cJSON_AddStringToObject(root, "firstTimestamp", time) ||
	    !cJSON_AddStringToObject(root, "lastTimestamp", time) ||
	    !cJSON_AddNumberToObject(root, "count", 1))
		goto fail;
	return print(root);
fail:
	cJSON_Delete(root);
	errno = ENOMEM;
	return NULL;
}

char *k8s_event_patch(unsigned count, const char *time)
{
	cJSON *root = cJSON_CreateObject();

	if (root && (!cJSON_AddNumberToObject(root, "count", count) ||
		     !cJSON_AddStringToObject(root, "lastTimestamp", time))) {
		cJSON_Delete(root);
		root = NULL;
	}
	return print(root);
}
