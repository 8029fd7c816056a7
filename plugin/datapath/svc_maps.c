// SPDX-License-Identifier: Apache-2.0
/* A service table into velo_svc_v1 and velo_svc_be_v1 (svc_maps.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "datapath/svc_maps.h"

static int cmp_be(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_svc_be));
}

/* The entry of table with key, or NULL (the table is sorted). */
static const struct velo_svc_entry *table_find(const struct velo_svc_table *table,
					       const struct velo_svc_key *key)
{
	unsigned lo = 0, hi = table->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int cmp = memcmp(key, &table->entries[mid].key, sizeof(*key));

		if (!cmp)
			return &table->entries[mid];
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void slots_delete(int be_fd, __u32 id, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		struct velo_svc_be_key key = { .id = id, .slot = i };

		bpf_map_delete_elem(be_fd, &key);
	}
}

/* The old set (value; its backends old_be, or NULL: in the map) equals entry's. */
static bool same_backends(int be_fd, const struct velo_svc *value, const struct velo_svc_be *old_be,
			  const struct velo_svc_entry *entry)
{
	if (value->count != entry->value.count || value->flags != entry->value.flags ||
	    value->affinity_s != entry->value.affinity_s)
		return false;
	if (old_be)
		return !value->count || !memcmp(old_be, entry->be, value->count * sizeof(*old_be));
	for (unsigned i = 0; i < value->count; i++) {
		struct velo_svc_be_key key = { .id = value->id, .slot = i };
		struct velo_svc_be be;

		if (bpf_map_lookup_elem(be_fd, &key, &be) || memcmp(&be, &entry->be[i], sizeof(be)))
			return false;
	}
	return true;
}

#define MAP_KEYS_MAX (2 * VELO_MAX_SVC_BE)

/* Every key of a hash map, in *keys (malloc'd). */
static int map_keys(int fd, size_t key_size, void **keys, unsigned *n)
{
	unsigned cap = 0;
	char *list = NULL, *prev = NULL;

	*n = 0;
	for (;;) {
		if (*n == cap) {
			char *grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(list, cap * key_size);
			if (!grown) {
				free(list);
				return -ENOMEM;
			}
			list = grown;
			prev = *n ? list + (*n - 1) * key_size : NULL;
		}
		if (bpf_map_get_next_key(fd, prev, list + *n * key_size)) {
			int err = errno;

			if (err != ENOENT) {
				free(list);
				return -err;
			}
			break;
		}
		prev = list + *n * key_size;
		/* A walk restarted by a concurrent delete can't go on forever. */
		if (++*n > MAP_KEYS_MAX)
			break;
	}
	*keys = list;
	return 0;
}

/* The next id not used by any slot or service (0 is never one). */
static __u32 next_id_after(__u32 *next)
{
	if (++*next == 0)
		++*next;
	return *next;
}

static int write_entry(const struct velo_svc_bpf *bpf, const struct velo_svc_entry *entry, __u32 id)
{
	struct velo_svc value = entry->value;

	for (unsigned i = 0; i < value.count; i++) {
		struct velo_svc_be_key key = { .id = id, .slot = i };

		if (bpf_map_update_elem(bpf->be_fd, &key, &entry->be[i], BPF_ANY))
			return -errno;
	}
	value.id = id;
	if (bpf_map_update_elem(bpf->svc_fd, &entry->key, &value, BPF_ANY))
		return -errno;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct velo_svc *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Slots of ids no service points at, or beyond its count (a sync that died midway). */
static void remove_orphan_slots(const struct velo_svc_bpf *bpf)
{
	struct velo_svc_be_key *slots = NULL;
	struct velo_svc_key *keys = NULL;
	struct velo_svc *values = NULL;
	unsigned n_slots, n_keys, n = 0;

	if (map_keys(bpf->svc_fd, sizeof(*keys), (void **)&keys, &n_keys))
		return;
	values = calloc(n_keys ? n_keys : 1, sizeof(*values));
	if (!values || map_keys(bpf->be_fd, sizeof(*slots), (void **)&slots, &n_slots))
		goto out;
	for (unsigned i = 0; i < n_keys; i++)
		if (!bpf_map_lookup_elem(bpf->svc_fd, &keys[i], &values[n]))
			n++;
	qsort(values, n, sizeof(*values), cmp_id);
	for (unsigned i = 0; i < n_slots; i++) {
		struct velo_svc probe = { .id = slots[i].id };
		const struct velo_svc *owner = bsearch(&probe, values, n, sizeof(*values), cmp_id);

		if (!owner || slots[i].slot >= owner->count)
			bpf_map_delete_elem(bpf->be_fd, &slots[i]);
	}
out:
	free(slots);
	free(values);
	free(keys);
}

void velo_svc_sync_free(struct velo_svc_sync *sync)
{
	free(sync->gone);
	sync->gone = NULL;
	sync->n_gone = 0;
}

/*
 * The old set's backends that no EndpointSlice of the service port's Service
 * lists any more, into sync->gone: their connections are stale. Those that are
 * only not ready, or terminating, and those of a Service (or port) that went
 * are left alone, as kube-proxy leaves established flows alone.
 */
static void note_gone(int be_fd, const struct velo_svc_key *key, const struct velo_svc *old,
		      const struct velo_svc_be *old_be, const struct velo_svc_table *table,
		      struct velo_svc_sync *sync)
{
	if (!velo_svc_table_has_port(table, key))
		return;
	for (unsigned i = 0; i < old->count; i++) {
		struct velo_svc_be_key be_key = { .id = old->id, .slot = i };
		struct velo_svc_bc_key *grown, gone = { .svc = *key };

		if (old_be)
			gone.be = old_be[i];
		else if (bpf_map_lookup_elem(be_fd, &be_key, &gone.be))
			continue;
		if (velo_svc_table_knows(table, key, &gone.be))
			continue;
		grown = realloc(sync->gone, (sync->n_gone + 1) * sizeof(*grown));
		if (!grown)
			return; /* those connections then live on: no worse than without */
		sync->gone = grown;
		sync->gone[sync->n_gone++] = gone;
	}
}

/* Per-backend counters of backends no longer in their service's set. */
static void remove_stale_backend_counters(const struct velo_svc_bpf *bpf,
					  const struct velo_svc_table *table)
{
	struct velo_svc_bc_key *keys;
	unsigned n;

	if (map_keys(bpf->bc_fd, sizeof(*keys), (void **)&keys, &n))
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct velo_svc_entry *entry = table_find(table, &keys[i].svc);

		if (!entry || !entry->value.count ||
		    !bsearch(&keys[i].be, entry->be, entry->value.count, sizeof(*entry->be),
			     cmp_be))
			bpf_map_delete_elem(bpf->bc_fd, &keys[i]);
	}
	free(keys);
}

/* The map's max_entries and id, or 0 when they can't be read. */
static unsigned map_capacity(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*id = 0;
		return 0;
	}
	*id = info.id;
	return info.max_entries;
}

/*
 * Counters of the old set's backends that the new set (NULL: none) doesn't
 * have: what remove_stale_backend_counters does, for one service port.
 */
static void drop_counters(int bc_fd, const struct velo_svc_key *key, const struct velo_svc *old,
			  const struct velo_svc_be *old_be, const struct velo_svc_entry *entry)
{
	for (unsigned i = 0; i < old->count; i++) {
		struct velo_svc_bc_key bc = { .svc = *key, .be = old_be[i] };

		if (!entry || !entry->value.count ||
		    !bsearch(&bc.be, entry->be, entry->value.count, sizeof(*entry->be), cmp_be))
			bpf_map_delete_elem(bc_fd, &bc);
	}
}

/* A service port whose set couldn't be written: it goes to kube-proxy, with no slots. */
static void fall_back(const struct velo_svc_bpf *bpf, const struct velo_svc_entry *entry,
		      const struct velo_svc *old, bool had, __u32 id, unsigned *used)
{
	slots_delete(bpf->be_fd, id, entry->value.count);
	if (had) {
		bpf_map_delete_elem(bpf->svc_fd, &entry->key);
		slots_delete(bpf->be_fd, old->id, old->count);
		*used -= old->count < *used ? old->count : *used;
	}
}

struct sync_pass {
	const struct velo_svc_bpf *bpf;
	const struct velo_svc_table *table;
	struct velo_svc_sync *sync;
	__u32 next_id;
	unsigned used; /* slots in the backend map */
	/* Slots the sets may take: room is left to write the largest beside its old set. */
	unsigned room;
	bool *done; /* per table entry: the shrinking pass dealt with it */
	__u32 *ids; /* per table entry: its id in the maps after the sync; 0: none */
	/* What the last sync wrote, when the maps hold just that; NULL: read the maps. */
	const struct velo_svc_table *prev;
	int first_err;
};

/* The service port's entry before this sync (and its backends, NULL: in the map): 1, or 0. */
static bool old_entry(const struct sync_pass *pass, const struct velo_svc_key *key,
		      struct velo_svc *old, const struct velo_svc_be **old_be)
{
	const struct velo_svc_entry *was;

	*old_be = NULL;
	if (!pass->prev)
		return !bpf_map_lookup_elem(pass->bpf->svc_fd, key, old);
	was = table_find(pass->prev, key);
	if (!was)
		return false;
	*old = was->value;
	*old_be = was->be;
	return true;
}

/*
 * Writes the table's changed and new sets; shrinking = true: only those that
 * shrink (run first, so that the slots in use only grow after them). A set
 * that doesn't fit, or whose write fails, sends its service port to
 * kube-proxy and fails the sync (velod tries again).
 */
static void write_sets(struct sync_pass *pass, bool shrinking)
{
	const struct velo_svc_bpf *bpf = pass->bpf;

	for (unsigned i = 0; i < pass->table->n; i++) {
		const struct velo_svc_entry *entry = &pass->table->entries[i];
		unsigned count = entry->value.count;
		const struct velo_svc_be *old_be;
		struct velo_svc old = {};
		bool had;
		__u32 id;
		int ret;

		if (pass->done[i])
			continue;
		had = old_entry(pass, &entry->key, &old, &old_be);
		if (had && same_backends(bpf->be_fd, &old, old_be, entry)) {
			pass->done[i] = true;
			pass->ids[i] = old.id;
			pass->sync->unchanged++;
			continue;
		}
		if (shrinking != (had && count <= old.count))
			continue;
		pass->done[i] = true;
		if (had)
			note_gone(bpf->be_fd, &entry->key, &old, old_be, pass->table, pass->sync);
		id = next_id_after(&pass->next_id);
		ret = (long)pass->used + count - (had ? old.count : 0) > (long)pass->room ? -E2BIG
											  : 0;
		if (!ret)
			ret = write_entry(bpf, entry, id);
		if (ret) {
			pr_warn("services: write %s: %s; it goes to kube-proxy until a later sync",
				entry->name, strerror(-ret));
			fall_back(bpf, entry, &old, had, id, &pass->used);
			if (had && old_be)
				drop_counters(bpf->bc_fd, &entry->key, &old, old_be, entry);
			pass->sync->fell_back++;
			if (!pass->first_err)
				pass->first_err = ret;
			continue;
		}
		pass->used += count;
		pass->ids[i] = id;
		if (had && old_be)
			drop_counters(bpf->bc_fd, &entry->key, &old, old_be, entry);
		if (had) {
			slots_delete(bpf->be_fd, old.id, old.count);
			pass->used -= old.count < pass->used ? old.count : pass->used;
			pass->sync->changed++;
		} else {
			pass->sync->added++;
		}
	}
}

/* The maps' slots, ids and services gone from the table (removed), read from the maps. */
static int read_maps(struct sync_pass *pass)
{
	const struct velo_svc_bpf *bpf = pass->bpf;
	struct velo_svc_be_key *slots;
	struct velo_svc_key *keys;
	unsigned n_keys, n_slots;
	int ret;

	ret = map_keys(bpf->svc_fd, sizeof(*keys), (void **)&keys, &n_keys);
	if (ret)
		return ret;
	ret = map_keys(bpf->be_fd, sizeof(*slots), (void **)&slots, &n_slots);
	if (ret) {
		free(keys);
		return ret;
	}
	for (unsigned i = 0; i < n_slots; i++)
		if (slots[i].id > pass->next_id)
			pass->next_id = slots[i].id;
	free(slots);
	pass->used = n_slots;
	/* Services gone first, so ids only grow. */
	for (unsigned i = 0; i < n_keys; i++) {
		const struct velo_svc_entry *entry = table_find(pass->table, &keys[i]);
		struct velo_svc value;

		if (bpf_map_lookup_elem(bpf->svc_fd, &keys[i], &value))
			continue;
		if (value.id > pass->next_id)
			pass->next_id = value.id;
		if (!entry) {
			note_gone(bpf->be_fd, &keys[i], &value, NULL, pass->table, pass->sync);
			bpf_map_delete_elem(bpf->svc_fd, &keys[i]);
			bpf_map_delete_elem(bpf->cnt_fd, &keys[i]);
			slots_delete(bpf->be_fd, value.id, value.count);
			pass->used -= value.count < pass->used ? value.count : pass->used;
			pass->sync->removed++;
		}
	}
	free(keys);
	return 0;
}

/* Services of the last sync gone from the table, removed without reading the maps. */
static void remove_gone(struct sync_pass *pass)
{
	const struct velo_svc_bpf *bpf = pass->bpf;

	for (unsigned i = 0; i < pass->prev->n; i++) {
		const struct velo_svc_entry *was = &pass->prev->entries[i];

		if (table_find(pass->table, &was->key))
			continue;
		note_gone(bpf->be_fd, &was->key, &was->value, was->be, pass->table, pass->sync);
		bpf_map_delete_elem(bpf->svc_fd, &was->key);
		bpf_map_delete_elem(bpf->cnt_fd, &was->key);
		slots_delete(bpf->be_fd, was->value.id, was->value.count);
		drop_counters(bpf->bc_fd, &was->key, &was->value, was->be, NULL);
		pass->used -= was->value.count < pass->used ? was->value.count : pass->used;
		pass->sync->removed++;
	}
}

void velo_svc_written_free(struct velo_svc_written *written)
{
	velo_svc_table_free(&written->table);
	memset(written, 0, sizeof(*written));
}

/* What this sync left in the maps, into written; not valid after any error. */
static void remember(const struct sync_pass *pass, struct velo_svc_written *written, __u32 svc_id,
		     __u32 be_id)
{
	const struct velo_svc_table *table = pass->table;
	struct velo_svc_table *kept;

	velo_svc_written_free(written);
	kept = &written->table;
	kept->entries = calloc(table->n ? table->n : 1, sizeof(*kept->entries));
	if (!kept->entries)
		return;
	for (unsigned i = 0; i < table->n; i++) {
		const struct velo_svc_entry *entry = &table->entries[i];
		struct velo_svc_entry *copy = &kept->entries[kept->n];

		if (!pass->ids[i])
			continue; /* not in the maps: tried again */
		*copy = *entry;
		copy->value.id = pass->ids[i];
		copy->be = malloc(entry->value.count ? entry->value.count * sizeof(*entry->be) : 1);
		if (!copy->be) {
			velo_svc_written_free(written);
			return;
		}
		memcpy(copy->be, entry->be, entry->value.count * sizeof(*entry->be));
		kept->n++;
	}
	written->svc_map_id = svc_id;
	written->be_map_id = be_id;
	written->next_id = pass->next_id;
	written->used = pass->used;
	written->valid = !pass->first_err && svc_id && be_id;
}

int velo_svc_maps_update(const struct velo_svc_bpf *bpf, const struct velo_svc_table *table,
			 struct velo_svc_written *written, struct velo_svc_sync *sync)
{
	struct sync_pass pass = { .bpf = bpf, .table = table, .sync = sync };
	unsigned capacity, largest = 0;
	__u32 svc_id, be_id;
	int ret = 0;

	memset(sync, 0, sizeof(*sync));
	pass.done = calloc(table->n ? table->n : 1, sizeof(*pass.done));
	pass.ids = calloc(table->n ? table->n : 1, sizeof(*pass.ids));
	if (!pass.done || !pass.ids) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < table->n; i++)
		if (table->entries[i].value.count > largest)
			largest = table->entries[i].value.count;
	map_capacity(bpf->svc_fd, &svc_id);
	capacity = map_capacity(bpf->be_fd, &be_id);
	pass.room = capacity > largest ? capacity - largest : 0;

	if (written && written->valid && written->svc_map_id == svc_id &&
	    written->be_map_id == be_id) {
		pass.prev = &written->table;
		pass.next_id = written->next_id;
		pass.used = written->used;
		remove_gone(&pass);
	} else {
		ret = read_maps(&pass);
		if (ret)
			goto out;
	}
	write_sets(&pass, true);
	write_sets(&pass, false);
	/* Read back when the maps may hold what the last sync doesn't say, or after an error. */
	if (!pass.prev || pass.first_err) {
		remove_orphan_slots(bpf);
		remove_stale_backend_counters(bpf, table);
	}
	if (written)
		remember(&pass, written, svc_id, be_id);
	ret = pass.first_err;
out:
	if (ret && written)
		written->valid = false;
	free(pass.ids);
	free(pass.done);
	return ret;
}

int velo_svc_maps_sync(const struct velo_svc_bpf *bpf, const struct velo_svc_table *table,
		       struct velo_svc_sync *sync)
{
	return velo_svc_maps_update(bpf, table, NULL, sync);
}
