// SPDX-License-Identifier: Apache-2.0
/*
 * NetworkPolicy's state into the maps and onto the pods (policy.h). One
 * path for both sources: this node's pods read from the endpoint records
 * (a new pod is placed as soon as its record has addresses, before the API
 * shows them), the tables computed, written (only what changed, never a
 * moment of allow-all or deny-all), then the namespaces file and the
 * programs. The records are looked at every policySyncMs (their directories'
 * mtimes: a record is always renamed into place), the file likewise
 * (policy_file.h), and the pins: the BPF objects stay open between syncs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "datapath/policy_bpf.h"
#include "datapath/policy_maps.h"
#include "policy/cidr.h"
#include "policy/compute.h"
#include "policy/table.h"
#include "agent/config.h"
#include "k8s/k8s_event_post.h"
#include "k8s/k8s_policy.h"
#include "k8s/k8s_servicecidrs.h"
#include "policy.h"
#include "policy_attach.h"
#include "policy_drops.h"
#include "policy_file.h"
#include "policy_ids.h"
#include "policy_namespaces.h"
#include "policy_node.h"
#include "policy_report.h"
#include "policy_state.h"
#include "policy_switch.h"
#include "policy_uplink.h"

#define NS_PER_MS 1000000ull
#define LOCK_TIMEOUT_MS 10000
#define MAX_NODE_ADDRS 64
#define RETRY_MS 2000 /* after a sync that failed */
#define MAX_SERVICE_CIDRS (AGENT_MAX_CLUSTER_CIDRS + 2 * K8S_SERVICECIDRS_MAX)

/* ------------------------------------------------------------ one sync */

struct build {
	const struct velo_pol_node *node;
	struct velo_pol_numbering *numbering;
	struct velo_pol_tables *tables;
	char **namespaces; /* the namespaces file's content */
	struct policy_report *report; /* what could not be used or placed */
};

const struct velo_pol_objects *policy_objects_hold(const struct policy_state *state)
{
	return state->watch ? k8s_watch_set_hold(state->watch) : &state->file_objects;
}

void policy_objects_release(const struct policy_state *state)
{
	if (state->watch)
		k8s_watch_set_release(state->watch);
}

static int build_tables(const struct velo_pol_objects *objects, struct build *build)
{
	int ret = velo_pol_tables_build(objects, build->node, build->numbering, build->tables);

	if (ret)
		return ret;
	*build->namespaces = policy_namespaces_text(objects);
	if (*build->namespaces && !policy_report_collect(objects, build->tables, build->report))
		return 0;
	free(*build->namespaces);
	*build->namespaces = NULL;
	velo_pol_tables_free(build->tables);
	return -ENOMEM;
}

static void policy_bpf_close(struct policy_state *state)
{
	if (state->bpf_open)
		velo_policy_bpf_close(&state->bpf);
	state->bpf_open = false;
}

/* Pins removed or replaced under velod: the new maps are read back and written whole. */
static void look_at_pins(struct policy_state *state, const struct agent_config *config)
{
	if (!state->bpf_open || velo_policy_bpf_current(&config->paths, &state->bpf))
		return;
	pr_info("policy: the pinned BPF objects changed: opening them again");
	policy_bpf_close(state);
	state->written.valid = false;
	state->dirty = true;
}

static int sync_maps(struct policy *policy, const struct agent_config *config)
{
	struct policy_state *state = policy->state;
	struct velo_pol_cidr addrs[MAX_NODE_ADDRS], services[MAX_SERVICE_CIDRS];
	struct velo_pol_node node = { .name = config->node_name,
				      .addrs = addrs,
				      .service_cidrs = services };
	struct velo_pol_tables tables;
	struct velo_pol_write_stats stats;
	struct policy_attach_counts pass = {};
	struct policy_report report = {};
	struct build build = { &node, &state->numbering, &tables, NULL, &report };
	const struct velo_pol_objects *objects;
	const struct velo_policy_bpf *bpf = &state->bpf;
	struct policy_node_pods scan = {};
	char *namespaces = NULL;
	uint64_t start = velo_monotonic_ns();
	unsigned dropped;
	int ret;

	build.namespaces = &namespaces;
	ret = policy_node_pods(config, &scan);
	if (ret) {
		pr_warn("policy: reading the endpoint records: %s", strerror(-ret));
		free(scan.local);
		return ret;
	}
	node.local = scan.local;
	node.n_local = scan.n;
	node.n_addrs = policy_node_addrs(addrs, MAX_NODE_ADDRS);
	node.n_service_cidrs = k8s_servicecidrs_ranges(state->cidrs, config, services,
						       MAX_SERVICE_CIDRS, &dropped);
	if (dropped && dropped != state->cidrs_dropped)
		pr_warn("policy: more than %d Service ranges: %u left out", MAX_SERVICE_CIDRS,
			dropped);
	state->cidrs_dropped = dropped;
	/* NULL: the watches haven't all listed. */
	objects = policy_objects_hold(state);
	ret = objects ? build_tables(objects, &build) : -EAGAIN;
	if (objects)
		policy_objects_release(state);
	if (ret) {
		if (ret != -EAGAIN)
			pr_warn("policy: computing the maps: %s", strerror(-ret));
		free(scan.local);
		return ret;
	}
	ret = state->bpf_open ? 0
			      : velo_policy_bpf_open(&config->paths, LOCK_TIMEOUT_MS, &state->bpf);
	if (ret) {
		pr_warn("policy: BPF objects can't be loaded: %s", strerror(-ret));
		goto out;
	}
	state->bpf_open = true;
	ret = velo_pol_maps_write(bpf, &tables, &state->written, &stats);
	if (ret) {
		pr_warn("policy: writing the maps: %s", strerror(-ret));
		policy_bpf_close(state); /* opened again at the next sync */
		goto out;
	}
	policy->sync_seconds = (double)(velo_monotonic_ns() - start) / 1e9;
	policy_namespaces_write(&state->namespaces, config, namespaces);
	namespaces = NULL;
	policy_attach_pods(config, bpf, &tables, &pass);
	policy_unpair_denied(config, bpf);
	policy_uplink_sync(config, bpf, &tables);
	policy_drops_prune(bpf, scan.local, scan.n);
	policy_ids_save(config, &state->numbering, &state->ids_saved);
	pr_info("policy: revision %u: %u identities, %u addresses, %u subjects, %u rules (%u "
		"entries written, %u removed) in %.3f s; programs attached to %u pod(s), detached "
		"from %u%s",
		stats.revision, tables.n_identities, tables.n_ips, tables.n_subjects,
		tables.n_rules, stats.put, stats.removed, policy->sync_seconds, pass.attached,
		pass.detached, pass.busy || pass.failed ? " (some left for the next sync)" : "");
	if (pass.failed)
		policy->errors++;
	/* A busy or failed pod is tried again at the next look. */
	state->dirty = pass.busy || pass.failed;
	state->revision = stats.revision;
	policy->identities = tables.n_identities;
	policy->rules = tables.n_rules;
	velo_pol_tables_free(&state->tables);
	state->tables = tables;
	free(state->local);
	state->local = scan.local;
	state->n_local = scan.n;
	policy_report_log(&state->report, &report);
	policy_report_free(&state->report);
	state->report = report;
	return 0;
out:
	policy_report_free(&report);
	free(namespaces);
	velo_pol_tables_free(&tables);
	free(scan.local);
	return ret;
}

/* ------------------------------------------------------------ velod's loop */

int policy_start(struct policy *policy, const struct agent_config *config)
{
	struct policy_state *state;
	int ret;

	memset(policy, 0, sizeof(*policy));
	if (config->policy_source == POLICY_NONE) {
		policy->synced = true; /* nothing to wait for */
		/* An unwritten switch is said and swept after, not fatal. */
		return policy_sweep_start(policy, config) == -ENOMEM ? -ENOMEM : 0;
	}
	if (policy_switch_on(config))
		policy->errors++;
	state = policy->state = calloc(1, sizeof(*policy->state));
	if (!state)
		return -ENOMEM;
	state->config = config;
	state->dirty = config->policy_source == POLICY_FILE;
	policy_ids_load(config, &state->numbering);
	if (config->policy_source == POLICY_API) {
		state->watch = k8s_policy_start(config);
		if (!state->watch)
			goto err;
	}
	/* With an API client the Service ranges follow the API too, whatever the objects' source. */
	if (agent_nodes_from_api(config)) {
		state->cidrs = k8s_servicecidrs_start(config);
		if (!state->cidrs)
			goto err;
		state->events = k8s_event_post_start(config);
		if (!state->events)
			pr_warn("policy: no Events: %s", strerror(errno));
	}
	return 0;
err:
	ret = -errno;
	k8s_watch_set_stop(state->watch);
	velo_pol_numbering_free(&state->numbering);
	free(state);
	policy->state = NULL;
	return ret;
}

int policy_fd(const struct policy *policy, unsigned i)
{
	const struct policy_state *state = policy->state;
	unsigned n = state && state->watch ? K8S_POLICY_WATCHES : 0;

	if (i < n)
		return k8s_watch_set_fd(state->watch, i);
	return state && state->cidrs && i == n ? k8s_servicecidrs_fd(state->cidrs) : -1;
}

void policy_step(struct agent *agent, uint64_t now_ns)
{
	struct policy *policy = &agent->policy;
	const struct agent_config *config = &agent->config;
	struct policy_state *state = policy->state;
	long long sig;
	int ret;

	if (!state) {
		policy_sweep_step(policy, config, now_ns);
		return;
	}
	if (state->watch && k8s_watch_set_poll(state->watch) == 1)
		state->dirty = true;
	if (state->cidrs) {
		ret = k8s_servicecidrs_take(state->cidrs);
		if (ret >= 0)
			state->cidrs_taken = true;
		if (ret > 0)
			state->dirty = true;
	}
	if (now_ns >= state->next_look_ns) {
		state->next_look_ns = now_ns + config->policy_sync_ms * NS_PER_MS;
		if (!state->watch) {
			ret = policy_file_look(policy, config);
			if (ret > 0)
				state->dirty = true;
			else if (ret < 0)
				policy->errors++;
		}
		look_at_pins(state, config);
		policy_report_events(&state->report, state->events, now_ns);
		sig = agent_records_sig(config);
		if (sig != state->records_sig) {
			state->records_sig = sig;
			state->dirty = true;
		}
	}
	/* The file source: nothing to write until some version of the file was good; with an
	 * API client, nothing before the Service ranges were listed (or found not served). */
	if (!state->dirty || now_ns < state->next_sync_ns || (!state->watch && !state->file_good) ||
	    (state->cidrs && !state->cidrs_taken))
		return;
	state->next_sync_ns = now_ns + config->policy_sync_ms * NS_PER_MS;
	ret = sync_maps(policy, config);
	if (ret == -EAGAIN)
		return; /* the watches haven't all listed yet */
	if (ret) {
		/* Tried again, but not at every look: a node without BPF would fill the log. */
		if (config->policy_sync_ms < RETRY_MS)
			state->next_sync_ns = now_ns + RETRY_MS * NS_PER_MS;
		policy->errors++;
		return;
	}
	policy->syncs++;
	policy->synced = true;
}

uint64_t policy_deadline(const struct policy *policy)
{
	const struct policy_state *state = policy->state;
	uint64_t deadline;

	if (!state)
		return policy_sweep_deadline(policy);
	deadline = state->next_look_ns;
	if (state->dirty && state->next_sync_ns < deadline)
		deadline = state->next_sync_ns;
	return deadline;
}

void policy_stop(struct policy *policy)
{
	struct policy_state *state = policy->state;

	policy_sweep_stop(policy);
	if (!state)
		return;
	k8s_watch_set_stop(state->watch);
	k8s_servicecidrs_stop(state->cidrs);
	k8s_event_post_stop(state->events);
	policy_bpf_close(state);
	velo_pol_objects_free(&state->file_objects);
	velo_pol_numbering_free(&state->numbering);
	velo_pol_written_free(&state->written);
	velo_pol_tables_free(&state->tables);
	free(state->local);
	free(state->namespaces);
	policy_report_free(&state->report);
	free(state->ids_saved);
	free(state);
	policy->state = NULL;
}
