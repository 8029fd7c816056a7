// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl status: what the kernel can do for velo, what velo has loaded,
 * how many endpoints it keeps and whether velod answers. Built as one JSON
 * document; text mode renders that same document.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/magic.h>

#include "datapath/loader.h"
#include "datapath/probe.h"
#include "datapath/progs.h"
#include "datapath/sockmap_probe.h"
#include "net/sockmap_bugs.h"
#include "state/netns_state.h"
#include "state/state.h"
#include "cmd_status.h"
#include "ctl.h"
#include "http_get.h"
#include "status_routing.h"

static bool bpffs_mounted(const char *dir)
{
	char parent[PATH_MAX];
	struct statfs fs;
	const char *slash = strrchr(dir, '/');

	if (!statfs(dir, &fs))
		return fs.f_type == BPF_FS_MAGIC;
	/* velo's dir may not exist yet: look at where it would be created. */
	if (!slash || slash == dir)
		return false;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir);
	return !statfs(parent, &fs) && fs.f_type == BPF_FS_MAGIC;
}

static bool sockhash_supported(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_SOCKHASH, "velo_probe", 4, 8, 1, NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Turning stats on for an instant is the only sure test; it costs nothing measurable. */
static bool stats_supported(void)
{
	int fd = velo_stats_enable();

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The sockhash kernel bugs the functional probes found: pods asking for
 * sockmap stay routed unless their conflist accepts each by name.
 */
static bool add_kernel_bugs(cJSON *json, unsigned bugs)
{
	cJSON *list = cJSON_AddArrayToObject(json, "sockmapKernelBugs");

	if (!list)
		return false;
	for (unsigned i = 0; i < VELO_SM_BUG_COUNT; i++)
		if (bugs & (1u << i))
			cJSON_AddItemToArray(list, cJSON_CreateString(velo_sm_bug_name(i)));
	return true;
}

static cJSON *kernel_json(const struct ctl *ctl)
{
	struct velo_bpf_features bpf = {};
	struct velo_sockmap_features sockmap = {};
	struct utsname uts;
	cJSON *json = cJSON_CreateObject(), *features;
	int sysctl = velo_stats_active();

	velo_bpf_probe(&ctl->paths, &bpf);
	velo_sockmap_probe(&ctl->paths, &sockmap);
	if (!json || !(features = cJSON_AddObjectToObject(json, "features")))
		goto err;
	if (!uname(&uts))
		cJSON_AddStringToObject(json, "release", uts.release);
	cJSON_AddBoolToObject(json, "bpffsMounted", bpffs_mounted(ctl->paths.bpffs_dir));
	cJSON_AddBoolToObject(features, "xdpNativeVeth", bpf.xdp_native_veth);
	cJSON_AddBoolToObject(features, "devmapPrograms", bpf.devmap_prog);
	cJSON_AddBoolToObject(features, "tcRedirectPeer", bpf.redirect_peer);
	cJSON_AddBoolToObject(features, "tcx", bpf.tcx);
	cJSON_AddBoolToObject(features, "checkMtu", bpf.check_mtu);
	cJSON_AddBoolToObject(features, "sockmap", sockhash_supported());
	cJSON_AddBoolToObject(features, "sockmapPermanentInBtf", sockmap.permanent_in_btf);
	cJSON_AddBoolToObject(features, "sockmapPermanent", sockmap.permanent_flag != 0);
	cJSON_AddBoolToObject(features, "bpfStats", stats_supported());
	if (!add_kernel_bugs(json, sockmap.bugs))
		goto err;
	/* The sysctl makes every program pay for stats all the time: worth a warning. */
	cJSON_AddBoolToObject(json, "bpfStatsSysctl", sysctl == 1);
	return json;
err:
	cJSON_Delete(json);
	return NULL;
}

/*
 * The program generations pinned under the bpffs dir (datapath/loader.h) and this
 * build's. Two or more pinned: an upgrade is under way, and pods run the
 * older programs until velod's next pass moves them (upgrade/pass.h).
 */
static cJSON *generations_json(const struct ctl *ctl)
{
	cJSON *json = cJSON_CreateObject(), *pinned;
	size_t prefix = strlen(VELO_BPF_GEN_PREFIX);
	struct dirent *entry;
	DIR *dir;

	if (!json || !cJSON_AddStringToObject(json, "build", velo_bpf_generation()) ||
	    !(pinned = cJSON_AddArrayToObject(json, "pinned"))) {
		cJSON_Delete(json);
		return NULL;
	}
	dir = opendir(ctl->paths.bpffs_dir);
	while (dir && (entry = readdir(dir)))
		if (!strncmp(entry->d_name, VELO_BPF_GEN_PREFIX, prefix) && entry->d_name[prefix])
			cJSON_AddItemToArray(pinned, cJSON_CreateString(entry->d_name + prefix));
	if (dir)
		closedir(dir);
	return json;
}

static cJSON *programs_json(int *err)
{
	struct velo_prog_set set;
	cJSON *list;

	*err = velo_progs_sample(false, &set);
	if (*err)
		return NULL;
	list = cJSON_CreateArray();
	for (unsigned i = 0; list && i < set.n; i++) {
		cJSON *prog = cJSON_CreateObject();

		if (!prog)
			break;
		cJSON_AddNumberToObject(prog, "id", set.progs[i].id);
		cJSON_AddStringToObject(prog, "name", set.progs[i].name);
		cJSON_AddStringToObject(prog, "type", set.progs[i].type);
		cJSON_AddNumberToObject(prog, "runCount", (double)set.progs[i].run_cnt);
		cJSON_AddNumberToObject(prog, "runTimeNs", (double)set.progs[i].run_time_ns);
		cJSON_AddItemToArray(list, prog);
	}
	velo_progs_free(&set);
	return list;
}

static cJSON *maps_json(int *err)
{
	struct velo_map_entry *maps = NULL;
	unsigned n = 0;
	cJSON *list;

	*err = velo_maps_list(&maps, &n);
	if (*err)
		return NULL;
	list = cJSON_CreateArray();
	for (unsigned i = 0; list && i < n; i++) {
		cJSON *map = cJSON_CreateObject();

		if (!map)
			break;
		cJSON_AddNumberToObject(map, "id", maps[i].id);
		cJSON_AddStringToObject(map, "name", maps[i].name);
		cJSON_AddStringToObject(map, "type", maps[i].type);
		cJSON_AddNumberToObject(map, "maxEntries", maps[i].max_entries);
		if (maps[i].entries >= 0)
			cJSON_AddNumberToObject(map, "entries", (double)maps[i].entries);
		else
			cJSON_AddNullToObject(map, "entries");
		cJSON_AddItemToArray(list, map);
	}
	free(maps);
	return list;
}

struct endpoint_count {
	const struct ctl *ctl;
	cJSON *by_network;
	unsigned total, ready, netns_gone;
};

static int count_one(const struct velo_record *record, void *ctx)
{
	struct endpoint_count *count = ctx;

	count->total++;
	count->ready += record->phase == VELO_PHASE_READY;
	count->netns_gone += velo_netns_state(record) == VELO_NETNS_GONE;
	return 0;
}

static int count_network(const char *network, void *ctx)
{
	struct endpoint_count *count = ctx;
	unsigned before = count->total;
	int ret = state_record_foreach(&count->ctl->paths, network, count_one, count);

	if (ret && ret != -ENOENT)
		return ret;
	cJSON_AddNumberToObject(count->by_network, network, count->total - before);
	return 0;
}

static cJSON *endpoints_json(const struct ctl *ctl, int *err)
{
	struct endpoint_count count = { .ctl = ctl };
	cJSON *json = cJSON_CreateObject();

	count.by_network = cJSON_AddObjectToObject(json, "byNetwork");
	if (!count.by_network) {
		cJSON_Delete(json);
		*err = -ENOMEM;
		return NULL;
	}
	*err = ctl_foreach_network(ctl, count_network, &count);
	cJSON_AddNumberToObject(json, "total", count.total);
	cJSON_AddNumberToObject(json, "ready", count.ready);
	cJSON_AddNumberToObject(json, "netnsGone", count.netns_gone);
	return json;
}

static cJSON *agent_json(const struct ctl *ctl, bool *healthy)
{
	cJSON *json = cJSON_CreateObject();
	char body[256];
	int status;

	*healthy = true;
	if (!json || !ctl->agent[0])
		return json;
	cJSON_AddStringToObject(json, "address", ctl->agent);
	status = ctl_http_get(ctl->agent, "/healthz", body, sizeof(body));
	*healthy = status == 200;
	cJSON_AddBoolToObject(json, "healthy", *healthy);
	if (status < 0)
		cJSON_AddStringToObject(json, "error", strerror(-status));
	else if (status != 200)
		cJSON_AddNumberToObject(json, "httpStatus", status);
	if (status > 0) {
		cJSON *routing = status_routing_json(ctl->agent);

		if (routing)
			cJSON_AddItemToObject(json, "routing", routing);
	}
	return json;
}

static double number_of(const cJSON *json, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	return cJSON_IsNumber(item) ? item->valuedouble : 0;
}

static const char *string_of(const cJSON *json, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	return cJSON_IsString(item) ? item->valuestring : "";
}

static void print_generations(const cJSON *generations)
{
	const char *build = string_of(generations, "build");
	const cJSON *pinned = cJSON_GetObjectItemCaseSensitive(generations, "pinned"), *item;

	printf("\nBPF generation of this build: %s; pinned:", build);
	if (!cJSON_GetArraySize(pinned))
		printf(" none (no pod has asked for velo's programs yet)");
	cJSON_ArrayForEach (item, pinned)
		printf(" %s%s", item->valuestring,
		       strcmp(item->valuestring, build) ? " (other build: pods still on it move at "
							  "velod's next pass)"
							: " (this build)");
	printf("\n");
}

static void print_text(const cJSON *status)
{
	const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(status, "kernel");
	const cJSON *features = cJSON_GetObjectItemCaseSensitive(kernel, "features");
	const cJSON *endpoints = cJSON_GetObjectItemCaseSensitive(status, "endpoints");
	const cJSON *agent = cJSON_GetObjectItemCaseSensitive(status, "agent");
	const cJSON *item;

	printf("Kernel %s (bpffs %s)\n", string_of(kernel, "release"),
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(kernel, "bpffsMounted"))
		       ? "mounted"
		       : "not mounted");
	cJSON_ArrayForEach (item, features)
		printf("  %-24s %s\n", item->string, cJSON_IsTrue(item) ? "yes" : "no");
	item = cJSON_GetObjectItemCaseSensitive(kernel, "sockmapKernelBugs");
	if (cJSON_GetArraySize(item)) {
		const cJSON *bug;

		printf("  sockmap kernel bugs (probed):");
		cJSON_ArrayForEach (bug, item)
			printf(" %s", bug->valuestring);
		printf("\n    velo.dev/sockmap pods stay routed unless the conflist lists each in "
		       "sockmapAcceptKernelBugs\n");
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(kernel, "bpfStatsSysctl")))
		printf("  warning: kernel.bpf_stats_enabled=1: every BPF program pays for stats\n");

	print_generations(cJSON_GetObjectItemCaseSensitive(status, "bpfGenerations"));

	printf("\nPrograms\n  %-8s %-16s %-16s %14s %16s\n", "ID", "NAME", "TYPE", "RUNS",
	       "RUN_TIME_NS");
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(status, "programs"))
		printf("  %-8.0f %-16s %-16s %14.0f %16.0f\n", number_of(item, "id"),
		       string_of(item, "name"), string_of(item, "type"),
		       number_of(item, "runCount"), number_of(item, "runTimeNs"));

	printf("\nMaps\n  %-8s %-16s %-18s %10s %10s\n", "ID", "NAME", "TYPE", "ENTRIES", "MAX");
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(status, "maps")) {
		const cJSON *entries = cJSON_GetObjectItemCaseSensitive(item, "entries");
		char fill[24] = "-";

		if (cJSON_IsNumber(entries))
			snprintf(fill, sizeof(fill), "%.0f", entries->valuedouble);
		printf("  %-8.0f %-16s %-18s %10s %10.0f\n", number_of(item, "id"),
		       string_of(item, "name"), string_of(item, "type"), fill,
		       number_of(item, "maxEntries"));
	}

	printf("\nEndpoints: %.0f (ready %.0f, netns gone %.0f)\n", number_of(endpoints, "total"),
	       number_of(endpoints, "ready"), number_of(endpoints, "netnsGone"));
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(endpoints, "byNetwork"))
		printf("  %-24s %.0f\n", item->string, item->valuedouble);

	if (!cJSON_GetObjectItemCaseSensitive(agent, "address"))
		printf("\nAgent: not checked\n");
	else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(agent, "healthy")))
		printf("\nAgent %s: healthy\n", string_of(agent, "address"));
	else
		printf("\nAgent %s: %s %s\n", string_of(agent, "address"),
		       cJSON_GetObjectItemCaseSensitive(agent, "error") ? "unreachable"
									: "unhealthy",
		       string_of(agent, "error"));
	if (cJSON_GetObjectItemCaseSensitive(agent, "routing"))
		status_routing_print(cJSON_GetObjectItemCaseSensitive(agent, "routing"));
}

int cmd_ctl_status(struct ctl *ctl)
{
	cJSON *status = cJSON_CreateObject(), *part;
	bool healthy;
	int err;

	if (!status)
		goto err_nomem;
	part = kernel_json(ctl);
	if (!part || !cJSON_AddItemToObject(status, "kernel", part))
		goto err_nomem;
	part = programs_json(&err);
	if (!part) {
		ctl_error(ctl, "list BPF programs: %s", strerror(-err));
		goto err;
	}
	cJSON_AddItemToObject(status, "programs", part);
	part = generations_json(ctl);
	if (!part || !cJSON_AddItemToObject(status, "bpfGenerations", part))
		goto err_nomem;
	part = maps_json(&err);
	if (!part) {
		ctl_error(ctl, "list BPF maps: %s", strerror(-err));
		goto err;
	}
	cJSON_AddItemToObject(status, "maps", part);
	part = endpoints_json(ctl, &err);
	if (!part || err) {
		cJSON_Delete(part);
		ctl_error(ctl, "read endpoint records under %s: %s", ctl->paths.state_dir,
			  strerror(-err));
		goto err;
	}
	cJSON_AddItemToObject(status, "endpoints", part);
	part = agent_json(ctl, &healthy);
	if (!part)
		goto err_nomem;
	cJSON_AddItemToObject(status, "agent", part);

	if (ctl->json) {
		if (ctl_print_json(ctl, status))
			return CTL_EXIT_FAILED;
	} else {
		print_text(status);
		cJSON_Delete(status);
	}
	return healthy ? CTL_EXIT_OK : CTL_EXIT_UNHEALTHY;
err_nomem:
	ctl_error(ctl, "out of memory");
err:
	cJSON_Delete(status);
	return CTL_EXIT_FAILED;
}
