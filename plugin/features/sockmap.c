// SPDX-License-Identifier: Apache-2.0
/*
 * The socket short-circuit (annotation velo.dev/sockmap: "true"). attach
 * records the pod's addresses with its netns cookie in velo_smpod_v1 (the
 * proof, checked in sock_ops, that a socket is this pod's), makes its
 * accounting entry, and attaches velo_sockops to the pod's own cgroup as a
 * pinned bpf_link. A connection is short-circuited only when both of its
 * pods did this. A shaped pod (config.shaped) does none of it: its sockets
 * stay out of the sockhash and, with no pod entry, so do its peers' sockets
 * to it. Whatever is missing leaves the pod on the routed path with one log
 * line: never a failed pod.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "base/log.h"
#include "base/naming.h"
#include "bpf/lib/velo_sockmap.h"
#include "cgroup/pod.h"
#include "datapath/loader.h"
#include "datapath/sockmap_bpf.h"
#include "datapath/sockmap_probe.h"
#include "features/feature.h"
#include "features/sockmap.h"
#include "net/netns.h"
#include "net/sockmap_bugs.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
/* libbpf 1.1's uapi names it; kept local in case of older headers. */
#define VELO_BPF_LINK_TYPE_CGROUP 3

static bool sockmap_wanted(const struct velo_request *request)
{
	return request->config.effective.sockmap;
}

static uint64_t owner_of(const struct velo_record *record)
{
	return velo_fnv1a64(record->container_id, strlen(record->container_id));
}

/* The cookie the kernel gives sockets of the pod's netns (what sock_ops sees). */
static int netns_cookie(const char *netns, uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	struct netns_guard guard;
	int sock, ret;

	ret = netns_enter(netns, &guard);
	if (ret)
		return ret;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		ret = -errno;
	} else {
		ret = getsockopt(sock, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len) ? -errno : 0;
		close(sock);
	}
	netns_leave(&guard);
	return ret;
}

/*
 * Entries this owner wrote; their netns cookie into *cookie (0 when none), their
 * addresses into owned (VELO_MAX_IPS), how many into *n_owned.
 */
static void pods_remove(int pods_fd, const struct velo_record *record, uint64_t *cookie,
			struct velo_sm_addr *owned, unsigned *n_owned)
{
	uint64_t owner = owner_of(record);

	*cookie = 0;
	*n_owned = 0;
	for (unsigned i = 0; i < record->n_ips && i < VELO_MAX_IPS; i++) {
		struct velo_sm_addr key;
		struct velo_sm_pod pod;

		velo_sockmap_pod_key(&record->ips[i], &key);
		if (bpf_map_lookup_elem(pods_fd, &key, &pod) || pod.owner != owner)
			continue;
		*cookie = pod.netns_cookie;
		owned[(*n_owned)++] = key;
		if (bpf_map_delete_elem(pods_fd, &key) && errno != ENOENT)
			pr_warn("sockmap: remove pod entry: %s", strerror(errno));
	}
}

static int pods_write(int pods_fd, const struct velo_record *record, uint64_t cookie)
{
	struct velo_sm_pod pod = { .netns_cookie = cookie, .owner = owner_of(record) };

	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_sm_addr key;

		velo_sockmap_pod_key(&record->ips[i], &key);
		/* A stale entry of an older sandbox with this IP is replaced: the IP is ours now. */
		if (bpf_map_update_elem(pods_fd, &key, &pod, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* One zeroed counter set per CPU for the pod. */
static int acct_create(int acct_fd, uint64_t cookie)
{
	int cpus = libbpf_num_possible_cpus();
	struct velo_sm_counters *zero;
	int ret;

	if (cpus <= 0)
		return cpus ? cpus : -EINVAL;
	zero = calloc((size_t)cpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	ret = bpf_map_update_elem(acct_fd, &cookie, zero, BPF_ANY) ? -errno : 0;
	free(zero);
	return ret;
}

/* pod_cgroup_find records a CNI error; for an optimisation that's only a log line. */
static int find_cgroup(const struct velo_request *request, char *buf, size_t len)
{
	bool had_error = cni_error_is_set();
	int ret = pod_cgroup_find(request, buf, len);

	if (ret && !had_error)
		cni_error_reset();
	return ret;
}

static int link_attach(const struct velo_request *request, int prog_fd, const char *cgroup)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int cgroup_fd, link_fd, ret;

	ret = velo_sockmap_link_path(&request->config.paths, request->record.host_ifname, path,
				     sizeof(path));
	if (ret)
		return ret;
	memcpy(dir, path, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgroup_fd < 0)
		return -errno;
	link_fd = bpf_link_create(prog_fd, cgroup_fd, BPF_CGROUP_SOCK_OPS, NULL);
	ret = link_fd < 0 ? -errno : 0;
	close(cgroup_fd);
	if (ret)
		return ret;
	/* A pin left by a crashed ADD of this same endpoint: replace it. */
	if (unlink(path) && errno != ENOENT)
		ret = -errno;
	else if (bpf_obj_pin(link_fd, path))
		ret = -errno;
	close(link_fd); /* on failure this detaches it again */
	return ret;
}

static void link_unpin(const struct velo_request *request)
{
	char path[PATH_MAX];

	if (velo_sockmap_link_path(&request->config.paths, request->record.host_ifname, path,
				   sizeof(path)))
		return;
	if (unlink(path) && errno != ENOENT)
		pr_warn("sockmap: unpin %s: %s", path, strerror(errno));
}

static int fall_back(const struct velo_request *request, const char *why, int err)
{
	pr_warn("sockmap: %s%s%s; pod %s stays on the routed path", why, err ? ": " : "",
		err ? strerror(-err) : "", request->record.host_ifname);
	return VELO_FEATURE_FELL_BACK;
}

/*
 * The kernel bugs the probes found that the conflist doesn't accept: where
 * any is left, the pod stays routed (a fast path must never make a pod less
 * correct than the routed path). The reason into why.
 */
static unsigned gated_bugs(const struct velo_request *request,
			   const struct velo_sockmap_features *features, char *why, size_t len)
{
	unsigned bugs = features->bugs & ~request->config.sockmap_accept_bugs;
	char names[96];

	velo_sm_bugs_str(bugs, names, sizeof(names));
	snprintf(why, len,
		 "kernel probe failed: %s (sockets in a sockhash behave unlike TCP; accept by "
		 "name in sockmapAcceptKernelBugs)",
		 names);
	return bugs;
}

static int sockmap_attach(struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	struct velo_sockmap_features features;
	struct velo_sockmap_bpf bpf;
	char cgroup[PATH_MAX], why[256], accepted[96];
	struct velo_sm_addr owned[VELO_MAX_IPS];
	uint64_t cookie = 0, removed;
	unsigned n_owned;
	int ret;

	/* Redirected data never reaches a qdisc: the bandwidth plugin's limits would not hold. */
	if (request->config.shaped)
		return fall_back(request, "bandwidth limits need the routed path", 0);
	ret = find_cgroup(request, cgroup, sizeof(cgroup));
	if (ret)
		return fall_back(request, "the pod's cgroup is unknown", ret);
	velo_sockmap_probe_within(&request->config.paths, request->config.sockmap_probe_timeout_ms,
				  &features);
	if (features.incomplete)
		return fall_back(request,
				 "the kernel probes did not finish within sockmapProbeTimeoutMs "
				 "(nothing cached: a later ADD probes again)",
				 0);
	if (gated_bugs(request, &features, why, sizeof(why)))
		return fall_back(request, why, 0);
	ret = velo_sockmap_bpf_open(&request->config.paths, request->config.lock_timeout_ms,
				    &features, &bpf);
	if (ret == -EAGAIN)
		return ret; /* the loader lock is busy: try again later */
	if (ret)
		return fall_back(request, "BPF objects can't be loaded", ret);
	ret = netns_cookie(record->netns, &cookie);
	if (ret)
		goto err_fall_back;

	/* Accounting, then the addresses peers pair with, then our own sockets. */
	ret = acct_create(bpf.acct_fd, cookie);
	if (ret)
		goto err_fall_back;
	ret = pods_write(bpf.pods_fd, record, cookie);
	if (ret)
		goto err_pods;
	ret = link_attach(request, bpf.sockops_prog_fd, cgroup);
	if (ret)
		goto err_pods;
	velo_sm_bugs_str(features.bugs & request->config.sockmap_accept_bugs, accepted,
			 sizeof(accepted));
	pr_info("sockmap on %s (cgroup %s, BPF_F_PERMANENT %s, kernel bugs accepted: %s)",
		record->host_ifname, cgroup,
		features.permanent_flag ? "used" : "absent: apply_bytes", accepted);
	velo_sockmap_bpf_close(&bpf);
	return 0;

err_pods:
	pods_remove(bpf.pods_fd, record, &removed, owned, &n_owned);
	bpf_map_delete_elem(bpf.acct_fd, &cookie);
err_fall_back:
	velo_sockmap_bpf_close(&bpf);
	return fall_back(request, "attach failed", ret);
}

static int sockmap_detach(struct velo_request *request)
{
	struct velo_sm_addr owned[VELO_MAX_IPS];
	struct velo_sockmap_bpf bpf;
	unsigned n_owned;
	uint64_t cookie;
	int removed;

	/* The link first: no new sockets of this pod enter the sockhash. */
	link_unpin(request);
	if (velo_sockmap_bpf_open_pinned(&request->config.paths, &bpf))
		return 0; /* nothing loaded, nothing of ours in maps */
	/* Then the addresses: no peer's new socket pairs with it. */
	pods_remove(bpf.pods_fd, &request->record, &cookie, owned, &n_owned);
	if (cookie) {
		/*
		 * Then its connections: routed, they die with the veth; redirected,
		 * they'd flow on socket to socket. Out of the sockhash, both ends are
		 * plain TCP again (the peers' cached redirects go with their psocks).
		 */
		removed = velo_sockmap_forget_pod(bpf.sockhash_fd, cookie, owned, n_owned);
		if (removed)
			pr_info("sockmap: %d sockets of pod %s out of the sockhash", removed,
				request->record.host_ifname);
		bpf_map_delete_elem(bpf.acct_fd, &cookie);
	}
	velo_sockmap_bpf_close(&bpf);
	return 0;
}

static int check_link(const struct velo_request *request, int prog_fd)
{
	struct bpf_link_info link_info;
	char path[PATH_MAX];
	unsigned prog_id;

	if (velo_sockmap_link_path(&request->config.paths, request->record.host_ifname, path,
				   sizeof(path)))
		return -ENAMETOOLONG;
	if (velo_bpf_read_link("sockmap", path, prog_fd, &link_info, &prog_id))
		return -EIO;
	if (link_info.type != VELO_BPF_LINK_TYPE_CGROUP || link_info.prog_id != prog_id) {
		cni_error_detail("sockmap: link %s is not velo's sock_ops on a cgroup", path);
		return -EIO;
	}
	return 0;
}

/*
 * ADD left the pod routed (shaped, kernel bugs not accepted, no cgroup): no sock_ops link,
 * no pod entry peers could pair with.
 */
static int check_routed(const struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	struct velo_sockmap_bpf bpf;
	char path[PATH_MAX];
	int ret = 0;

	if (!velo_sockmap_link_path(&request->config.paths, record->host_ifname, path,
				    sizeof(path)) &&
	    !access(path, F_OK)) {
		cni_error_detail("sockmap: routed pod has a sock_ops link (%s)", path);
		ret = -EIO;
	}
	if (velo_sockmap_bpf_open_pinned(&request->config.paths, &bpf))
		return ret;
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_sm_addr key;
		struct velo_sm_pod pod;

		velo_sockmap_pod_key(&record->ips[i], &key);
		if (!bpf_map_lookup_elem(bpf.pods_fd, &key, &pod) &&
		    pod.owner == owner_of(record)) {
			cni_error_detail("sockmap: routed pod is in the pod map (address %u)", i);
			ret = -EIO;
		}
	}
	velo_sockmap_bpf_close(&bpf);
	return ret;
}

static int sockmap_check(struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	uint64_t owner = owner_of(record);
	struct velo_sockmap_bpf bpf;
	int ret;

	if (request->config.shaped)
		return check_routed(request);
	if (velo_sockmap_bpf_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("sockmap: velo's sockmap BPF objects are not pinned");
		return -EIO;
	}
	ret = check_link(request, bpf.sockops_prog_fd);
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_sm_addr key;
		struct velo_sm_pod pod;

		velo_sockmap_pod_key(&record->ips[i], &key);
		if (bpf_map_lookup_elem(bpf.pods_fd, &key, &pod) || pod.owner != owner) {
			cni_error_detail("sockmap: pod map has no entry of this pod for address %u",
					 i);
			ret = -EIO;
		}
	}
	velo_sockmap_bpf_close(&bpf);
	return ret;
}

const struct velo_feature velo_feature_sockmap = {
	.name = "sockmap",
	.bit = VELO_FEATURE_SOCKMAP,
	.wanted = sockmap_wanted,
	.attach = sockmap_attach,
	.detach = sockmap_detach,
	.check = sockmap_check,
	.check_routed = check_routed,
};
