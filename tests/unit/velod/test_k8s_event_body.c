// SPDX-License-Identifier: Apache-2.0
/*
 * The Events velod posts (velod/k8s/k8s_event_body.h): the body the API gets, the
 * name that makes a second POST of one problem a 409, the count patch. Pure.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "k8s/k8s_event_body.h"

static const struct k8s_event_note unplaced = {
	.kind = "Pod",
	.api_version = "v1",
	.ns = "x",
	.name = "web-1",
	.uid = "0b1c2d3e-aaaa-bbbb-cccc-0123456789ab",
	.reason = "PolicyPodUnplaced",
	.message = "velod can't place this pod: no Pod object of this name (yet)",
};

static const char *text_at(const cJSON *root, const char *object, const char *key)
{
	const cJSON *from = object ? cJSON_GetObjectItemCaseSensitive(root, object) : root;
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(from, key);

	return cJSON_IsString(item) ? item->valuestring : "(missing)";
}

static void test_body_names_the_object_and_the_reason(void **state)
{
	char *text = k8s_event_body(&unplaced, "node-a", "2026-12-05T19:40:00Z");
	cJSON *root = cJSON_Parse(text);
	char name[K8S_EVENT_NAME_MAX];

	(void)state;
	assert_non_null(root);
	k8s_event_name(&unplaced, name);
	assert_string_equal(text_at(root, NULL, "apiVersion"), "v1");
	assert_string_equal(text_at(root, NULL, "kind"), "Event");
	assert_string_equal(text_at(root, "metadata", "name"), name);
	assert_string_equal(text_at(root, "metadata", "namespace"), "x");
	assert_string_equal(text_at(root, "involvedObject", "kind"), "Pod");
	assert_string_equal(text_at(root, "involvedObject", "apiVersion"), "v1");
	assert_string_equal(text_at(root, "involvedObject", "namespace"), "x");
	assert_string_equal(text_at(root, "involvedObject", "name"), "web-1");
	assert_string_equal(text_at(root, "involvedObject", "uid"), unplaced.uid);
	assert_string_equal(text_at(root, NULL, "type"), "Warning");
	assert_string_equal(text_at(root, NULL, "reason"), "PolicyPodUnplaced");
	assert_string_equal(text_at(root, NULL, "message"), unplaced.message);
	assert_string_equal(text_at(root, "source", "component"), "velod");
	assert_string_equal(text_at(root, "source", "host"), "node-a");
	assert_string_equal(text_at(root, NULL, "reportingComponent"), "velo.dev/velod");
	assert_string_equal(text_at(root, NULL, "reportingInstance"), "node-a");
	assert_string_equal(text_at(root, NULL, "firstTimestamp"), "2026-12-05T19:40:00Z");
	assert_string_equal(text_at(root, NULL, "lastTimestamp"), "2026-12-05T19:40:00Z");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "count")->valueint, 1);
	cJSON_Delete(root);
	free(text);
}

/* Without a uid the reference has none (the API would take "" as a uid that matches nothing). */
static void test_body_without_uid_or_node(void **state)
{
	struct k8s_event_note note = unplaced;
	char *text;
	cJSON *root;

	(void)state;
	note.uid = NULL;
	text = k8s_event_body(&note, "", "2026-12-05T19:40:00Z");
	root = cJSON_Parse(text);
	assert_non_null(root);
	assert_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "involvedObject"), "uid"));
	assert_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "source"), "host"));
	cJSON_Delete(root);
	free(text);
}

static void test_message_is_cut(void **state)
{
	struct k8s_event_note note = unplaced;
	char long_message[3000], *text;
	cJSON *root;

	(void)state;
	memset(long_message, 'm', sizeof(long_message) - 1);
	long_message[sizeof(long_message) - 1] = '\0';
	note.message = long_message;
	text = k8s_event_body(&note, "node-a", "2026-12-05T19:40:00Z");
	root = cJSON_Parse(text);
	assert_non_null(root);
	assert_int_equal(strlen(text_at(root, NULL, "message")), K8S_EVENT_MESSAGE_MAX - 1);
	cJSON_Delete(root);
	free(text);
}

/* One name per (object, reason): the same on every node and run, another for another reason. */
static void test_name_is_one_per_problem(void **state)
{
	struct k8s_event_note other = unplaced, same = unplaced;
	char a[K8S_EVENT_NAME_MAX], b[K8S_EVENT_NAME_MAX], c[K8S_EVENT_NAME_MAX];

	(void)state;
	k8s_event_name(&unplaced, a);
	k8s_event_name(&same, b);
	assert_string_equal(a, b);
	assert_int_equal(strncmp(a, "web-1.velo-", 11), 0);
	assert_int_equal(strlen(a), strlen("web-1.velo-") + 16);
	other.message = "velod can't place this pod: its Pod object says hostNetwork";
	k8s_event_name(&other, c);
	assert_string_not_equal(a, c);
	other = unplaced;
	other.kind = "NetworkPolicy";
	k8s_event_name(&other, c);
	assert_string_not_equal(a, c);
	/* The uid is not part of it: velod may not know it when it first names the pod. */
	other = unplaced;
	other.uid = NULL;
	k8s_event_name(&other, c);
	assert_string_equal(a, c);
}

/* A 253-character object name is cut, never to end in '.' or '-' before the suffix. */
static void test_long_name_is_cut(void **state)
{
	struct k8s_event_note note = unplaced;
	char object[254], name[K8S_EVENT_NAME_MAX];

	(void)state;
	memset(object, 'a', 253);
	object[253] = '\0';
	object[199] = '-';
	note.name = object;
	k8s_event_name(&note, name);
	assert_true(strlen(name) <= 253);
	assert_int_equal(strspn(name, "a"), 199);
	assert_int_equal(strncmp(name + 199, ".velo-", 6), 0);
}

static void test_patch_counts_again(void **state)
{
	char *text = k8s_event_patch(3, "2026-12-05T20:10:00Z");
	cJSON *root = cJSON_Parse(text);

	(void)state;
	assert_non_null(root);
	assert_int_equal(cJSON_GetArraySize(root), 2);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "count")->valueint, 3);
	assert_string_equal(text_at(root, NULL, "lastTimestamp"), "2026-12-05T20:10:00Z");
	cJSON_Delete(root);
	free(text);
}

static void test_time_is_rfc3339_utc(void **state)
{
	char buf[32];

	(void)state;
	k8s_event_time(1796499600, buf, sizeof(buf));
	assert_string_equal(buf, "2026-12-05T19:40:00Z");
	k8s_event_time(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_names_the_object_and_the_reason),
		cmocka_unit_test(test_body_without_uid_or_node),
		cmocka_unit_test(test_message_is_cut),
		cmocka_unit_test(test_name_is_one_per_problem),
		cmocka_unit_test(test_long_name_is_cut),
		cmocka_unit_test(test_patch_counts_again),
		cmocka_unit_test(test_time_is_rfc3339_utc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
