// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's switch and, while it is off, the sweep (policy_switch.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/lock.h"
#include "base/log.h"
#include "datapath/policy_bpf.h"
#include "datapath/tc_attach.h"
#include "features/policy.h"
#include "state/policy_switch.h"
#include "state/state.h"
#include "agent/agent.h"
#include "policy_lock.h"
#include "policy_nf.h"
#include "policy_node.h"
#include "policy_switch.h"

#define NS_PER_MS 1000000ull
/* velo_policy_uplink_attach's pin: <bpffs>/links/<ifname>_pol_uplink (datapath/policy_bpf.h). */
#define POL_UPLINK_KIND "pol_uplink"

struct policy_sweep {
	long long records_sig; /* of the records the last sweep saw */
	bool again; /* the last sweep left something: a busy pod */
	uint64_t next_ns;
};

struct sweep_pass {
	const struct agent_config *config;
	const struct velo_policy_bpf *bpf; /* NULL: the maps aren't pinned */
	unsigned pods, busy;
};

static void remove_namespaces(const struct agent_config *config)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", config->paths.run_dir,
		     VELO_POLICY_NAMESPACES_FILE) < (int)sizeof(path) &&
	    unlink(path) && errno != ENOENT)
		pr_warn("policy: remove %s: %s", path, strerror(errno));
}

int policy_switch_on(const struct agent_config *config)
{
	int ret;

	if (velo_policy_switch_read(&config->paths) != VELO_POLICY_SWITCH_ON)
		remove_namespaces(config);
	ret = velo_policy_switch_write(&config->paths, true);
	if (ret)
		pr_err("policy: can't write the switch under %s: %s", config->paths.state_dir,
		       strerror(-ret));
	return ret;
}

/* A record's programs off under its attachment lock (the map entry too while the veth is its). */
static int sweep_record(const struct velo_record *record, void *ctx)
{
	struct sweep_pass *pass = ctx;
	int fd;

	if (!record->host_ifname[0] || !velo_policy_any_attached(&pass->config->paths, record))
		return 0;
	fd = policy_lock_try(pass->config, record, &pass->busy);
	if (fd < 0)
		return 0;
	velo_policy_detach(&pass->config->paths,
			   pass->bpf && velo_host_veth_is_ours(record) ? pass->bpf : NULL, record);
	lock_release(fd);
	pass->pods++;
	return 0;
}

static int sweep_network(const char *network, void *ctx)
{
	struct sweep_pass *pass = ctx;

	return state_record_foreach(&pass->config->paths, network, sweep_record, pass);
}

/* A link pin's name minus "_<kind>" into ifname when kind is one of policy's. */
static bool policy_pin(const char *name, const char *kind, char *ifname, size_t len)
{
	size_t n = strlen(name), k = strlen(kind);

	if (n <= k + 1 || n - k - 1 >= len || name[n - k - 1] != '_' || strcmp(name + n - k, kind))
		return false;
	snprintf(ifname, len, "%.*s", (int)(n - k - 1), name);
	return true;
}

/* Pins no record leads to (a pod mid-ADD, a gone one) and velo_pol_uplink's. */
static unsigned sweep_pins(const struct agent_config *config)
{
	char dir[PATH_MAX];
	struct dirent *entry;
	unsigned n = 0;
	DIR *links;

	if (snprintf(dir, sizeof(dir), "%s/links", config->paths.bpffs_dir) >= (int)sizeof(dir))
		return 0;
	links = opendir(dir);
	if (!links)
		return 0;
	while ((entry = readdir(links))) {
		struct velo_record record = { 0 };
		bool pod = false;

		for (unsigned hook = 0; hook < VELO_POL_N_HOOKS && !pod; hook++)
			pod = policy_pin(entry->d_name, velo_policy_hook_kind(hook),
					 record.host_ifname, sizeof(record.host_ifname));
		if (pod) {
			velo_policy_detach(&config->paths, NULL, &record);
			n++;
		} else if (policy_pin(entry->d_name, POL_UPLINK_KIND, record.host_ifname,
				      sizeof(record.host_ifname))) {
			velo_policy_uplink_detach(&config->paths, record.host_ifname);
			pr_info("policy: velo_pol_uplink off %s", record.host_ifname);
		}
	}
	closedir(links);
	return n;
}

static void sweep(struct policy_sweep *state, struct policy *policy,
		  const struct agent_config *config)
{
	struct velo_policy_bpf bpf;
	struct sweep_pass pass = { config, NULL, 0, 0 };
	bool have_maps = !velo_policy_bpf_open_pinned(&config->paths, &bpf);
	unsigned orphans;

	state->records_sig = agent_records_sig(config);
	pass.bpf = have_maps ? &bpf : NULL;
	if (agent_foreach_network(config, sweep_network, &pass))
		policy->errors++;
	orphans = sweep_pins(config);
	/* The netfilter hooks judge egress-isolated pods' flows: off with the rest. */
	policy_nf_sync(config, false);
	if (have_maps)
		velo_policy_bpf_close(&bpf);
	state->again = pass.busy != 0;
	if (pass.pods || orphans || pass.busy)
		pr_info("policy: off (policySource \"none\"): programs taken off %u pod(s)%s",
			pass.pods + orphans,
			pass.busy ? ", some busy: again at the next look" : "");
}

int policy_sweep_start(struct policy *policy, const struct agent_config *config)
{
	int ret = velo_policy_switch_write(&config->paths, false);

	/* ADD may still read "on": the sweep below and its repeats take off what it attaches. */
	if (ret) {
		pr_err("policy: can't write the switch under %s: %s", config->paths.state_dir,
		       strerror(-ret));
		policy->errors++;
	}
	remove_namespaces(config);
	policy->sweep = calloc(1, sizeof(*policy->sweep));
	if (!policy->sweep)
		return -ENOMEM;
	sweep(policy->sweep, policy, config);
	return ret;
}

void policy_sweep_step(struct policy *policy, const struct agent_config *config, uint64_t now_ns)
{
	struct policy_sweep *state = policy->sweep;

	if (!state || now_ns < state->next_ns)
		return;
	state->next_ns = now_ns + config->policy_sync_ms * NS_PER_MS;
	if (state->again || agent_records_sig(config) != state->records_sig)
		sweep(state, policy, config);
}

uint64_t policy_sweep_deadline(const struct policy *policy)
{
	return policy->sweep ? policy->sweep->next_ns : UINT64_MAX;
}

void policy_sweep_stop(struct policy *policy)
{
	free(policy->sweep);
	policy->sweep = NULL;
}
