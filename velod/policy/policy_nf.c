// SPDX-License-Identifier: Apache-2.0
/*
 * velo_pol_nf (bpf/policy_nf.bpf.c) at netfilter's FORWARD and LOCAL_IN
 * hooks, IPv4 and IPv6, while some local pod's egress is isolated: four
 * links pinned under <bpffs>/node_v1/. A velod that starts loads its own
 * program and pins each new link over the old one (rename), so both judge
 * for a moment and nothing passes unjudged. Debian 12's libbpf and uapi
 * headers predate netfilter programs: the type, the attach type and the
 * link's attributes are the kernel's numbers, and the link is made with the
 * bpf() syscall.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/lock.h"
#include "base/log.h"
#include "datapath/flow_maps.h"
#include "datapath/loader.h"
#include "policy_nf.h"
#include "policy_nf.skel.h"

#define NF_PROG_TYPE 32 /* BPF_PROG_TYPE_NETFILTER */
#define NF_ATTACH_TYPE 45 /* BPF_NETFILTER */
#define NF_PROTO_IPV4 2
#define NF_PROTO_IPV6 10
#define NF_HOOK_LOCAL_IN 1
#define NF_HOOK_FORWARD 2
/* After the filter tables (0), before SNAT (100): masquerade hasn't rewritten the source. */
#define NF_PRIORITY 10
#define NF_LINK_DIR "node_v1"

static const struct {
	int pf, hook;
	const char *name;
} hooks[] = {
	{ NF_PROTO_IPV4, NF_HOOK_FORWARD, "pol_nf_ipv4_forward" },
	{ NF_PROTO_IPV4, NF_HOOK_LOCAL_IN, "pol_nf_ipv4_local_in" },
	{ NF_PROTO_IPV6, NF_HOOK_FORWARD, "pol_nf_ipv6_forward" },
	{ NF_PROTO_IPV6, NF_HOOK_LOCAL_IN, "pol_nf_ipv6_local_in" },
};
#define N_HOOKS (sizeof(hooks) / sizeof(hooks[0]))

/* BPF_LINK_CREATE's attributes for a netfilter link (Linux 6.4's layout). */
struct nf_link_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u32 pf;
	__u32 hooknum;
	__s32 priority;
	__u32 nf_flags;
};

_Static_assert(sizeof(struct nf_link_attr) <= sizeof(union bpf_attr), "fits bpf_attr");

static int nf_link_create(int prog_fd, int pf, int hook)
{
	union bpf_attr attr;
	struct nf_link_attr *link = (struct nf_link_attr *)&attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	link->prog_fd = (__u32)prog_fd;
	link->attach_type = NF_ATTACH_TYPE;
	link->pf = (__u32)pf;
	link->hooknum = (__u32)hook;
	link->priority = NF_PRIORITY;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

/* <bpffs>/node_v1/NAME SUFFIX, or the directory itself when name is NULL. */
static int pin_path(const struct agent_config *config, const char *name, const char *suffix,
		    char *buf, size_t len)
{
	int n = name ? snprintf(buf, len, "%s/%s/%s%s", config->paths.bpffs_dir, NF_LINK_DIR, name,
				suffix)
		     : snprintf(buf, len, "%s/%s", config->paths.bpffs_dir, NF_LINK_DIR);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Loads velo_pol_nf on the pinned policy and flow maps. */
static int nf_load(const struct agent_config *config, struct policy_nf **out)
{
	struct bpf_object_open_opts opts;
	struct policy_nf *skel;
	int ret;

	ret = velo_bpf_load_prepare(&config->paths, &opts);
	if (ret)
		return ret;
	skel = policy_nf__open_opts(&opts);
	if (!skel)
		return -errno;
	ret = bpf_program__set_type(skel->progs.velo_pol_nf, (enum bpf_prog_type)NF_PROG_TYPE);
	if (!ret)
		ret = bpf_program__set_expected_attach_type(skel->progs.velo_pol_nf,
							    (enum bpf_attach_type)NF_ATTACH_TYPE);
	if (!ret)
		ret = velo_flow_maps_fit(skel->obj, &config->paths);
	if (!ret)
		ret = policy_nf__load(skel);
	if (ret) {
		policy_nf__destroy(skel);
		return ret;
	}
	*out = skel;
	return 0;
}

/* Each hook's new link pinned over the old one's pin: the old link detaches as it goes. */
static int nf_attach(const struct agent_config *config, int prog_fd)
{
	char pin[PATH_MAX], fresh[PATH_MAX];
	int ret = 0;

	for (unsigned i = 0; !ret && i < N_HOOKS; i++) {
		int fd;

		ret = pin_path(config, hooks[i].name, "", pin, sizeof(pin));
		if (!ret)
			ret = pin_path(config, hooks[i].name, "_new", fresh, sizeof(fresh));
		if (ret)
			break;
		fd = nf_link_create(prog_fd, hooks[i].pf, hooks[i].hook);
		if (fd < 0) {
			ret = fd;
			break;
		}
		(void)unlink(fresh);
		if (bpf_obj_pin(fd, fresh) || rename(fresh, pin))
			ret = -errno;
		close(fd);
		if (ret)
			(void)unlink(fresh);
	}
	return ret;
}

/* Unpins every hook's link; true when there was one. */
static bool nf_detach(const struct agent_config *config)
{
	char pin[PATH_MAX];
	bool any = false;

	for (unsigned i = 0; i < N_HOOKS; i++)
		if (!pin_path(config, hooks[i].name, "", pin, sizeof(pin)) && !unlink(pin))
			any = true;
	return any;
}

static int nf_on(const struct agent_config *config)
{
	struct policy_nf *skel = NULL;
	char dir[PATH_MAX];
	int ret;

	velo_bpf_set_print();
	ret = pin_path(config, NULL, NULL, dir, sizeof(dir));
	if (!ret)
		ret = lock_mkdirs(dir);
	if (!ret)
		ret = nf_load(config, &skel);
	if (!ret)
		ret = nf_attach(config, bpf_program__fd(skel->progs.velo_pol_nf));
	policy_nf__destroy(skel);
	return ret;
}

void policy_nf_sync(const struct agent_config *config, bool want)
{
	/* Whether this velod's program is on the hooks; whether the refusal was said. */
	static bool on, refused;
	int ret;

	if (!want) {
		if (nf_detach(config))
			pr_info("policy: velo_pol_nf off the netfilter hooks (no local pod's egress "
				"is isolated)");
		on = false;
		return;
	}
	if (on)
		return;
	ret = nf_on(config);
	if (!ret) {
		on = true;
		refused = false;
		pr_info("policy: velo_pol_nf on netfilter's forward and local-in hooks (IPv4, "
			"IPv6): egress-isolated pods' flows are judged after kube-proxy's DNAT, "
			"before masquerade, on every route out and for delivery to this node");
		return;
	}
	nf_detach(config); /* none half attached */
	if (!refused)
		pr_err("policy: can't run velo_pol_nf at netfilter's hooks (%s; BPF netfilter links "
		       "need Linux >= 6.4 with CONFIG_NETFILTER_BPF_LINK): egress policy does NOT "
		       "judge a ClusterIP flow whose backend is this node's own address outside "
		       "the node's interface addresses, nor one masquerade rewrites before "
		       "velo_pol_uplink sees it (docs/policy.md, \"Egress through a ClusterIP\")",
		       strerror(-ret));
	refused = true;
}
