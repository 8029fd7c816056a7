// SPDX-License-Identifier: Apache-2.0
/* Range sets over allocation files: allocate, release, verify and sweep leases by owner. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/log.h"
#include "ipam/allocator.h"
#include "ipam/pool.h"

static int pool_path(const struct ipam_conf *conf, const char *network,
		     const struct ipam_range *range, char *buf, size_t len)
{
	char subnet[64];

	velo_addr_fmt(range->family, range->subnet, range->prefix, subnet, sizeof(subnet));
	*strchr(subnet, '/') = '_';
	if (snprintf(buf, len, "%s/%s/%s", conf->data_dir, network, subnet) >= (int)len)
		return cni_fail(-ENAMETOOLONG, CNI_ERR_INVALID_CONFIG, "ipam.dataDir: too long");
	return 0;
}

/* Opens range's file; a missing one is -ENOENT (recorded only when create). */
static int open_range(const struct ipam_conf *conf, const char *network,
		      const struct ipam_range *range, bool create, struct pool *pool)
{
	struct pool_shape shape = { .family = range->family, .n_slots = range->n_slots };
	char path[PATH_MAX], why[128], text[160];
	int ret;

	ret = pool_path(conf, network, range, path, sizeof(path));
	if (ret)
		return ret;
	memcpy(shape.start, range->start, sizeof(shape.start));
	ret = pool_open(path, &shape, create, IPAM_LOCK_TIMEOUT_MS, pool, why, sizeof(why));
	if (!ret || (ret == -ENOENT && !create))
		return ret;
	ipam_range_fmt(range, text, sizeof(text));
	if (ret == -EAGAIN)
		return cni_fail(ret, CNI_ERR_TRY_AGAIN,
				"allocation file %s of range %s is busy; try again later", path,
				text);
	if (ret == -EBADMSG || ret == -ESTALE)
		return cni_fail(ret, VELO_ERR_IPAM,
				"allocation file %s of range %s: %s; nothing allocated (see "
				"docs/ipam.md, \"A damaged allocation file\")",
				path, text, why);
	return cni_fail(ret, VELO_ERR_IPAM, "allocation file %s of range %s: %s", path, text,
			strerror(-ret));
}

struct usable_ctx {
	const struct ipam_conf *conf;
	const struct ipam_range *range;
	const char *network;
};

/* Neither the gateway nor an address host-local still leases on this node. */
static bool usable(uint32_t idx, void *data)
{
	const struct usable_ctx *ctx = data;
	char path[PATH_MAX], text[64];
	uint8_t addr[16];
	struct stat st;

	ipam_range_addr(ctx->range, idx, addr);
	if (!memcmp(addr, ctx->range->gateway, 16))
		return false;
	if (!ctx->conf->host_local_dir[0])
		return true;
	velo_addr_fmt(ctx->range->family, addr, -1, text, sizeof(text));
	if (snprintf(path, sizeof(path), "%s/%s/%s", ctx->conf->host_local_dir, ctx->network,
		     text) >= (int)sizeof(path) ||
	    lstat(path, &st))
		return true;
	pr_info("IPAM: %s skipped: host-local leases it (%s)", text, path);
	return false;
}

/* -ENOSPC when every range of the set is full (nothing recorded). */
static int allocate_in_set(const struct ipam_conf *conf, const struct ipam_range_set *set,
			   const struct ipam_owner *owner, struct ipam_lease *lease)
{
	for (unsigned r = 0; r < set->n_ranges; r++) {
		struct usable_ctx ctx = { conf, &set->ranges[r], owner->network };
		struct pool pool;
		uint32_t idx;
		int ret;

		ret = open_range(conf, owner->network, &set->ranges[r], true, &pool);
		if (ret)
			return ret;
		ret = pool_alloc(&pool, owner->container_id, owner->ifname, usable, &ctx, &idx);
		pool_close(&pool);
		if (ret == -ENOSPC)
			continue;
		if (ret)
			return cni_fail(ret, VELO_ERR_IPAM, "IPAM: lease for %s/%s: %s",
					owner->container_id, owner->ifname, strerror(-ret));
		lease->range = &set->ranges[r];
		lease->family = set->ranges[r].family;
		ipam_range_addr(&set->ranges[r], idx, lease->addr);
		return 0;
	}
	return -ENOSPC;
}

static int exhausted(const struct ipam_range_set *set, unsigned s)
{
	char ranges[512] = "", text[160];

	for (unsigned r = 0; r < set->n_ranges; r++) {
		size_t len = strlen(ranges);

		snprintf(ranges + len, sizeof(ranges) - len, "%s%s", r ? ", " : "",
			 ipam_range_fmt(&set->ranges[r], text, sizeof(text)));
	}
	return cni_fail(-ENOSPC, VELO_ERR_IPAM,
			"IPAM: no free address in ipam.ranges[%u]: %s is exhausted", s, ranges);
}

static int release_lease(const struct ipam_conf *conf, const struct ipam_owner *owner,
			 const struct ipam_lease *lease)
{
	struct velo_ip ip = { .family = lease->family };

	memcpy(ip.addr, lease->addr, sizeof(ip.addr));
	return ipam_release(conf, owner, &ip, 1);
}

int ipam_allocate(const struct ipam_conf *conf, const struct ipam_owner *owner,
		  struct ipam_lease *leases)
{
	for (unsigned s = 0; s < conf->n_sets; s++) {
		int ret = allocate_in_set(conf, &conf->sets[s], owner, &leases[s]);

		if (ret == -ENOSPC)
			ret = exhausted(&conf->sets[s], s);
		if (!ret)
			continue;
		while (s-- > 0)
			if (release_lease(conf, owner, &leases[s]))
				pr_err("IPAM: undo of a partial allocation failed; DEL or GC "
				       "releases it");
		return ret;
	}
	return 0;
}

struct owner_walk {
	const struct ipam_owner *owner;
	unsigned released;
};

static int release_owned(struct pool *pool, uint32_t idx, void *data)
{
	struct owner_walk *walk = data;

	if (pool_owned(pool, idx, walk->owner->container_id, walk->owner->ifname)) {
		pool_release(pool, idx);
		walk->released++;
	}
	return 0;
}

static int release_in_range(const struct ipam_conf *conf, const struct ipam_owner *owner,
			    const struct ipam_range *range, const struct velo_ip *known,
			    unsigned n_known)
{
	struct owner_walk walk = { .owner = owner };
	struct pool pool;
	uint32_t idx;
	int ret;

	ret = open_range(conf, owner->network, range, false, &pool);
	if (ret == -ENOENT)
		return 0;
	/* DEL stays best effort: a file velo can't read holds no lease it could free. */
	if (ret == -EBADMSG || ret == -ESTALE) {
		pr_warn("IPAM: release of %s/%s skipped: %s", owner->container_id, owner->ifname,
			cni_error_get()->msg);
		return 0;
	}
	if (ret)
		return ret;
	if (!n_known) {
		pool_foreach(&pool, release_owned, &walk);
	} else {
		for (unsigned i = 0; i < n_known; i++)
			if (ipam_range_index(range, known[i].family, known[i].addr, &idx))
				release_owned(&pool, idx, &walk);
	}
	pool_close(&pool);
	if (walk.released)
		pr_debug("IPAM: released %u lease(s) of %s/%s", walk.released, owner->container_id,
			 owner->ifname);
	return 0;
}

/* Whether any known address lies in range (its file needs opening). */
static bool known_in(const struct ipam_range *range, const struct velo_ip *known, unsigned n)
{
	uint32_t idx;

	for (unsigned i = 0; i < n; i++)
		if (ipam_range_index(range, known[i].family, known[i].addr, &idx))
			return true;
	return false;
}

int ipam_release(const struct ipam_conf *conf, const struct ipam_owner *owner,
		 const struct velo_ip *known, unsigned n_known)
{
	int first = 0;

	for (unsigned s = 0; s < conf->n_sets; s++)
		for (unsigned r = 0; r < conf->sets[s].n_ranges; r++) {
			const struct ipam_range *range = &conf->sets[s].ranges[r];
			int ret;

			if (n_known && !known_in(range, known, n_known))
				continue;
			ret = release_in_range(conf, owner, range, known, n_known);
			if (ret && !first)
				first = ret;
		}
	return first;
}

static const struct ipam_range *range_of(const struct ipam_conf *conf, const struct velo_ip *ip,
					 uint32_t *idx)
{
	for (unsigned s = 0; s < conf->n_sets; s++)
		for (unsigned r = 0; r < conf->sets[s].n_ranges; r++)
			if (ipam_range_index(&conf->sets[s].ranges[r], ip->family, ip->addr, idx))
				return &conf->sets[s].ranges[r];
	return NULL;
}

int ipam_verify(const struct ipam_conf *conf, const struct ipam_owner *owner,
		const struct velo_ip *ips, unsigned n_ips)
{
	for (unsigned i = 0; i < n_ips; i++) {
		const struct ipam_range *range;
		struct pool pool;
		char text[64];
		uint32_t idx;
		bool owned;
		int ret;

		velo_addr_fmt(ips[i].family, ips[i].addr, -1, text, sizeof(text));
		range = range_of(conf, &ips[i], &idx);
		if (!range)
			return cni_fail(-ENOENT, VELO_ERR_IPAM,
					"IPAM: %s is in none of ipam.ranges", text);
		ret = open_range(conf, owner->network, range, false, &pool);
		if (ret == -ENOENT)
			return cni_fail(ret, VELO_ERR_IPAM, "IPAM: no lease of %s: %s/%s has none",
					text, owner->container_id, owner->ifname);
		if (ret)
			return ret;
		owned = pool_owned(&pool, idx, owner->container_id, owner->ifname);
		pool_close(&pool);
		if (!owned)
			return cni_fail(-ENOENT, VELO_ERR_IPAM, "IPAM: %s is not leased to %s/%s",
					text, owner->container_id, owner->ifname);
	}
	return 0;
}

struct sweep_walk {
	bool (*keep)(const char *container_id, const char *ifname, void *ctx);
	void *ctx;
	unsigned released;
};

static int sweep_one(struct pool *pool, uint32_t idx, void *data)
{
	struct sweep_walk *walk = data;
	const struct pool_slot *slot = &pool->slots[idx];

	if (!memchr(slot->container_id, '\0', sizeof(slot->container_id)) ||
	    !memchr(slot->ifname, '\0', sizeof(slot->ifname)))
		return 0;
	if (walk->keep(slot->container_id, slot->ifname, walk->ctx))
		return 0;
	pr_info("IPAM GC: released the lease of %s/%s", slot->container_id, slot->ifname);
	pool_release(pool, idx);
	walk->released++;
	return 0;
}

int ipam_sweep(const struct ipam_conf *conf, const char *network,
	       bool (*keep)(const char *container_id, const char *ifname, void *ctx), void *ctx,
	       unsigned *n)
{
	struct sweep_walk walk = { .keep = keep, .ctx = ctx };
	int first = 0;

	for (unsigned s = 0; s < conf->n_sets; s++)
		for (unsigned r = 0; r < conf->sets[s].n_ranges; r++) {
			struct pool pool;
			unsigned repaired;
			char text[160];
			int ret;

			ret = open_range(conf, network, &conf->sets[s].ranges[r], false, &pool);
			if (ret == -ENOENT)
				continue;
			/* As for DEL: a file velo can't use holds no lease it could free. */
			if (ret == -EBADMSG || ret == -ESTALE) {
				pr_warn("IPAM GC: %s; skipped", cni_error_get()->msg);
				continue;
			}
			if (ret) {
				first = first ? first : ret;
				continue;
			}
			repaired = pool_repair(&pool);
			if (repaired)
				pr_warn("IPAM GC: freed %u damaged slot(s) of range %s (a state or "
					"owner no ADD writes)",
					repaired,
					ipam_range_fmt(&conf->sets[s].ranges[r], text,
						       sizeof(text)));
			pool_foreach(&pool, sweep_one, &walk);
			pool_close(&pool);
		}
	*n = walk.released;
	return first;
}
