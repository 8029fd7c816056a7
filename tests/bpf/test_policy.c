// SPDX-License-Identifier: Apache-2.0
/*
 * BPF_PROG_TEST_RUN of NetworkPolicy's programs (bpf/policy.bpf.c) on
 * hand-made frames and hand-written maps: fail closed until the pod is
 * placed, isolation per direction, rules by pod identity, ipBlock prefix,
 * everyone, protocol and port prefix, this node always allowed, replies
 * passing on their flow's entry, a policy change cutting an established flow,
 * Service IPs judged after kube-proxy's DNAT (velo_pol_uplink), spoofed
 * sources, ICMP errors. Runs in a private netns; skips when not root.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_ether.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "bpf/lib/velo_policy.h"
#include "policy.skel.h"

#define TC_NEXT (-1) /* TC_ACT_UNSPEC: tcx's TCX_NEXT */
#define TC_SHOT 2
#define TCP 6
#define UDP 17
#define ICMP 1

/* Identities of the fixture: pods A (client) and B (server) on this node, R on another. */
enum { ID_A = 300, ID_B = 301, ID_R = 302, ID_NET10 = VELO_ID_CIDR_FIRST + 1 };
#define ADDR_A "10.1.0.2"
#define ADDR_B "10.1.0.3"
#define ADDR_R "10.2.0.9"
#define ADDR_NODE "192.168.1.10"
#define ADDR_VIP "10.96.0.20"
#define ADDR_OUT "8.8.8.8"

static struct {
	bool ready;
	struct policy *skel;
	int if_a, if_b, if_up;
	uint32_t revision;
} fx;

#define REQUIRE_ROOT()          \
	do {                    \
		if (!fx.ready)  \
			skip(); \
	} while (0)

static int map_fd(const struct bpf_map *map)
{
	return bpf_map__fd(map);
}

static void mapped(const char *text, uint8_t out[16])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, text, &out[12]), 1);
}

/* An IPv4 frame proto src:sport -> dst:dport (ICMP: type in sport's place), zero payload. */
static unsigned frame(uint8_t *buf, uint8_t proto, const char *src, uint16_t sport, const char *dst,
		      uint16_t dport)
{
	uint8_t *ip = buf + ETH_HLEN, *l4 = ip + 20;

	memset(buf, 0, 128);
	buf[12] = ETH_P_IP >> 8;
	buf[13] = ETH_P_IP & 0xff;
	ip[0] = 0x45;
	ip[3] = 20 + 8 + 32;
	ip[8] = 64;
	ip[9] = proto;
	inet_pton(AF_INET, src, ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	if (proto == ICMP) {
		l4[0] = (uint8_t)sport;
	} else {
		l4[0] = sport >> 8;
		l4[1] = sport & 0xff;
		l4[2] = dport >> 8;
		l4[3] = dport & 0xff;
	}
	return ETH_HLEN + 20 + 8 + 32;
}

static int run_prog(const struct bpf_program *prog, int ifindex, uint8_t *buf, unsigned len)
{
	struct __sk_buff ctx = { .ifindex = (uint32_t)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0);
	return (int)opts.retval;
}

/* What pod A's veth does with a packet A sends (tc ingress of the host veth). */
static int from_a(uint8_t proto, uint16_t sport, const char *dst, uint16_t dport)
{
	uint8_t buf[128];
	unsigned len = frame(buf, proto, ADDR_A, sport, dst, dport);

	return run_prog(fx.skel->progs.velo_pol_from, fx.if_a, buf, len);
}

/* What pod B's veth does with a packet to B from src (tc egress of the host veth). */
static int to_b(uint8_t proto, const char *src, uint16_t sport, uint16_t dport)
{
	uint8_t buf[128];
	unsigned len = frame(buf, proto, src, sport, ADDR_B, dport);

	return run_prog(fx.skel->progs.velo_pol_to, fx.if_b, buf, len);
}

static void put_ip(const char *addr, unsigned v4_prefix, uint32_t pod_id, uint32_t cidr_id,
		   uint32_t flags)
{
	struct velo_pol_ip_key key = { .prefixlen = 96 + v4_prefix };
	struct velo_pol_ip value = { .pod_id = pod_id, .cidr_id = cidr_id, .flags = flags };

	mapped(addr, key.addr);
	assert_int_equal(
		bpf_map_update_elem(map_fd(fx.skel->maps.velo_pol_ip_v1), &key, &value, BPF_ANY),
		0);
}

static void put_if(int ifindex, const char *addr)
{
	struct velo_pol_if pod = { 0 };
	uint32_t key = (uint32_t)ifindex;

	mapped(addr, pod.addr4);
	assert_int_equal(
		bpf_map_update_elem(map_fd(fx.skel->maps.velo_pol_if_v1), &key, &pod, BPF_ANY), 0);
}

static void isolate(uint32_t subject, uint32_t flags)
{
	struct velo_pol_subject value = { .flags = flags };

	assert_int_equal(bpf_map_update_elem(map_fd(fx.skel->maps.velo_pol_sub_v1), &subject,
					     &value, BPF_ANY),
			 0);
}

/* A rule; proto 0: every protocol; port_bits: how many leading bits of port count. */
static void rule(uint32_t subject, uint32_t peer, uint8_t dir, uint8_t proto, uint16_t port,
		 unsigned port_bits, bool add)
{
	struct velo_pol_rule_key key = { .subject = subject, .peer = peer, .dir = dir };
	struct velo_pol_rule value = { .policy = 1 };
	int fd = map_fd(fx.skel->maps.velo_pol_rule_v1);

	key.prefixlen = VELO_POL_RULE_PREFIX_BASE;
	if (proto) {
		key.proto = proto;
		key.port = htons(port);
		key.prefixlen += 8 + port_bits;
	}
	if (add)
		assert_int_equal(bpf_map_update_elem(fd, &key, &value, BPF_ANY), 0);
	else
		assert_int_equal(bpf_map_delete_elem(fd, &key), 0);
}

/* A new revision: every flow is judged again at its next packet. */
static void bump(void)
{
	struct velo_pol_state state = { .revision = ++fx.revision, .active = 1 };
	uint32_t zero = 0;

	assert_int_equal(
		bpf_map_update_elem(map_fd(fx.skel->maps.velo_pol_st_v1), &zero, &state, BPF_ANY),
		0);
}

static uint64_t drops(const char *addr, uint32_t reason)
{
	int ncpu = libbpf_num_possible_cpus();
	struct velo_pol_drop_key key = { .reason = reason };
	struct velo_pol_drop values[ncpu > 0 ? ncpu : 1];
	uint64_t sum = 0;

	mapped(addr, key.addr);
	if (bpf_map_lookup_elem(map_fd(fx.skel->maps.velo_pol_drop_v1), &key, values))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += values[i].packets;
	return sum;
}

static void clear_map(const struct bpf_map *map, size_t key_size)
{
	uint8_t key[64], next[64];
	int fd = map_fd(map);

	assert_true(key_size <= sizeof(key));
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, key_size);
		bpf_map_delete_elem(fd, key);
	}
}

/* Every test starts from A and B placed, R and the node known, nothing isolated. */
static int reset(void **state)
{
	(void)state;
	if (!fx.ready)
		return 0;
	clear_map(fx.skel->maps.velo_pol_sub_v1, sizeof(uint32_t));
	clear_map(fx.skel->maps.velo_pol_rule_v1, sizeof(struct velo_pol_rule_key));
	clear_map(fx.skel->maps.velo_pol_ct_v1, sizeof(struct velo_pol_ct_key));
	clear_map(fx.skel->maps.velo_pol_drop_v1, sizeof(struct velo_pol_drop_key));
	clear_map(fx.skel->maps.velo_pol_ip_v1, sizeof(struct velo_pol_ip_key));
	put_ip("0.0.0.0", 0, VELO_ID_NONE, VELO_ID_WORLD, 0);
	put_ip("10.0.0.0", 8, VELO_ID_NONE, ID_NET10, 0);
	put_ip(ADDR_A, 32, ID_A, ID_NET10, VELO_POL_IP_LOCAL);
	put_ip(ADDR_B, 32, ID_B, ID_NET10, VELO_POL_IP_LOCAL);
	put_ip(ADDR_R, 32, ID_R, ID_NET10, 0);
	put_ip(ADDR_NODE, 32, VELO_ID_HOST, VELO_ID_WORLD, 0);
	put_ip("10.96.0.0", 12, VELO_ID_NONE, ID_NET10, VELO_POL_IP_SERVICE);
	put_if(fx.if_a, ADDR_A);
	put_if(fx.if_b, ADDR_B);
	bump();
	return 0;
}

static int group_setup(void **state)
{
	struct bpf_map *map;

	(void)state;
	if (geteuid() != 0)
		return 0; /* every test skips */
	if (unshare(CLONE_NEWNET) ||
	    system("ip link add name vtpola type veth peer name vtpolap") ||
	    system("ip link add name vtpolb type veth peer name vtpolbp") ||
	    system("ip link add name vtpolup type veth peer name vtpolupp"))
		return -1;
	fx.if_a = (int)if_nametoindex("vtpola");
	fx.if_b = (int)if_nametoindex("vtpolb");
	fx.if_up = (int)if_nametoindex("vtpolup");
	fx.skel = policy__open();
	if (!fx.skel || fx.if_a <= 0 || fx.if_b <= 0 || fx.if_up <= 0)
		return -1;
	/* No pinning here: the fixture's maps live and die with this process. */
	bpf_object__for_each_map (map, fx.skel->obj)
		bpf_map__set_pin_path(map, NULL);
	if (policy__load(fx.skel))
		return -1;
	fx.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	policy__destroy(fx.skel);
	return 0; /* the private netns and its devices go with the process */
}

static void test_fail_closed(void **state)
{
	uint8_t buf[128];
	unsigned len = frame(buf, TCP, ADDR_A, 40000, ADDR_B, 80);
	uint32_t key = (uint32_t)fx.if_a;
	struct velo_pol_ip_key ip = { .prefixlen = 128 };

	(void)state;
	REQUIRE_ROOT();
	/* A veth without its pod's entry: everything dropped. */
	assert_int_equal(bpf_map_delete_elem(map_fd(fx.skel->maps.velo_pol_if_v1), &key), 0);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_from, fx.if_a, buf, len), TC_SHOT);
	put_if(fx.if_a, ADDR_A);
	/* The pod's address without an identity: dropped and counted as pending. */
	mapped(ADDR_A, ip.addr);
	assert_int_equal(bpf_map_delete_elem(map_fd(fx.skel->maps.velo_pol_ip_v1), &ip), 0);
	assert_int_equal(from_a(TCP, 40000, ADDR_B, 80), TC_SHOT);
	assert_int_equal(drops(ADDR_A, VELO_POL_DROP_PENDING), 1);
	put_ip(ADDR_A, 32, ID_A, ID_NET10, VELO_POL_IP_LOCAL);
	assert_int_equal(from_a(TCP, 40000, ADDR_B, 80), TC_NEXT);
}

static void test_not_isolated_passes(void **state)
{
	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(from_a(TCP, 40000, ADDR_B, 80), TC_NEXT);
	assert_int_equal(from_a(UDP, 40000, ADDR_OUT, 53), TC_NEXT);
	assert_int_equal(to_b(TCP, ADDR_R, 40000, 80), TC_NEXT);
	/* Non-IP (ARP) is not policy's. */
	{
		uint8_t buf[128] = { 0 };

		buf[12] = ETH_P_ARP >> 8;
		buf[13] = ETH_P_ARP & 0xff;
		assert_int_equal(run_prog(fx.skel->progs.velo_pol_from, fx.if_a, buf, 60), TC_NEXT);
	}
}

static void test_ingress_rules(void **state)
{
	(void)state;
	REQUIRE_ROOT();
	isolate(ID_B, VELO_POL_ISOLATE_INGRESS);
	bump();
	/* Judged at the sender's veth too: a shortcut may carry it past B's. */
	assert_int_equal(from_a(TCP, 40001, ADDR_B, 80), TC_SHOT);
	assert_int_equal(drops(ADDR_B, VELO_POL_DROP_INGRESS), 1);
	assert_int_equal(to_b(TCP, ADDR_R, 40001, 80), TC_SHOT);
	/* By pod identity, TCP 80 only. */
	rule(ID_B, ID_A, VELO_POL_DIR_INGRESS, TCP, 80, 16, true);
	bump();
	assert_int_equal(from_a(TCP, 40002, ADDR_B, 80), TC_NEXT);
	assert_int_equal(from_a(TCP, 40003, ADDR_B, 81), TC_SHOT);
	assert_int_equal(from_a(UDP, 40004, ADDR_B, 80), TC_SHOT);
	assert_int_equal(to_b(TCP, ADDR_R, 40005, 80), TC_SHOT);
	/* By ipBlock prefix: every port of UDP, ports 1024-2047 of TCP (a 6-bit prefix). */
	rule(ID_B, ID_NET10, VELO_POL_DIR_INGRESS, UDP, 0, 0, true);
	rule(ID_B, ID_NET10, VELO_POL_DIR_INGRESS, TCP, 1024, 6, true);
	bump();
	assert_int_equal(to_b(UDP, ADDR_R, 40006, 9999), TC_NEXT);
	assert_int_equal(to_b(TCP, ADDR_R, 40007, 2047), TC_NEXT);
	assert_int_equal(to_b(TCP, ADDR_R, 40008, 2048), TC_SHOT);
	/* Outside every ipBlock: still dropped; this node: always allowed. */
	assert_int_equal(to_b(TCP, ADDR_OUT, 40009, 1024), TC_SHOT);
	assert_int_equal(to_b(TCP, ADDR_NODE, 40010, 22), TC_NEXT);
	/* Everyone, every protocol (a rule without ports): ICMP too. */
	rule(ID_B, VELO_ID_ANY, VELO_POL_DIR_INGRESS, 0, 0, 0, true);
	bump();
	assert_int_equal(to_b(TCP, ADDR_OUT, 40011, 5), TC_NEXT);
	assert_int_equal(to_b(ICMP, ADDR_OUT, 8, 0), TC_NEXT);
}

static void test_egress_and_replies(void **state)
{
	uint8_t buf[128];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	isolate(ID_A, VELO_POL_ISOLATE_EGRESS | VELO_POL_ISOLATE_INGRESS);
	rule(ID_A, ID_R, VELO_POL_DIR_EGRESS, TCP, 443, 16, true);
	bump();
	assert_int_equal(from_a(TCP, 40020, ADDR_OUT, 443), TC_SHOT);
	assert_int_equal(drops(ADDR_A, VELO_POL_DROP_EGRESS), 1);
	assert_int_equal(from_a(TCP, 40021, ADDR_R, 443), TC_NEXT);
	/* R's reply reaches A although A's ingress allows nothing: it is the flow's. */
	len = frame(buf, TCP, ADDR_R, 443, ADDR_A, 40021);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_to, fx.if_a, buf, len), TC_NEXT);
	/* R opening a connection to A is not a reply. */
	len = frame(buf, TCP, ADDR_R, 443, ADDR_A, 40022);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_to, fx.if_a, buf, len), TC_SHOT);
	/* An ICMP error of no known flow passes (it belongs to a socket's flow or to none). */
	len = frame(buf, ICMP, ADDR_R, 3, ADDR_A, 0);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_to, fx.if_a, buf, len), TC_NEXT);
	len = frame(buf, ICMP, ADDR_R, 8, ADDR_A, 0);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_to, fx.if_a, buf, len), TC_SHOT);
}

static void test_change_cuts_established(void **state)
{
	uint8_t buf[128];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	isolate(ID_B, VELO_POL_ISOLATE_INGRESS);
	rule(ID_B, ID_A, VELO_POL_DIR_INGRESS, TCP, 80, 16, true);
	bump();
	assert_int_equal(from_a(TCP, 40030, ADDR_B, 80), TC_NEXT);
	len = frame(buf, TCP, ADDR_B, 80, ADDR_A, 40030);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_from, fx.if_b, buf, len), TC_NEXT);
	/* The rule goes: the next packet either way is judged again and dropped. */
	rule(ID_B, ID_A, VELO_POL_DIR_INGRESS, TCP, 80, 16, false);
	bump();
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_from, fx.if_b, buf, len), TC_SHOT);
	assert_int_equal(from_a(TCP, 40030, ADDR_B, 80), TC_SHOT);
	/* And back: allowed again under the newer revision. */
	rule(ID_B, ID_A, VELO_POL_DIR_INGRESS, TCP, 80, 16, true);
	bump();
	assert_int_equal(from_a(TCP, 40030, ADDR_B, 80), TC_NEXT);
}

static void test_service_judged_after_dnat(void **state)
{
	uint8_t buf[128];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	isolate(ID_A, VELO_POL_ISOLATE_EGRESS);
	rule(ID_A, ID_B, VELO_POL_DIR_EGRESS, TCP, 80, 16, true);
	bump();
	/* To the Service IP: passes A's veth, its egress waits for the backend. */
	assert_int_equal(from_a(TCP, 40040, ADDR_VIP, 80), TC_NEXT);
	/* kube-proxy chose B, on this node: B's veth judges A's egress. */
	assert_int_equal(to_b(TCP, ADDR_A, 40040, 80), TC_NEXT);
	/* kube-proxy chose R, on another node: the uplink judges it, and A may not reach R. */
	len = frame(buf, TCP, ADDR_A, 40041, ADDR_R, 80);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_uplink, fx.if_up, buf, len), TC_SHOT);
	/* What isn't a local pod's passes the uplink untouched. */
	len = frame(buf, TCP, ADDR_NODE, 40042, ADDR_R, 80);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_uplink, fx.if_up, buf, len), TC_NEXT);
	/* The reply, reverse-NATed to the Service IP, finds A's flow to it. */
	len = frame(buf, TCP, ADDR_VIP, 80, ADDR_A, 40040);
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_to, fx.if_a, buf, len), TC_NEXT);
}

static void test_spoofed_source(void **state)
{
	uint8_t buf[128];
	unsigned len = frame(buf, TCP, ADDR_B, 40050, ADDR_R, 80);

	(void)state;
	REQUIRE_ROOT();
	/* A sending with B's address would take B's identity: dropped, counted under A's own. */
	assert_int_equal(run_prog(fx.skel->progs.velo_pol_from, fx.if_a, buf, len), TC_SHOT);
	assert_int_equal(drops(ADDR_A, VELO_POL_DROP_SPOOFED), 1);
	assert_int_equal(drops(ADDR_B, VELO_POL_DROP_SPOOFED), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fail_closed, reset),
		cmocka_unit_test_setup(test_not_isolated_passes, reset),
		cmocka_unit_test_setup(test_ingress_rules, reset),
		cmocka_unit_test_setup(test_egress_and_replies, reset),
		cmocka_unit_test_setup(test_change_cuts_established, reset),
		cmocka_unit_test_setup(test_service_judged_after_dnat, reset),
		cmocka_unit_test_setup(test_spoofed_source, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
