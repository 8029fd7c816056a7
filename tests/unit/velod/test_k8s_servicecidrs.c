// SPDX-License-Identifier: Apache-2.0
/*
 * velod's ServiceCIDR watch (velod/k8s/k8s_servicecidrs.c) on its own: LIST and
 * watch events through the callbacks it gives its watch, what velod's loop
 * takes, and the ranges policy gets (serviceCidrs first, then the API's,
 * each once). The watch thread (k8s_watch.c) is replaced by a stand-in
 * (k8s_watch_standin.c) that keeps the callbacks the watch set
 * (k8s_watch_set.c) gives it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "base/addr.h"
#include "policy/cidr.h"
#include "k8s/k8s_servicecidrs.h"
#include "k8s_watch_standin.h"

static struct k8s_watch *const the_watch = &standin_watches[0];

/* ---- driving it ---- */

static struct k8s_servicecidrs *cidrs;
static struct agent_config config;

static int setup(void **state)
{
	(void)state;
	standin_reset();
	memset(&config, 0, sizeof(config));
	cidrs = k8s_servicecidrs_start(&config);
	assert_non_null(cidrs);
	assert_string_equal(the_watch->resource.path, "/apis/networking.k8s.io/v1/servicecidrs");
	assert_true(the_watch->resource.optional);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	k8s_servicecidrs_stop(cidrs);
	return 0;
}

static void list(const char *items)
{
	const struct k8s_resource *resource = &the_watch->resource;
	cJSON *array = cJSON_Parse(items), *item;
	char why[200];

	assert_non_null(array);
	resource->list_begin(resource->ctx);
	cJSON_ArrayForEach (item, array)
		assert_int_equal(resource->list_item(resource->ctx, item, why, sizeof(why)), 0);
	resource->list_end(resource->ctx);
	cJSON_Delete(array);
}

static int event(bool deleted, const char *object)
{
	cJSON *json = cJSON_Parse(object);
	char why[200] = "";
	int ret;

	assert_non_null(json);
	ret = the_watch->resource.change(the_watch->resource.ctx, deleted, json, why, sizeof(why));
	cJSON_Delete(json);
	return ret;
}

/* The ranges policy gets, as "a b c". */
static const char *ranges(void)
{
	static char text[512];
	struct velo_pol_cidr out[16];
	unsigned n, dropped;
	char one[64];

	n = k8s_servicecidrs_ranges(cidrs, &config, out, 16, &dropped);
	assert_int_equal(dropped, 0);
	text[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		if (i)
			strcat(text, " ");
		strcat(text, velo_pol_cidr_text(&out[i], one, sizeof(one)));
	}
	return text;
}

#define KUBERNETES(cidrs) \
	"{\"metadata\": {\"name\": \"kubernetes\"}, \"spec\": {\"cidrs\": " cidrs "}}"

static void test_listed_then_followed(void **state)
{
	(void)state;
	assert_int_equal(k8s_servicecidrs_take(cidrs), -EAGAIN);
	list("[" KUBERNETES("[\"10.96.0.0/16\", \"fd00:10:96::/112\"]") "]");
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	assert_string_equal(ranges(), "10.96.0.0/16 fd00:10:96::/112");
	assert_int_equal(k8s_servicecidrs_take(cidrs), 0);

	/* A second object, then the first one changed. */
	assert_int_equal(event(false, "{\"metadata\": {\"name\": \"more\"}, \"spec\": "
				      "{\"cidrs\": [\"10.98.0.0/24\"]}}"),
			 1);
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	assert_string_equal(ranges(), "10.96.0.0/16 fd00:10:96::/112 10.98.0.0/24");
	assert_int_equal(event(false, KUBERNETES("[\"10.95.0.0/16\"]")), 1);
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	assert_string_equal(ranges(), "10.95.0.0/16 10.98.0.0/24");
	/* The same object again (a status update): nothing new. */
	assert_int_equal(event(false, KUBERNETES("[\"10.95.0.0/16\"]")), 0);
	assert_int_equal(k8s_servicecidrs_take(cidrs), 0);
	/* Deleted by name. */
	assert_int_equal(event(true, KUBERNETES("[]")), 1);
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	assert_string_equal(ranges(), "10.98.0.0/24");
	assert_int_equal(event(true, "{\"metadata\": {\"name\": \"gone\"}}"), 0);
}

static void test_relist_of_the_same_ranges_is_no_change(void **state)
{
	(void)state;
	list("[" KUBERNETES("[\"10.96.0.0/16\"]") "]");
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	list("[" KUBERNETES("[\"10.96.0.0/16\"]") "]");
	assert_int_equal(k8s_servicecidrs_take(cidrs), 0);
	/* Not served (404): an empty list, the ranges gone. */
	list("[]");
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	assert_string_equal(ranges(), "");
}

static void test_configured_first_each_range_once(void **state)
{
	(void)state;
	assert_int_equal(velo_cidr_parse("10.97.0.0/24", &config.service_cidrs[0]), 0);
	assert_int_equal(velo_cidr_parse("10.96.0.0/16", &config.service_cidrs[1]), 0);
	config.n_service_cidrs = 2;
	/* No watch (no API client): serviceCidrs alone. */
	{
		struct velo_pol_cidr out[4];
		unsigned dropped;

		assert_int_equal(k8s_servicecidrs_ranges(NULL, &config, out, 4, &dropped), 2);
		assert_int_equal(k8s_servicecidrs_ranges(NULL, &config, out, 1, &dropped), 1);
		assert_int_equal(dropped, 1);
	}
	list("[" KUBERNETES("[\"10.96.0.0/16\", \"fd00:10:96::/112\"]") "]");
	assert_int_equal(k8s_servicecidrs_take(cidrs), 1);
	assert_string_equal(ranges(), "10.97.0.0/24 10.96.0.0/16 fd00:10:96::/112");
}

static void test_unusable_objects(void **state)
{
	static const char *const bad[] = {
		"{\"spec\": {\"cidrs\": [\"10.96.0.0/16\"]}}",
		"{\"metadata\": {\"name\": \"x\"}, \"spec\": {}}",
		"{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"cidrs\": []}}",
		"{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"cidrs\": [\"10.96.0.0/16\", "
		"\"fd00::/112\", \"10.97.0.0/16\"]}}",
		"{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"cidrs\": [\"nope\"]}}",
		"{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"cidrs\": [16]}}",
	};

	(void)state;
	list("[]");
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(event(false, bad[i]), -EINVAL);
	/* Listed (no more -EAGAIN), and still no range: no change. */
	assert_int_equal(k8s_servicecidrs_take(cidrs), 0);
	assert_string_equal(ranges(), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_listed_then_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relist_of_the_same_ranges_is_no_change, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_configured_first_each_range_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unusable_objects, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
