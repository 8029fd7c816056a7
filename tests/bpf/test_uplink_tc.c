// SPDX-License-Identifier: Apache-2.0
/*
 * BPF_PROG_TEST_RUN of velo_tc_uplink (bpf/uplink_tc.bpf.c), the receiving
 * half of the cross-node tc shortcut: one test per outcome, each of which
 * must move exactly one counter of velo_cross_v1 by one packet. The maps are
 * veth_xdp's, shared by fd as velod shares the pinned ones. Runs in a private
 * network namespace: vtul stands in for the uplink, vtother for another
 * device, vtdst (MTU 1280) for a local pod's host veth. Skips when not root.
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
#include <linux/tcp.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <setjmp.h>
#include <cmocka.h>

#include "fixtures.h"
#include "bpf/lib/velo_cross.h"
#include "bpf/lib/velo_flow.h"
#include "bpf/lib/velo_policy.h"
#include "bpf/lib/velo_shared.h"
#include "uplink_tc.skel.h"
#include "veth_xdp.skel.h"

#define DST_MTU 1280
#define REMOTE4 "10.1.0.5" /* a pod on the other node: 10.1.0.0/24 */
#define REMOTE6 "fd01::5" /* fd01::/64 */
#define POD4 "10.0.0.2" /* the tc pod behind vtdst */
#define POD6 "fd00::2"
#define SPORT 4000
#define DPORT 5000
#define ID_POD 300 /* POD4's policy identity */
#define ID_REMOTE 400 /* REMOTE4's */

static const uint8_t mac_uplink[ETH_ALEN] = { 0x02, 0, 0, 0, 0x77, 0x02 }; /* this node */
static const uint8_t mac_router[ETH_ALEN] = { 0x02, 0, 0, 0, 0x77, 0x01 }; /* the other node */
static const uint8_t mac_pod[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x0b };
static const uint8_t mac_host[ETH_ALEN] = { 0xee, 0xee, 0xee, 0xee, 0xee, 0xee };

static struct {
	bool ready;
	struct veth_xdp *veth;
	struct uplink_tc *uplink;
	int ifindex_uplink, ifindex_other, ifindex_dst;
	uint32_t revision;
} fx;

struct pkt {
	uint8_t buf[2048];
	unsigned len;
};

static void put_eth(struct pkt *p, uint16_t proto)
{
	struct ethhdr *eth = (struct ethhdr *)p->buf;

	memcpy(eth->h_dest, mac_uplink, ETH_ALEN);
	memcpy(eth->h_source, mac_router, ETH_ALEN);
	eth->h_proto = htons(proto);
}

static struct iphdr *ip4_of(struct pkt *p)
{
	return (struct iphdr *)(p->buf + ETH_HLEN);
}

static struct ipv6hdr *ip6_of(struct pkt *p)
{
	return (struct ipv6hdr *)(p->buf + ETH_HLEN);
}

static void ip4_checksum(struct pkt *p)
{
	struct iphdr *iph = ip4_of(p);

	iph->check = 0;
	iph->check = htons(csum_fold(iph, sizeof(*iph)));
}

/* The transport header: UDP's 8 bytes, or TCP's 20 (an ACK mid-connection). */
static unsigned put_l4(uint8_t *l4, uint8_t proto, unsigned payload)
{
	struct tcphdr *tcp = (struct tcphdr *)l4;
	struct udphdr *udp = (struct udphdr *)l4;

	if (proto == IPPROTO_TCP) {
		tcp->source = htons(SPORT);
		tcp->dest = htons(DPORT);
		tcp->doff = 5;
		tcp->ack = 1;
		memset(tcp + 1, 0xab, payload);
		return sizeof(*tcp);
	}
	udp->source = htons(SPORT);
	udp->dest = htons(DPORT);
	udp->len = htons(sizeof(*udp) + payload);
	memset(udp + 1, 0xab, payload);
	return sizeof(*udp);
}

/* Ethernet + IPv4 + TCP or UDP, as the other node routes it to this one. */
static void build_ip4(struct pkt *p, uint8_t proto, const char *saddr, const char *daddr,
		      uint8_t ttl, unsigned payload)
{
	struct iphdr *iph = ip4_of(p);
	unsigned l4_len;

	memset(p, 0, sizeof(*p));
	put_eth(p, ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = ttl;
	iph->protocol = proto;
	assert_int_equal(inet_pton(AF_INET, saddr, &iph->saddr), 1);
	assert_int_equal(inet_pton(AF_INET, daddr, &iph->daddr), 1);
	l4_len = put_l4((uint8_t *)(iph + 1), proto, payload);
	iph->tot_len = htons(sizeof(*iph) + l4_len + payload);
	ip4_checksum(p);
	p->len = ETH_HLEN + sizeof(*iph) + l4_len + payload;
}

/* Ethernet + IPv6 + UDP. */
static void build_ip6(struct pkt *p, const char *saddr, const char *daddr, uint8_t hop_limit,
		      unsigned payload)
{
	struct ipv6hdr *ip6h = ip6_of(p);
	unsigned l4_len;

	memset(p, 0, sizeof(*p));
	put_eth(p, ETH_P_IPV6);
	ip6h->version = 6;
	ip6h->hop_limit = hop_limit;
	ip6h->nexthdr = IPPROTO_UDP;
	assert_int_equal(inet_pton(AF_INET6, saddr, &ip6h->saddr), 1);
	assert_int_equal(inet_pton(AF_INET6, daddr, &ip6h->daddr), 1);
	l4_len = put_l4((uint8_t *)(ip6h + 1), IPPROTO_UDP, payload);
	ip6h->payload_len = htons(l4_len + payload);
	p->len = ETH_HLEN + sizeof(*ip6h) + l4_len + payload;
}

/* What a router makes of p on its way to the pod behind vtdst. */
static void forwarded(struct pkt *p)
{
	memcpy(p->buf, mac_pod, ETH_ALEN);
	memcpy(p->buf + ETH_ALEN, mac_host, ETH_ALEN);
	/* The version byte, not h_proto: gcc's strict aliasing hoisted that load above *p's copy. */
	if (p->buf[ETH_HLEN] >> 4 == 4) {
		ip4_of(p)->ttl--;
		ip4_checksum(p);
	} else {
		ip6_of(p)->hop_limit--;
	}
}

static int add_endpoint(const char *addr, int ifindex, uint32_t flags)
{
	struct velo_endpoint ep = { .owner = 1, .ifindex = (uint32_t)ifindex, .flags = flags };
	struct velo_ep_key key = key_of(addr);

	memcpy(ep.pod_mac, mac_pod, ETH_ALEN);
	memcpy(ep.host_mac, mac_host, ETH_ALEN);
	return bpf_map_update_elem(bpf_map__fd(fx.veth->maps.velo_ep_v1), &key, &ep, BPF_ANY);
}

/* Another node's pod CIDR, reached by the uplink; IPv4 mapped as the map keys it. */
static int add_remote(const char *cidr_addr, unsigned prefix, int uplink_ifindex)
{
	struct velo_remote_key key = { .prefixlen = prefix };
	struct velo_remote remote = { .uplink_ifindex = (uint32_t)uplink_ifindex };

	if (strchr(cidr_addr, ':')) {
		if (inet_pton(AF_INET6, cidr_addr, key.addr) != 1)
			return -EINVAL;
	} else {
		key.addr[10] = key.addr[11] = 0xff;
		if (inet_pton(AF_INET, cidr_addr, &key.addr[12]) != 1)
			return -EINVAL;
		key.prefixlen += 96;
	}
	return bpf_map_update_elem(bpf_map__fd(fx.uplink->maps.velo_remote_v1), &key, &remote,
				   BPF_ANY);
}

static void snapshot(struct velo_cross_counters sums[VELO_CROSS_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	struct velo_cross_counters values[ncpu > 0 ? ncpu : 1];

	assert_true(ncpu > 0);
	for (uint32_t stat = 0; stat < VELO_CROSS_STAT_MAX; stat++) {
		assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(fx.uplink->maps.velo_cross_v1),
						     &stat, values),
				 0);
		sums[stat] = (struct velo_cross_counters){};
		for (int i = 0; i < ncpu; i++) {
			sums[stat].packets += values[i].packets;
			sums[stat].bytes += values[i].bytes;
		}
	}
}

/* Since before, stat moved by one packet of len bytes, and no other counter moved. */
static void assert_counted(const struct velo_cross_counters before[VELO_CROSS_STAT_MAX],
			   enum velo_cross_stat stat, unsigned len)
{
	struct velo_cross_counters after[VELO_CROSS_STAT_MAX];

	snapshot(after);
	for (uint32_t i = 0; i < VELO_CROSS_STAT_MAX; i++) {
		uint64_t moved = i == stat;

		if (after[i].packets != before[i].packets + moved)
			print_error("velo_cross_v1[%u] moved by %llu packets, expected %llu\n", i,
				    (unsigned long long)(after[i].packets - before[i].packets),
				    (unsigned long long)moved);
		assert_int_equal(after[i].packets, before[i].packets + moved);
		assert_int_equal(after[i].bytes, before[i].bytes + moved * len);
	}
}

/* Runs velo_tc_uplink on p as if it arrived on ifindex; p becomes the output. */
static int run_on(struct pkt *p, int ifindex)
{
	struct __sk_buff ctx = { .ifindex = (uint32_t)ifindex };
	uint8_t out[sizeof(p->buf)];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p->buf, .data_size_in = p->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	assert_int_equal(
		bpf_prog_test_run_opts(bpf_program__fd(fx.uplink->progs.velo_tc_uplink), &opts), 0);
	assert_int_equal(opts.data_size_out, p->len);
	memcpy(p->buf, out, p->len);
	return (int)opts.retval;
}

/* p, arriving on ifindex, goes to the stack unchanged, counted under stat. */
static void assert_passed_on(struct pkt *p, int ifindex, enum velo_cross_stat stat)
{
	struct velo_cross_counters before[VELO_CROSS_STAT_MAX];
	struct pkt orig = *p;

	snapshot(before);
	assert_int_equal(run_on(p, ifindex), TC_ACT_UNSPEC);
	assert_memory_equal(p->buf, orig.buf, p->len);
	assert_counted(before, stat, p->len);
}

static void assert_passed(struct pkt *p, enum velo_cross_stat stat)
{
	assert_passed_on(p, fx.ifindex_uplink, stat);
}

/* p, arriving on the uplink, goes into the pod behind vtdst as a router would forward it. */
static void assert_redirected(struct pkt *p)
{
	struct velo_cross_counters before[VELO_CROSS_STAT_MAX];
	struct pkt want = *p;

	forwarded(&want);
	snapshot(before);
	assert_int_equal(run_on(p, fx.ifindex_uplink), TC_ACT_REDIRECT);
	assert_memory_equal(p->buf, want.buf, p->len);
	assert_counted(before, VELO_CROSS_RX_REDIRECT, p->len);
}

/* p, arriving on the uplink, is dropped unchanged, counted as policy's. */
static void assert_dropped(struct pkt *p)
{
	struct velo_cross_counters before[VELO_CROSS_STAT_MAX];
	struct pkt orig = *p;

	snapshot(before);
	assert_int_equal(run_on(p, fx.ifindex_uplink), TC_ACT_SHOT);
	assert_memory_equal(p->buf, orig.buf, p->len);
	assert_counted(before, VELO_CROSS_RX_DROP_POLICY, p->len);
}

static int run_cmd(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -EIO;
}

/* Every map of uplink_tc that veth_xdp has too, veth_xdp's by fd. */
static int share_maps(void)
{
	struct bpf_map *map, *theirs;

	bpf_object__for_each_map (map, fx.uplink->obj) {
		if (bpf_map__is_internal(map))
			continue;
		theirs = bpf_object__find_map_by_name(fx.veth->obj, bpf_map__name(map));
		if (theirs && bpf_map__reuse_fd(map, bpf_map__fd(theirs)))
			return -1;
	}
	return 0;
}

static int group_setup(void **state)
{
	const uint32_t tc_pod = VELO_EP_F_FASTPATH, xdp_pod = VELO_EP_F_FASTPATH | VELO_EP_F_XDP_RX;
	struct bpf_map *map;

	(void)state;
	if (geteuid() != 0)
		return 0; /* every test skips */
	if (unshare(CLONE_NEWNET))
		return -1;
	if (run_cmd("ip link add name vtul type veth peer name vtulp") ||
	    run_cmd("ip link add name vtother type veth peer name vtotherp") ||
	    run_cmd("ip link add name vtdst mtu 1280 type veth peer name vtdstp"))
		return -1;
	fx.ifindex_uplink = (int)if_nametoindex("vtul");
	fx.ifindex_other = (int)if_nametoindex("vtother");
	fx.ifindex_dst = (int)if_nametoindex("vtdst");
	if (fx.ifindex_uplink <= 0 || fx.ifindex_other <= 0 || fx.ifindex_dst <= 0)
		return -1;

	/* No pinning here: the fixture's maps live and die with this process. */
	fx.veth = veth_xdp__open();
	fx.uplink = uplink_tc__open();
	if (!fx.veth || !fx.uplink)
		return -1;
	fx.veth->rodata->velo_have_ct_kfuncs = true;
	fx.uplink->rodata->velo_have_ct_kfuncs = true;
	bpf_object__for_each_map (map, fx.veth->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_object__for_each_map (map, fx.uplink->obj)
		bpf_map__set_pin_path(map, NULL);
	if (veth_xdp__load(fx.veth) || share_maps() || uplink_tc__load(fx.uplink))
		return -1;
	if (add_endpoint(POD4, fx.ifindex_dst, tc_pod) ||
	    add_endpoint(POD6, fx.ifindex_dst, tc_pod) ||
	    /* local pods the receiving half leaves alone: routed, XDP */
	    add_endpoint("10.0.0.3", fx.ifindex_dst, 0) ||
	    add_endpoint("10.0.0.5", fx.ifindex_dst, xdp_pod) ||
	    add_endpoint("fd00::5", fx.ifindex_dst, xdp_pod))
		return -1;
	if (add_remote("10.1.0.0", 24, fx.ifindex_uplink) ||
	    add_remote("fd01::", 64, fx.ifindex_uplink))
		return -1;
	fx.ready = true;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	uplink_tc__destroy(fx.uplink);
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
	static const uint8_t protos[] = { IPPROTO_UDP, IPPROTO_TCP };
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	for (size_t i = 0; i < sizeof(protos); i++) {
		build_ip4(&p, protos[i], REMOTE4, POD4, 64, 100);
		assert_redirected(&p);
		/* Spelled out what assert_redirected compared. */
		assert_memory_equal(p.buf, mac_pod, ETH_ALEN);
		assert_memory_equal(p.buf + ETH_ALEN, mac_host, ETH_ALEN);
		assert_int_equal(ip4_of(&p)->ttl, 63);
		assert_int_equal(csum_fold(ip4_of(&p), sizeof(struct iphdr)), 0);
	}
	/* The last hop a TTL of 2 has. */
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 2, 100);
	assert_redirected(&p);
	assert_int_equal(ip4_of(&p)->ttl, 1);
}

static void test_hit6(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip6(&p, REMOTE6, POD6, 64, 100);
	assert_redirected(&p);
	assert_int_equal(ip6_of(&p)->hop_limit, 63);
	assert_memory_equal(p.buf, mac_pod, ETH_ALEN);
}

/*
 * Not another node's pod: outside every remote CIDR (by one bit, too), or
 * inside one but arriving on a device other than the uplink velod gave it.
 */
static void test_not_remote(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, IPPROTO_UDP, "10.2.0.5", POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_REMOTE);
	build_ip4(&p, IPPROTO_UDP, "10.1.1.5", POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_REMOTE);
	build_ip6(&p, "fd01:0:0:1::5", POD6, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_REMOTE);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_passed_on(&p, fx.ifindex_other, VELO_CROSS_RX_PASS_NOT_REMOTE);
	build_ip6(&p, REMOTE6, POD6, 64, 100);
	assert_passed_on(&p, fx.ifindex_other, VELO_CROSS_RX_PASS_NOT_REMOTE);
}

/* Not a local pod whose veth runs the sending half: unknown, routed, or XDP. */
static void test_no_pod(void **state)
{
	static const char *const daddrs[] = { "10.0.0.9", "10.0.0.3", "10.0.0.5" };
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	for (size_t i = 0; i < sizeof(daddrs) / sizeof(daddrs[0]); i++) {
		build_ip4(&p, IPPROTO_UDP, REMOTE4, daddrs[i], 64, 100);
		assert_passed(&p, VELO_CROSS_RX_PASS_NO_POD);
	}
	build_ip6(&p, REMOTE6, "fd00::9", 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NO_POD);
	build_ip6(&p, REMOTE6, "fd00::5", 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NO_POD);
}

/* Expires here: the stack sends the ICMP error. */
static void test_ttl(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 1, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_TTL);
	build_ip4(&p, IPPROTO_TCP, REMOTE4, POD4, 0, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_TTL);
	build_ip6(&p, REMOTE6, POD6, 1, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_TTL);
}

/* Not TCP/UDP over IP without options, or a fragment: the stack's. */
static void test_not_ip(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	put_eth(&p, ETH_P_ARP);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	ip4_of(&p)->frag_off = htons(0x2000); /* MF: the first fragment */
	ip4_checksum(&p);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	ip4_of(&p)->frag_off = htons(185); /* the last fragment, at 1480 bytes */
	ip4_checksum(&p);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
	build_ip4(&p, IPPROTO_ICMP, REMOTE4, POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
	build_ip6(&p, REMOTE6, POD6, 64, 100);
	ip6_of(&p)->nexthdr = 44; /* a fragment header */
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
	/* IPv4-mapped addresses in IPv6 would find the IPv4 pod's and the IPv4 remote CIDR's entries. */
	build_ip6(&p, "::ffff:" REMOTE4, "::ffff:" POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
	build_ip6(&p, REMOTE6, "::ffff:" POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_NOT_IP);
}

/* vtdst's MTU: an IP packet of 1280 bytes fits, one more byte doesn't; the stack answers it. */
static void test_oversize(void **state)
{
	const unsigned udp4 = DST_MTU - sizeof(struct iphdr) - sizeof(struct udphdr);
	const unsigned udp6 = DST_MTU - sizeof(struct ipv6hdr) - sizeof(struct udphdr);
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, udp4);
	assert_redirected(&p);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, udp4 + 1);
	assert_passed(&p, VELO_CROSS_RX_PASS_MTU);
	build_ip6(&p, REMOTE6, POD6, 64, udp6);
	assert_redirected(&p);
	build_ip6(&p, REMOTE6, POD6, 64, udp6 + 1);
	assert_passed(&p, VELO_CROSS_RX_PASS_MTU);
}

static void pol_key(const char *addr, unsigned prefix, struct velo_pol_ip_key *key)
{
	struct velo_ep_key mapped = key_of(addr);

	memcpy(key->addr, mapped.addr, sizeof(key->addr));
	key->prefixlen = strchr(addr, ':') ? prefix : 96 + prefix;
}

static void pol_ip(const char *addr, unsigned prefix, uint32_t pod_id, uint32_t flags)
{
	struct velo_pol_ip_key key;
	struct velo_pol_ip ip = { .pod_id = pod_id, .cidr_id = VELO_ID_WORLD, .flags = flags };

	pol_key(addr, prefix, &key);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(fx.uplink->maps.velo_pol_ip_v1), &key, &ip,
					     BPF_ANY),
			 0);
}

/* Policy on, at a new revision: every flow is judged again at its next packet. */
static void pol_bump(void)
{
	struct velo_pol_state st = { .revision = ++fx.revision, .active = 1 };
	uint32_t zero = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(fx.uplink->maps.velo_pol_st_v1), &zero,
					     &st, BPF_ANY),
			 0);
}

static void pol_isolate(uint32_t subject, uint32_t flags)
{
	struct velo_pol_subject value = { .flags = flags };

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(fx.uplink->maps.velo_pol_sub_v1), &subject,
					     &value, BPF_ANY),
			 0);
}

/* subject lets peer in on UDP to DPORT. */
static struct velo_pol_rule_key pol_udp_rule(uint32_t subject, uint32_t peer)
{
	struct velo_pol_rule_key key = { .prefixlen = VELO_POL_RULE_PREFIX_BASE + 8 + 16,
					 .subject = subject,
					 .peer = peer,
					 .dir = VELO_POL_DIR_INGRESS,
					 .proto = IPPROTO_UDP,
					 .port = htons(DPORT) };

	return key;
}

static uint64_t pol_drops(const char *addr, uint32_t reason)
{
	int ncpu = libbpf_num_possible_cpus();
	struct velo_pol_drop_key key = { .reason = reason };
	struct velo_pol_drop values[ncpu > 0 ? ncpu : 1];
	struct velo_ep_key mapped = key_of(addr);
	uint64_t sum = 0;

	memcpy(key.addr, mapped.addr, sizeof(key.addr));
	if (bpf_map_lookup_elem(bpf_map__fd(fx.uplink->maps.velo_pol_drop_v1), &key, values))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += values[i].packets;
	return sum;
}

struct drops_seen {
	unsigned n;
	struct velo_flow_event last;
};

static int drop_event(void *ctx, void *data, size_t size)
{
	struct drops_seen *seen = ctx;
	const struct velo_flow_event *event = data;

	if (size >= sizeof(*event) && event->kind == VELO_FLOW_DROP) {
		seen->n++;
		seen->last = *event;
	}
	return 0;
}

/* The DROP events in the flow ring since the last call. */
static struct drops_seen drop_events(void)
{
	struct drops_seen seen = {};
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(fx.uplink->maps.velo_flow_rb_v2),
						  drop_event, &seen, NULL);

	assert_non_null(rb);
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return seen;
}

static void clear_map(const struct bpf_map *map, size_t key_size)
{
	uint8_t key[64], next[64];
	int fd = bpf_map__fd(map);

	assert_true(key_size <= sizeof(key));
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key))
			break;
	}
}

/* Policy off and forgotten, so a failed policy test leaves nothing to the next. */
static int pol_reset(void **state)
{
	struct velo_pol_state off = {};
	uint32_t zero = 0;

	(void)state;
	if (!fx.ready)
		return 0;
	bpf_map_update_elem(bpf_map__fd(fx.uplink->maps.velo_pol_st_v1), &zero, &off, BPF_ANY);
	clear_map(fx.uplink->maps.velo_pol_ip_v1, sizeof(struct velo_pol_ip_key));
	clear_map(fx.uplink->maps.velo_pol_sub_v1, sizeof(uint32_t));
	clear_map(fx.uplink->maps.velo_pol_rule_v1, sizeof(struct velo_pol_rule_key));
	clear_map(fx.uplink->maps.velo_pol_ct_v1, sizeof(struct velo_pol_ct_key));
	clear_map(fx.uplink->maps.velo_pol_drop_v1, sizeof(struct velo_pol_drop_key));
	return 0;
}

/*
 * Policy on and the pod not placed yet (no entry, or only an ipBlock prefix
 * holding it): the stack, where its programs fail closed. Once placed, and
 * isolated by nobody, its flows take the shortcut.
 */
static void test_policy_pending(void **state)
{
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	pol_bump();
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_PENDING);
	build_ip6(&p, REMOTE6, POD6, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_PENDING);
	pol_ip("10.0.0.0", 8, VELO_ID_NONE, 0);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_passed(&p, VELO_CROSS_RX_PASS_PENDING);

	pol_ip(POD4, 32, ID_POD, VELO_POL_IP_LOCAL);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_redirected(&p);
}

/*
 * The pod isolated for ingress, nothing admitting the remote pod: dropped
 * here, as its veth would drop it, and reported against the pod.
 */
static void test_policy_denied(void **state)
{
	struct drops_seen seen;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	pol_ip(POD4, 32, ID_POD, VELO_POL_IP_LOCAL);
	pol_ip(REMOTE4, 32, ID_REMOTE, 0);
	pol_isolate(ID_POD, VELO_POL_ISOLATE_INGRESS);
	pol_bump();
	drop_events(); /* what earlier tests left */

	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_dropped(&p);
	assert_int_equal(pol_drops(POD4, VELO_POL_DROP_INGRESS), 1);
	seen = drop_events();
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.last.reason, VELO_FLOW_R_POLICY_INGRESS);
	assert_int_equal(seen.last.identity, ID_POD);
	assert_int_equal(seen.last.ifindex, fx.ifindex_dst);
	assert_int_equal(seen.last.len, p.len);
}

/*
 * A rule admits the remote pod: redirected, with the flow's entry written as
 * the pod's veth would write it, which carries the flow while its revision is
 * current; the next revision judges it again.
 */
static void test_policy_allowed(void **state)
{
	struct velo_pol_rule_key rule = pol_udp_rule(ID_POD, ID_REMOTE);
	struct velo_pol_rule value = { .policy = 1 };
	struct velo_pol_ct_key ct_key = { .sport = htons(SPORT),
					  .dport = htons(DPORT),
					  .proto = IPPROTO_UDP };
	struct velo_ep_key src = key_of(REMOTE4), dst = key_of(POD4);
	int rules;
	struct velo_pol_ct ct;
	struct pkt p;

	(void)state;
	REQUIRE_ROOT();
	rules = bpf_map__fd(fx.uplink->maps.velo_pol_rule_v1);
	pol_ip(POD4, 32, ID_POD, VELO_POL_IP_LOCAL);
	pol_ip(REMOTE4, 32, ID_REMOTE, 0);
	pol_isolate(ID_POD, VELO_POL_ISOLATE_INGRESS);
	assert_int_equal(bpf_map_update_elem(rules, &rule, &value, BPF_ANY), 0);
	pol_bump();

	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_redirected(&p);
	memcpy(ct_key.saddr, src.addr, sizeof(ct_key.saddr));
	memcpy(ct_key.daddr, dst.addr, sizeof(ct_key.daddr));
	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(fx.uplink->maps.velo_pol_ct_v1), &ct_key, &ct), 0);
	assert_int_equal(ct.revision, fx.revision);
	assert_true(ct.flags & VELO_POL_CT_DST_PLACED);

	assert_int_equal(bpf_map_delete_elem(rules, &rule), 0);
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_redirected(&p);
	pol_bump();
	build_ip4(&p, IPPROTO_UDP, REMOTE4, POD4, 64, 100);
	assert_dropped(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit4),
		cmocka_unit_test(test_hit6),
		cmocka_unit_test(test_not_remote),
		cmocka_unit_test(test_no_pod),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_not_ip),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test_teardown(test_policy_pending, pol_reset),
		cmocka_unit_test_teardown(test_policy_denied, pol_reset),
		cmocka_unit_test_teardown(test_policy_allowed, pol_reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
