// SPDX-License-Identifier: Apache-2.0
/*
 * Policy tables into velo_pol_ip_v1, velo_pol_sub_v1, velo_pol_rule_v1,
 * velo_pol_tier_v1 and velo_pol_st_v1.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "datapath/policy_diff.h"
#include "datapath/policy_maps.h"
#include "datapath/policy_rejudge.h"

/* A walk restarted by a concurrent delete can't go on forever. */
#define MAP_ENTRIES_MAX (2u * VELO_MAX_POL_RULES)

/*
 * Every entry of a map (key_size bytes of key, then value_size of value, as
 * the tables lay them out) into *entries, sorted by cmp.
 */
static int map_read(int fd, size_t key_size, size_t value_size,
		    int (*cmp)(const void *a, const void *b), void **entries, unsigned *n)
{
	size_t size = key_size + value_size;
	char *list = NULL, key[64], prev[64];
	bool first = true;
	unsigned cap = 0;

	*n = 0;
	for (;;) {
		if (bpf_map_get_next_key(fd, first ? NULL : prev, key)) {
			if (errno != ENOENT) {
				free(list);
				return -errno;
			}
			break;
		}
		if (*n == cap) {
			char *grown = realloc(list, (cap = cap ? cap * 2 : 256) * size);

			if (!grown) {
				free(list);
				return -ENOMEM;
			}
			list = grown;
		}
		memcpy(list + *n * size, key, key_size);
		memcpy(prev, key, key_size);
		first = false;
		/* An entry deleted between the key and the value is not there. */
		if (!bpf_map_lookup_elem(fd, key, list + *n * size + key_size))
			(*n)++;
		if (*n >= MAP_ENTRIES_MAX)
			break;
	}
	if (*n)
		qsort(list, *n, size, cmp);
	*entries = list;
	return 0;
}

static int written_read(const struct velo_policy_bpf *bpf, struct velo_pol_written *written)
{
	int ret;

	velo_pol_written_free(written);
	ret = map_read(bpf->ip_fd, sizeof(struct velo_pol_ip_key), sizeof(struct velo_pol_ip),
		       velo_pol_ip_cmp, (void **)&written->ips, &written->n_ips);
	if (!ret)
		ret = map_read(bpf->subject_fd, sizeof(__u32), sizeof(struct velo_pol_subject),
			       velo_pol_subject_cmp, (void **)&written->subjects,
			       &written->n_subjects);
	if (!ret)
		ret = map_read(bpf->rule_fd, sizeof(struct velo_pol_rule_key),
			       sizeof(struct velo_pol_rule), velo_pol_rule_cmp,
			       (void **)&written->rules, &written->n_rules);
	if (!ret)
		ret = map_read(bpf->tier_fd, sizeof(struct velo_pol_rule_key),
			       sizeof(struct velo_pol_tier_rule), velo_pol_rule_cmp,
			       (void **)&written->tier_rules, &written->n_tier_rules);
	if (ret)
		velo_pol_written_free(written);
	return ret;
}

/* One map's part: its diff's puts (put) or deletes (!put). */
struct map_part {
	int fd;
	size_t key_size, size;
	const void *old, *new;
	struct velo_pol_diff diff;
};

static int apply(struct map_part *part, bool put, unsigned *count)
{
	for (unsigned i = 0; i < (put ? part->diff.n_put : part->diff.n_del); i++) {
		const char *entry = put ? (const char *)part->new + part->diff.put[i] * part->size
					: (const char *)part->old + part->diff.del[i] * part->size;

		if (put) {
			if (bpf_map_update_elem(part->fd, entry, entry + part->key_size, BPF_ANY))
				return -errno;
		} else if (bpf_map_delete_elem(part->fd, entry) && errno != ENOENT) {
			return -errno;
		}
		(*count)++;
	}
	return 0;
}

/* The revision moves only when a verdict can change (rejudge): flows keep their entries else. */
static int bump_revision(const struct velo_policy_bpf *bpf, bool active, bool rejudge,
			 __u32 *revision)
{
	struct velo_pol_state state = {};
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf->state_fd, &zero, &state))
		return -errno;
	*revision = state.revision;
	if (!rejudge && state.active == (__u32)active)
		return 0;
	state.revision += rejudge;
	state.active = active;
	if (bpf_map_update_elem(bpf->state_fd, &zero, &state, BPF_ANY))
		return -errno;
	*revision = state.revision;
	return 0;
}

/* A copy of the tables' four maps' entries as written. */
static int keep(struct velo_pol_written *written, const struct velo_pol_tables *tables)
{
	struct velo_pol_written copy = {
		.valid = true,
		.n_ips = tables->n_ips,
		.n_subjects = tables->n_subjects,
		.n_rules = tables->n_rules,
		.n_tier_rules = tables->n_tier_rules,
		.ips = malloc((tables->n_ips + 1) * sizeof(*tables->ips)),
		.subjects = malloc((tables->n_subjects + 1) * sizeof(*tables->subjects)),
		.rules = malloc((tables->n_rules + 1) * sizeof(*tables->rules)),
		.tier_rules = malloc((tables->n_tier_rules + 1) * sizeof(*tables->tier_rules)),
	};

	velo_pol_written_free(written);
	if (!copy.ips || !copy.subjects || !copy.rules || !copy.tier_rules) {
		velo_pol_written_free(&copy);
		return -ENOMEM;
	}
	memcpy(copy.ips, tables->ips, tables->n_ips * sizeof(*tables->ips));
	memcpy(copy.subjects, tables->subjects, tables->n_subjects * sizeof(*tables->subjects));
	memcpy(copy.rules, tables->rules, tables->n_rules * sizeof(*tables->rules));
	memcpy(copy.tier_rules, tables->tier_rules,
	       tables->n_tier_rules * sizeof(*tables->tier_rules));
	*written = copy;
	return 0;
}

int velo_pol_maps_write(const struct velo_policy_bpf *bpf, const struct velo_pol_tables *tables,
			struct velo_pol_written *written, struct velo_pol_write_stats *stats)
{
	enum { RULES, TIERS, SUBJECTS, IPS, PARTS };
	struct map_part parts[PARTS] = {
		[RULES] = { .fd = bpf->rule_fd,
			    .key_size = sizeof(struct velo_pol_rule_key),
			    .size = sizeof(struct velo_pol_rule_entry) },
		[TIERS] = { .fd = bpf->tier_fd,
			    .key_size = sizeof(struct velo_pol_rule_key),
			    .size = sizeof(struct velo_pol_tier_entry) },
		[SUBJECTS] = { .fd = bpf->subject_fd,
			       .key_size = sizeof(__u32),
			       .size = sizeof(struct velo_pol_subject_entry) },
		[IPS] = { .fd = bpf->ip_fd,
			  .key_size = sizeof(struct velo_pol_ip_key),
			  .size = sizeof(struct velo_pol_ip_entry) },
	};
	int ret = 0;

	_Static_assert(sizeof(struct velo_pol_rule_entry) ==
			       sizeof(struct velo_pol_rule_key) + sizeof(struct velo_pol_rule),
		       "a rule entry is its key then its value");
	_Static_assert(sizeof(struct velo_pol_tier_entry) ==
			       sizeof(struct velo_pol_rule_key) + sizeof(struct velo_pol_tier_rule),
		       "a tier entry is its key then its value");
	_Static_assert(sizeof(struct velo_pol_subject_entry) ==
			       sizeof(__u32) + sizeof(struct velo_pol_subject),
		       "a subject entry is its key then its value");
	_Static_assert(sizeof(struct velo_pol_ip_entry) ==
			       sizeof(struct velo_pol_ip_key) + sizeof(struct velo_pol_ip),
		       "an address entry is its key then its value");
	memset(stats, 0, sizeof(*stats));
	if (!written->valid) {
		ret = written_read(bpf, written);
		if (ret)
			return ret;
	}
	written->valid = false; /* until this write is whole */
	parts[RULES].old = written->rules;
	parts[RULES].new = tables->rules;
	parts[TIERS].old = written->tier_rules;
	parts[TIERS].new = tables->tier_rules;
	parts[SUBJECTS].old = written->subjects;
	parts[SUBJECTS].new = tables->subjects;
	parts[IPS].old = written->ips;
	parts[IPS].new = tables->ips;
	ret = velo_pol_diff(written->rules, written->n_rules, tables->rules, tables->n_rules,
			    parts[RULES].size, velo_pol_rule_cmp, &parts[RULES].diff);
	if (!ret)
		ret = velo_pol_diff(written->tier_rules, written->n_tier_rules, tables->tier_rules,
				    tables->n_tier_rules, parts[TIERS].size, velo_pol_rule_cmp,
				    &parts[TIERS].diff);
	if (!ret)
		ret = velo_pol_diff(written->subjects, written->n_subjects, tables->subjects,
				    tables->n_subjects, parts[SUBJECTS].size, velo_pol_subject_cmp,
				    &parts[SUBJECTS].diff);
	if (!ret)
		ret = velo_pol_diff(written->ips, written->n_ips, tables->ips, tables->n_ips,
				    parts[IPS].size, velo_pol_ip_cmp, &parts[IPS].diff);
	/* Puts in the order rules, tiers, subjects, addresses; removals addresses first. */
	for (unsigned i = 0; !ret && i < PARTS; i++)
		ret = apply(&parts[i], true, &stats->put);
	for (unsigned i = PARTS; !ret && i-- > 0;)
		ret = apply(&parts[i], false, &stats->removed);
	if (!ret)
		ret = bump_revision(
			bpf, tables->active,
			velo_pol_rejudge(
				tables, written->ips, written->n_ips, &parts[IPS].diff,
				parts[RULES].diff.n_put || parts[RULES].diff.n_del ||
					parts[TIERS].diff.n_put || parts[TIERS].diff.n_del ||
					parts[SUBJECTS].diff.n_put || parts[SUBJECTS].diff.n_del),
			&stats->revision);
	for (unsigned i = 0; i < PARTS; i++)
		velo_pol_diff_free(&parts[i].diff);
	if (!ret)
		ret = keep(written, tables);
	return ret;
}

void velo_pol_written_free(struct velo_pol_written *written)
{
	free(written->ips);
	free(written->subjects);
	free(written->rules);
	free(written->tier_rules);
	memset(written, 0, sizeof(*written));
}
