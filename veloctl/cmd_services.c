// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl services: each service port in velo_svc_v1 (docs/services.md),
 * its backends as the programs see them now, how many connections (and
 * datagrams sent) each backend got and how many the service port translated
 * and refused. Names come from velod's <runDir>/services.json (the maps hold
 * addresses only); "-" when velod hasn't written it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/lib/velo_svc.h"
#include "datapath/pins.h"
#include "datapath/svc_table.h"
#include "cmd_services.h"
#include "ctl.h"

#define NAMES_MAX (64u << 20)

struct maps {
	int svc, be, cnt, bc;
};

/* velod's names file, parsed; NULL when there is none. */
static cJSON *read_names(const struct ctl *ctl)
{
	char path[PATH_MAX], *text;
	cJSON *json = NULL;
	long size;
	FILE *file;

	if (snprintf(path, sizeof(path), "%s/services.json", ctl->paths.run_dir) >=
	    (int)sizeof(path))
		return NULL;
	file = fopen(path, "re");
	if (!file)
		return NULL;
	if (!fseek(file, 0, SEEK_END) && (size = ftell(file)) > 0 &&
	    (unsigned long)size < NAMES_MAX && !fseek(file, 0, SEEK_SET) &&
	    (text = malloc((size_t)size + 1))) {
		if (fread(text, 1, (size_t)size, file) == (size_t)size) {
			text[size] = '\0';
			json = cJSON_Parse(text);
		}
		free(text);
	}
	fclose(file);
	return json;
}

static const char *name_of(const cJSON *names, const char *vip, unsigned port, const char *proto)
{
	const cJSON *item;

	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(names, "servicePorts")) {
		const cJSON *ip = cJSON_GetObjectItemCaseSensitive(item, "clusterIP");
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(item, "port");
		const cJSON *pr = cJSON_GetObjectItemCaseSensitive(item, "protocol");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");

		if (cJSON_IsString(ip) && cJSON_IsNumber(p) && cJSON_IsString(pr) &&
		    cJSON_IsString(name) && !strcmp(ip->valuestring, vip) &&
		    p->valueint == (int)port && !strcmp(pr->valuestring, proto))
			return name->valuestring;
	}
	return "-";
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_svc_key));
}

static cJSON *port_json(const struct maps *maps, const cJSON *names, const struct velo_svc_key *key)
{
	char vip[INET6_ADDRSTRLEN], addr[INET6_ADDRSTRLEN];
	const char *proto = key->proto == IPPROTO_UDP ? "UDP" : "TCP";
	struct velo_svc_counters counters = {};
	cJSON *item, *backends;
	struct velo_svc value;

	if (bpf_map_lookup_elem(maps->svc, key, &value))
		return NULL; /* removed meanwhile */
	bpf_map_lookup_elem(maps->cnt, key, &counters);
	velo_svc_addr_text(key->addr, vip, sizeof(vip));
	item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "name", name_of(names, vip, ntohs(key->port), proto));
	cJSON_AddStringToObject(item, "clusterIP", vip);
	cJSON_AddNumberToObject(item, "port", ntohs(key->port));
	cJSON_AddStringToObject(item, "protocol", proto);
	if (value.flags & VELO_SVC_F_AFFINITY)
		cJSON_AddNumberToObject(item, "affinitySeconds", value.affinity_s);
	else
		cJSON_AddNullToObject(item, "affinitySeconds");
	cJSON_AddNumberToObject(item, "translations", (double)counters.translations);
	cJSON_AddNumberToObject(item, "refused", (double)counters.refused);
	backends = cJSON_AddArrayToObject(item, "backends");
	for (unsigned i = 0; i < value.count; i++) {
		struct velo_svc_be_key be_key = { .id = value.id, .slot = i };
		struct velo_svc_bc_key bc_key = { .svc = *key };
		cJSON *backend;
		__u64 conns = 0;

		if (bpf_map_lookup_elem(maps->be, &be_key, &bc_key.be))
			continue;
		bpf_map_lookup_elem(maps->bc, &bc_key, &conns);
		backend = cJSON_CreateObject();
		cJSON_AddStringToObject(backend, "address",
					velo_svc_addr_text(bc_key.be.addr, addr, sizeof(addr)));
		cJSON_AddNumberToObject(backend, "port", ntohs(bc_key.be.port));
		cJSON_AddNumberToObject(backend, "connections", (double)conns);
		cJSON_AddItemToArray(backends, backend);
	}
	return item;
}

static int ports_json(const struct maps *maps, const cJSON *names, cJSON *list)
{
	struct velo_svc_key *keys = NULL, key, *prev = NULL;
	size_t n = 0, cap = 0;

	while (!bpf_map_get_next_key(maps->svc, prev, &key)) {
		if (n == cap) {
			struct velo_svc_key *grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(keys, cap * sizeof(*grown));
			if (!grown) {
				free(keys);
				return -ENOMEM;
			}
			keys = grown;
		}
		keys[n] = key;
		prev = &keys[n++];
		if (n > VELO_MAX_SVC)
			break;
	}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n; i++) {
		cJSON *item = port_json(maps, names, &keys[i]);

		if (item)
			cJSON_AddItemToArray(list, item);
	}
	free(keys);
	return 0;
}

static void print_text(const cJSON *json)
{
	const cJSON *item, *backend;

	printf("%-36s %-28s %5s %10s %8s %s\n", "SERVICE PORT", "CLUSTER-IP:PORT/PROTO", "BACK",
	       "TRANSLATED", "REFUSED", "AFFINITY");
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(json, "servicePorts")) {
		const cJSON *aff = cJSON_GetObjectItemCaseSensitive(item, "affinitySeconds");
		const char *vip = cJSON_GetObjectItemCaseSensitive(item, "clusterIP")->valuestring;
		char where[96], affinity[24];

		snprintf(where, sizeof(where), strchr(vip, ':') ? "[%s]:%d/%s" : "%s:%d/%s", vip,
			 cJSON_GetObjectItemCaseSensitive(item, "port")->valueint,
			 cJSON_GetObjectItemCaseSensitive(item, "protocol")->valuestring);
		if (cJSON_IsNumber(aff))
			snprintf(affinity, sizeof(affinity), "ClientIP %ds", aff->valueint);
		else
			snprintf(affinity, sizeof(affinity), "-");
		printf("%-36s %-28s %5d %10.0f %8.0f %s\n",
		       cJSON_GetObjectItemCaseSensitive(item, "name")->valuestring, where,
		       cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(item, "backends")),
		       cJSON_GetObjectItemCaseSensitive(item, "translations")->valuedouble,
		       cJSON_GetObjectItemCaseSensitive(item, "refused")->valuedouble, affinity);
		cJSON_ArrayForEach (backend, cJSON_GetObjectItemCaseSensitive(item, "backends")) {
			const char *addr =
				cJSON_GetObjectItemCaseSensitive(backend, "address")->valuestring;

			snprintf(where, sizeof(where), strchr(addr, ':') ? "[%s]:%d" : "%s:%d",
				 addr, cJSON_GetObjectItemCaseSensitive(backend, "port")->valueint);
			printf("    -> %-40s %.0f connections\n", where,
			       cJSON_GetObjectItemCaseSensitive(backend, "connections")
				       ->valuedouble);
		}
	}
}

int cmd_ctl_services(struct ctl *ctl)
{
	struct maps maps = { -1, -1, -1, -1 };
	cJSON *json, *list, *names = NULL;
	int ret = CTL_EXIT_FAILED, err;

	json = cJSON_CreateObject();
	list = json ? cJSON_AddArrayToObject(json, "servicePorts") : NULL;
	if (!list) {
		ctl_error(ctl, "out of memory");
		goto out;
	}
	maps.svc = velo_map_pin_open(&ctl->paths, VELO_MAP_SVC);
	if (maps.svc != -ENOENT) {
		if (maps.svc < 0) {
			ctl_error(ctl, "open %s/%s: %s", ctl->paths.bpffs_dir, VELO_MAP_SVC,
				  strerror(-maps.svc));
			goto out;
		}
		maps.be = velo_map_pin_open(&ctl->paths, VELO_MAP_SVC_BE);
		maps.cnt = velo_map_pin_open(&ctl->paths, VELO_MAP_SVC_CNT);
		maps.bc = velo_map_pin_open(&ctl->paths, VELO_MAP_SVC_BC);
		if (maps.be < 0) {
			ctl_error(ctl, "open %s/%s: %s", ctl->paths.bpffs_dir, VELO_MAP_SVC_BE,
				  strerror(-maps.be));
			goto out;
		}
		names = read_names(ctl);
		err = ports_json(&maps, names, list);
		if (err) {
			ctl_error(ctl, "read %s: %s", VELO_MAP_SVC, strerror(-err));
			goto out;
		}
	} /* else: velod has written no service yet: nothing to list */
	if (ctl->json) {
		ret = ctl_print_json(ctl, json) ? CTL_EXIT_FAILED : CTL_EXIT_OK;
		json = NULL;
	} else {
		print_text(json);
		ret = CTL_EXIT_OK;
	}
out:
	cJSON_Delete(json);
	cJSON_Delete(names);
	if (maps.svc >= 0)
		close(maps.svc);
	if (maps.be >= 0)
		close(maps.be);
	if (maps.cnt >= 0)
		close(maps.cnt);
	if (maps.bc >= 0)
		close(maps.bc);
	return ret;
}
