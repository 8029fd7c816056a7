// SPDX-License-Identifier: Apache-2.0
/* The identity numbering as text and back (numbering.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/numbering.h"

#define POLICY_ID_LAST 0x7fffffffu

static const char *const names[] = { "pods", "cidrs", "policies" };

static struct velo_pol_ids *space(struct velo_pol_numbering *numbering, unsigned i)
{
	return i == 0 ? &numbering->pods : i == 1 ? &numbering->cidrs : &numbering->policies;
}

void velo_pol_numbering_init(struct velo_pol_numbering *numbering)
{
	velo_pol_ids_init(&numbering->pods, VELO_ID_POD_FIRST, VELO_ID_CIDR_FIRST - 1);
	velo_pol_ids_init(&numbering->cidrs, VELO_ID_CIDR_FIRST, (uint32_t)VELO_ID_ANY - 1);
	velo_pol_ids_init(&numbering->policies, 1, POLICY_ID_LAST);
	numbering->ready = true;
}

char *velo_pol_numbering_text(const struct velo_pol_numbering *numbering)
{
	struct velo_pol_numbering *n = (struct velo_pol_numbering *)numbering;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	fprintf(out, "next %" PRIu32 " %" PRIu32 " %" PRIu32 "\n", n->pods.next, n->cidrs.next,
		n->policies.next);
	for (unsigned s = 0; s < 3; s++)
		for (unsigned i = 0; i < space(n, s)->n; i++)
			/* A key with a newline can't be a line: it is numbered anew. */
			if (!strchr(space(n, s)->items[i].key, '\n'))
				fprintf(out, "%s %" PRIu32 " %s\n", names[s],
					space(n, s)->items[i].id, space(n, s)->items[i].key);
	if (fclose(out)) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	return text;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* One space's items: ids inside it, each once, keys sorted and unique. */
static int check(const struct velo_pol_ids *ids)
{
	uint32_t *sorted = calloc(ids->n + 1, sizeof(*sorted));
	int ret = 0;

	if (!sorted)
		return -ENOMEM;
	for (unsigned i = 0; i < ids->n; i++) {
		if (ids->items[i].id < ids->first || ids->items[i].id > ids->last ||
		    (i && strcmp(ids->items[i - 1].key, ids->items[i].key) >= 0))
			ret = -EINVAL;
		sorted[i] = ids->items[i].id;
	}
	if (ids->next < ids->first || ids->next > ids->last)
		ret = -EINVAL;
	qsort(sorted, ids->n, sizeof(*sorted), cmp_u32);
	for (unsigned i = 1; !ret && i < ids->n; i++)
		if (sorted[i - 1] == sorted[i])
			ret = -EINVAL;
	free(sorted);
	return ret;
}

static int add(struct velo_pol_ids *ids, uint32_t id, const char *key)
{
	struct velo_pol_id *grown = realloc(ids->items, (ids->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	ids->items = grown;
	grown[ids->n].id = id;
	grown[ids->n].key = strdup(key);
	if (!grown[ids->n].key)
		return -ENOMEM;
	ids->n++;
	return 0;
}

int velo_pol_numbering_parse(const char *text, struct velo_pol_numbering *out)
{
	const char *line = text;
	int ret = 0, used;
	uint32_t next[3];

	memset(out, 0, sizeof(*out));
	velo_pol_numbering_init(out);
	if (sscanf(text, "next %" SCNu32 " %" SCNu32 " %" SCNu32 "%n", &next[0], &next[1], &next[2],
		   &used) != 3 ||
	    text[used] != '\n')
		ret = -EINVAL;
	for (unsigned s = 0; !ret && s < 3; s++)
		space(out, s)->next = next[s];
	line = ret ? NULL : text + used + 1;
	while (!ret && line && *line) {
		const char *end = strchr(line, '\n'), *key;
		char name[16], copy[4096];
		unsigned s;
		uint32_t id;

		if (!end || (size_t)(end - line) >= sizeof(copy)) {
			ret = -EINVAL;
			break;
		}
		memcpy(copy, line, (size_t)(end - line));
		copy[end - line] = '\0';
		if (sscanf(copy, "%15s %" SCNu32 " %n", name, &id, &used) != 2) {
			ret = -EINVAL;
			break;
		}
		key = copy + used;
		for (s = 0; s < 3 && strcmp(name, names[s]); s++)
			;
		ret = s < 3 && *key ? add(space(out, s), id, key) : -EINVAL;
		line = end + 1;
	}
	for (unsigned s = 0; !ret && s < 3; s++)
		ret = check(space(out, s));
	if (ret) {
		velo_pol_numbering_free(out);
		velo_pol_numbering_init(out);
		out->ready = ret != -ENOMEM;
	}
	return ret;
}
