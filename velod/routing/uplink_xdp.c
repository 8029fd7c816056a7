// SPDX-License-Identifier: Apache-2.0
/*
 * The node uplink's XDP redirect (bpf/uplink_xdp.bpf.c). velod loads it at
 * start (a named device) or when host-gw's node list first shows the device
 * holding this node's address (uplinkXdp true), against velo's pinned maps
 * (the endpoint map and the devmap the CNI plugin fills), with the uplink's
 * MAC in its rodata, and attaches it in
 * native mode with a bpf_link pinned at <bpffs>/node_v1/uplink_xdp. A link
 * already pinned on the same device gets the new program (bpf_link_update),
 * never a second attachment; one on another device is detached first.
 * Generic (skb) mode is never used: it would cost more than the routed path.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/lock.h"
#include "base/log.h"
#include "bpf/lib/velo_uplink.h"
#include "datapath/loader.h"
#include "uplink_xdp.h"
#include "uplink_xdp.skel.h"

#define UPLINK_LOCK_TIMEOUT_MS 10000

int uplink_xdp_pin_path(const struct velo_paths *paths, bool dir, char *buf, size_t len)
{
	int n = dir ? snprintf(buf, len, "%s/%s", paths->bpffs_dir, VELO_UPLINK_LINK_DIR)
		    : snprintf(buf, len, "%s/%s/%s", paths->bpffs_dir, VELO_UPLINK_LINK_DIR,
			       VELO_UPLINK_LINK_NAME);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int uplink_xdp_pinned_ifindex(const char *pin)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(pin), ifindex = 0;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP)
		ifindex = (int)info.xdp.ifindex;
	close(fd);
	return ifindex;
}

static int device_mac(const char *name, __u8 mac[ETH_ALEN])
{
	struct ifreq ifr;
	int sock, ret = 0;

	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(sock, SIOCGIFHWADDR, &ifr))
		ret = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(sock);
	return ret;
}

/* Simulated nodes have a veth for an uplink; a NIC is anything else. */
static bool device_is_veth(const char *name)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	bool veth = false;
	int sock;

	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return false;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&info;
	if (!ioctl(sock, SIOCETHTOOL, &ifr))
		veth = !strcmp(info.driver, "veth");
	close(sock);
	return veth;
}

/* As plugin/datapath/loader.c asks: are the conntrack lookup kfuncs there for XDP? */
static bool have_xdp_ct_kfuncs(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf(), *module;
	const struct btf *btf;
	bool found;

	if (!vmlinux)
		return false;
	module = btf__load_module_btf("nf_conntrack", vmlinux);
	btf = module ? module : vmlinux;
	found = btf__find_by_name_kind(btf, "bpf_ct_release", BTF_KIND_FUNC) > 0 &&
		btf__find_by_name_kind(btf, "bpf_xdp_ct_lookup", BTF_KIND_FUNC) > 0;
	btf__free(module);
	btf__free(vmlinux);
	return found;
}

/* Older releases' counters (smaller arrays): the program that counted there is replaced. */
static void old_stats_unpin(const struct agent_config *config)
{
	static const char *const old[] = { VELO_MAP_UPLINK_STATS_V2, VELO_MAP_UPLINK_STATS_V1 };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		if (snprintf(path, sizeof(path), "%s/%s", config->paths.bpffs_dir, old[i]) <
			    (int)sizeof(path) &&
		    !unlink(path))
			pr_info("uplink XDP: unpinned %s, an older release's counters", path);
}

/*
 * Loads velo_xdp_uplink on velo's pinned maps; its own counters map and the
 * policy maps (lib/policy.h, as veth_xdp shares them) are pinned by name.
 */
static int uplink_load(const struct agent_config *config, const struct velo_bpf *bpf,
		       const __u8 mac[ETH_ALEN], bool have_ct, struct uplink_xdp **out)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = config->paths.bpffs_dir);
	struct uplink_xdp *skel;
	int ret = 0;

	skel = uplink_xdp__open_opts(&opts);
	if (!skel)
		return -errno;
	memcpy((void *)skel->rodata->velo_uplink_mac, mac, ETH_ALEN);
	skel->rodata->velo_have_ct_kfuncs = have_ct;
	ret = velo_bpf_share_maps(bpf, skel->obj);
	if (!ret)
		ret = uplink_xdp__load(skel);
	if (ret) {
		uplink_xdp__destroy(skel);
		return ret;
	}
	*out = skel;
	return 0;
}

/* Replaces the program of a link pinned on ifindex; else attaches anew and pins. */
static int uplink_attach(int prog_fd, int ifindex, const char *pin, bool *kept)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_DRV_MODE);
	int fd, ret = 0;

	*kept = false;
	if (uplink_xdp_pinned_ifindex(pin) == ifindex) {
		fd = bpf_obj_get(pin);
		if (fd >= 0 && !bpf_link_update(fd, prog_fd, NULL)) {
			*kept = true;
			close(fd);
			return 0;
		}
		if (fd >= 0)
			close(fd);
	}
	/* Another device's, or a defunct link: unpinned, it detaches. */
	if (unlink(pin) && errno != ENOENT)
		return -errno;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (fd < 0)
		return -errno;
	if (bpf_obj_pin(fd, pin))
		ret = -errno;
	close(fd); /* on a failed pin this detaches it again */
	return ret;
}

static void uplink_off(const struct agent_config *config)
{
	char pin[PATH_MAX];

	if (uplink_xdp_pin_path(&config->paths, false, pin, sizeof(pin)))
		return;
	if (!unlink(pin))
		pr_info("uplink XDP: off; detached the program an earlier velod attached");
	else if (errno != ENOENT)
		pr_warn("uplink XDP: off, but its link pin %s stays: %s", pin, strerror(errno));
}

static int uplink_on(const struct agent_config *config, const char *device, int ifindex)
{
	struct uplink_xdp *skel = NULL;
	char dir[PATH_MAX], pin[PATH_MAX];
	__u8 mac[ETH_ALEN];
	struct velo_bpf bpf;
	bool have_ct, kept;
	int ret;

	ret = uplink_xdp_pin_path(&config->paths, true, dir, sizeof(dir));
	if (!ret)
		ret = uplink_xdp_pin_path(&config->paths, false, pin, sizeof(pin));
	if (!ret)
		ret = device_mac(device, mac);
	if (ret)
		return ret;
	/* Loads velo's pod objects first when no ADD has yet: the maps must be the same. */
	ret = velo_bpf_open(&config->paths, UPLINK_LOCK_TIMEOUT_MS, &bpf);
	if (ret)
		return ret;
	ret = lock_mkdirs(dir);
	if (ret)
		goto out;
	have_ct = have_xdp_ct_kfuncs();
	if (!have_ct)
		pr_warn("uplink XDP: no conntrack lookup kfuncs (nf_conntrack not loaded?): every "
			"frame goes to the stack");
	ret = uplink_load(config, &bpf, mac, have_ct, &skel);
	if (ret && have_ct) {
		pr_warn("uplink XDP: loading with the conntrack lookup failed (%s): loading without",
			strerror(-ret));
		ret = uplink_load(config, &bpf, mac, false, &skel);
	}
	if (ret)
		goto out;
	ret = uplink_attach(bpf_program__fd(skel->progs.velo_xdp_uplink), ifindex, pin, &kept);
	if (!ret && device_is_veth(device))
		pr_warn("uplink XDP: %s is a veth: what its peer sends with partial checksums (the "
			"stack's default) reaches pods corrupt through XDP; the peer must send full "
			"checksums (ethtool -K PEER tx off), as a NIC's wire does",
			device);
	if (!ret)
		pr_info("uplink XDP on %s (ifindex %d, native, %s): frames from other nodes to pods "
			"with fastpath xdp go straight into their veths",
			device, ifindex, kept ? "pinned link kept, program updated" : "attached");
	if (!ret)
		old_stats_unpin(config);
out:
	uplink_xdp__destroy(skel);
	velo_bpf_close(&bpf);
	return ret;
}

/* Attaches to device; a failure is logged, and cross-node traffic stays routed. */
static int uplink_on_logged(const struct agent_config *config, const char *device, int ifindex)
{
	int ret = uplink_on(config, device, ifindex);

	if (ret)
		pr_warn("uplink XDP: can't attach to %s: %s; cross-node traffic stays on the routed "
			"path",
			device, strerror(-ret));
	return ret;
}

void uplink_xdp_apply(const struct agent_config *config)
{
	int ifindex;

	if (!config->uplink_xdp[0] && !config->uplink_xdp_auto) {
		uplink_off(config);
		return;
	}
	velo_bpf_set_print();
	if (config->uplink_xdp_auto) {
		/* uplink_xdp_follow attaches: this node's address comes with the node list. */
		pr_info("uplink XDP: attaches once the node list has node %s's address",
			config->node_name);
		return;
	}
	ifindex = (int)if_nametoindex(config->uplink_xdp);
	if (!ifindex) {
		pr_warn("uplink XDP: no device %s; cross-node traffic stays on the routed path",
			config->uplink_xdp);
		return;
	}
	uplink_on_logged(config, config->uplink_xdp, ifindex);
}

void uplink_xdp_follow(const struct agent_config *config, int ifindex)
{
	/* The device last tried (0: none yet), whether that failed, whether "none" was said. */
	static int tried;
	static bool failed, none_logged;
	char pin[PATH_MAX], device[IF_NAMESIZE];
	int pinned;

	if (!config->uplink_xdp_auto ||
	    uplink_xdp_pin_path(&config->paths, false, pin, sizeof(pin)))
		return;
	if (ifindex <= 0) {
		if (!none_logged)
			pr_warn("uplink XDP: no device holds node %s's address in the node list; %s",
				config->node_name,
				tried ? "the program stays where it is"
				      : "cross-node traffic stays on the routed path");
		none_logged = true;
		return;
	}
	none_logged = false;
	pinned = uplink_xdp_pinned_ifindex(pin);
	/* Attached there already; or failed there: a pass per routeSyncSeconds won't retry. */
	if (ifindex == tried && (failed || pinned == ifindex))
		return;
	if (!if_indextoname((unsigned)ifindex, device))
		return; /* gone since the pass looked: the next pass sees what is there */
	if (pinned > 0 && pinned != ifindex)
		pr_info("uplink XDP: node %s's address is on %s now: moving the program there",
			config->node_name, device);
	tried = ifindex;
	failed = uplink_on_logged(config, device, ifindex) != 0;
	/* The old device no longer carries this node's traffic: don't leave the program there. */
	if (failed && pinned > 0 && pinned != ifindex && !unlink(pin))
		pr_info("uplink XDP: detached from ifindex %d", pinned);
}
