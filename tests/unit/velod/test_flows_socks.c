// SPDX-License-Identifier: Apache-2.0
/*
 * velod's table of open TCP sockets' sides (velod/flows/flows_socks.c): an END in
 * the socket's own view comes out client -> server like its START, by cookie;
 * without a START, the lower port is the server's; the table stays bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "flows/flows_socks.h"

/* An event of kind for cookie: local 10.0.0.<local> port local_port, remote 10.0.0.<remote>. */
static struct velo_flow_event event(uint8_t kind, uint64_t cookie, uint8_t local,
				    uint16_t local_port, uint8_t remote, uint16_t remote_port)
{
	struct velo_flow_event ev = { .kind = kind, .proto = 6, .cookie = cookie };

	ev.saddr[10] = ev.saddr[11] = ev.daddr[10] = ev.daddr[11] = 0xff;
	ev.saddr[12] = ev.daddr[12] = 10;
	ev.saddr[15] = local;
	ev.daddr[15] = remote;
	ev.sport = htons(local_port);
	ev.dport = htons(remote_port);
	ev.bytes_out = 100; /* the socket sent 100 bytes in 2 segments, received 7 in 1 */
	ev.bytes_in = 7;
	ev.segs_out = 2;
	ev.segs_in = 1;
	return ev;
}

static void test_server_end_turned_by_its_start(void **state)
{
	struct flow_socks *socks = flow_socks_new(4);
	/* The server's start is already client -> server; its end is the server's view. */
	struct velo_flow_event start = event(2, 7, 1, 40000, 2, 80);
	struct velo_flow_event end = event(3, 7, 2, 80, 1, 40000);

	(void)state;
	assert_non_null(socks);
	start.flags = VELO_FLOW_F_PASSIVE;
	flow_socks_orient(socks, &start);
	assert_int_equal(start.saddr[15], 1); /* a start is left as it is */
	assert_int_equal(flow_socks_count(socks), 1);
	flow_socks_orient(socks, &end);
	assert_int_equal(end.saddr[15], 1);
	assert_int_equal(ntohs(end.sport), 40000);
	assert_int_equal(end.daddr[15], 2);
	assert_int_equal(ntohs(end.dport), 80);
	assert_int_equal(end.bytes_out, 7); /* what the client sent */
	assert_int_equal(end.bytes_in, 100);
	assert_int_equal(end.segs_out, 1);
	assert_int_equal(end.segs_in, 2);
	assert_int_equal(flow_socks_count(socks), 0);
	flow_socks_free(socks);
}

static void test_client_end_kept_even_from_a_low_port(void **state)
{
	struct flow_socks *socks = flow_socks_new(4);
	/* A client bound to port 20 talking to 8080: its start says client, not the port rule. */
	struct velo_flow_event start = event(2, 9, 1, 20, 2, 8080);
	struct velo_flow_event end = event(3, 9, 1, 20, 2, 8080);

	(void)state;
	flow_socks_orient(socks, &start);
	flow_socks_orient(socks, &end);
	assert_int_equal(end.saddr[15], 1);
	assert_int_equal(ntohs(end.sport), 20);
	assert_int_equal(end.bytes_out, 100);
	assert_int_equal(flow_socks_count(socks), 0);
	flow_socks_free(socks);
}

static void test_end_without_start_lower_port_is_server(void **state)
{
	struct flow_socks *socks = flow_socks_new(4);
	struct velo_flow_event server_end = event(3, 11, 2, 80, 1, 40000);
	struct velo_flow_event client_end = event(3, 12, 1, 40001, 2, 80);

	(void)state;
	flow_socks_orient(socks, &server_end);
	assert_int_equal(server_end.saddr[15], 1);
	assert_int_equal(ntohs(server_end.dport), 80);
	assert_int_equal(server_end.bytes_out, 7);
	flow_socks_orient(socks, &client_end);
	assert_int_equal(client_end.saddr[15], 1);
	assert_int_equal(ntohs(client_end.dport), 80);
	assert_int_equal(client_end.bytes_out, 100);
	flow_socks_free(socks);
}

static void test_bounded_and_removes_in_any_order(void **state)
{
	struct flow_socks *socks = flow_socks_new(64);
	struct velo_flow_event ev;

	(void)state;
	/* 100 passive starts into room for 64 in generations of 32: 1-64 are forgotten by then. */
	for (uint64_t cookie = 1; cookie <= 100; cookie++) {
		ev = event(2, cookie, 1, 40000, 2, 80);
		ev.flags = VELO_FLOW_F_PASSIVE;
		flow_socks_orient(socks, &ev);
		assert_true(flow_socks_count(socks) <= 64);
	}
	assert_int_equal(flow_socks_count(socks), 36); /* 65-96, then 97-100 in a new one */
	/* Ends with the server's port the higher one: only a remembered start turns them. */
	for (uint64_t cookie = 100; cookie >= 65; cookie -= 2) {
		ev = event(3, cookie, 2, 50000, 1, 40000);
		flow_socks_orient(socks, &ev);
		assert_int_equal(ev.saddr[15], 1);
	}
	for (uint64_t cookie = 65; cookie <= 99; cookie += 2) {
		ev = event(3, cookie, 2, 50000, 1, 40000);
		flow_socks_orient(socks, &ev);
		assert_int_equal(ev.saddr[15], 1);
	}
	assert_int_equal(flow_socks_count(socks), 0);
	ev = event(3, 20, 2, 50000, 1, 40000); /* forgotten: the port rule keeps it */
	flow_socks_orient(socks, &ev);
	assert_int_equal(ev.saddr[15], 2);
	flow_socks_free(socks);
}

static void test_a_socket_never_ending_ages_out(void **state)
{
	struct flow_socks *socks = flow_socks_new(8);
	struct velo_flow_event ev = event(2, 1, 1, 40000, 2, 80);

	(void)state;
	/* Socket 1 never ends; thousands of others open and close around it. */
	flow_socks_orient(socks, &ev);
	for (uint64_t cookie = 2; cookie < 5000; cookie++) {
		ev = event(2, cookie, 1, 40000, 2, 80);
		flow_socks_orient(socks, &ev);
		if (cookie % 3)
			continue; /* two in three never end either */
		ev = event(3, cookie, 1, 40000, 2, 80);
		flow_socks_orient(socks, &ev);
	}
	assert_true(flow_socks_count(socks) <= 8);
	/* A new start is still remembered: its end is turned though the port rule wouldn't. */
	ev = event(2, 6000, 1, 40000, 2, 50000);
	ev.flags = VELO_FLOW_F_PASSIVE;
	flow_socks_orient(socks, &ev);
	ev = event(3, 6000, 2, 50000, 1, 40000);
	flow_socks_orient(socks, &ev);
	assert_int_equal(ev.saddr[15], 1);
	assert_int_equal(ntohs(ev.dport), 50000);
	flow_socks_free(socks);
}

static void test_udp_and_drops_untouched(void **state)
{
	struct flow_socks *socks = flow_socks_new(4);
	struct velo_flow_event udp = event(3, 5, 2, 80, 1, 40000);

	(void)state;
	udp.proto = 17;
	flow_socks_orient(socks, &udp);
	assert_int_equal(udp.saddr[15], 2);
	flow_socks_free(socks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_end_turned_by_its_start),
		cmocka_unit_test(test_client_end_kept_even_from_a_low_port),
		cmocka_unit_test(test_end_without_start_lower_port_is_server),
		cmocka_unit_test(test_bounded_and_removes_in_any_order),
		cmocka_unit_test(test_a_socket_never_ending_ages_out),
		cmocka_unit_test(test_udp_and_drops_untouched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
