// SPDX-License-Identifier: Apache-2.0
/*
 * velo.dev/egress-deny: "<cidr>[,<cidr>...]". velo_cg_deny_eg on the pod's
 * own cgroup drops (and counts) packets of the pod's sockets to the listed
 * prefixes, looked up in velo_deny_v1 under the pod cgroup's id; velo_tc_deny
 * on the host veth drops what AF_PACKET sockets send (egress_tc.c). Policy
 * fails closed: when it can't be attached the ADD fails (code 107); the
 * program itself drops everything until velo marked the cgroup ready.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <bpf/bpf.h>

#include "base/error.h"
#include "base/log.h"
#include "bpf/lib/velo_shared.h"
#include "cgroup/link.h"
#include "features/egress_policy.h"
#include "features/egress_tc.h"
#include "features/feature.h"

#define KIND_DENY "cg_deny_eg"

static bool egress_policy_wanted(const struct velo_request *request)
{
	return request->config.effective.n_deny > 0;
}

static void deny_key(const struct velo_cidr *cidr, uint64_t cgroup_id, struct velo_deny_key *key)
{
	memset(key, 0, sizeof(*key));
	key->cgroup_id = cgroup_id;
	if (cidr->family == AF_INET) {
		key->addr[10] = 0xff;
		key->addr[11] = 0xff;
		memcpy(&key->addr[12], cidr->addr, 4);
		key->prefixlen = VELO_DENY_PREFIX_BASE + 96 + cidr->prefix;
	} else {
		memcpy(key->addr, cidr->addr, 16);
		key->prefixlen = VELO_DENY_PREFIX_BASE + cidr->prefix;
	}
}

static bool key_listed(const struct velo_annotations *annotations, uint64_t cgroup_id,
		       const struct velo_deny_key *key)
{
	for (unsigned i = 0; i < annotations->n_deny; i++) {
		struct velo_deny_key listed;

		deny_key(&annotations->deny[i], cgroup_id, &listed);
		if (!memcmp(&listed, key, sizeof(listed)))
			return true;
	}
	return false;
}

/*
 * Removes entries that fail keep(): the trie can't be changed while walked,
 * so collect a batch, delete it, start over.
 */
typedef bool (*keep_fn)(const struct velo_deny_key *key, void *arg);

static void deny_remove_unless(int map_fd, keep_fn keep, void *arg)
{
	struct velo_deny_key batch[64], key, next;
	unsigned n;

	do {
		void *prev = NULL;

		n = 0;
		while (n < sizeof(batch) / sizeof(batch[0]) &&
		       !bpf_map_get_next_key(map_fd, prev, &next)) {
			key = next;
			prev = &key;
			if (!keep(&key, arg))
				batch[n++] = key;
		}
		for (unsigned i = 0; i < n; i++)
			if (bpf_map_delete_elem(map_fd, &batch[i]) && errno != ENOENT)
				pr_warn("egress-deny: remove stale entry: %s", strerror(errno));
	} while (n == sizeof(batch) / sizeof(batch[0]));
}

struct stale_ctx {
	const struct velo_annotations *annotations;
	uint64_t cgroup_id;
};

/* Keeps other pods' entries and this pod's listed ones. */
static bool keep_listed(const struct velo_deny_key *key, void *arg)
{
	const struct stale_ctx *ctx = arg;

	return key->cgroup_id != ctx->cgroup_id ||
	       key_listed(ctx->annotations, ctx->cgroup_id, key);
}

static int deny_write(struct cgroup_ctx *ctx, const struct velo_annotations *annotations)
{
	struct stale_ctx stale = { .annotations = annotations, .cgroup_id = ctx->cgroup_id };
	__u8 one = 1;

	/* New entries first, then stale ones (a restarted sandbox's old list): never a gap. */
	for (unsigned i = 0; i < annotations->n_deny; i++) {
		struct velo_deny_key key;

		deny_key(&annotations->deny[i], ctx->cgroup_id, &key);
		if (bpf_map_update_elem(ctx->bpf.deny_fd, &key, &one, BPF_ANY))
			return -errno;
	}
	deny_remove_unless(ctx->bpf.deny_fd, keep_listed, &stale);
	return 0;
}

static int egress_policy_attach(struct velo_request *request)
{
	const struct velo_annotations *annotations = &request->config.effective;
	struct cgroup_ctx ctx;
	int ret;

	ret = cgroup_ctx_open(request, "egress-deny", &ctx);
	if (ret)
		return ret;
	/*
	 * Entries before the link (under the cgroup lock no sweep can see them
	 * unlinked); the program drops everything until the cgroup is marked ready.
	 */
	ret = deny_write(&ctx, annotations);
	if (!ret)
		ret = cgroup_link_attach(&ctx, KIND_DENY, ctx.bpf.deny_eg_fd,
					 BPF_CGROUP_INET_EGRESS);
	if (!ret)
		ret = cgroup_config_write(&ctx, NULL);
	if (ret) {
		cni_fail(ret, VELO_ERR_FEATURE,
			 "egress-deny: can't enforce the deny list on cgroup %s: %s", ctx.path,
			 strerror(-ret));
		cgroup_ctx_close(&ctx);
		return ret;
	}
	ret = egress_tc_attach(request, &ctx.bpf, ctx.cgroup_id);
	if (ret)
		cni_fail(ret, VELO_ERR_FEATURE, "egress-deny: can't attach velo_tc_deny to %s: %s",
			 request->record.host_ifname, strerror(-ret));
	else
		pr_info("egress-deny: %u prefix(es) on cgroup %s (id %llu)", annotations->n_deny,
			ctx.path, (unsigned long long)ctx.cgroup_id);
	cgroup_ctx_close(&ctx);
	return ret;
}

/* Cgroup ids that still have a pinned velo deny link (any endpoint's). */
struct live_ids {
	uint64_t ids[1024];
	unsigned n;
};

static void live_ids_collect(const struct velo_request *request, struct live_ids *live)
{
	char dir[4096], path[4096 + 256];
	struct dirent *entry;
	DIR *links;

	live->n = 0;
	if (snprintf(dir, sizeof(dir), "%s/links", request->config.paths.bpffs_dir) >=
	    (int)sizeof(dir))
		return;
	links = opendir(dir);
	if (!links)
		return;
	while ((entry = readdir(links)) && live->n < sizeof(live->ids) / sizeof(live->ids[0])) {
		size_t len = strlen(entry->d_name), kind_len = strlen("_" KIND_DENY);
		struct bpf_link_info info;
		__u32 info_len = sizeof(info);
		int fd;

		if (len <= kind_len || strcmp(entry->d_name + len - kind_len, "_" KIND_DENY))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name) >= (int)sizeof(path))
			continue;
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &info_len) &&
		    info.type == BPF_LINK_TYPE_CGROUP && info.cgroup.cgroup_id)
			live->ids[live->n++] = info.cgroup.cgroup_id;
		close(fd);
	}
	closedir(links);
}

static bool keep_live(const struct velo_deny_key *key, void *arg)
{
	const struct live_ids *live = arg;

	/* More live links than we could list: keep everything rather than guess. */
	if (live->n == sizeof(live->ids) / sizeof(live->ids[0]))
		return true;
	for (unsigned i = 0; i < live->n; i++)
		if (live->ids[i] == key->cgroup_id)
			return true;
	return false;
}

static int egress_policy_detach(struct velo_request *request)
{
	struct velo_bpf_cgroup bpf;
	struct live_ids live;
	int lock_fd = cgroup_lock(request);

	if (lock_fd < 0)
		return lock_fd;
	cgroup_link_unpin(request, KIND_DENY);
	if (velo_bpf_cgroup_open_pinned(&request->config.paths, &bpf)) {
		egress_tc_detach(request, NULL);
		cgroup_unlock(lock_fd);
		return 0;
	}
	egress_tc_detach(request, &bpf);
	/*
	 * Entries of cgroups no velo deny link is on any more: ours unless a
	 * newer sandbox took the link over, and any a crash left behind.
	 */
	live_ids_collect(request, &live);
	deny_remove_unless(bpf.deny_fd, keep_live, &live);
	velo_bpf_cgroup_close(&bpf);
	cgroup_unlock(lock_fd);
	return 0;
}

static int egress_policy_check(struct velo_request *request)
{
	const struct velo_annotations *annotations = &request->config.effective;
	struct velo_bpf_cgroup bpf;
	struct bpf_link_info info;
	__u32 info_len = sizeof(info);
	char path[4096];
	int ret = 0, fd;

	if (velo_bpf_cgroup_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("egress-deny: velo's cgroup programs are not pinned");
		return -EIO;
	}
	if (cgroup_link_check(request, "egress-deny", KIND_DENY, BPF_CGROUP_INET_EGRESS,
			      bpf.deny_eg_fd, 0)) {
		ret = -EIO;
		goto out;
	}
	/* Every listed prefix is in the trie under the link's cgroup. */
	memset(&info, 0, sizeof(info));
	if (velo_bpf_link_path(&request->config.paths, request->record.host_ifname, KIND_DENY, path,
			       sizeof(path)) ||
	    (fd = bpf_obj_get(path)) < 0) {
		ret = -EIO;
		goto out;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		ret = -EIO;
	close(fd);
	if (!ret && egress_tc_check(request, &bpf, info.cgroup.cgroup_id))
		ret = -EIO;
	for (unsigned i = 0; !ret && i < annotations->n_deny; i++) {
		struct velo_deny_key key;
		__u8 value;

		deny_key(&annotations->deny[i], info.cgroup.cgroup_id, &key);
		if (bpf_map_lookup_elem(bpf.deny_fd, &key, &value)) {
			cni_error_detail("egress-deny: deny entry %u missing for cgroup %llu", i,
					 (unsigned long long)info.cgroup.cgroup_id);
			ret = -EIO;
		}
	}
out:
	velo_bpf_cgroup_close(&bpf);
	return ret;
}

const struct velo_feature velo_feature_egress_policy = {
	.name = "egress-deny",
	.bit = VELO_FEATURE_EGRESS_POLICY,
	.wanted = egress_policy_wanted,
	.attach = egress_policy_attach,
	.detach = egress_policy_detach,
	.check = egress_policy_check,
};
