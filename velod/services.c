// SPDX-License-Identifier: Apache-2.0
/* servicesFile into the velo_svc_* maps when it changes (services.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "config.h"
#include "datapath/svc_bpf.h"
#include "datapath/svc_maps.h"
#include "datapath/svc_table.h"
#include "k8s/svc_parse.h"
#include "services.h"

#define NS_PER_MS 1000000ull
#define SERVICES_FILE_MAX (64u << 20)
#define LOCK_TIMEOUT_MS 10000

static int sync_file(struct services *services, const struct agent_config *config)
{
	struct velo_svc_state state;
	struct velo_svc_table table;
	struct velo_svc_sync sync;
	struct velo_svc_bpf bpf;
	char why[256] = "", *text;
	unsigned backends = 0;
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
	ret = velo_svc_bpf_open(&config->paths, LOCK_TIMEOUT_MS, &bpf);
	if (ret) {
		pr_warn("services: BPF objects can't be loaded: %s", strerror(-ret));
		velo_svc_table_free(&table);
		return ret;
	}
	ret = velo_svc_maps_sync(&bpf, &table, &sync);
	velo_svc_bpf_close(&bpf);
	for (unsigned i = 0; i < table.n; i++)
		backends += table.entries[i].value.count;
	if (table.cut)
		pr_warn("services: %u backends left out (more than %u in a service port)",
			table.cut, VELO_SVC_MAX_BACKENDS);
	if (!ret) {
		services->entries = table.n;
		services->backends = backends;
		pr_info("services: %u service ports, %u backends (%u added, %u changed, %u "
			"removed, %u unchanged)",
			table.n, backends, sync.added, sync.changed, sync.removed, sync.unchanged);
	}
	velo_svc_table_free(&table);
	return ret;
}

void services_step(struct services *services, const struct agent_config *config, uint64_t now_ns)
{
	struct stat st;

	if (!config->services_file[0] || now_ns < services->next_ns)
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
}

uint64_t services_deadline(const struct services *services, const struct agent_config *config)
{
	return config->services_file[0] ? services->next_ns : UINT64_MAX;
}
