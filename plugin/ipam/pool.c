// SPDX-License-Identifier: Apache-2.0
/* The allocation file of one range: checked, mapped, searched from its cursor. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/lock.h"
#include "ipam/pool.h"

static size_t pool_size(uint32_t n_slots)
{
	return sizeof(struct pool_header) + (size_t)n_slots * sizeof(struct pool_slot);
}

static int __attribute__((format(printf, 3, 4)))
corrupt(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static bool terminated(const char *text, size_t size)
{
	return memchr(text, '\0', size) != NULL;
}

int pool_parse(const void *data, size_t len, bool all_slots, char *why, size_t why_len)
{
	const struct pool_header *header = data;
	const struct pool_slot *slots;

	if (len < sizeof(*header))
		return corrupt(why, why_len, "%zu bytes, shorter than the header", len);
	if (memcmp(header->magic, POOL_MAGIC, sizeof(header->magic)))
		return corrupt(why, why_len, "no " POOL_MAGIC " magic");
	if (header->version != POOL_VERSION)
		return corrupt(why, why_len, "version %u, expected %u", header->version,
			       POOL_VERSION);
	if (header->slot_size != sizeof(struct pool_slot))
		return corrupt(why, why_len, "slot size %u, expected %u", header->slot_size,
			       (unsigned)sizeof(struct pool_slot));
	if (header->family != AF_INET && header->family != AF_INET6)
		return corrupt(why, why_len, "address family %u", header->family);
	if (header->n_slots == 0 || header->n_slots > 65536U)
		return corrupt(why, why_len, "%u slots, expected 1 to %u", header->n_slots, 65536U);
	if (len != pool_size(header->n_slots))
		return corrupt(why, why_len, "%zu bytes, expected %zu for its slots", len,
			       pool_size(header->n_slots));
	if (header->next >= header->n_slots)
		return corrupt(why, why_len, "cursor %u beyond its %u slots", header->next,
			       header->n_slots);
	if (!all_slots)
		return 0;
	slots = (const struct pool_slot *)(header + 1);
	for (uint32_t i = 0; i < header->n_slots; i++) {
		const struct pool_slot *slot = &slots[i];

		if (slot->state == POOL_SLOT_FREE)
			continue;
		if (slot->state != POOL_SLOT_LEASED)
			return corrupt(why, why_len, "slot %u: state %u", i, slot->state);
		if (!terminated(slot->ifname, sizeof(slot->ifname)) ||
		    !terminated(slot->container_id, sizeof(slot->container_id)) ||
		    !slot->container_id[0] || !slot->ifname[0])
			return corrupt(why, why_len, "slot %u: owner not a string", i);
	}
	return 0;
}

static bool all_zero(const void *data, size_t len)
{
	const uint8_t *bytes = data;

	for (size_t i = 0; i < len; i++)
		if (bytes[i])
			return false;
	return true;
}

/*
 * A new file (or one whose creation was cut short: nothing can have been
 * leased before its header existed) gets its size, then its header in one
 * write.
 */
static int pool_init(int fd, const struct pool_shape *shape)
{
	struct pool_header header = { .version = POOL_VERSION };

	memcpy(header.magic, POOL_MAGIC, sizeof(header.magic));
	header.slot_size = sizeof(struct pool_slot);
	header.family = (uint32_t)shape->family;
	header.n_slots = shape->n_slots;
	memcpy(header.start, shape->start, sizeof(header.start));
	if (ftruncate(fd, (off_t)pool_size(shape->n_slots)))
		return -errno;
	if (pwrite(fd, &header, sizeof(header), 0) != (ssize_t)sizeof(header))
		return errno ? -errno : -EIO;
	return 0;
}

static int pool_map(struct pool *pool, const struct pool_shape *shape, bool create, char *why,
		    size_t why_len)
{
	struct pool_header header;
	struct stat st;
	ssize_t got;
	int ret;

	if (fstat(pool->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return corrupt(why, why_len, "not a regular file");
	got = st.st_size ? pread(pool->fd, &header, sizeof(header), 0) : 0;
	if (got < 0)
		return -errno;
	if (got == 0 || (got == (ssize_t)sizeof(header) && all_zero(&header, sizeof(header)))) {
		if (!create)
			return -ENOENT;
		ret = pool_init(pool->fd, shape);
		if (ret)
			return ret;
		st.st_size = (off_t)pool_size(shape->n_slots);
	}
	pool->len = (size_t)st.st_size;
	pool->map = mmap(NULL, pool->len, PROT_READ | PROT_WRITE, MAP_SHARED, pool->fd, 0);
	if (pool->map == MAP_FAILED) {
		pool->map = NULL;
		return -errno;
	}
	ret = pool_parse(pool->map, pool->len, false, why, why_len);
	if (ret)
		return ret;
	pool->header = pool->map;
	pool->slots = (struct pool_slot *)(pool->header + 1);
	if (pool->header->family != (uint32_t)shape->family ||
	    pool->header->n_slots != shape->n_slots ||
	    memcmp(pool->header->start, shape->start, sizeof(shape->start))) {
		snprintf(why, why_len, "made for another range (%u addresses)",
			 pool->header->n_slots);
		return -ESTALE;
	}
	return 0;
}

int pool_open(const char *path, const struct pool_shape *shape, bool create, unsigned timeout_ms,
	      struct pool *pool, char *why, size_t why_len)
{
	struct stat st;
	int ret;

	memset(pool, 0, sizeof(*pool));
	why[0] = '\0';
	/* lstat: a dangling symlink is there (and unusable), not missing. */
	if (!create && lstat(path, &st))
		return -errno;
	/* The lock opens with O_NOFOLLOW: a symlink is never followed, for ADD or DEL. */
	pool->fd = lock_acquire(path, timeout_ms);
	if (pool->fd == -ELOOP)
		return corrupt(why, why_len, "a symbolic link, not followed");
	if (pool->fd == -EISDIR)
		return corrupt(why, why_len, "a directory");
	if (pool->fd < 0)
		return pool->fd;
	ret = pool_map(pool, shape, create, why, why_len);
	if (ret)
		pool_close(pool);
	return ret;
}

void pool_close(struct pool *pool)
{
	if (pool->map)
		munmap(pool->map, pool->len);
	if (pool->fd > 0)
		lock_release(pool->fd);
	memset(pool, 0, sizeof(*pool));
	pool->fd = -1;
}

/* Slots are read lazily: a damaged one counts as taken (never handed out) and owned by no one. */
static bool slot_leased(const struct pool_slot *slot)
{
	return slot->state != POOL_SLOT_FREE;
}

bool pool_owned(const struct pool *pool, uint32_t idx, const char *container_id, const char *ifname)
{
	const struct pool_slot *slot;

	if (idx >= pool->header->n_slots)
		return false;
	slot = &pool->slots[idx];
	return slot->state == POOL_SLOT_LEASED &&
	       strncmp(slot->container_id, container_id, sizeof(slot->container_id)) == 0 &&
	       strncmp(slot->ifname, ifname, sizeof(slot->ifname)) == 0;
}

int pool_alloc(struct pool *pool, const char *container_id, const char *ifname,
	       bool (*usable)(uint32_t idx, void *ctx), void *ctx, uint32_t *idx)
{
	uint32_t n = pool->header->n_slots, next = pool->header->next;

	if (strlen(container_id) >= POOL_ID_MAX || strlen(ifname) >= POOL_IFNAME_MAX)
		return -ENAMETOOLONG;
	for (uint32_t step = 0; step < n; step++) {
		uint32_t i = (next + step) % n;
		struct pool_slot *slot = &pool->slots[i];

		if (slot_leased(slot) || (usable && !usable(i, ctx)))
			continue;
		memset(slot->container_id, 0, sizeof(slot->container_id));
		memset(slot->ifname, 0, sizeof(slot->ifname));
		strcpy(slot->container_id, container_id);
		strcpy(slot->ifname, ifname);
		slot->since = (int64_t)time(NULL);
		/* The owner is complete before the slot counts as leased. */
		__atomic_store_n(&slot->state, POOL_SLOT_LEASED, __ATOMIC_RELEASE);
		pool->header->next = (i + 1) % n;
		*idx = i;
		return 0;
	}
	return -ENOSPC;
}

void pool_release(struct pool *pool, uint32_t idx)
{
	if (idx < pool->header->n_slots)
		__atomic_store_n(&pool->slots[idx].state, POOL_SLOT_FREE, __ATOMIC_RELEASE);
}

unsigned pool_repair(struct pool *pool)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < pool->header->n_slots; i++) {
		const struct pool_slot *slot = &pool->slots[i];

		if (slot->state == POOL_SLOT_FREE ||
		    (slot->state == POOL_SLOT_LEASED &&
		     terminated(slot->ifname, sizeof(slot->ifname)) &&
		     terminated(slot->container_id, sizeof(slot->container_id)) &&
		     slot->container_id[0] && slot->ifname[0]))
			continue;
		pool_release(pool, i);
		n++;
	}
	return n;
}

int pool_foreach(struct pool *pool, int (*fn)(struct pool *pool, uint32_t idx, void *ctx),
		 void *ctx)
{
	for (uint32_t i = 0; i < pool->header->n_slots; i++) {
		int ret;

		if (pool->slots[i].state != POOL_SLOT_LEASED)
			continue;
		ret = fn(pool, i, ctx);
		if (ret)
			return ret;
	}
	return 0;
}
