// SPDX-License-Identifier: Apache-2.0
/* The services part of velod's /metrics (services_metrics.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "datapath/svc_bpf.h"
#include "datapath/svc_table.h"
#include "services_metrics.h"

/* Service ports with their own series; the rest are counted in one series. */
#define MAX_SERVICE_SERIES 2000

/* "ns/name:port/proto" into its service and port labels. */
static void split_name(const char *name, char *service, size_t service_len, char *port,
		       size_t port_len)
{
	const char *colon = strrchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);

	snprintf(service, service_len, "%.*s", (int)len, name);
	snprintf(port, port_len, "%s", colon ? colon + 1 : "");
}

char *services_metrics(const struct services *services, const struct agent_config *config)
{
	char *out = NULL, service[VELO_SVC_ENTRY_NAME_MAX], port[VELO_K8S_PORT_NAME_MAX + 8];
	struct velo_svc_counters sum;
	struct velo_svc_bpf bpf;
	unsigned dropped = 0;
	size_t len = 0;
	FILE *text;

	if (config->services_source == SERVICES_NONE)
		return NULL;
	text = open_memstream(&out, &len);
	if (!text)
		return NULL;
	fprintf(text,
		"# HELP velo_services_ports Service ports (ClusterIP x port) in the maps.\n"
		"# TYPE velo_services_ports gauge\nvelo_services_ports %u\n",
		services->entries);
	fprintf(text,
		"# HELP velo_services_backends Backends over all service ports.\n"
		"# TYPE velo_services_backends gauge\nvelo_services_backends %u\n",
		services->backends);
	fprintf(text,
		"# HELP velo_services_syncs_total Versions of servicesFile read.\n"
		"# TYPE velo_services_syncs_total counter\nvelo_services_syncs_total %llu\n",
		(unsigned long long)services->syncs);
	fprintf(text,
		"# HELP velo_services_closed_total Connections to removed backends closed "
		"(bpf_sock_destroy).\n# TYPE velo_services_closed_total counter\n"
		"velo_services_closed_total %llu\n",
		(unsigned long long)services->reaped);
	fprintf(text,
		"# HELP velo_services_errors_total Unreadable or bad servicesFile, maps not "
		"writable.\n# TYPE velo_services_errors_total counter\n"
		"velo_services_errors_total %llu\n",
		(unsigned long long)services->errors);
	if (services->entries && !velo_svc_bpf_open_pinned(&config->paths, &bpf)) {
		fprintf(text, "# HELP velo_service_translations_total Connects and datagrams an "
			      "opted-in pod sent to a backend of the service port.\n"
			      "# TYPE velo_service_translations_total counter\n");
		for (int pass = 0; pass < 2; pass++) {
			if (pass)
				fprintf(text,
					"# HELP velo_service_refused_total Connects and sends "
					"refused: the service port had no endpoints.\n"
					"# TYPE velo_service_refused_total counter\n");
			for (unsigned i = 0; i < services->entries; i++) {
				const struct service_port *p = &services->ports[i];
				char vip[INET6_ADDRSTRLEN];

				if (i >= MAX_SERVICE_SERIES) {
					dropped += !pass;
					continue;
				}
				memset(&sum, 0, sizeof(sum));
				bpf_map_lookup_elem(bpf.cnt_fd, &p->key, &sum);
				split_name(p->name, service, sizeof(service), port, sizeof(port));
				/* Names come from the API's DNS-label rules: nothing to escape. */
				fprintf(text,
					"%s{service=\"%s\",port=\"%s\",cluster_ip=\"%s\"} %llu\n",
					pass ? "velo_service_refused_total"
					     : "velo_service_translations_total",
					service, port,
					velo_svc_addr_text(p->key.addr, vip, sizeof(vip)),
					(unsigned long long)(pass ? sum.refused
								  : sum.translations));
			}
		}
		velo_svc_bpf_close(&bpf);
		fprintf(text,
			"# HELP velo_service_series_dropped Service ports without their own series "
			"(more than %u).\n# TYPE velo_service_series_dropped gauge\n"
			"velo_service_series_dropped %u\n",
			MAX_SERVICE_SERIES, dropped);
	}
	if (fclose(text)) {
		free(out);
		return NULL;
	}
	return out;
}
