// SPDX-License-Identifier: Apache-2.0
/*
 * Services and EndpointSlices into the velo_svc_* maps (services.h): from
 * servicesFile when it changes, or from the API's watches (k8s_services.c)
 * when they change the state, at most every servicesSyncMs. Both sources
 * take the same path: a service table built for this node, written by
 * velo_svc_maps_update (each changed backend set whole, then the switch),
 * which compares it with what the last sync wrote: a one-endpoint change
 * writes one set, whatever the number of Services.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cJSON.h>

#include "base/file_replace.h"
#include "base/log.h"
#include "datapath/svc_bpf.h"
#include "datapath/svc_maps.h"
#include "datapath/svc_reap.h"
#include "datapath/svc_table.h"
#include "k8s/svc_parse.h"
#include "state/state.h"
#include "agent/agent.h"
#include "agent/config.h"
#include "k8s/k8s_services.h"
#include "services.h"

#define NS_PER_MS 1000000ull
#define SERVICES_FILE_MAX (64u << 20)
#define LOCK_TIMEOUT_MS 10000

/*
 * <runDir>/services.json: the names of the service ports in the maps, for
 * veloctl services (the maps hold addresses only). Written whole, renamed.
 */
static void write_names(const struct agent_config *config, const struct velo_svc_table *table)
{
	char path[PATH_MAX], vip[INET6_ADDRSTRLEN];
	cJSON *root = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(root, "servicePorts");
	char *text = NULL;
	int ret;

	for (unsigned i = 0; list && i < table->n; i++) {
		const struct velo_svc_entry *entry = &table->entries[i];
		cJSON *item = cJSON_CreateObject();

		cJSON_AddItemToArray(list, item);
		cJSON_AddStringToObject(item, "name", entry->name);
		cJSON_AddStringToObject(item, "clusterIP",
					velo_svc_addr_text(entry->key.addr, vip, sizeof(vip)));
		cJSON_AddNumberToObject(item, "port", ntohs(entry->key.port));
		cJSON_AddStringToObject(item, "protocol",
					entry->key.proto == IPPROTO_UDP ? "UDP" : "TCP");
	}
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text || snprintf(path, sizeof(path), "%s/services.json", config->paths.run_dir) >=
			     (int)sizeof(path)) {
		free(text);
		return;
	}
	ret = velo_file_replace(path, NULL, text, strlen(text), 0600);
	if (ret)
		pr_warn("services: write %s: %s", path, strerror(-ret));
	free(text);
}

static int keep_names(struct services *services, const struct velo_svc_table *table)
{
	struct service_port *ports = calloc(table->n ? table->n : 1, sizeof(*ports));

	if (!ports)
		return -ENOMEM;
	for (unsigned i = 0; i < table->n; i++) {
		ports[i].key = table->entries[i].key;
		memcpy(ports[i].name, table->entries[i].name, sizeof(ports[i].name));
	}
	free(services->ports);
	services->ports = ports;
	return 0;
}

static int cmp_port_key(const void *key, const void *port)
{
	return memcmp(key, &((const struct service_port *)port)->key, sizeof(struct velo_svc_key));
}

/* services->ports is the table's entries in their order: sorted by key. */
const char *services_port_name(const struct services *services, const struct velo_svc_key *key)
{
	const struct service_port *port;

	if (!services->ports)
		return NULL;
	port = bsearch(key, services->ports, services->entries, sizeof(*port), cmp_port_key);
	return port ? port->name : NULL;
}

struct netns_list {
	char **paths;
	unsigned n;
};

static int add_netns(const struct velo_record *record, void *ctx)
{
	struct netns_list *list = ctx;
	char **grown;

	if (!(record->features & VELO_FEATURE_SERVICES) || !record->netns[0])
		return 0;
	grown = realloc(list->paths, (list->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	list->paths = grown;
	list->paths[list->n] = strdup(record->netns);
	if (list->paths[list->n])
		list->n++;
	return 0;
}

static int network_netns(const char *network, void *ctx)
{
	const struct agent_config *config = ((void **)ctx)[0];

	return state_record_foreach(&config->paths, network, add_netns, ((void **)ctx)[1]);
}

/*
 * Connections opted-in pods made to backends that just left their service
 * port are closed, in each such pod's netns (bpf_sock_destroy, probed by
 * loading the iterator the first time it is needed).
 */
static void reap_gone(struct services *services, const struct agent_config *config,
		      const struct velo_svc_sync *sync)
{
	struct netns_list list = {};
	void *ctx[2] = { (void *)config, &list };
	int ret;

	if (!sync->n_gone || services->reap_err)
		return;
	if (!services->reap) {
		ret = velo_svc_reap_open(&config->paths, &services->reap);
		if (ret) {
			services->reap_err = ret;
			pr_warn("services: no bpf_sock_destroy socket iterator on this kernel (%s): "
				"connections to removed backends stay open until they end",
				strerror(-ret));
			return;
		}
	}
	agent_foreach_network(config, network_netns, ctx);
	ret = velo_svc_reap_run(services->reap, sync->gone, sync->n_gone, list.paths, list.n);
	if (ret < 0)
		pr_warn("services: closing connections to removed backends: %s", strerror(-ret));
	else if (ret)
		pr_info("services: closed %d connections to removed backends", ret);
	if (ret > 0)
		services->reaped += (unsigned)ret;
	for (unsigned i = 0; i < list.n; i++)
		free(list.paths[i]);
	free(list.paths);
}

/* table into the maps; closes connections to backends that left. Frees table. */
static int write_table(struct services *services, const struct agent_config *config,
		       struct velo_svc_table *table)
{
	struct velo_svc_sync sync;
	struct velo_svc_bpf bpf;
	unsigned backends = 0;
	int ret;

	ret = velo_svc_bpf_open(&config->paths, LOCK_TIMEOUT_MS, &bpf);
	if (ret) {
		pr_warn("services: BPF objects can't be loaded: %s", strerror(-ret));
		velo_svc_table_free(table);
		return ret;
	}
	/* Without memory for it, every sync reads the maps back. */
	if (!services->written)
		services->written = calloc(1, sizeof(*services->written));
	ret = velo_svc_maps_update(&bpf, table, services->written, &sync);
	velo_svc_bpf_close(&bpf);
	reap_gone(services, config, &sync);
	velo_svc_sync_free(&sync);
	if (ret && !sync.added && !sync.changed && !sync.removed && !sync.unchanged &&
	    !sync.fell_back) {
		velo_svc_table_free(table);
		return ret; /* the maps couldn't be read */
	}
	for (unsigned i = 0; i < table->n; i++)
		backends += table->entries[i].value.count;
	if (table->cut)
		pr_warn("services: %u backends left out (more than %u in a service port)",
			table->cut, VELO_SVC_MAX_BACKENDS);
	/* A sync that failed for some sets still wrote the others. */
	write_names(config, table);
	if (!keep_names(services, table))
		services->entries = table->n;
	else
		services->entries = 0;
	services->backends = backends;
	pr_info("services: %u service ports, %u backends (%u added, %u changed, %u removed, %u "
		"unchanged, %u to kube-proxy)",
		table->n, backends, sync.added, sync.changed, sync.removed, sync.unchanged,
		sync.fell_back);
	velo_svc_table_free(table);
	return ret;
}

static int sync_file(struct services *services, const struct agent_config *config)
{
	struct velo_svc_state state;
	struct velo_svc_table table;
	char why[256] = "", *text;
	int ret;

	text = agent_read_file(config->services_file, SERVICES_FILE_MAX);
	if (!text) {
		ret = -errno;
		pr_warn("services: read %s: %s", config->services_file, strerror(-ret));
		return ret;
	}
	ret = velo_svc_state_parse(text, strlen(text), &state, why, sizeof(why));
	free(text);
	if (ret) {
		pr_warn("services: %s: %s; the maps stay as they were", config->services_file, why);
		return ret;
	}
	ret = velo_svc_table_build(&state, config->node_name, &table);
	velo_svc_state_free(&state);
	if (ret)
		return ret;
	ret = write_table(services, config, &table);
	if (ret)
		services->loaded = false; /* unlike a bad file, tried again after servicesSyncMs */
	return ret;
}

int services_start(struct services *services, const struct agent_config *config)
{
	if (config->services_source != SERVICES_API)
		return 0;
	services->watch = k8s_services_start(config);
	return services->watch ? 0 : -errno;
}

int services_fd(const struct services *services, unsigned i)
{
	return services->watch ? k8s_watch_set_fd(services->watch, i) : -1;
}

/*
 * The API's state into the maps once both watches listed, then after each
 * change, at most every servicesSyncMs (a burst of events is one write). A
 * write that failed is tried again after the same pause.
 */
static void step_api(struct services *services, const struct agent_config *config, uint64_t now_ns)
{
	const struct velo_svc_state *state;
	struct velo_svc_table table;
	int ret;

	if (k8s_watch_set_poll(services->watch) == 1)
		services->dirty = true;
	if (!services->dirty || now_ns < services->next_ns)
		return;
	services->next_ns = now_ns + config->services_sync_ms * NS_PER_MS;
	services->syncs++;
	/* Both listed, or nothing is written: a Service never goes before its slices could. */
	state = k8s_watch_set_hold(services->watch);
	ret = state ? velo_svc_table_build(state, config->node_name, &table) : -EAGAIN;
	if (state)
		k8s_watch_set_release(services->watch);
	if (!ret)
		ret = write_table(services, config, &table);
	if (ret) {
		services->errors++;
		return;
	}
	services->dirty = false;
	services->loaded = true;
	services->synced = true;
}

void services_step(struct services *services, const struct agent_config *config, uint64_t now_ns)
{
	struct stat st;

	if (services->watch) {
		step_api(services, config, now_ns);
		return;
	}
	if (config->services_source != SERVICES_FILE || now_ns < services->next_ns)
		return;
	services->next_ns = now_ns + config->services_sync_ms * NS_PER_MS;
	if (stat(config->services_file, &st)) {
		if (services->loaded || !services->errors)
			pr_warn("services: %s: %s", config->services_file, strerror(errno));
		services->loaded = false;
		services->errors++;
		return;
	}
	if (services->loaded && services->ino == (long long)st.st_ino &&
	    services->size == (long long)st.st_size &&
	    services->mtime_ns == st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec)
		return;
	services->ino = (long long)st.st_ino;
	services->size = (long long)st.st_size;
	services->mtime_ns = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
	services->syncs++;
	/* A bad file is not retried until it changes: one warning per version. */
	services->loaded = true;
	if (sync_file(services, config))
		services->errors++;
	else
		services->synced = true;
}

uint64_t services_deadline(const struct services *services, const struct agent_config *config)
{
	if (services->watch)
		return services->dirty ? services->next_ns : UINT64_MAX; /* else its fds wake */
	return config->services_source == SERVICES_FILE ? services->next_ns : UINT64_MAX;
}

void services_stop(struct services *services)
{
	k8s_watch_set_stop(services->watch);
	services->watch = NULL;
	velo_svc_reap_close(services->reap);
	services->reap = NULL;
	free(services->ports);
	services->ports = NULL;
	services->entries = 0;
	if (services->written)
		velo_svc_written_free(services->written);
	free(services->written);
	services->written = NULL;
}
