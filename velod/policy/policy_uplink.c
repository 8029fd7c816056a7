// SPDX-License-Identifier: Apache-2.0
/*
 * velo_pol_uplink on the node's default-route devices, and velo_pol_nf on
 * netfilter's hooks (policy_nf.c), while a local pod's egress is isolated.
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "policy_nf.h"
#include "policy_uplink.h"

#define MAX_UPLINKS 4

struct uplinks {
	unsigned n;
	int ifindex[MAX_UPLINKS];
};

static int take_oif(const struct velo_nl_route *route, void *arg)
{
	struct uplinks *uplinks = arg;

	if (route->oif > 0 && uplinks->n < MAX_UPLINKS)
		uplinks->ifindex[uplinks->n++] = route->oif;
	return 0;
}

/* The devices the FIB would send a documentation address through (RFC 5737, RFC 3849). */
static void default_route_devices(struct uplinks *uplinks)
{
	static const uint8_t probe4[4] = { 192, 0, 2, 1 };
	static const uint8_t probe6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct nl_sock *sk __attribute__((cleanup(velo_nl_closep))) = velo_nl_open();

	uplinks->n = 0;
	if (!sk)
		return;
	velo_nl_route_match(sk, AF_INET, probe4, take_oif, uplinks);
	velo_nl_route_match(sk, AF_INET6, probe6, take_oif, uplinks);
}

static void uplinks_sync(const struct agent_config *config, const struct velo_policy_bpf *bpf,
			 bool want)
{
	/* The devices it was put on, so it can leave them when no longer wanted. */
	static char attached[MAX_UPLINKS][IF_NAMESIZE];
	struct uplinks uplinks = { 0 };
	char name[IF_NAMESIZE];

	for (unsigned i = 0; i < MAX_UPLINKS; i++) {
		if (attached[i][0] && !want) {
			velo_policy_uplink_detach(&config->paths, attached[i]);
			pr_info("policy: velo_pol_uplink off %s", attached[i]);
			attached[i][0] = '\0';
		}
	}
	if (!want)
		return;
	default_route_devices(&uplinks);
	for (unsigned i = 0; i < uplinks.n; i++) {
		int ret;

		if (!if_indextoname((unsigned)uplinks.ifindex[i], name))
			continue;
		ret = velo_policy_uplink_attach(&config->paths, bpf, name, uplinks.ifindex[i]);
		if (ret) {
			pr_warn("policy: can't attach velo_pol_uplink to %s: %s; egress policy "
				"can't judge Service traffic to other nodes' backends",
				name, strerror(-ret));
			continue;
		}
		if (strcmp(attached[i], name)) {
			pr_info("policy: velo_pol_uplink on %s", name);
			memcpy(attached[i], name, sizeof(name));
		}
	}
}

void policy_uplink_sync(const struct agent_config *config, const struct velo_policy_bpf *bpf,
			const struct velo_pol_tables *tables)
{
	bool want = false;

	for (unsigned i = 0; i < tables->n_placed && !want; i++)
		want = tables->placed[i].isolate & VELO_POL_JUDGED_EGRESS;
	uplinks_sync(config, bpf, want);
	policy_nf_sync(config, want);
}
