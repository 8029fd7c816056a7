// SPDX-License-Identifier: Apache-2.0
/*
 * velod's watch set (velod/k8s_watch_set.c) on its own, with a toy resource
 * set: "things" (namespaced) and "places" (cluster-scoped), objects with a
 * value and a heap-allocated label so that every object the set parses is
 * seen freed. The watch thread (k8s_watch.c) is replaced by a stand-in
 * (k8s_watch_standin.c) that keeps the callbacks the set gives each watch;
 * the test calls them as the thread would: LIST pages, watch events.
 * The stand-in counts the set's wakes of velod's loop.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "k8s/k8s_watch_set.h"
#include "k8s_watch_standin.h"

enum { THINGS, PLACES, KINDS };

/* ---- the toy resource set ---- */

#define TOY_MAX 3

struct toy {
	char ns[32], name[32];
	int value;
	char *label; /* heap: the set must free every object it parsed */
};

struct toy_state {
	unsigned n[KINDS];
	struct toy items[KINDS][TOY_MAX];
};

static int labels; /* allocated and not yet freed */

static void toy_free(struct toy *toy)
{
	if (toy->label) {
		free(toy->label);
		labels--;
	}
	toy->label = NULL;
}

static int toy_parse(unsigned kind, const cJSON *json, void *object, char *why, size_t why_size)
{
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(json, "metadata");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(metadata, "namespace");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(metadata, "name");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(json, "value");
	struct toy *toy = object;

	memset(toy, 0, sizeof(*toy));
	toy->label = strdup("label"); /* before the checks: a failed parse leaves it too */
	labels++;
	if (!cJSON_IsString(name) || (kind == THINGS && !cJSON_IsString(ns)) ||
	    !cJSON_IsNumber(value)) {
		snprintf(why, why_size, "a toy without name or value");
		return -EINVAL;
	}
	snprintf(toy->ns, sizeof(toy->ns), "%s", kind == THINGS ? ns->valuestring : "");
	snprintf(toy->name, sizeof(toy->name), "%s", name->valuestring);
	toy->value = value->valueint;
	return 0;
}

static struct toy *toy_find(struct toy_state *state, unsigned kind, const char *ns,
			    const char *name)
{
	for (unsigned i = 0; i < state->n[kind]; i++)
		if (!strcmp(state->items[kind][i].ns, ns ? ns : "") &&
		    !strcmp(state->items[kind][i].name, name))
			return &state->items[kind][i];
	return NULL;
}

static int toy_put(unsigned kind, void *state, void *object, char *why, size_t why_size)
{
	struct toy_state *toys = state;
	struct toy *toy = object, *slot = toy_find(toys, kind, toy->ns, toy->name);

	if (slot && slot->value == toy->value)
		return 0;
	if (!slot) {
		if (toys->n[kind] == TOY_MAX) {
			snprintf(why, why_size, "more than %d toys", TOY_MAX);
			return -ENOSPC;
		}
		slot = &toys->items[kind][toys->n[kind]++];
	} else {
		toy_free(slot);
	}
	*slot = *toy;
	toy->label = NULL; /* taken over */
	return 1;
}

static void toy_object_free(unsigned kind, void *object)
{
	(void)kind;
	toy_free(object);
}

static int toy_del(unsigned kind, void *state, const char *ns, const char *name)
{
	struct toy_state *toys = state;
	struct toy *gone = toy_find(toys, kind, ns, name);

	if (kind == PLACES)
		assert_null(ns);
	if (!gone)
		return 0;
	toy_free(gone);
	*gone = toys->items[kind][--toys->n[kind]];
	return 1;
}

static void toy_replace(unsigned kind, void *state, void *scratch)
{
	struct toy_state *to = state, *from = scratch;
	struct toy old[TOY_MAX];
	unsigned n_old = to->n[kind];

	memcpy(old, to->items[kind], sizeof(old));
	memcpy(to->items[kind], from->items[kind], sizeof(old));
	to->n[kind] = from->n[kind];
	memcpy(from->items[kind], old, sizeof(old));
	from->n[kind] = n_old;
}

static unsigned toy_count(unsigned kind, const void *state)
{
	const struct toy_state *toys = state;

	return toys->n[kind];
}

static void toy_state_free(void *state)
{
	struct toy_state *toys = state;

	for (unsigned kind = 0; kind < KINDS; kind++) {
		for (unsigned i = 0; i < toys->n[kind]; i++)
			toy_free(&toys->items[kind][i]);
		toys->n[kind] = 0;
	}
}

static const struct k8s_watch_set_resource resources[KINDS] = {
	[THINGS] = { .name = "things", .path = "/apis/toy/v1/things" },
	[PLACES] = { .name = "places",
		     .path = "/apis/toy/v1/places",
		     .cluster_scoped = true,
		     .optional = true },
};

static struct k8s_watch_set_ops ops = {
	.state_size = sizeof(struct toy_state),
	.object_size = sizeof(struct toy),
	.parse = toy_parse,
	.put = toy_put,
	.object_free = toy_object_free,
	.del = toy_del,
	.replace = toy_replace,
	.count = toy_count,
	.state_free = toy_state_free,
};

/* ---- driving it ---- */

static struct k8s_watch_set *set;

static int setup(void **state)
{
	static struct agent_config config;

	(void)state;
	standin_reset();
	labels = 0;
	ops.drop_unusable = false;
	set = k8s_watch_set_start(resources, KINDS, &ops, &config);
	assert_non_null(set);
	assert_int_equal(standin_started, KINDS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	k8s_watch_set_stop(set);
	assert_int_equal(standin_stopped, KINDS);
	assert_int_equal(labels, 0); /* the kept state, the scratches, every parsed object */
	return 0;
}

/* The objects of kind the set keeps, for /metrics. */
static unsigned objects(unsigned kind)
{
	struct k8s_watch_stats stats;

	k8s_watch_set_stats(set, kind, &stats);
	return stats.objects;
}

/* A LIST of kind as the thread makes it: list_item's answer for each item (-EINVAL is left
 * out, another error fails the LIST: no list_end then), then the objects of kind kept, as
 * /metrics reads them. */
static int list(unsigned kind, const char *items)
{
	const struct k8s_resource *resource = &standin_watches[kind].resource;
	cJSON *array = cJSON_Parse(items), *item;
	char why[200];
	int ret;

	assert_non_null(array);
	resource->list_begin(resource->ctx);
	cJSON_ArrayForEach (item, array) {
		ret = resource->list_item(resource->ctx, item, why, sizeof(why));
		if (ret && ret != -EINVAL) {
			cJSON_Delete(array);
			return ret;
		}
	}
	cJSON_Delete(array);
	resource->list_end(resource->ctx);
	return (int)objects(kind);
}

static char event_why[200];

/* A watch event's object: change's answer. */
static int event(unsigned kind, bool deleted, const char *object)
{
	const struct k8s_resource *resource = &standin_watches[kind].resource;
	cJSON *json = cJSON_Parse(object);
	int ret;

	assert_non_null(json);
	event_why[0] = '\0';
	ret = resource->change(resource->ctx, deleted, json, event_why, sizeof(event_why));
	cJSON_Delete(json);
	return ret;
}

#define THING(name, value) \
	"{\"metadata\": {\"namespace\": \"n\", \"name\": \"" name "\"}, \"value\": " #value "}"
/* A thing whose value is not a number: one velod can't use. */
#define BAD_THING(name) \
	"{\"metadata\": {\"namespace\": \"n\", \"name\": \"" name "\"}, \"value\": \"x\"}"
#define PLACE(name, value) "{\"metadata\": {\"name\": \"" name "\"}, \"value\": " #value "}"

/* The kept state as "kind:ns/name=value ..." (velod's loop reading it held). */
static const char *kept(void)
{
	static char text[256];
	const struct toy_state *toys = k8s_watch_set_hold(set);
	size_t used = 0;

	assert_non_null(toys);
	text[0] = '\0';
	for (unsigned kind = 0; kind < KINDS; kind++)
		for (unsigned i = 0; i < toys->n[kind]; i++)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u:%s/%s=%d",
						 used ? " " : "", kind, toys->items[kind][i].ns,
						 toys->items[kind][i].name,
						 toys->items[kind][i].value);
	k8s_watch_set_release(set);
	return text;
}

static void test_each_resource_watched(void **state)
{
	struct k8s_watch_stats stats;

	(void)state;
	assert_string_equal(standin_watches[THINGS].resource.name, "things");
	assert_string_equal(standin_watches[THINGS].resource.path, "/apis/toy/v1/things");
	assert_false(standin_watches[THINGS].resource.optional);
	assert_string_equal(standin_watches[PLACES].resource.path, "/apis/toy/v1/places");
	assert_true(standin_watches[PLACES].resource.optional);
	assert_int_equal(k8s_watch_set_fd(set, THINGS), 100);
	assert_int_equal(k8s_watch_set_fd(set, PLACES), 101);
	assert_int_equal(k8s_watch_set_fd(set, KINDS), -1);
	assert_string_equal(k8s_watch_set_stats(set, PLACES, &stats), "places");
	assert_int_equal(stats.events, 11);
}

static void test_nothing_before_all_listed(void **state)
{
	(void)state;
	assert_int_equal(k8s_watch_set_poll(set), -EAGAIN);
	assert_int_equal(list(THINGS, "[" THING("a", 1) ", " THING("b", 2) "]"), 2);
	/* Things alone: nothing may be computed without the places. */
	assert_int_equal(k8s_watch_set_poll(set), -EAGAIN);
	assert_null(k8s_watch_set_hold(set)); /* and not held: the next event goes in */
	assert_int_equal(event(THINGS, false, THING("c", 3)), 1);
	assert_int_equal(k8s_watch_set_poll(set), -EAGAIN);
	/* An optional resource the server doesn't serve lists empty: it counts as listed. */
	assert_int_equal(list(PLACES, "[]"), 0);
	assert_int_equal(k8s_watch_set_poll(set), 1);
	assert_int_equal(k8s_watch_set_poll(set), 0);
	assert_string_equal(kept(), "0:n/a=1 0:n/b=2 0:n/c=3");
}

static void test_events_change_the_kept_state(void **state)
{
	(void)state;
	list(THINGS, "[" THING("a", 1) "]");
	list(PLACES, "[" PLACE("p", 1) "]");
	assert_int_equal(k8s_watch_set_poll(set), 1);

	/* Each change wakes velod's loop through its kind's watch. */
	assert_int_equal(standin_wakes[THINGS], 1);
	assert_int_equal(event(THINGS, false, THING("a", 2)), 1);
	assert_int_equal(standin_wakes[THINGS], 2);
	assert_int_equal(event(PLACES, false, PLACE("q", 5)), 1);
	assert_int_equal(k8s_watch_set_poll(set), 1);
	assert_string_equal(kept(), "0:n/a=2 1:/p=1 1:/q=5");
	assert_int_equal(objects(PLACES), 2);
	/* The same object again (a status heartbeat): nothing to compute, no wake. */
	assert_int_equal(event(THINGS, false, THING("a", 2)), 0);
	assert_int_equal(k8s_watch_set_poll(set), 0);
	assert_int_equal(standin_wakes[THINGS], 2);

	/* DELETED goes by name alone: a namespaced one needs its namespace. */
	assert_int_equal(event(PLACES, true, "{\"metadata\": {\"name\": \"p\"}}"), 1);
	assert_int_equal(event(PLACES, true, "{\"metadata\": {\"name\": \"p\"}}"), 0);
	assert_int_equal(standin_wakes[PLACES], 3); /* the LIST, q, p's delete */
	assert_int_equal(event(THINGS, true, "{\"metadata\": {\"name\": \"a\"}}"), -EINVAL);
	assert_string_equal(event_why, "a deleted object without namespace and name");
	assert_int_equal(event(PLACES, true, "{\"metadata\": {}}"), -EINVAL);
	assert_string_equal(event_why, "a deleted object without metadata.name");
	assert_int_equal(k8s_watch_set_poll(set), 1);
	assert_string_equal(kept(), "0:n/a=2 1:/q=5");
	assert_int_equal(event(THINGS, true,
			       "{\"metadata\": {\"namespace\": \"n\", "
			       "\"name\": \"a\"}}"),
			 1);
	assert_string_equal(kept(), "1:/q=5");

	/* Full: said, and nothing changed. */
	assert_int_equal(event(PLACES, false, PLACE("r", 1)), 1);
	assert_int_equal(event(PLACES, false, PLACE("s", 1)), 1);
	assert_int_equal(event(PLACES, false, PLACE("t", 1)), -ENOSPC);
	assert_string_equal(event_why, "more than 3 toys");
}

static void test_unusable_object_keeps_or_drops_its_old_version(void **state)
{
	(void)state;
	list(THINGS, "[" THING("a", 1) "]");
	list(PLACES, "[]");
	assert_int_equal(k8s_watch_set_poll(set), 1);
	/* By default the previous version stays. */
	assert_int_equal(event(THINGS, false, BAD_THING("a")), -EINVAL);
	assert_string_equal(event_why, "a toy without name or value");
	assert_int_equal(k8s_watch_set_poll(set), 0);
	assert_string_equal(kept(), "0:n/a=1");
	/* A set that says so drops it. */
	ops.drop_unusable = true;
	assert_int_equal(event(THINGS, false, BAD_THING("a")), -EINVAL);
	assert_int_equal(k8s_watch_set_poll(set), 1);
	assert_string_equal(kept(), "");
}

static void test_relist_replaces_one_kind_whole(void **state)
{
	(void)state;
	assert_int_equal(list(THINGS, "[" THING("a", 1) ", " THING("b", 1) "]"), 2);
	assert_int_equal(list(PLACES, "[" PLACE("p", 1) "]"), 1);
	assert_int_equal(k8s_watch_set_poll(set), 1);
	/* After a 410: b is gone, c came, an unusable item is left out; places untouched. */
	assert_int_equal(list(THINGS, "[" THING("a", 1) ", {\"value\": 1}, " THING("c", 4) "]"), 2);
	assert_int_equal(k8s_watch_set_poll(set), 1);
	assert_string_equal(kept(), "0:n/a=1 0:n/c=4 1:/p=1");
	/* A LIST that fails (full) leaves what was kept. */
	assert_int_equal(list(THINGS, "[" THING("a", 1) ", " THING("b", 1) ", " THING(
					      "c", 1) ", " THING("d", 1) "]"),
			 -ENOSPC);
	assert_int_equal(k8s_watch_set_poll(set), 0);
	assert_string_equal(kept(), "0:n/a=1 0:n/c=4 1:/p=1");
}

static void test_a_watch_that_cannot_start(void **state)
{
	static struct agent_config config;
	struct k8s_watch_set *none;

	(void)state;
	/* The first watch started, the second can't: the first is stopped, errno kept. */
	standin_reset();
	standin_fail_at = PLACES;
	errno = 0;
	none = k8s_watch_set_start(resources, KINDS, &ops, &config);
	assert_null(none);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(standin_stopped, 1);
	errno = 0;
	assert_null(k8s_watch_set_start(resources, K8S_WATCH_SET_MAX + 1, &ops, &config));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_resource_watched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_before_all_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_change_the_kept_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unusable_object_keeps_or_drops_its_old_version,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_relist_replaces_one_kind_whole, setup,
						teardown),
		cmocka_unit_test(test_a_watch_that_cannot_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
