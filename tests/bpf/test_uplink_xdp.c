// SPDX-License-Identifier: Apache-2.0
/*
 * BPF_PROG_TEST_RUN of velo_xdp_uplink (bpf/uplink_xdp.bpf.c), one test per
 * branch, on frames as they arrive on a node's uplink from another node. The
 * maps are veth_xdp's, shared by fd as velod shares the pinned ones. Runs in
 * a private network namespace with two veths standing in for local pods'
 * host veths: vtdst (MTU 1280, in the devmap) and vtslow (not). Skips when
 * not root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <setjmp.h>
#include <cmocka.h>

#include "fixtures.h"
#include "bpf/lib/velo_policy.h"
#include "bpf/lib/velo_shared.h"
#include "bpf/lib/velo_uplink.h"
#include "uplink_xdp.skel.h"
#include "veth_xdp.skel.h"

#define DST_MTU 1280

static const uint8_t mac_uplink[ETH_ALEN] = { 0x02, 0, 0, 0, 0x77, 0x02 }; /* this node */
static const uint8_t mac_router[ETH_ALEN] = { 0x02, 0, 0, 0, 0x77, 0x01 }; /* the other node */
static const uint8_t mac_other[ETH_ALEN] = { 0x02, 0, 0, 0, 0x77, 0x03 }; /* a third host */
static const uint8_t mac_pod[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x0b };
static const uint8_t mac_host[ETH_ALEN] = { 0xee, 0xee, 0xee, 0xee, 0xee, 0xee };

static struct {
	bool ready;
	struct veth_xdp *veth;
	struct uplink_xdp *uplink;
	int ifindex_dst, ifindex_slow;
} fx;

struct pkt {
	uint8_t buf[2048];
	unsigned len;
};

static void put_eth(struct pkt *p, const uint8_t *dst_mac, uint16_t proto)
{
	struct ethhdr *eth = (struct ethhdr *)p->buf;

	memcpy(eth->h_dest, dst_mac, ETH_ALEN);
	memcpy(eth->h_source, mac_router, ETH_ALEN);
	eth->h_proto = htons(proto);
}

/* Ethernet + IPv4 + UDP from a pod on the other node; frag_off in host order. */
static void build_ip4(struct pkt *p, const char *daddr, uint8_t ttl, uint16_t frag_off,
		      unsigned payload)
{
	struct iphdr *iph = (struct iphdr *)(p->buf + ETH_HLEN);
	struct udphdr *udp = (struct udphdr *)(iph + 1);

	memset(p, 0, sizeof(*p));
	put_eth(p, mac_uplink, ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = ttl;
	iph->protocol = IPPROTO_UDP;
	iph->frag_off = htons(frag_off);
	iph->tot_len = htons(sizeof(*iph) + sizeof(*udp) + payload);
	inet_pton(AF_INET, "10.1.0.5", &iph->saddr);
	inet_pton(AF_INET, daddr, &iph->daddr);
	iph->check = htons(csum_fold(iph, sizeof(*iph)));
	udp->source = htons(4000);
	udp->dest = htons(5000);
	udp->len = htons(sizeof(*udp) + payload);
	memset(udp + 1, 0xab, payload);
	p->len = ETH_HLEN + sizeof(*iph) + sizeof(*udp) + payload;
}

static void build_ip6(struct pkt *p, const char *daddr, uint8_t hop_limit)
{
	struct ipv6hdr *ip6h = (struct ipv6hdr *)(p->buf + ETH_HLEN);
	struct udphdr *udp = (struct udphdr *)(ip6h + 1);

	memset(p, 0, sizeof(*p));
	put_eth(p, mac_uplink, ETH_P_IPV6);
	ip6h->version = 6;
	ip6h->hop_limit = hop_limit;
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->payload_len = htons(sizeof(*udp) + 32);
	inet_pton(AF_INET6, "fd01::5", &ip6h->saddr);
	inet_pton(AF_INET6, daddr, &ip6h->daddr);
	udp->len = htons(sizeof(*udp) + 32);
	p->len = ETH_HLEN + sizeof(*ip6h) + sizeof(*udp) + 32;
}

static int add_endpoint(const char *addr, int ifindex, uint32_t flags)
{
	struct velo_endpoint ep = { .owner = 1, .ifindex = (uint32_t)ifindex, .flags = flags };
	struct velo_ep_key key = key_of(addr);

	memcpy(ep.pod_mac, mac_pod, ETH_ALEN);
	memcpy(ep.host_mac, mac_host, ETH_ALEN);
	return bpf_map_update_elem(bpf_map__fd(fx.veth->maps.velo_ep_v1), &key, &ep, BPF_ANY);
}

static struct velo_uplink_counters counted(enum velo_uplink_stat stat)
{
	int ncpu = libbpf_num_possible_cpus();
	struct velo_uplink_counters values[ncpu > 0 ? ncpu : 1], sum = {};
	uint32_t key = stat;

	assert_true(ncpu > 0);
	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(fx.uplink->maps.velo_uplink_v3), &key, values), 0);
	for (int i = 0; i < ncpu; i++) {
		sum.packets += values[i].packets;
		sum.bytes += values[i].bytes;
	}
	return sum;
}

static int run(struct pkt *p)
{
	struct xdp_md ctx = { .data_end = p->len };
	uint8_t out[sizeof(p->buf)];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->buf, .data_size_in = p->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	assert_int_equal(
		bpf_prog_test_run_opts(bpf_program__fd(fx.uplink->progs.velo_xdp_uplink), &opts),
		0);
	assert_int_equal(opts.data_size_out, p->len);
	memcpy(p->buf, out, p->len);
	return (int)opts.retval;
}

/* p goes to the stack unchanged, counted under stat. */
static void assert_passed(struct pkt *p, enum velo_uplink_stat stat)
{
	struct velo_uplink_counters before = counted(stat);
	uint64_t redirects = counted(VELO_UPLINK_REDIRECT).packets;
	struct pkt orig = *p;

	assert_int_equal(run(p), XDP_PASS);
	assert_memory_equal(p->buf, orig.buf, p->len);
	assert_int_equal(counted(stat).packets, before.packets + 1);
	assert_int_equal(counted(stat).bytes, before.bytes + p->len);
	assert_int_equal(counted(VELO_UPLINK_REDIRECT).packets, redirects);
}

static int run_cmd(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -EIO;
}

static int group_setup(void **state)
{
	struct bpf_devmap_val val = {};
	struct bpf_map *map;
	const uint32_t xdp_pod = VELO_EP_F_FASTPATH | VELO_EP_F_XDP_RX;

	(void)state;
	if (geteuid() != 0)
		return 0; /* every test skips */
	if (unshare(CLONE_NEWNET))
		return -1;
	if (run_cmd("ip link add name vtdst mtu 1280 type veth peer name vtdstp") ||
	    run_cmd("ip link add name vtslow type veth peer name vtslowp"))
		return -1;
	fx.ifindex_dst = (int)if_nametoindex("vtdst");
	fx.ifindex_slow = (int)if_nametoindex("vtslow");
	if (fx.ifindex_dst <= 0 || fx.ifindex_slow <= 0)
		return -1;

	/* No pinning here: the fixture's maps live and die with this process. */
	fx.veth = veth_xdp__open();
	fx.uplink = uplink_xdp__open();
	if (!fx.veth || !fx.uplink)
		return -1;
	fx.veth->rodata->velo_have_ct_kfuncs = true;
	fx.uplink->rodata->velo_have_ct_kfuncs = true;
	memcpy((void *)fx.uplink->rodata->velo_uplink_mac, mac_uplink, ETH_ALEN);
	bpf_object__for_each_map (map, fx.veth->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_object__for_each_map (map, fx.uplink->obj)
		bpf_map__set_pin_path(map, NULL);
	if (veth_xdp__load(fx.veth))
		return -1;
	if (bpf_map__reuse_fd(fx.uplink->maps.velo_ep_v1, bpf_map__fd(fx.veth->maps.velo_ep_v1)) ||
	    bpf_map__reuse_fd(fx.uplink->maps.velo_stats_v2,
			      bpf_map__fd(fx.veth->maps.velo_stats_v2)) ||
	    bpf_map__reuse_fd(fx.uplink->maps.velo_xdp_tx_v1,
			      bpf_map__fd(fx.veth->maps.velo_xdp_tx_v1)) ||
	    bpf_map__reuse_fd(fx.uplink->maps.velo_dst_v1, bpf_map__fd(fx.veth->maps.velo_dst_v1)))
		return -1;
	if (uplink_xdp__load(fx.uplink))
		return -1;
	if (add_endpoint("10.0.0.2", fx.ifindex_dst, xdp_pod) ||
	    add_endpoint("fd00::2", fx.ifindex_dst, xdp_pod) ||
	    /* local pods: routed, tc fast path (no NAPI for redirects), XDP flag but no devmap */
	    add_endpoint("10.0.0.3", fx.ifindex_slow, 0) ||
	    add_endpoint("10.0.0.4", fx.ifindex_slow, VELO_EP_F_FASTPATH) ||
	    add_endpoint("10.0.0.5", fx.ifindex_slow, xdp_pod))
		return -1;
	val.ifindex = (uint32_t)fx.ifindex_dst;
	val.bpf_prog.fd = bpf_program__fd(fx.veth->progs.velo_xdp_dst);
	if (bpf_map_update_elem(bpf_map__fd(fx.veth->maps.velo_xdp_tx_v1), &val.ifindex, &val,
				BPF_ANY))
		return -1;
	fx.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	uplink_xdp__destroy(fx.uplink);
	veth_xdp__destroy(fx.veth);
	return 0; /* the private netns and its devices go with the process */
}

#define REQUIRE_ROOT()          \
	do {                    \
		if (!fx.ready)  \
			skip(); \
	} while (0)

static void test_hit4(void **state)
{
	struct velo_uplink_counters before;
	const struct iphdr *iph;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT(); /* before any map is read: without root there is none */
	before = counted(VELO_UPLINK_REDIRECT);
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	assert_int_equal(run(&p), XDP_REDIRECT);
	iph = (const struct iphdr *)(p.buf + ETH_HLEN);
	assert_memory_equal(p.buf, mac_pod, ETH_ALEN);
	assert_memory_equal(p.buf + ETH_ALEN, mac_host, ETH_ALEN);
	assert_int_equal(iph->ttl, 63);
	assert_int_equal(csum_fold(iph, sizeof(*iph)), 0);
	assert_int_equal(counted(VELO_UPLINK_REDIRECT).packets, before.packets + 1);
	assert_int_equal(counted(VELO_UPLINK_REDIRECT).bytes, before.bytes + p.len);
}

static void test_hit6(void **state)
{
	const struct ipv6hdr *ip6h;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip6(&p, "fd00::2", 64);
	assert_int_equal(run(&p), XDP_REDIRECT);
	ip6h = (const struct ipv6hdr *)(p.buf + ETH_HLEN);
	assert_int_equal(ip6h->hop_limit, 63);
	assert_memory_equal(p.buf, mac_pod, ETH_ALEN);
}

/* Flooded by the bridge or the switch, or broadcast: the stack drops or answers it. */
static void test_not_for_this_host(void **state)
{
	static const uint8_t broadcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	put_eth(&p, mac_other, ETH_P_IP);
	assert_passed(&p, VELO_UPLINK_PASS_NOT_HOST);
	put_eth(&p, broadcast, ETH_P_IP);
	assert_passed(&p, VELO_UPLINK_PASS_NOT_HOST);
}

/* Not a local pod, or one whose veth can't take redirects (no NAPI, or no devmap entry). */
static void test_no_xdp_pod(void **state)
{
	static const char *const daddrs[] = { "10.0.0.9", "10.0.0.3", "10.0.0.4", "10.0.0.5" };
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	for (size_t i = 0; i < sizeof(daddrs) / sizeof(daddrs[0]); i++) {
		build_ip4(&p, daddrs[i], 64, 0, 100);
		assert_passed(&p, VELO_UPLINK_PASS_NO_POD);
	}
	build_ip6(&p, "fd00::9", 64);
	assert_passed(&p, VELO_UPLINK_PASS_NO_POD);
}

static void test_ttl1(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, "10.0.0.2", 1, 0, 100);
	assert_passed(&p, VELO_UPLINK_PASS_TTL);
	build_ip6(&p, "fd00::2", 1);
	assert_passed(&p, VELO_UPLINK_PASS_TTL);
}

static void test_oversize(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, "10.0.0.2", 64, 0, DST_MTU); /* > MTU once headers count */
	assert_passed(&p, VELO_UPLINK_PASS_MTU);
}

static void test_not_ip(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	put_eth(&p, mac_uplink, ETH_P_ARP);
	assert_passed(&p, VELO_UPLINK_PASS_NOT_IP);
	build_ip4(&p, "10.0.0.2", 64, 0x2000 /* MF */, 100);
	assert_passed(&p, VELO_UPLINK_PASS_NOT_IP);
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	p.buf[ETH_HLEN + 9] = IPPROTO_ICMP;
	assert_passed(&p, VELO_UPLINK_PASS_NOT_IP);
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	p.len = ETH_HLEN + 10; /* half an IPv4 header */
	assert_passed(&p, VELO_UPLINK_PASS_NOT_IP);
}

/* TCP to an XDP pod: the node's conntrack must see both directions, so the stack takes it. */
static void test_tcp(void **state)
{
	struct iphdr *iph;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	iph = (struct iphdr *)(p.buf + ETH_HLEN);
	iph->protocol = IPPROTO_TCP;
	iph->check = 0;
	iph->check = htons(csum_fold(iph, sizeof(*iph)));
	assert_passed(&p, VELO_UPLINK_PASS_TCP);
	build_ip6(&p, "fd00::2", 64);
	((struct ipv6hdr *)(p.buf + ETH_HLEN))->nexthdr = IPPROTO_TCP;
	assert_passed(&p, VELO_UPLINK_PASS_TCP);
}

static int pol_map(const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(fx.uplink->obj, name));
}

/* The address as policy's maps key it: IPv4 mapped into IPv6. */
static void pol_addr(const char *addr, uint8_t out[16])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, addr, &out[12]), 1);
}

/*
 * A pod isolated for ingress: a new flow to it takes the stack (its tc egress
 * judges it there), and once that allowed it (an entry of the current
 * revision) the frames are redirected again; a stale entry takes the stack.
 */
static void test_policy_isolated(void **state)
{
	struct velo_pol_ip_key ip_key = { .prefixlen = 128 };
	struct velo_pol_ip ip = { .pod_id = 300,
				  .cidr_id = VELO_ID_WORLD,
				  .flags = VELO_POL_IP_LOCAL };
	struct velo_pol_subject subject = { .flags = VELO_POL_ISOLATE_INGRESS };
	struct velo_pol_state st = { .revision = 7, .active = 1 }, off = {};
	struct velo_pol_ct_key ct_key = { .sport = htons(4000),
					  .dport = htons(5000),
					  .proto = IPPROTO_UDP };
	struct velo_pol_ct ct = { .revision = 7 };
	uint32_t zero = 0, pod_id = 300;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	pol_addr("10.0.0.2", ip_key.addr);
	pol_addr("10.1.0.5", ct_key.saddr);
	pol_addr("10.0.0.2", ct_key.daddr);
	assert_int_equal(bpf_map_update_elem(pol_map(VELO_MAP_POL_IP), &ip_key, &ip, BPF_ANY), 0);
	assert_int_equal(
		bpf_map_update_elem(pol_map(VELO_MAP_POL_SUBJECT), &pod_id, &subject, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(pol_map(VELO_MAP_POL_STATE), &zero, &st, BPF_ANY), 0);

	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	assert_passed(&p, VELO_UPLINK_PASS_POLICY);
	assert_int_equal(bpf_map_update_elem(pol_map(VELO_MAP_POL_CT), &ct_key, &ct, BPF_ANY), 0);
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	assert_int_equal(run(&p), XDP_REDIRECT);
	st.revision = 8;
	assert_int_equal(bpf_map_update_elem(pol_map(VELO_MAP_POL_STATE), &zero, &st, BPF_ANY), 0);
	build_ip4(&p, "10.0.0.2", 64, 0, 100);
	assert_passed(&p, VELO_UPLINK_PASS_POLICY);
	/* A pod velod hasn't placed yet takes the stack, where its programs fail closed. */
	build_ip6(&p, "fd00::2", 64);
	assert_passed(&p, VELO_UPLINK_PASS_POLICY);
	/* A placed pod nobody isolates is redirected at once. */
	ip.pod_id = 301;
	assert_int_equal(inet_pton(AF_INET6, "fd00::2", ip_key.addr), 1);
	assert_int_equal(bpf_map_update_elem(pol_map(VELO_MAP_POL_IP), &ip_key, &ip, BPF_ANY), 0);
	build_ip6(&p, "fd00::2", 64);
	assert_int_equal(run(&p), XDP_REDIRECT);
	assert_int_equal(bpf_map_delete_elem(pol_map(VELO_MAP_POL_IP), &ip_key), 0);

	assert_int_equal(bpf_map_update_elem(pol_map(VELO_MAP_POL_STATE), &zero, &off, BPF_ANY), 0);
	assert_int_equal(bpf_map_delete_elem(pol_map(VELO_MAP_POL_SUBJECT), &pod_id), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit4),
		cmocka_unit_test(test_hit6),
		cmocka_unit_test(test_not_for_this_host),
		cmocka_unit_test(test_no_xdp_pod),
		cmocka_unit_test(test_ttl1),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_not_ip),
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_policy_isolated),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
