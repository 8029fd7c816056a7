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

struct collect {
	struct velo_svc_be *be;
	unsigned n, cap;
	unsigned any; /* usable endpoints of the service port anywhere */
	unsigned cut;
};

/* Appends the endpoints of one pass (local ones only when node is set). */
static int collect_pass(const struct velo_svc_state *state, const struct velo_k8s_svc *svc,
			const struct velo_k8s_port *port, int family, const char *node, int pass,
			struct collect *c)
{
	for (unsigned s = 0; s < state->n_slices; s++) {
		const struct velo_k8s_slice *slice = &state->slices[s];
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

/* Sorted, duplicates (the same endpoint in two slices) dropped. */
static void sort_unique(struct collect *c)
{
	unsigned out = 0;

	if (!c->n)
		return;
	qsort(c->be, c->n, sizeof(*c->be), cmp_be);
	for (unsigned i = 1; i < c->n; i++)
		if (cmp_be(&c->be[i], &c->be[out]))
			c->be[++out] = c->be[i];
	c->n = out + 1;
}

/* 1 with *c filled when the service port gets an entry, 0 when not, -ENOMEM. */
static int backends(const struct velo_svc_state *state, const struct velo_k8s_svc *svc,
		    const struct velo_k8s_port *port, int family, const char *node,
		    struct collect *c)
{
	for (int pass = 0; pass < N_PASSES && !c->n; pass++) {
		int ret = collect_pass(state, svc, port, family, svc->local ? node : NULL, pass, c);

		if (ret)
			return ret;
	}
	if (svc->local && !c->n && c->any)
		return 0; /* endpoints elsewhere only: kube-proxy's DROP stays in charge */
	sort_unique(c);
	return 1;
}

static int table_add(struct velo_svc_table *table, unsigned *cap, const struct velo_k8s_svc *svc,
		     const struct velo_k8s_ip *ip, const struct velo_k8s_port *port,
		     struct collect *c)
{
	struct velo_svc_entry *entry;

	if (table->n == *cap) {
		unsigned grown_cap = *cap ? *cap * 2 : 16;
		struct velo_svc_entry *grown = realloc(table->entries, grown_cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		table->entries = grown;
		*cap = grown_cap;
	}
	entry = &table->entries[table->n++];
	memset(entry, 0, sizeof(*entry));
	velo_svc_addr16(ip, entry->key.addr);
	entry->key.port = htons(port->port);
	entry->key.proto = port->proto;
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
	unsigned cap = 0;
	int ret = 0;

	memset(table, 0, sizeof(*table));
	for (unsigned s = 0; !ret && s < state->n_svcs; s++) {
		const struct velo_k8s_svc *svc = &state->svcs[s];

		for (unsigned i = 0; !ret && i < svc->n_ips; i++) {
			for (unsigned p = 0; !ret && p < svc->n_ports; p++) {
				struct collect c = {};

				ret = backends(state, svc, &svc->ports[p], svc->ips[i].family, node,
					       &c);
				table->cut += c.cut;
				if (ret == 1)
					ret = table_add(table, &cap, svc, &svc->ips[i],
							&svc->ports[p], &c);
				free(c.be);
			}
		}
	}
	if (ret) {
		velo_svc_table_free(table);
		return ret;
	}
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
