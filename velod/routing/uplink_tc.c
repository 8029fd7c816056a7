// SPDX-License-Identifier: Apache-2.0
/*
 * The cross-node tc shortcut's node half (uplink_tc.h): velo_tc_uplink loaded
 * against velo's pinned maps (the pod objects' by fd, velo_bpf_share_maps;
 * policy, flows and the cross-node maps by name), attached
 * with velo's tc hooks (a pinned tcx link, else a clsact filter), and
 * velo_remote_v1 kept equal to the routing pass's directly routed CIDRs.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "bpf/lib/velo_cross.h"
#include "datapath/loader.h"
#include "datapath/pins.h"
#include "datapath/tc_attach.h"
#include "datapath/tc_hook.h"
#include "routing_nodes.h"
#include "routing_paths.h"
#include "uplink_tc.h"
#include "uplink_tc.skel.h"

#define UPLINK_TC_LOCK_TIMEOUT_MS 10000

static const struct velo_tc_hook uplink_tc_hook = { VELO_CROSS_LINK_NAME, false, true,
						    VELO_TC_UPLINK_HANDLE,
						    VELO_TC_UPLINK_PRIORITY };

/* Where the program runs (0: nowhere yet) and the device a try failed on. */
static int attached_ifindex, failed_ifindex;
static char attached_name[IF_NAMESIZE];

static void remote_key_of(const struct velo_cidr *cidr, struct velo_remote_key *key)
{
	memset(key, 0, sizeof(*key));
	if (cidr->family == AF_INET) {
		key->addr[10] = key->addr[11] = 0xff;
		memcpy(&key->addr[12], cidr->addr, 4);
		key->prefixlen = 96u + cidr->prefix;
	} else {
		memcpy(key->addr, cidr->addr, 16);
		key->prefixlen = cidr->prefix;
	}
}

/* Calls fn for each CIDR the pass routed directly: another node's, with an address of its family. */
static bool remote_each(const struct node_list *list,
			bool (*fn)(const struct velo_remote_key *key, void *arg), void *arg)
{
	struct velo_remote_key key;

	for (unsigned i = 0; list && i < list->n; i++) {
		const struct node *node = &list->nodes[i];

		if (node == list->self || routing_paths_get(node) != ROUTING_PATH_HOST_GW)
			continue;
		for (unsigned c = 0; c < node->n_cidrs; c++) {
			if (!routing_nodes_address(node, node->cidrs[c].family) ||
			    routing_nodes_own(list, &node->cidrs[c]))
				continue;
			remote_key_of(&node->cidrs[c], &key);
			if (fn(&key, arg))
				return true;
		}
	}
	return false;
}

static bool key_is(const struct velo_remote_key *key, void *arg)
{
	return !memcmp(key, arg, sizeof(*key));
}

struct remote_write {
	int fd;
	struct velo_remote value;
	int ret;
};

static bool key_write(const struct velo_remote_key *key, void *arg)
{
	struct remote_write *write = arg;

	if (bpf_map_update_elem(write->fd, key, &write->value, BPF_ANY))
		write->ret = -errno;
	return false;
}

/* The map as the pass says (list NULL: empty): stale entries out, then the wanted ones in. */
static int remote_sync(const struct agent_config *config, const struct node_list *list, int ifindex)
{
	struct remote_write write = { .value = { .uplink_ifindex = (__u32)ifindex } };
	struct velo_remote_key key, next;
	bool first = true;

	write.fd = velo_map_pin_open(&config->paths, VELO_MAP_REMOTE);
	if (write.fd == -ENOENT && !list)
		return 0; /* never loaded: nothing to empty */
	if (write.fd < 0)
		return write.fd;
	/* Deleting the key just read restarts the walk: LPM tries have no stable order. */
	while (!bpf_map_get_next_key(write.fd, first ? NULL : &key, &next)) {
		if (!remote_each(list, key_is, &next) && !bpf_map_delete_elem(write.fd, &next)) {
			first = true;
			continue;
		}
		key = next;
		first = false;
	}
	remote_each(list, key_write, &write);
	close(write.fd);
	return write.ret;
}

static int uplink_tc_load(const struct agent_config *config, const struct velo_bpf *bpf,
			  bool have_ct, struct uplink_tc **out)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = config->paths.bpffs_dir);
	struct uplink_tc *skel;
	int ret = 0;

	skel = uplink_tc__open_opts(&opts);
	if (!skel)
		return -errno;
	skel->rodata->velo_have_ct_kfuncs = have_ct;
	ret = velo_bpf_share_maps(bpf, skel->obj);
	if (!ret)
		ret = uplink_tc__load(skel);
	if (ret) {
		uplink_tc__destroy(skel);
		return ret;
	}
	*out = skel;
	return 0;
}

/* The program on device: attached, or an earlier velod's attachment moved to it. */
static int uplink_tc_on(const struct agent_config *config, const char *device, int ifindex)
{
	struct uplink_tc *skel = NULL;
	struct velo_bpf bpf;
	bool have_ct;
	int ret, prog_fd;

	/* Loads velo's pod objects first when no ADD has yet: the maps must be the same. */
	ret = velo_bpf_open(&config->paths, UPLINK_TC_LOCK_TIMEOUT_MS, &bpf);
	if (ret)
		return ret;
	have_ct = velo_bpf_have_skb_ct_kfuncs();
	if (!have_ct)
		pr_warn("cross-node tc: no conntrack lookup kfuncs: every packet takes the stack");
	ret = uplink_tc_load(config, &bpf, have_ct, &skel);
	if (ret && have_ct) {
		pr_warn("cross-node tc: loading with the conntrack lookup failed (%s): loading "
			"without, every packet takes the stack",
			strerror(-ret));
		ret = uplink_tc_load(config, &bpf, false, &skel);
	}
	if (ret)
		goto out;
	prog_fd = bpf_program__fd(skel->progs.velo_tc_uplink);
	if (!velo_tc_hook_attached(&config->paths, &uplink_tc_hook, device, ifindex))
		ret = velo_tc_hook_attach(&config->paths, &uplink_tc_hook, device, ifindex,
					  prog_fd);
	else
		ret = velo_tc_hook_move(&config->paths, &uplink_tc_hook, device, ifindex, prog_fd);
	if (ret > 0)
		ret = 0;
out:
	uplink_tc__destroy(skel);
	velo_bpf_close(&bpf);
	return ret;
}

/* Empties the map first: no pod sends a flow out that the uplink would no longer carry in. */
static void uplink_tc_off(const struct agent_config *config, const char *device, int ifindex)
{
	int ret = remote_sync(config, NULL, 0);

	if (ret)
		pr_warn("cross-node tc: emptying %s: %s", VELO_MAP_REMOTE, strerror(-ret));
	velo_tc_hook_detach(&config->paths, &uplink_tc_hook, device, ifindex);
}

/* Detaches what runs on any device but keep_ifindex (an earlier velod's, or the setting off). */
static void detach_others(const struct agent_config *config, int keep_ifindex)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	for (i = ifs; i && i->if_index; i++)
		if ((int)i->if_index != keep_ifindex &&
		    velo_tc_hook_attached(&config->paths, &uplink_tc_hook, i->if_name,
					  (int)i->if_index)) {
			velo_tc_hook_detach(&config->paths, &uplink_tc_hook, i->if_name,
					    (int)i->if_index);
			pr_info("cross-node tc: detached the program an earlier velod attached to %s",
				i->if_name);
		}
	if (ifs)
		if_freenameindex(ifs);
}

void uplink_tc_apply(const struct agent_config *config)
{
	int ret;

	if (config->cross_node_tc) {
		velo_bpf_set_print();
		pr_info("cross-node tc: attaches once the node list has node %s's address",
			config->node_name);
		return;
	}
	/* Off: the map empty first, so no pod sends what the uplink no longer carries in. */
	ret = remote_sync(config, NULL, 0);
	if (ret)
		pr_warn("cross-node tc: can't empty %s: %s", VELO_MAP_REMOTE, strerror(-ret));
	detach_others(config, 0);
}

void uplink_tc_follow(const struct agent_config *config, const struct node_list *list, int ifindex)
{
	char device[IF_NAMESIZE];
	int ret;

	if (!config->cross_node_tc)
		return;
	if (ifindex > 0 && ifindex != attached_ifindex && ifindex != failed_ifindex &&
	    if_indextoname((unsigned)ifindex, device)) {
		if (attached_ifindex) {
			pr_info("cross-node tc: node %s's address is on %s now: moving there",
				config->node_name, device);
			uplink_tc_off(config, attached_name, attached_ifindex);
			attached_ifindex = 0;
		}
		ret = uplink_tc_on(config, device, ifindex);
		if (ret) {
			failed_ifindex = ifindex;
			pr_warn("cross-node tc: can't attach to %s: %s; cross-node traffic stays on "
				"the routed path",
				device, strerror(-ret));
		} else {
			detach_others(config, ifindex);
			failed_ifindex = 0;
			attached_ifindex = ifindex;
			snprintf(attached_name, sizeof(attached_name), "%s", device);
			pr_info("cross-node tc on %s (ifindex %d): flows between pods with the tc "
				"shortcut and other nodes' pods skip this node's routing",
				device, ifindex);
		}
	}
	if (!attached_ifindex)
		return;
	ret = remote_sync(config, list, attached_ifindex);
	if (ret)
		pr_warn("cross-node tc: %s: %s", VELO_MAP_REMOTE, strerror(-ret));
}

const char *uplink_tc_device(void)
{
	return attached_ifindex ? attached_name : "";
}
