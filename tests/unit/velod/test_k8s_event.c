// SPDX-License-Identifier: Apache-2.0
/*
 * A watch stream's line for any resource (velod/k8s/k8s_event.h): what reaches
 * the resource's callback, and what the line itself decides (bookmarks,
 * ERROR events, lines that aren't events). No network, no thread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "k8s/k8s_event.h"

/* What the callback saw. */
struct seen {
	unsigned calls;
	bool deleted;
	char name[64];
	int answer;
};

static int record(void *ctx, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct seen *seen = ctx;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(object, "metadata"), "name");

	seen->calls++;
	seen->deleted = deleted;
	snprintf(seen->name, sizeof(seen->name), "%s",
		 cJSON_IsString(name) ? name->valuestring : "");
	if (seen->answer < 0)
		snprintf(why, why_size, "callback says no");
	return seen->answer;
}

static int feed(const char *line, char *rv, size_t rv_size, struct seen *seen)
{
	char why[200] = "";

	return k8s_event_apply(line, strlen(line), rv, rv_size, record, seen, why, sizeof(why));
}

static void test_changes_reach_the_callback(void **state)
{
	struct seen seen = { .answer = 1 };
	char rv[32] = "";

	(void)state;
	assert_int_equal(feed("{\"type\": \"ADDED\", \"object\": {\"kind\": \"Service\", "
			      "\"metadata\": {\"name\": \"web\", \"resourceVersion\": \"7\"}}}",
			      rv, sizeof(rv), &seen),
			 1);
	assert_int_equal(seen.calls, 1);
	assert_false(seen.deleted);
	assert_string_equal(seen.name, "web");
	assert_string_equal(rv, "7");
	seen.answer = 0;
	assert_int_equal(feed("{\"type\": \"DELETED\", \"object\": {\"metadata\": "
			      "{\"name\": \"web-x\", \"resourceVersion\": \"9\"}}}",
			      rv, sizeof(rv), &seen),
			 0);
	assert_int_equal(seen.calls, 2);
	assert_true(seen.deleted);
	assert_string_equal(seen.name, "web-x");
	assert_string_equal(rv, "9");
	/* The callback's refusal is the answer; the version still moves on. */
	seen.answer = -EINVAL;
	assert_int_equal(feed("{\"type\": \"MODIFIED\", \"object\": {\"metadata\": "
			      "{\"name\": \"web\", \"resourceVersion\": \"10\"}}}",
			      rv, sizeof(rv), &seen),
			 -EINVAL);
	assert_string_equal(rv, "10");
}

static void test_lines_the_watch_decides(void **state)
{
	struct seen seen = { .answer = 1 };
	char rv[32] = "5", tiny[3] = "5";

	(void)state;
	/* A bookmark moves the version on and changes nothing. */
	assert_int_equal(feed("{\"type\": \"BOOKMARK\", \"object\": {\"kind\": \"EndpointSlice\", "
			      "\"metadata\": {\"resourceVersion\": \"12\"}}}",
			      rv, sizeof(rv), &seen),
			 0);
	assert_string_equal(rv, "12");
	assert_int_equal(seen.calls, 0);
	/* A version that doesn't fit is not kept half. */
	assert_int_equal(feed("{\"type\": \"BOOKMARK\", \"object\": {\"metadata\": "
			      "{\"resourceVersion\": \"12345\"}}}",
			      tiny, sizeof(tiny), &seen),
			 0);
	assert_string_equal(tiny, "5");
	assert_int_equal(feed("{\"type\": \"ERROR\", \"object\": {\"kind\": \"Status\", "
			      "\"code\": 410, \"metadata\": {\"resourceVersion\": \"99\"}}}",
			      rv, sizeof(rv), &seen),
			 -ESTALE);
	assert_string_equal(rv, "12"); /* an ERROR's version is not one to resume at */
	assert_int_equal(
		feed("{\"type\": \"ERROR\", \"object\": {\"code\": 500}}", rv, sizeof(rv), &seen),
		-EPROTO);
	assert_int_equal(feed("{\"type\": \"SURPRISE\", \"object\": {}}", rv, sizeof(rv), &seen),
			 -EPROTO);
	assert_int_equal(feed("{\"type\": \"ADDED\"}", rv, sizeof(rv), &seen), -EPROTO);
	assert_int_equal(feed("not json", rv, sizeof(rv), &seen), -EPROTO);
	assert_int_equal(seen.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changes_reach_the_callback),
		cmocka_unit_test(test_lines_the_watch_decides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
