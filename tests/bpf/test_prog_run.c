// SPDX-License-Identifier: Apache-2.0
/*
 * BPF_PROG_TEST_RUN of velo's host-veth programs (tc and XDP) on built packet
 * fixtures, one test per branch. Runs in a private network namespace with two
 * veth devices standing in for the source and destination host veths (the
 * destination's MTU is 1280 for the oversize case). Skips when not root.
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
#include <linux/pkt_cls.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <setjmp.h>
#include <cmocka.h>

#include "fixtures.h"
#include "bpf/lib/velo_shared.h"
#include "veth_tc.skel.h"
#include "veth_xdp.skel.h"

#define DEV_SRC "vtsrc"
#define DEV_DST "vtdst"
#define DST_MTU 1280

static const uint8_t mac_a[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x0a }; /* pod A */
static const uint8_t mac_b[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x0b }; /* pod B */
static const uint8_t mac_evil[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x66 }; /* not A's */
static const uint8_t mac_host[ETH_ALEN] = { 0xee, 0xee, 0xee, 0xee, 0xee, 0xee };

static struct {
	bool ready;
	struct veth_tc *tc;
	struct veth_xdp *xdp;
	int ifindex_src, ifindex_dst, ifindex_slow;
} fx;

struct pkt {
	uint8_t buf[2048];
	unsigned len;
};

static int run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_cmd(const char *fmt, ...)
{
	char cmd[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -EIO;
}

static void put_eth(struct pkt *p, const uint8_t *src_mac, uint16_t proto)
{
	struct ethhdr *eth = (struct ethhdr *)p->buf;

	memcpy(eth->h_dest, mac_host, ETH_ALEN);
	memcpy(eth->h_source, src_mac, ETH_ALEN);
	eth->h_proto = htons(proto);
}

/* Ethernet + IPv4 + UDP with payload bytes; frag_off in host order. */
static void build_ip4(struct pkt *p, const uint8_t *src_mac, const char *saddr, const char *daddr,
		      uint8_t ttl, uint16_t frag_off, unsigned payload)
{
	struct iphdr *iph = (struct iphdr *)(p->buf + ETH_HLEN);
	struct udphdr *udp = (struct udphdr *)(iph + 1);

	memset(p, 0, sizeof(*p));
	put_eth(p, src_mac, ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = ttl;
	iph->protocol = IPPROTO_UDP;
	iph->frag_off = htons(frag_off);
	iph->tot_len = htons(sizeof(*iph) + sizeof(*udp) + payload);
	inet_pton(AF_INET, saddr, &iph->saddr);
	inet_pton(AF_INET, daddr, &iph->daddr);
	iph->check = htons(csum_fold(iph, sizeof(*iph)));
	udp->source = htons(4000);
	udp->dest = htons(5000);
	udp->len = htons(sizeof(*udp) + payload);
	memset(udp + 1, 0xab, payload);
	p->len = ETH_HLEN + sizeof(*iph) + sizeof(*udp) + payload;
}

/* Another IPv4 protocol number, the header checksum kept valid. */
static void set_ip4_proto(struct pkt *p, uint8_t proto)
{
	struct iphdr *iph = (struct iphdr *)(p->buf + ETH_HLEN);

	iph->protocol = proto;
	iph->check = 0;
	iph->check = htons(csum_fold(iph, sizeof(*iph)));
}

static void build_ip6(struct pkt *p, const uint8_t *src_mac, const char *saddr, const char *daddr,
		      uint8_t hop_limit, uint8_t nexthdr)
{
	struct ipv6hdr *ip6h = (struct ipv6hdr *)(p->buf + ETH_HLEN);
	struct udphdr *udp = (struct udphdr *)(ip6h + 1);

	memset(p, 0, sizeof(*p));
	put_eth(p, src_mac, ETH_P_IPV6);
	ip6h->version = 6;
	ip6h->hop_limit = hop_limit;
	ip6h->nexthdr = nexthdr;
	ip6h->payload_len = htons(sizeof(*udp) + 32);
	inet_pton(AF_INET6, saddr, &ip6h->saddr);
	inet_pton(AF_INET6, daddr, &ip6h->daddr);
	udp->len = htons(sizeof(*udp) + 32);
	p->len = ETH_HLEN + sizeof(*ip6h) + sizeof(*udp) + 32;
}

static int add_endpoint(const char *addr, int ifindex, const uint8_t *pod_mac, uint32_t flags)
{
	struct velo_ep_key key = key_of(addr);
	struct velo_endpoint ep = { .owner = 1, .ifindex = ifindex, .flags = flags };

	memcpy(ep.pod_mac, pod_mac, ETH_ALEN);
	memcpy(ep.host_mac, mac_host, ETH_ALEN);
	return bpf_map_update_elem(bpf_map__fd(fx.tc->maps.velo_ep_v1), &key, &ep, BPF_ANY);
}

static uint64_t stat_sum(enum velo_stat stat)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t values[ncpu > 0 ? ncpu : 1], sum = 0;
	uint32_t key = stat;

	if (ncpu <= 0 || bpf_map_lookup_elem(bpf_map__fd(fx.tc->maps.velo_stats_v2), &key, values))
		return UINT64_MAX;
	for (int i = 0; i < ncpu; i++)
		sum += values[i];
	return sum;
}

/* Runs the tc program on p as if it arrived on the source host veth; p becomes the output. */
static int run_tc(struct pkt *p)
{
	struct __sk_buff ctx = { .ifindex = fx.ifindex_src };
	uint8_t out[sizeof(p->buf)];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->buf, .data_size_in = p->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));
	int ret;

	ret = bpf_prog_test_run_opts(bpf_program__fd(fx.tc->progs.velo_tc_ingress), &opts);
	assert_int_equal(ret, 0);
	assert_int_equal(opts.data_size_out, p->len);
	memcpy(p->buf, out, p->len);
	return (int)opts.retval;
}

static int run_xdp(struct pkt *p)
{
	struct xdp_md ctx = { .data_end = p->len, .ingress_ifindex = fx.ifindex_src };
	uint8_t out[sizeof(p->buf)];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->buf, .data_size_in = p->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));
	int ret;

	ret = bpf_prog_test_run_opts(bpf_program__fd(fx.xdp->progs.velo_xdp_host), &opts);
	assert_int_equal(ret, 0);
	assert_int_equal(opts.data_size_out, p->len);
	memcpy(p->buf, out, p->len);
	return (int)opts.retval;
}

typedef int (*runner_fn)(struct pkt *p);

static int ifindex_or_fail(const char *name)
{
	int ifindex = (int)if_nametoindex(name);

	return ifindex > 0 ? ifindex : -ENODEV;
}

static int group_setup(void **state)
{
	struct bpf_map *map;
	struct bpf_devmap_val val = {};
	int ret;

	(void)state;
	if (geteuid() != 0)
		return 0; /* every test skips */
	if (unshare(CLONE_NEWNET))
		return -1;
	if (run_cmd("ip link add name " DEV_SRC " type veth peer name " DEV_SRC "p") ||
	    run_cmd("ip link add name " DEV_DST " mtu %d type veth peer name " DEV_DST "p",
		    DST_MTU) ||
	    run_cmd("ip link add name vtslow type veth peer name vtslowp"))
		return -1;
	fx.ifindex_src = ifindex_or_fail(DEV_SRC);
	fx.ifindex_dst = ifindex_or_fail(DEV_DST);
	fx.ifindex_slow = ifindex_or_fail("vtslow");
	if (fx.ifindex_src < 0 || fx.ifindex_dst < 0 || fx.ifindex_slow < 0)
		return -1;

	/* No pinning here: the fixture's maps live and die with this process. */
	fx.tc = veth_tc__open();
	fx.xdp = veth_xdp__open();
	if (!fx.tc || !fx.xdp)
		return -1;
	/* The conntrack lookup, as velo's loader turns it on where the kfuncs are. */
	fx.tc->rodata->velo_have_ct_kfuncs = true;
	fx.xdp->rodata->velo_have_ct_kfuncs = true;
	bpf_object__for_each_map (map, fx.tc->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_object__for_each_map (map, fx.xdp->obj)
		bpf_map__set_pin_path(map, NULL);
	if (veth_tc__load(fx.tc))
		return -1;
	/* The XDP object shares the tc object's maps, as the pinned ones are shared. */
	if (bpf_map__reuse_fd(fx.xdp->maps.velo_ep_v1, bpf_map__fd(fx.tc->maps.velo_ep_v1)) ||
	    bpf_map__reuse_fd(fx.xdp->maps.velo_stats_v2, bpf_map__fd(fx.tc->maps.velo_stats_v2)))
		return -1;
	if (veth_xdp__load(fx.xdp))
		return -1;

	const uint32_t both = VELO_EP_F_FASTPATH | VELO_EP_F_XDP_RX;

	if (add_endpoint("10.0.0.1", fx.ifindex_src, mac_a, both) ||
	    add_endpoint("fd00::1", fx.ifindex_src, mac_a, both) ||
	    add_endpoint("10.0.0.2", fx.ifindex_dst, mac_b, both) ||
	    add_endpoint("fd00::2", fx.ifindex_dst, mac_b, both) ||
	    /* a local pod without the shortcut, and one with tc only (no XDP receive) */
	    add_endpoint("10.0.0.3", fx.ifindex_slow, mac_b, 0) ||
	    add_endpoint("10.0.0.4", fx.ifindex_slow, mac_b, VELO_EP_F_FASTPATH))
		return -1;
	val.ifindex = fx.ifindex_dst;
	val.bpf_prog.fd = bpf_program__fd(fx.xdp->progs.velo_xdp_dst);
	ret = bpf_map_update_elem(bpf_map__fd(fx.xdp->maps.velo_xdp_tx_v1), &val.ifindex, &val,
				  BPF_ANY);
	if (ret)
		return -1;
	fx.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	veth_xdp__destroy(fx.xdp);
	veth_tc__destroy(fx.tc);
	return 0; /* the private netns and its devices go with the process */
}

#define REQUIRE_ROOT()          \
	do {                    \
		if (!fx.ready)  \
			skip(); \
	} while (0)

/* A forwarded IPv4 packet: MACs as from the gateway to B, TTL - 1, header checksum valid. */
static void assert_forwarded4(const struct pkt *p, uint8_t ttl_in)
{
	const struct ethhdr *eth = (const struct ethhdr *)p->buf;
	const struct iphdr *iph = (const struct iphdr *)(p->buf + ETH_HLEN);

	assert_memory_equal(eth->h_dest, mac_b, ETH_ALEN);
	assert_memory_equal(eth->h_source, mac_host, ETH_ALEN);
	assert_int_equal(iph->ttl, ttl_in - 1);
	assert_int_equal(csum_fold(iph, sizeof(*iph)), 0);
}

static void hit4(runner_fn run, int verdict)
{
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	assert_int_equal(run(&p), verdict);
	assert_forwarded4(&p, 64);
}

static void hit6(runner_fn run, int verdict)
{
	const struct ipv6hdr *ip6h;
	struct pkt p;

	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, IPPROTO_UDP);
	assert_int_equal(run(&p), verdict);
	ip6h = (const struct ipv6hdr *)(p.buf + ETH_HLEN);
	assert_int_equal(ip6h->hop_limit, 63);
	assert_memory_equal(p.buf, mac_b, ETH_ALEN);
}

/* p goes to the stack byte for byte unchanged. */
static void assert_passed_untouched(runner_fn run, struct pkt *p, int pass)
{
	struct pkt before = *p;

	assert_int_equal(run(p), pass);
	assert_memory_equal(p->buf, before.buf, p->len);
}

static void miss(runner_fn run, int pass)
{
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.99.0.1", 64, 0, 100);
	assert_passed_untouched(run, &p, pass);
	/* a local pod without the shortcut on is a miss too */
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.3", 64, 0, 100);
	assert_passed_untouched(run, &p, pass);
}

static void ttl1(runner_fn run, int pass)
{
	uint64_t before = stat_sum(VELO_STAT_TTL);
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 1, 0, 100);
	assert_passed_untouched(run, &p, pass);
	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 1, IPPROTO_UDP);
	assert_passed_untouched(run, &p, pass);
	assert_int_equal(stat_sum(VELO_STAT_TTL), before + 2);
}

static void fragment(runner_fn run, int pass)
{
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0x2000 /* MF */, 100);
	assert_passed_untouched(run, &p, pass);
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 185 /* offset */, 100);
	assert_passed_untouched(run, &p, pass);
	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, 44 /* fragment header */);
	assert_passed_untouched(run, &p, pass);
}

/*
 * The kernel's skb test-run refuses an IP frame shorter than its fixed
 * header (EINVAL), so only XDP gets the half headers; both get a bad IHL.
 */
static void truncated(runner_fn run, int pass)
{
	struct pkt p;

	if (run == run_xdp) {
		build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
		p.len = ETH_HLEN + 10; /* half an IPv4 header */
		assert_passed_untouched(run, &p, pass);
		build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, IPPROTO_UDP);
		p.len = ETH_HLEN + 30;
		assert_passed_untouched(run, &p, pass);
	}
	/* IHL says 60 bytes of header, the packet has 40 */
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 0);
	p.buf[ETH_HLEN] = 0x4f;
	p.len = ETH_HLEN + 40;
	assert_passed_untouched(run, &p, pass);
}

static void non_ip(runner_fn run, int pass)
{
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	put_eth(&p, mac_a, ETH_P_ARP);
	assert_passed_untouched(run, &p, pass);
}

static void vlan(runner_fn run, int pass)
{
	struct pkt p;

	/* 802.1Q tag in front of an IPv4 packet that would otherwise be a hit */
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	memmove(p.buf + ETH_HLEN + 4, p.buf + ETH_HLEN - 2, p.len - ETH_HLEN + 2);
	p.buf[12] = 0x81;
	p.buf[13] = 0x00;
	p.buf[14] = 0x00;
	p.buf[15] = 0x05;
	p.len += 4;
	assert_passed_untouched(run, &p, pass);
}

static void oversize(runner_fn run, int pass)
{
	uint64_t before = stat_sum(VELO_STAT_MTU);
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, DST_MTU); /* > MTU once headers count */
	assert_passed_untouched(run, &p, pass);
	assert_int_equal(stat_sum(VELO_STAT_MTU), before + 1);
}

static void spoofed(runner_fn run, int drop, enum velo_stat stat)
{
	uint64_t before = stat_sum(stat);
	struct pkt p;

	/* B's address sent from A's veth */
	build_ip4(&p, mac_a, "10.0.0.2", "10.0.0.1", 64, 0, 100);
	assert_int_equal(run(&p), drop);
	/* A's address with a MAC that isn't A's */
	build_ip4(&p, mac_evil, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	assert_int_equal(run(&p), drop);
	/* an address no pod has, towards the outside world */
	build_ip6(&p, mac_a, "fd00::99", "2001:db8::1", 64, IPPROTO_UDP);
	assert_int_equal(run(&p), drop);
	/* what the stack alone would handle is checked too: a fragment, ICMP, IPv4 options */
	build_ip4(&p, mac_a, "10.0.0.2", "10.0.0.1", 64, 0x2000 /* MF */, 100);
	assert_int_equal(run(&p), drop);
	build_ip4(&p, mac_a, "10.0.0.2", "192.0.2.1", 64, 0, 100);
	set_ip4_proto(&p, IPPROTO_ICMP);
	assert_int_equal(run(&p), drop);
	build_ip6(&p, mac_evil, "fd00::1", "fd00::2", 64, 44 /* fragment header */);
	assert_int_equal(run(&p), drop);
	assert_int_equal(stat_sum(stat), before + 6);
}

/* Only TCP and UDP are shortcut: ICMP errors may quote NATed headers, IPv4 options need routing. */
static void not_tcp_udp(runner_fn run, int pass)
{
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	set_ip4_proto(&p, IPPROTO_ICMP);
	assert_passed_untouched(run, &p, pass);
	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, 58 /* ICMPv6 */);
	assert_passed_untouched(run, &p, pass);
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	p.buf[ETH_HLEN] = 0x46; /* 4 bytes of options (the UDP header stands in for them) */
	assert_passed_untouched(run, &p, pass);
	/* IPv6 extension header chains (hop-by-hop, routing, destination options), one with a
	 * length far past the end of the packet: the stack's, never parsed here */
	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, 0);
	assert_passed_untouched(run, &p, pass);
	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, 43);
	assert_passed_untouched(run, &p, pass);
	build_ip6(&p, mac_a, "fd00::1", "fd00::2", 64, 60);
	p.buf[ETH_HLEN + 41] = 0xff;
	assert_passed_untouched(run, &p, pass);
}

/* TCP is shortcut like UDP: no conntrack entry in this netns means no NAT. */
static void tcp(runner_fn run, int verdict)
{
	uint64_t nat = stat_sum(VELO_STAT_NAT), no_ct = stat_sum(VELO_STAT_NO_CT);
	struct pkt p;

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	set_ip4_proto(&p, IPPROTO_TCP);
	assert_int_equal(run(&p), verdict);
	assert_forwarded4(&p, 64);
	assert_int_equal(stat_sum(VELO_STAT_NAT), nat);
	assert_int_equal(stat_sum(VELO_STAT_NO_CT), no_ct);
}

static void link_scope(runner_fn run, int pass)
{
	struct pkt p;

	/* neighbour discovery and friends use link-local sources: the stack's */
	build_ip6(&p, mac_a, "fe80::2", "fe80::1", 255, 58);
	assert_passed_untouched(run, &p, pass);
}

#define BOTH(name, ...)                          \
	static void test_tc_##name(void **state) \
	{                                        \
		(void)state;                     \
		REQUIRE_ROOT();                  \
		name(run_tc, __VA_ARGS__);       \
	}

BOTH(hit4, TC_ACT_REDIRECT)
BOTH(hit6, TC_ACT_REDIRECT)
BOTH(miss, TC_ACT_OK)
BOTH(ttl1, TC_ACT_OK)
BOTH(fragment, TC_ACT_OK)
BOTH(truncated, TC_ACT_OK)
BOTH(non_ip, TC_ACT_OK)
BOTH(vlan, TC_ACT_OK)
BOTH(oversize, TC_ACT_OK)
BOTH(spoofed, TC_ACT_SHOT, VELO_STAT_TC_SPOOF)
BOTH(link_scope, TC_ACT_OK)
BOTH(not_tcp_udp, TC_ACT_OK)
BOTH(tcp, TC_ACT_REDIRECT)

#undef BOTH
#define BOTH(name, ...)                           \
	static void test_xdp_##name(void **state) \
	{                                         \
		(void)state;                      \
		REQUIRE_ROOT();                   \
		name(run_xdp, __VA_ARGS__);       \
	}

BOTH(hit4, XDP_REDIRECT)
BOTH(hit6, XDP_REDIRECT)
BOTH(miss, XDP_PASS)
BOTH(ttl1, XDP_PASS)
BOTH(fragment, XDP_PASS)
BOTH(truncated, XDP_PASS)
BOTH(non_ip, XDP_PASS)
BOTH(vlan, XDP_PASS)
BOTH(oversize, XDP_PASS)
BOTH(spoofed, XDP_DROP, VELO_STAT_XDP_SPOOF)
BOTH(link_scope, XDP_PASS)
BOTH(not_tcp_udp, XDP_PASS)
BOTH(tcp, XDP_REDIRECT)

/* tc may redirect to a pod with the shortcut on; XDP also needs the pod ready for XDP frames. */
static void test_xdp_needs_xdp_rx(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.4", 64, 0, 100);
	assert_passed_untouched(run_xdp, &p, XDP_PASS);
	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.4", 64, 0, 100);
	assert_int_equal(run_tc(&p), TC_ACT_REDIRECT);
}

static int deny_set(uint64_t cgroup_id, const char *addr, bool add)
{
	struct velo_ep_key ep = key_of(addr);
	struct velo_deny_key key = { .prefixlen = VELO_DENY_PREFIX_BASE + 128,
				     .cgroup_id = cgroup_id };
	int fd = bpf_map__fd(fx.xdp->maps.velo_deny_v1);
	uint8_t one = 1;

	memcpy(key.addr, ep.addr, sizeof(key.addr));
	return add ? bpf_map_update_elem(fd, &key, &one, BPF_ANY) : bpf_map_delete_elem(fd, &key);
}

/*
 * A redirect would skip velo_tc_deny on tc ingress: a destination the
 * sending pod's deny list names goes to the stack (and so to velo_tc_deny)
 * untouched; its other destinations, and other pods' lists, don't matter.
 */
static void test_xdp_deny_listed(void **state)
{
	int deny_if = bpf_map__fd(fx.xdp->maps.velo_deny_if_v1);
	uint32_t ifindex = (uint32_t)fx.ifindex_src;
	uint64_t cgroup_id = 77, redirects;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(bpf_map_update_elem(deny_if, &ifindex, &cgroup_id, BPF_ANY), 0);
	assert_int_equal(deny_set(cgroup_id, "10.0.0.2", true), 0);
	assert_int_equal(deny_set(cgroup_id + 1, "fd00::2", true), 0);
	redirects = stat_sum(VELO_STAT_XDP_REDIRECT);

	build_ip4(&p, mac_a, "10.0.0.1", "10.0.0.2", 64, 0, 100);
	assert_passed_untouched(run_xdp, &p, XDP_PASS);
	assert_int_equal(stat_sum(VELO_STAT_XDP_REDIRECT), redirects);
	/* fd00::2 is on another pod's list, not this one's */
	hit6(run_xdp, XDP_REDIRECT);

	assert_int_equal(deny_set(cgroup_id, "10.0.0.2", false), 0);
	assert_int_equal(deny_set(cgroup_id + 1, "fd00::2", false), 0);
	assert_int_equal(bpf_map_delete_elem(deny_if, &ifindex), 0);
	hit4(run_xdp, XDP_REDIRECT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tc_hit4),		 cmocka_unit_test(test_tc_hit6),
		cmocka_unit_test(test_tc_miss),		 cmocka_unit_test(test_tc_ttl1),
		cmocka_unit_test(test_tc_fragment),	 cmocka_unit_test(test_tc_truncated),
		cmocka_unit_test(test_tc_non_ip),	 cmocka_unit_test(test_tc_vlan),
		cmocka_unit_test(test_tc_oversize),	 cmocka_unit_test(test_tc_spoofed),
		cmocka_unit_test(test_tc_link_scope),	 cmocka_unit_test(test_xdp_hit4),
		cmocka_unit_test(test_xdp_hit6),	 cmocka_unit_test(test_xdp_miss),
		cmocka_unit_test(test_xdp_ttl1),	 cmocka_unit_test(test_xdp_fragment),
		cmocka_unit_test(test_xdp_truncated),	 cmocka_unit_test(test_xdp_non_ip),
		cmocka_unit_test(test_xdp_vlan),	 cmocka_unit_test(test_xdp_oversize),
		cmocka_unit_test(test_xdp_spoofed),	 cmocka_unit_test(test_xdp_link_scope),
		cmocka_unit_test(test_xdp_needs_xdp_rx), cmocka_unit_test(test_tc_not_tcp_udp),
		cmocka_unit_test(test_xdp_not_tcp_udp),	 cmocka_unit_test(test_tc_tcp),
		cmocka_unit_test(test_xdp_tcp),		 cmocka_unit_test(test_xdp_deny_listed),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
