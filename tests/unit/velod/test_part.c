// SPDX-License-Identifier: Apache-2.0
/*
 * velod's parts started and stopped in table order (velod/agent/part.c): a
 * fatal part that fails stops the ones started before it, in reverse; a
 * part whose failure isn't fatal is skipped and never stopped. Fake parts
 * that write what was called; no kernel, no network.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/part.h"

/* What the parts' hooks were called, in order: "+a +b -a". */
static char calls[256];

static void note(const char *what)
{
	size_t len = strlen(calls);

	snprintf(calls + len, sizeof(calls) - len, "%s%s", len ? " " : "", what);
}

static int start_a(struct agent *agent)
{
	(void)agent;
	note("+a");
	return 0;
}

static void stop_a(struct agent *agent)
{
	(void)agent;
	note("-a");
}

static int start_b(struct agent *agent)
{
	(void)agent;
	note("+b");
	return 0;
}

static void stop_b(struct agent *agent)
{
	(void)agent;
	note("-b");
}

static int fail_c(struct agent *agent)
{
	(void)agent;
	note("+c");
	return -ENOENT;
}

static void stop_c(struct agent *agent)
{
	(void)agent;
	note("-c");
}

static const struct agent_part part_a = { .name = "a", .start = start_a, .stop = stop_a };
static const struct agent_part part_b = { .name = "b", .start = start_b, .stop = stop_b };
/* No start hook: it counts as started. */
static const struct agent_part part_quiet = { .name = "quiet", .stop = stop_b };
static const struct agent_part part_fatal = { .name = "c",
					      .start = fail_c,
					      .fatal = true,
					      .stop = stop_c };
static const struct agent_part part_optional = { .name = "c", .start = fail_c, .stop = stop_c };

static void test_starts_in_order_stops_in_reverse(void **state)
{
	const struct agent_part *parts[] = { &part_a, &part_b, &part_quiet };
	struct agent agent = { .parts = parts, .n_parts = 3 };
	bool started[3] = {};

	(void)state;
	calls[0] = '\0';
	assert_int_equal(agent_parts_start(&agent, started), 0);
	assert_string_equal(calls, "+a +b");
	assert_true(started[0] && started[1] && started[2]);
	agent_parts_stop(&agent, started, agent.n_parts);
	assert_string_equal(calls, "+a +b -b -b -a");
}

static void test_fatal_failure_stops_the_started_ones(void **state)
{
	const struct agent_part *parts[] = { &part_a, &part_b, &part_fatal, &part_quiet };
	struct agent agent = { .parts = parts, .n_parts = 4 };
	bool started[4] = {};

	(void)state;
	calls[0] = '\0';
	assert_int_equal(agent_parts_start(&agent, started), -ENOENT);
	/* Nothing after the fatal part started; it is not stopped itself. */
	assert_string_equal(calls, "+a +b +c -b -a");
	assert_false(started[2]);
	assert_false(started[3]);
}

static void test_optional_failure_runs_on_without_the_part(void **state)
{
	const struct agent_part *parts[] = { &part_a, &part_optional, &part_b };
	struct agent agent = { .parts = parts, .n_parts = 3 };
	bool started[3] = {};

	(void)state;
	calls[0] = '\0';
	assert_int_equal(agent_parts_start(&agent, started), 0);
	assert_string_equal(calls, "+a +c +b");
	assert_true(started[0]);
	assert_false(started[1]);
	assert_true(started[2]);
	agent_parts_stop(&agent, started, agent.n_parts);
	assert_string_equal(calls, "+a +c +b -b -a");
}

static void test_poll_read_keeps_the_highest_fd(void **state)
{
	struct agent_poll poll = { .max_fd = 3 };

	(void)state;
	FD_ZERO(&poll.read);
	agent_poll_read(&poll, 7);
	agent_poll_read(&poll, 5);
	agent_poll_read(&poll, -1); /* a part without an fd */
	assert_int_equal(poll.max_fd, 7);
	assert_true(FD_ISSET(5, &poll.read));
	assert_true(FD_ISSET(7, &poll.read));
	assert_int_equal(agent_earlier(UINT64_MAX, 12), 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_in_order_stops_in_reverse),
		cmocka_unit_test(test_fatal_failure_stops_the_started_ones),
		cmocka_unit_test(test_optional_failure_runs_on_without_the_part),
		cmocka_unit_test(test_poll_read_keeps_the_highest_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
