/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One allocation file per range: a header and a fixed table of lease slots,
 * one per address, mmap'd and changed under one flock. Allocating, finding a
 * lease by address and releasing it touch one slot, however many pods the
 * node has. A slot's owner is written before its state byte, and released by
 * clearing that byte first, so a kill -9 at any point leaves each slot either
 * free or leased to a complete owner.
 */
#ifndef VELO_IPAM_POOL_H
#define VELO_IPAM_POOL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOL_MAGIC "VELOPOOL"
#define POOL_VERSION 1U
#define POOL_ID_MAX 256 /* container id, with the NUL */
#define POOL_IFNAME_MAX 16

enum pool_slot_state {
	POOL_SLOT_FREE = 0,
	POOL_SLOT_LEASED = 1,
};

struct pool_header {
	char magic[8];
	uint32_t version;
	uint32_t slot_size;
	uint32_t family;
	uint32_t n_slots;
	uint32_t next; /* where the next search starts: released addresses rest */
	uint32_t reserved;
	uint8_t start[16]; /* the address of slot 0 */
	uint8_t pad[208];
};

struct pool_slot {
	uint8_t state; /* enum pool_slot_state */
	uint8_t pad[7];
	int64_t since; /* unix time of the lease */
	char ifname[POOL_IFNAME_MAX];
	char container_id[POOL_ID_MAX];
};

_Static_assert(sizeof(struct pool_header) == 256, "pool header is 256 bytes");
_Static_assert(sizeof(struct pool_slot) == 288, "pool slot is 288 bytes");

struct pool {
	int fd;
	void *map;
	size_t len;
	struct pool_header *header;
	struct pool_slot *slots;
};

/* What a file must hold to be this range's. */
struct pool_shape {
	int family;
	uint8_t start[16];
	uint32_t n_slots;
};

/*
 * Checks an allocation file's bytes: header, size, and (all_slots) every slot.
 * 0, or -EBADMSG with why filled.
 */
int pool_parse(const void *data, size_t len, bool all_slots, char *why, size_t why_len);
/*
 * Opens path locked (exclusive flock, waiting up to timeout_ms: -EAGAIN) and
 * maps it. A missing file is created for shape when create, else -ENOENT. A
 * file of another shape is -ESTALE, a corrupt one -EBADMSG (why filled), as is
 * anything not a regular file: a symlink is never followed (O_NOFOLLOW).
 */
int pool_open(const char *path, const struct pool_shape *shape, bool create, unsigned timeout_ms,
	      struct pool *pool, char *why, size_t why_len);
void pool_close(struct pool *pool);
/* Whether slot idx is leased to container_id/ifname. */
bool pool_owned(const struct pool *pool, uint32_t idx, const char *container_id,
		const char *ifname);
/*
 * Leases the first free slot from the cursor on (wrapping) that usable
 * accepts, to container_id/ifname, and moves the cursor past it. -ENOSPC when
 * none is left.
 */
int pool_alloc(struct pool *pool, const char *container_id, const char *ifname,
	       bool (*usable)(uint32_t idx, void *ctx), void *ctx, uint32_t *idx);
void pool_release(struct pool *pool, uint32_t idx);
/*
 * Frees the slots no ADD can leave (a crash leaves each slot free or leased to
 * a complete owner): a state byte neither free nor leased, or a leased slot
 * whose owner is not a string. They count as taken until then, so only GC
 * calls this. Returns how many it freed.
 */
unsigned pool_repair(struct pool *pool);
/* Calls fn for each leased slot; a nonzero return stops the walk and is returned. */
int pool_foreach(struct pool *pool, int (*fn)(struct pool *pool, uint32_t idx, void *ctx),
		 void *ctx);

#endif
