// SPDX-License-Identifier: Apache-2.0
/*
 * BPF_PROG_TEST_RUN of velo_tc_deny, the egress deny list's tc half on a
 * deny-listed pod's host veth: frames to denied prefixes (IPv4, IPv6, with
 * IPv4 options) are dropped, others go on to the next program, a veth velo
 * hasn't keyed yet drops everything, and short or non-IP frames never make
 * it read past the packet. Runs in a private netns; skips when not root.
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

#include "cgroup_skb.skel.h"
#include "bpf/lib/velo_shared.h"

#define TC_NEXT (-1) /* TC_ACT_UNSPEC: tcx's TCX_NEXT */
#define TC_SHOT 2
#define POD_CGROUP 4242u

static struct {
	bool ready;
	struct cgroup_skb *skel;
	int ifindex_pod, ifindex_unkeyed;
} fx;

#define REQUIRE_ROOT()          \
	do {                    \
		if (!fx.ready)  \
			skip(); \
	} while (0)

/* An Ethernet frame of proto with bytes of IP header and payload (zeros) and daddr set. */
static unsigned frame(uint8_t *buf, uint16_t proto, const char *daddr, unsigned ihl_bytes)
{
	memset(buf, 0, 256);
	buf[12] = proto >> 8;
	buf[13] = proto & 0xff;
	if (proto == ETH_P_IP) {
		buf[ETH_HLEN] = 0x40 | (ihl_bytes / 4);
		buf[ETH_HLEN + 9] = 17;
		inet_pton(AF_INET, daddr, buf + ETH_HLEN + 16);
		return ETH_HLEN + ihl_bytes + 8 + 32;
	}
	if (proto == ETH_P_IPV6) {
		buf[ETH_HLEN] = 0x60;
		buf[ETH_HLEN + 6] = 0; /* hop-by-hop options first: a header chain */
		inet_pton(AF_INET6, daddr, buf + ETH_HLEN + 24);
		return ETH_HLEN + 40 + 8 + 32;
	}
	return ETH_HLEN + 46;
}

static int run(int ifindex, uint8_t *buf, unsigned len)
{
	struct __sk_buff ctx = { .ifindex = (uint32_t)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	assert_int_equal(
		bpf_prog_test_run_opts(bpf_program__fd(fx.skel->progs.velo_tc_deny), &opts), 0);
	return (int)opts.retval;
}

static int deny(const char *cidr_addr, unsigned prefix)
{
	struct velo_deny_key key = { .cgroup_id = POD_CGROUP };
	uint8_t one = 1;

	if (strchr(cidr_addr, ':')) {
		inet_pton(AF_INET6, cidr_addr, key.addr);
		key.prefixlen = VELO_DENY_PREFIX_BASE + prefix;
	} else {
		key.addr[10] = 0xff;
		key.addr[11] = 0xff;
		inet_pton(AF_INET, cidr_addr, &key.addr[12]);
		key.prefixlen = VELO_DENY_PREFIX_BASE + 96 + prefix;
	}
	return bpf_map_update_elem(bpf_map__fd(fx.skel->maps.velo_deny_v1), &key, &one, BPF_ANY);
}

static int group_setup(void **state)
{
	struct bpf_map *map;
	uint32_t ifindex;
	uint64_t cgroup_id = POD_CGROUP;

	(void)state;
	if (geteuid() != 0)
		return 0; /* every test skips */
	if (unshare(CLONE_NEWNET) ||
	    system("ip link add name vtdeny type veth peer name vtdenyp") ||
	    system("ip link add name vtnokey type veth peer name vtnokeyp"))
		return -1;
	fx.ifindex_pod = (int)if_nametoindex("vtdeny");
	fx.ifindex_unkeyed = (int)if_nametoindex("vtnokey");
	fx.skel = cgroup_skb__open();
	if (!fx.skel || fx.ifindex_pod <= 0 || fx.ifindex_unkeyed <= 0)
		return -1;
	/* No pinning here: the fixture's maps live and die with this process. */
	bpf_object__for_each_map (map, fx.skel->obj)
		bpf_map__set_pin_path(map, NULL);
	if (cgroup_skb__load(fx.skel))
		return -1;
	ifindex = (uint32_t)fx.ifindex_pod;
	if (bpf_map_update_elem(bpf_map__fd(fx.skel->maps.velo_deny_if_v1), &ifindex, &cgroup_id,
				BPF_ANY) ||
	    deny("10.96.0.0", 16) || deny("fd00:96::", 64))
		return -1;
	fx.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	cgroup_skb__destroy(fx.skel);
	return 0; /* the private netns and its devices go with the process */
}

static void test_denied_dropped(void **state)
{
	uint8_t buf[256];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	len = frame(buf, ETH_P_IP, "10.96.3.4", 20);
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_SHOT);
	len = frame(buf, ETH_P_IPV6, "fd00:96::7", 40);
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_SHOT);
	/* IPv4 options (60-byte header) don't move the destination address */
	len = frame(buf, ETH_P_IP, "10.96.3.4", 60);
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_SHOT);
}

static void test_allowed_goes_on(void **state)
{
	uint8_t buf[256];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	len = frame(buf, ETH_P_IP, "10.97.0.1", 20);
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_NEXT);
	len = frame(buf, ETH_P_IPV6, "fd00:97::1", 40);
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_NEXT);
	/* ARP has no destination to deny: the stack routes nothing else a pod sends */
	len = frame(buf, ETH_P_ARP, NULL, 0);
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_NEXT);
}

static void test_unkeyed_veth_fails_closed(void **state)
{
	uint8_t buf[256];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	len = frame(buf, ETH_P_IP, "10.97.0.1", 20);
	assert_int_equal(run(fx.ifindex_unkeyed, buf, len), TC_SHOT);
}

/*
 * The kernel's skb test-run refuses frames shorter than an IP header, so the
 * shortest it takes: an IPv4 header and nothing else, and an IPv6 header
 * whose hop-by-hop header claims more bytes than there are.
 */
static void test_short_frames(void **state)
{
	uint8_t buf[256];
	unsigned len;

	(void)state;
	REQUIRE_ROOT();
	frame(buf, ETH_P_IP, "10.96.3.4", 20);
	assert_int_equal(run(fx.ifindex_pod, buf, ETH_HLEN + 20), TC_SHOT);
	len = frame(buf, ETH_P_IPV6, "fd00:97::1", 40);
	buf[ETH_HLEN + 41] = 0xff; /* hop-by-hop length: 2 KiB past the end */
	assert_int_equal(run(fx.ifindex_pod, buf, len), TC_NEXT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denied_dropped),
		cmocka_unit_test(test_allowed_goes_on),
		cmocka_unit_test(test_unkeyed_veth_fails_closed),
		cmocka_unit_test(test_short_frames),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
