// SPDX-License-Identifier: Apache-2.0
/* Local pods by address and by cgroup, from the endpoint records (flows_pods.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/pod.h"
#include "state/record.h"
#include "state/state.h"
#include "flows_pods.h"

#define NS_PER_S 1000000000ull
#define MISS_RESCAN_NS NS_PER_S /* at most one rescan a second for unknown names */
#define RESCAN_NS (10 * NS_PER_S)
#define CGROUP_CACHE 256

struct pod_addr {
	uint8_t addr[16];
	unsigned pod; /* index into names */
};

struct pod_cgroup {
	uint64_t cgroup_id;
	unsigned pod;
};

struct pod_if {
	uint32_t ifindex;
	unsigned pod;
};

struct flow_pods {
	const struct agent_config *config;
	char (*names)[FLOW_POD_NAME_MAX];
	struct pod_addr *addrs;
	struct pod_cgroup *cgroups; /* the pods' own cgroups */
	struct pod_if *ifs; /* their host veths */
	unsigned n_names, n_addrs, n_cgroups, n_ifs, cap;
	/* Descendant cgroups seen in events -> pod (or none), filled as they come. */
	struct pod_cgroup seen[CGROUP_CACHE];
	unsigned n_seen;
	uint64_t scanned_ns;
	long long records_sig; /* agent_records_sig at the last scan */
	bool scanned;
	int mount_fd; /* the cgroup2 mount, for open_by_handle_at; -1 when unknown */
};

static int grow(struct flow_pods *pods)
{
	unsigned cap = pods->cap ? pods->cap * 2 : 64;
	void *names, *addrs, *cgroups, *ifs;

	names = realloc(pods->names, cap * sizeof(*pods->names));
	if (names)
		pods->names = names;
	addrs = realloc(pods->addrs, cap * VELO_MAX_IPS * sizeof(*pods->addrs));
	if (addrs)
		pods->addrs = addrs;
	cgroups = realloc(pods->cgroups, cap * sizeof(*pods->cgroups));
	if (cgroups)
		pods->cgroups = cgroups;
	ifs = realloc(pods->ifs, cap * sizeof(*pods->ifs));
	if (ifs)
		pods->ifs = ifs;
	if (!names || !addrs || !cgroups || !ifs)
		return -ENOMEM;
	pods->cap = cap;
	return 0;
}

static int add_record(const struct velo_record *record, void *ctx)
{
	struct flow_pods *pods = ctx;
	unsigned pod = pods->n_names;

	if (!record->pod_name[0] || record->phase != VELO_PHASE_READY)
		return 0;
	if (pods->n_names == pods->cap && grow(pods))
		return 0; /* named less, not failed */
	snprintf(pods->names[pod], FLOW_POD_NAME_MAX, "%.63s/%.253s", record->pod_namespace,
		 record->pod_name);
	pods->n_names++;
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct pod_addr *entry = &pods->addrs[pods->n_addrs++];

		memset(entry->addr, 0, sizeof(entry->addr));
		if (record->ips[i].family == AF_INET) {
			entry->addr[10] = entry->addr[11] = 0xff;
			memcpy(&entry->addr[12], record->ips[i].addr, 4);
		} else {
			memcpy(entry->addr, record->ips[i].addr, 16);
		}
		entry->pod = pod;
	}
	if (record->host_ifindex > 0)
		pods->ifs[pods->n_ifs++] = (struct pod_if){ (uint32_t)record->host_ifindex, pod };
	if (record->cgroup_id)
		pods->cgroups[pods->n_cgroups++] = (struct pod_cgroup){ record->cgroup_id, pod };
	return 0;
}

static int add_network(const char *network, void *ctx)
{
	struct flow_pods *pods = ctx;

	state_record_foreach(&pods->config->paths, network, add_record, pods);
	return 0;
}

static void scan(struct flow_pods *pods, uint64_t now_ns)
{
	const struct agent_config *config = pods->config;

	/* Taken first: a record written during the scan makes the next miss scan again. */
	pods->records_sig = agent_records_sig(config);
	pods->n_names = pods->n_addrs = pods->n_cgroups = pods->n_ifs = pods->n_seen = 0;
	if (config->n_networks)
		for (unsigned i = 0; i < config->n_networks; i++)
			add_network(config->networks[i], pods);
	else
		state_network_foreach(&config->paths, add_network, pods);
	pods->scanned_ns = now_ns;
	pods->scanned = true;
}

/*
 * Scans when the last scan is old, or on a miss (missed) when a record came
 * or went since (a pod just added: its first events must name it), else at
 * most once a second.
 */
static void maybe_scan(struct flow_pods *pods, uint64_t now_ns, bool missed)
{
	uint64_t after = missed ? MISS_RESCAN_NS : RESCAN_NS;

	if (!pods->scanned || now_ns - pods->scanned_ns >= after ||
	    (missed && agent_records_sig(pods->config) != pods->records_sig))
		scan(pods, now_ns);
}

struct flow_pods *flow_pods_new(const struct agent_config *config)
{
	struct flow_pods *pods = calloc(1, sizeof(*pods));
	char mount[PATH_MAX];

	if (!pods)
		return NULL;
	pods->config = config;
	pods->mount_fd = -1;
	if (!pod_cgroup_mount(mount, sizeof(mount)))
		pods->mount_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return pods;
}

void flow_pods_free(struct flow_pods *pods)
{
	if (!pods)
		return;
	if (pods->mount_fd >= 0)
		close(pods->mount_fd);
	free(pods->names);
	free(pods->addrs);
	free(pods->cgroups);
	free(pods->ifs);
	free(pods);
}

static int find_addr(const struct flow_pods *pods, const uint8_t addr[16])
{
	for (unsigned i = 0; i < pods->n_addrs; i++)
		if (!memcmp(pods->addrs[i].addr, addr, 16))
			return (int)pods->addrs[i].pod;
	return -1;
}

/* The pod find() finds for key, scanning the records again (rate limited) on a miss. */
static int lookup(struct flow_pods *pods, int (*find)(const struct flow_pods *, const void *),
		  const void *key, uint64_t now_ns)
{
	int pod;

	maybe_scan(pods, now_ns, false);
	pod = find(pods, key);
	if (pod < 0) {
		maybe_scan(pods, now_ns, true);
		pod = find(pods, key);
	}
	return pod;
}

static void name_of(const struct flow_pods *pods, int pod, char *name, size_t len)
{
	if (pod >= 0)
		snprintf(name, len, "%s", pods->names[pod]);
	else
		name[0] = '\0';
}

static int find_addr_key(const struct flow_pods *pods, const void *key)
{
	return find_addr(pods, key);
}

void flow_pods_by_addr(struct flow_pods *pods, const uint8_t addr[16], char *name, size_t len,
		       uint64_t now_ns)
{
	static const uint8_t zero[16];

	name_of(pods, memcmp(addr, zero, 16) ? lookup(pods, find_addr_key, addr, now_ns) : -1, name,
		len);
}

static int find_cgroup(const struct flow_pods *pods, uint64_t cgroup_id)
{
	for (unsigned i = 0; i < pods->n_cgroups; i++)
		if (pods->cgroups[i].cgroup_id == cgroup_id)
			return (int)pods->cgroups[i].pod;
	return -1;
}

/*
 * A container's cgroup under the pod's: opened by its id (cgroup2 file
 * handles are the id), then its ancestors' inodes (their ids) compared.
 */
static int find_ancestor(const struct flow_pods *pods, uint64_t cgroup_id)
{
	struct {
		struct file_handle handle;
		uint64_t id;
	} fh = { .handle = { .handle_bytes = sizeof(uint64_t), .handle_type = 0xfe } };
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, pod = -1;

	if (pods->mount_fd < 0)
		return -1;
	memcpy(fh.handle.f_handle, &cgroup_id, sizeof(cgroup_id));
	fd = open_by_handle_at(pods->mount_fd, &fh.handle, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	while (pod < 0) {
		char *slash = strrchr(path, '/');

		if (!slash || slash == path)
			break;
		*slash = '\0';
		if (!stat(path, &st))
			pod = find_cgroup(pods, (uint64_t)st.st_ino);
	}
	return pod;
}

void flow_pods_by_cgroup(struct flow_pods *pods, uint64_t cgroup_id, char *name, size_t len,
			 uint64_t now_ns)
{
	int pod;

	name[0] = '\0';
	if (!cgroup_id)
		return;
	maybe_scan(pods, now_ns, false);
	pod = find_cgroup(pods, cgroup_id);
	for (unsigned i = 0; pod < 0 && i < pods->n_seen; i++)
		if (pods->seen[i].cgroup_id == cgroup_id)
			pod = (int)pods->seen[i].pod;
	if (pod < 0) {
		maybe_scan(pods, now_ns, true);
		pod = find_cgroup(pods, cgroup_id);
		if (pod < 0)
			pod = find_ancestor(pods, cgroup_id);
		if (pod >= 0 && pods->n_seen < CGROUP_CACHE)
			pods->seen[pods->n_seen++] =
				(struct pod_cgroup){ cgroup_id, (unsigned)pod };
	}
	if (pod >= 0)
		snprintf(name, len, "%s", pods->names[pod]);
}

static int find_ifindex(const struct flow_pods *pods, const void *key)
{
	uint32_t ifindex = *(const uint32_t *)key;

	for (unsigned i = 0; i < pods->n_ifs; i++)
		if (pods->ifs[i].ifindex == ifindex)
			return (int)pods->ifs[i].pod;
	return -1;
}

void flow_pods_by_ifindex(struct flow_pods *pods, uint32_t ifindex, char *name, size_t len,
			  uint64_t now_ns)
{
	name_of(pods, ifindex ? lookup(pods, find_ifindex, &ifindex, now_ns) : -1, name, len);
}
