// SPDX-License-Identifier: Apache-2.0
/* The services part of velod's /metrics (services_metrics.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "datapath/svc_bpf.h"
#include "datapath/svc_table.h"
#include "k8s/k8s_services.h"
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

/* The Service and EndpointSlice watches, one series per resource and counter. */
static void put_watches(struct k8s_watch_set *watch, FILE *text)
{
	static const char *const metrics[][3] = {
		{ "velo_k8s_service_objects", "gauge", "Objects the watch keeps." },
		{ "velo_k8s_service_lists_total", "counter",
		  "Complete LISTs, the first and relists." },
		{ "velo_k8s_service_relists_total", "counter",
		  "LISTs after the first (410 Gone)." },
		{ "velo_k8s_service_watch_events_total", "counter",
		  "Watch events received, bookmarks included." },
		{ "velo_k8s_service_errors_total", "counter",
		  "Failed LISTs and watches, objects velod could not use." },
	};
	struct k8s_watch_stats stats[K8S_SERVICES_WATCHES];
	const char *names[K8S_SERVICES_WATCHES];

	for (unsigned i = 0; i < K8S_SERVICES_WATCHES; i++)
		names[i] = k8s_watch_set_stats(watch, i, &stats[i]);
	for (unsigned m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		fprintf(text, "# HELP %s %s\n# TYPE %s %s\n", metrics[m][0], metrics[m][2],
			metrics[m][0], metrics[m][1]);
		for (unsigned i = 0; i < K8S_SERVICES_WATCHES; i++) {
			const uint64_t values[] = { stats[i].objects, stats[i].lists,
						    stats[i].relists, stats[i].events,
						    stats[i].errors };

			fprintf(text, "%s{resource=\"%s\"} %llu\n", metrics[m][0], names[i],
				(unsigned long long)values[m]);
		}
	}
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
		"# HELP velo_services_syncs_total Versions of servicesFile read, or writes of "
		"the API's state.\n"
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
	if (services->watch)
		put_watches(services->watch, text);
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
