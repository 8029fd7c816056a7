// SPDX-License-Identifier: Apache-2.0
/*
 * Legacy iptables (x_tables, iptables-legacy) on the node. velod can't add
 * rules there: libnftables doesn't reach those tables, and changing one means
 * replacing the whole table, racing every other writer (iptables-legacy does
 * that under its own lock). So velod reads the filter table's FORWARD chain as
 * iptables-legacy does (getsockopt IPT_SO_GET_INFO and IPT_SO_GET_ENTRIES, IPv4
 * and IPv6) and warns when its policy is DROP and it has no ACCEPT rules for
 * the host veths, naming the commands that add them. It only asks when
 * /proc/net/ip{,6}_tables_names lists "filter": asking the kernel for a table
 * that doesn't exist yet would create it (and load its module).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>

#include "base/log.h"
#include "forward_legacy.h"

/* What the chain says about velo's host veths. */
struct legacy_forward {
	bool policy_drop;
	bool accept_in, accept_out; /* "-i <prefix>+ -j ACCEPT", "-o <prefix>+ -j ACCEPT" */
};

/* Whether the table list in proc (one name a line) has "filter". */
static bool legacy_has_filter(const char *proc)
{
	char line[64];
	bool found = false;
	FILE *file;

	file = fopen(proc, "re");
	if (!file)
		return false;
	while (!found && fgets(line, sizeof(line), file))
		found = !strcmp(line, "filter\n") || !strcmp(line, "filter");
	fclose(file);
	return found;
}

/* Whether iface/mask is iptables' "<prefix>+" (iptables keeps the "+" in the name; the mask
 * covers the prefix only). */
static bool legacy_iface_is(const char *iface, const unsigned char *mask, const char *prefix)
{
	size_t len = strlen(prefix);

	return len && len + 1 < IFNAMSIZ && !strncmp(iface, prefix, len) &&
	       (iface[len] == '+' || !iface[len]) && mask[len - 1] == 0xff && !mask[len];
}

/* The verdict of a standard target (ACCEPT -NF_ACCEPT-1, DROP -NF_DROP-1), else 0. */
static int legacy_verdict(const void *entry, unsigned target_offset, unsigned next_offset)
{
	const struct xt_standard_target *target =
		(const struct xt_standard_target *)((const char *)entry + target_offset);

	if (target_offset + sizeof(*target) > next_offset || target->target.u.user.name[0])
		return 0;
	return target->verdict;
}

/* One rule of the chain, whichever the family. */
struct legacy_entry {
	const char *iniface, *outiface;
	const unsigned char *inmask, *outmask;
	bool plain; /* no protocol, no inversion */
	unsigned target_offset, next_offset;
};

static void legacy_entry4(const void *raw, struct legacy_entry *entry)
{
	const struct ipt_entry *e = raw;

	*entry = (struct legacy_entry){ e->ip.iniface,
					e->ip.outiface,
					e->ip.iniface_mask,
					e->ip.outiface_mask,
					!e->ip.proto && !e->ip.invflags,
					e->target_offset,
					e->next_offset };
}

static void legacy_entry6(const void *raw, struct legacy_entry *entry)
{
	const struct ip6t_entry *e = raw;

	*entry = (struct legacy_entry){ e->ipv6.iniface,
					e->ipv6.outiface,
					e->ipv6.iniface_mask,
					e->ipv6.outiface_mask,
					!(e->ipv6.flags & IP6T_F_PROTO) && !e->ipv6.invflags,
					e->target_offset,
					e->next_offset };
}

/* Walks the FORWARD chain of the filter table fd's family has (version 4 or 6). */
static int legacy_read(int fd, int version, const char *prefix, struct legacy_forward *forward)
{
	/* The two families' getsockopt structs are laid out alike; their entries differ. (Inside
	 * the function: at file scope ctags reads the offsetof as a prototype, check-layout.sh.) */
	_Static_assert(sizeof(struct ipt_getinfo) == sizeof(struct ip6t_getinfo), "getinfo layout");
	_Static_assert(offsetof(struct ipt_get_entries, entrytable) ==
			       offsetof(struct ip6t_get_entries, entrytable),
		       "entries layout");
	int level = version == 6 ? IPPROTO_IPV6 : IPPROTO_IP;
	size_t min = version == 6 ? sizeof(struct ip6t_entry) : sizeof(struct ipt_entry);
	struct ipt_getinfo info = { .name = "filter" };
	struct ipt_get_entries *get;
	socklen_t len = sizeof(info);
	unsigned off;

	if (getsockopt(fd, level, version == 6 ? IP6T_SO_GET_INFO : IPT_SO_GET_INFO, &info, &len))
		return -errno;
	if (!(info.valid_hooks & (1u << NF_INET_FORWARD)))
		return -ENOENT;
	get = calloc(1, sizeof(*get) + info.size);
	if (!get)
		return -ENOMEM;
	snprintf(get->name, sizeof(get->name), "filter");
	get->size = info.size;
	len = (socklen_t)(sizeof(*get) + info.size);
	if (getsockopt(fd, level, version == 6 ? IP6T_SO_GET_ENTRIES : IPT_SO_GET_ENTRIES, get,
		       &len)) {
		free(get);
		return -errno;
	}
	for (off = info.hook_entry[NF_INET_FORWARD]; off <= info.underflow[NF_INET_FORWARD];) {
		const char *raw = (const char *)get->entrytable + off;
		struct legacy_entry e;
		int verdict;

		if (off + min > info.size)
			break;
		(version == 6 ? legacy_entry6 : legacy_entry4)(raw, &e);
		if (e.next_offset < min || off + e.next_offset > info.size)
			break;
		verdict = legacy_verdict(raw, e.target_offset, e.next_offset);
		if (off == info.underflow[NF_INET_FORWARD]) {
			forward->policy_drop = verdict == -NF_DROP - 1;
		} else if (e.plain && verdict == -NF_ACCEPT - 1) {
			if (legacy_iface_is(e.iniface, e.inmask, prefix) && !e.outiface[0])
				forward->accept_in = true;
			if (legacy_iface_is(e.outiface, e.outmask, prefix) && !e.iniface[0])
				forward->accept_out = true;
		}
		off += e.next_offset;
	}
	free(get);
	return 0;
}

/* 1: the legacy FORWARD chain drops velo's traffic; 0: it doesn't or there is none; -errno. */
static int legacy_drops(int version, const char *prefix)
{
	struct legacy_forward forward = {};
	int fd, ret;

	if (!legacy_has_filter(version == 6 ? "/proc/net/ip6_tables_names"
					    : "/proc/net/ip_tables_names"))
		return 0;
	fd = socket(version == 6 ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd < 0)
		return -errno;
	ret = legacy_read(fd, version, prefix, &forward);
	close(fd);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	return forward.policy_drop && !(forward.accept_in && forward.accept_out);
}

int forward_legacy_check(int version, const char *prefix)
{
	/* What was logged last per family (velod re-checks every pass): 1 drops, 0 fine, -errno. */
	static int last[2] = { 0, 0 };
	const char *cmd = version == 6 ? "ip6tables-legacy" : "iptables-legacy";
	int *logged = &last[version == 6], ret;

	if (!prefix[0])
		return 0;
	ret = legacy_drops(version, prefix);
	if (ret == *logged)
		return ret < 0 ? ret : 0;
	*logged = ret;
	if (ret > 0)
		pr_warn("forward: the node's legacy IPv%d iptables (x_tables) filter FORWARD chain has "
			"policy DROP and no ACCEPT rules for %s+: pod traffic through this node is "
			"dropped there, and velod can't change legacy tables. Add them on the node "
			"(`%s -I FORWARD -i %s+ -j ACCEPT; %s -I FORWARD -o %s+ -j ACCEPT`) or move the "
			"node to iptables-nft",
			version, prefix, cmd, prefix, cmd, prefix);
	else if (ret < 0)
		pr_warn("forward: can't read the legacy IPv%d iptables filter FORWARD chain: %s",
			version, strerror(-ret));
	else
		pr_info("forward: the legacy IPv%d iptables filter FORWARD chain lets %s+ through",
			version, prefix);
	return ret < 0 ? ret : 0;
}
