// SPDX-License-Identifier: Apache-2.0
/* kube-proxy's ClusterIP semantics over Services and EndpointSlices (svc_table.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/svc_table.h"

void velo_svc_addr16(const struct velo_k8s_ip *ip, __u8 out[16])
{
	memset(out, 0, 16);
	if (ip->family == AF_INET) {
		out[10] = 0xff;
		out[11] = 0xff;
		memcpy(&out[12], ip->addr, 4);
	} else {
		memcpy(out, ip->addr, 16);
	}
}

const char *velo_svc_addr_text(const __u8 addr[16], char *buf, size_t len)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(addr, mapped, sizeof(mapped)))
		return inet_ntop(AF_INET, &addr[12], buf, (socklen_t)len);
	return inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
}

void velo_svc_table_free(struct velo_svc_table *table)
{
	for (unsigned i = 0; i < table->n; i++)
		free(table->entries[i].be);
	free(table->entries);
	free(table->ports);
	free(table->known);
	memset(table, 0, sizeof(*table));
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct velo_svc_entry *)a)->key,
		      &((const struct velo_svc_entry *)b)->key, sizeof(struct velo_svc_key));
}

static int cmp_be(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_svc_be));
}

static int cmp_port(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_svc_key));
}

static int cmp_pair(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_svc_bc_key));
}

int velo_svc_table_has_port(const struct velo_svc_table *table, const struct velo_svc_key *key)
{
	return table->n_ports &&
	       bsearch(key, table->ports, table->n_ports, sizeof(*key), cmp_port) != NULL;
}

int velo_svc_table_knows(const struct velo_svc_table *table, const struct velo_svc_key *key,
			 const struct velo_svc_be *be)
{
	struct velo_svc_bc_key pair = { .svc = *key, .be = *be };

	return table->n_known &&
	       bsearch(&pair, table->known, table->n_known, sizeof(pair), cmp_pair) != NULL;
}

static void svc_key(const struct velo_k8s_ip *ip, const struct velo_k8s_port *port,
		    struct velo_svc_key *key)
{
	memset(key, 0, sizeof(*key));
	velo_svc_addr16(ip, key->addr);
	key->port = htons(port->port);
	key->proto = port->proto;
}

/* Room for one more of size in *array (n used, *cap allocated): 0 or -ENOMEM. */
static int grow(void **array, unsigned n, unsigned *cap, size_t size)
{
	unsigned grown_cap;
	void *grown;

	if (n < *cap)
		return 0;
	grown_cap = *cap ? *cap * 2 : 16;
	grown = realloc(*array, grown_cap * size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = grown_cap;
	return 0;
}

/* Endpoint classes, in the order kube-proxy falls back through them. */
enum { PASS_READY, PASS_TERMINATING, N_PASSES };

static bool eligible(const struct velo_k8s_endpoint *ep, int pass)
{
	return pass == PASS_READY ? ep->ready : ep->serving && ep->terminating;
}

static bool usable(const struct velo_k8s_endpoint *ep)
{
	return eligible(ep, PASS_READY) || eligible(ep, PASS_TERMINATING);
}

static const struct velo_k8s_port *slice_port(const struct velo_k8s_slice *slice,
					      const struct velo_k8s_port *port)
{
	for (unsigned i = 0; i < slice->n_ports; i++)
		if (slice->ports[i].proto == port->proto &&
		    !strcmp(slice->ports[i].name, port->name))
			return &slice->ports[i];
	return NULL;
}

static bool is_slice_of(const struct velo_k8s_slice *slice, const struct velo_k8s_svc *svc,
			int family)
{
	return slice->family == family && !strcmp(slice->ns, svc->ns) &&
	       !strcmp(slice->service, svc->name);
}

/*
 * The EndpointSlices sorted by (namespace, service, family), each run in the
 * state's order: a service finds its slices by binary search, so that a table
 * is built in n log n, not services x slices.
 */
struct slice_index {
	const struct velo_k8s_slice **sorted;
	unsigned n;
};

/* The slices of one service and family. */
struct slice_run {
	const struct velo_k8s_slice *const *slices;
	unsigned n;
};

static int cmp_slice_owner(const struct velo_k8s_slice *slice, const char *ns, const char *svc,
			   int family)
{
	int cmp = strcmp(slice->ns, ns);

	if (!cmp)
		cmp = strcmp(slice->service, svc);
	if (!cmp)
		cmp = slice->family < family ? -1 : slice->family > family;
	return cmp;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct velo_k8s_slice *x = *(const struct velo_k8s_slice *const *)a;
	const struct velo_k8s_slice *y = *(const struct velo_k8s_slice *const *)b;
	int cmp = cmp_slice_owner(x, y->ns, y->service, y->family);

	/* One array: address order is the state's order. */
	return cmp ? cmp : x < y ? -1 : x > y;
}

static int slice_index_build(const struct velo_svc_state *state, struct slice_index *index)
{
	index->n = state->n_slices;
	index->sorted = calloc(index->n ? index->n : 1, sizeof(*index->sorted));
	if (!index->sorted)
		return -ENOMEM;
	for (unsigned i = 0; i < index->n; i++)
		index->sorted[i] = &state->slices[i];
	qsort(index->sorted, index->n, sizeof(*index->sorted), cmp_slice);
	return 0;
}

static struct slice_run slices_of(const struct slice_index *index, const struct velo_k8s_svc *svc,
				  int family)
{
	unsigned lo = 0, hi = index->n, end;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (cmp_slice_owner(index->sorted[mid], svc->ns, svc->name, family) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo;
	     end < index->n && !cmp_slice_owner(index->sorted[end], svc->ns, svc->name, family);
	     end++)
		;
	return (struct slice_run){ .slices = index->sorted + lo, .n = end - lo };
}

struct known_caps {
	unsigned ports, known;
};

/* The service port and every endpoint its slices list, usable or not, into table. */
static int note_known(const struct slice_run *run, const struct velo_k8s_svc *svc,
		      const struct velo_k8s_ip *ip, const struct velo_k8s_port *port,
		      struct velo_svc_table *table, struct known_caps *caps)
{
	struct velo_svc_bc_key pair = {};

	svc_key(ip, port, &pair.svc);
	if (grow((void **)&table->ports, table->n_ports, &caps->ports, sizeof(pair.svc)))
		return -ENOMEM;
	table->ports[table->n_ports++] = pair.svc;
	for (unsigned s = 0; s < run->n; s++) {
		const struct velo_k8s_slice *slice = run->slices[s];
		const struct velo_k8s_port *target;

		if (!is_slice_of(slice, svc, ip->family) || !(target = slice_port(slice, port)))
			continue;
		for (unsigned e = 0; e < slice->n_eps; e++) {
			if (grow((void **)&table->known, table->n_known, &caps->known,
				 sizeof(pair)))
				return -ENOMEM;
			velo_svc_addr16(&slice->eps[e].ip, pair.be.addr);
			pair.be.port = htons(target->port);
			table->known[table->n_known++] = pair;
		}
	}
	return 0;
}

/* Sorts n elements of size and drops duplicates; the count left. */
static unsigned sort_unique_array(void *array, unsigned n, size_t size,
				  int (*cmp)(const void *, const void *))
{
	char *base = array;
	unsigned out = 0;

	if (!n)
		return 0;
	qsort(base, n, size, cmp);
	for (unsigned i = 1; i < n; i++)
		if (cmp(base + i * size, base + out * size))
			memmove(base + ++out * size, base + i * size, size);
	return out + 1;
}

struct collect {
	struct velo_svc_be *be;
	unsigned n, cap;
	unsigned any; /* usable endpoints of the service port anywhere */
	unsigned cut;
};

/* Appends the endpoints of one pass (local ones only when node is set). */
static int collect_pass(const struct slice_run *run, const struct velo_k8s_svc *svc,
			const struct velo_k8s_port *port, int family, const char *node, int pass,
			struct collect *c)
{
	for (unsigned s = 0; s < run->n; s++) {
		const struct velo_k8s_slice *slice = run->slices[s];
		const struct velo_k8s_port *target;

		if (!is_slice_of(slice, svc, family) || !(target = slice_port(slice, port)))
			continue;
		for (unsigned e = 0; e < slice->n_eps; e++) {
			const struct velo_k8s_endpoint *ep = &slice->eps[e];
			struct velo_svc_be be = {};

			if (pass == PASS_READY && usable(ep))
				c->any++;
			if (!eligible(ep, pass) || (node && strcmp(ep->node, node)))
				continue;
			velo_svc_addr16(&ep->ip, be.addr);
			be.port = htons(target->port);
			if (c->n == VELO_SVC_MAX_BACKENDS) {
				c->cut++;
				continue;
			}
			if (c->n == c->cap) {
				unsigned cap = c->cap ? c->cap * 2 : 8;
				struct velo_svc_be *grown = realloc(c->be, cap * sizeof(*grown));

				if (!grown)
					return -ENOMEM;
				c->be = grown;
				c->cap = cap;
			}
			c->be[c->n++] = be;
		}
	}
	return 0;
}

/* 1 with *c filled when the service port gets an entry, 0 when not, -ENOMEM. */
static int backends(const struct slice_run *run, const struct velo_k8s_svc *svc,
		    const struct velo_k8s_port *port, int family, const char *node,
		    struct collect *c)
{
	for (int pass = 0; pass < N_PASSES && !c->n; pass++) {
		int ret = collect_pass(run, svc, port, family, svc->local ? node : NULL, pass, c);

		if (ret)
			return ret;
	}
	if (svc->local && !c->n && c->any)
		return 0; /* endpoints elsewhere only: kube-proxy's DROP stays in charge */
	/* Sorted, duplicates (the same endpoint in two slices) dropped. */
	c->n = sort_unique_array(c->be, c->n, sizeof(*c->be), cmp_be);
	return 1;
}

static int table_add(struct velo_svc_table *table, unsigned *cap, const struct velo_k8s_svc *svc,
		     const struct velo_k8s_ip *ip, const struct velo_k8s_port *port,
		     struct collect *c)
{
	struct velo_svc_entry *entry;

	if (grow((void **)&table->entries, table->n, cap, sizeof(*entry)))
		return -ENOMEM;
	entry = &table->entries[table->n++];
	memset(entry, 0, sizeof(*entry));
	svc_key(ip, port, &entry->key);
	entry->value.count = (__u16)c->n;
	if (svc->affinity) {
		entry->value.flags |= VELO_SVC_F_AFFINITY;
		entry->value.affinity_s = svc->affinity_s;
	}
	entry->be = c->be;
	c->be = NULL;
	if (port->name[0])
		snprintf(entry->name, sizeof(entry->name), "%s/%s:%s/%s", svc->ns, svc->name,
			 port->name, port->proto == IPPROTO_UDP ? "udp" : "tcp");
	else
		snprintf(entry->name, sizeof(entry->name), "%s/%s:%u/%s", svc->ns, svc->name,
			 port->port, port->proto == IPPROTO_UDP ? "udp" : "tcp");
	return 0;
}

int velo_svc_table_build(const struct velo_svc_state *state, const char *node,
			 struct velo_svc_table *table)
{
	struct slice_index index;
	struct known_caps caps = {};
	unsigned cap = 0;
	int ret;

	memset(table, 0, sizeof(*table));
	ret = slice_index_build(state, &index);
	for (unsigned s = 0; !ret && s < state->n_svcs; s++) {
		const struct velo_k8s_svc *svc = &state->svcs[s];

		for (unsigned i = 0; !ret && i < svc->n_ips; i++) {
			struct slice_run run = slices_of(&index, svc, svc->ips[i].family);

			for (unsigned p = 0; !ret && p < svc->n_ports; p++) {
				struct collect c = {};

				ret = note_known(&run, svc, &svc->ips[i], &svc->ports[p], table,
						 &caps);
				if (!ret)
					ret = backends(&run, svc, &svc->ports[p],
						       svc->ips[i].family, node, &c);
				table->cut += c.cut;
				if (ret == 1)
					ret = table_add(table, &cap, svc, &svc->ips[i],
							&svc->ports[p], &c);
				free(c.be);
			}
		}
	}
	free(index.sorted);
	if (ret) {
		velo_svc_table_free(table);
		return ret;
	}
	table->n_ports =
		sort_unique_array(table->ports, table->n_ports, sizeof(*table->ports), cmp_port);
	table->n_known =
		sort_unique_array(table->known, table->n_known, sizeof(*table->known), cmp_pair);
	if (table->n)
		qsort(table->entries, table->n, sizeof(*table->entries), cmp_key);
	/* Two services can't share a ClusterIP and port; if input says so, the first wins. */
	for (unsigned i = 1, out = 0; i <= table->n; i++) {
		if (i == table->n) {
			table->n = out + 1;
			break;
		}
		if (cmp_key(&table->entries[i], &table->entries[out]))
			table->entries[++out] = table->entries[i];
		else
			free(table->entries[i].be);
	}
	return 0;
}
