// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl sockets: the TCP connections the socket short-circuit holds
 * (docs/sockmap.md). Every socket sock_ops put in the sockhash is a key
 * there, as its own end sees the connection; a connection is accelerated
 * when its peer's key is there too. Pods are named from the endpoint
 * records, by address, and confirmed by the netns cookie velo keeps per
 * opted-in address. Whether a direction's first send raced the peer's
 * insertion (and stays routed) lives in per-socket storage that userspace
 * can't read by key: the pass_first counter says how often that happened.
 * A connection an opted-in pod made through a Service names the ClusterIP
 * it dialled (the connect program's reverse state, read with an sk_storage
 * map iterator: datapath/svc_sockets.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/lib/velo_sockmap.h"
#include "datapath/loader.h"
#include "datapath/pod_counters.h"
#include "datapath/sockmap_stats.h"
#include "datapath/svc_sockets.h"
#include "cmd_endpoints.h"
#include "cmd_sockets.h"
#include "ctl.h"

struct socket_scan {
	struct velo_sm_key *keys;
	size_t n;
	int pods_fd; /* velo_smpod_v1, -1 when missing */
	cJSON *endpoints; /* ctl_endpoints_json */
	struct velo_svc_sk_rec *svc; /* sockets connect translated */
	size_t n_svc;
};

static int compare_keys(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct velo_sm_key));
}

/* Every key of the sockhash, sorted (a socket closing meanwhile just ends the walk early). */
static int read_keys(int fd, struct socket_scan *scan)
{
	struct velo_sm_key key, *prev = NULL;
	size_t cap = 0;
	int ret;

	while (!(ret = bpf_map_get_next_key(fd, prev, &key))) {
		if (scan->n == cap) {
			struct velo_sm_key *grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(scan->keys, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			scan->keys = grown;
		}
		scan->keys[scan->n] = key;
		prev = &scan->keys[scan->n++];
		if (scan->n > VELO_MAX_SOCKETS)
			break; /* keys that keep changing under the walk: show what was seen */
	}
	if (ret && ret != -ENOENT && scan->n == 0)
		return ret;
	if (scan->n)
		qsort(scan->keys, scan->n, sizeof(*scan->keys), compare_keys);
	return 0;
}

/* The sockhash key of the connection's other end, when its address is an opted-in pod's. */
static bool peer_key(const struct socket_scan *scan, const struct velo_sm_key *key,
		     struct velo_sm_key *peer)
{
	struct velo_sm_pod pod;

	if (scan->pods_fd < 0 || bpf_map_lookup_elem(scan->pods_fd, key->remote, &pod))
		return false;
	memset(peer, 0, sizeof(*peer));
	memcpy(peer->local, key->remote, sizeof(peer->local));
	memcpy(peer->remote, key->local, sizeof(peer->remote));
	peer->local_port = key->remote_port;
	peer->remote_port = key->local_port;
	peer->netns_cookie = pod.netns_cookie;
	return true;
}

static bool has_key(const struct socket_scan *scan, const struct velo_sm_key *key)
{
	return bsearch(key, scan->keys, scan->n, sizeof(*key), compare_keys) != NULL;
}

/* "10.0.0.2" for a v4-mapped address, else the IPv6 text. */
static void addr_text(const __u8 addr[16], char *buf, size_t len)
{
	static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(addr, v4_mapped, sizeof(v4_mapped)))
		inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
}

/* "namespace/name" of the endpoint holding address; "-" when no record has it. */
static void pod_of(const struct socket_scan *scan, const char *address, char *buf, size_t len)
{
	const cJSON *endpoint, *ip;
	size_t n = strlen(address);

	snprintf(buf, len, "-");
	cJSON_ArrayForEach (endpoint, scan->endpoints) {
		cJSON_ArrayForEach (ip, cJSON_GetObjectItemCaseSensitive(endpoint, "ips")) {
			const cJSON *ns, *name;

			/* Records keep "address/prefix". */
			if (!cJSON_IsString(ip) || strncmp(ip->valuestring, address, n) ||
			    ip->valuestring[n] != '/')
				continue;
			ns = cJSON_GetObjectItemCaseSensitive(endpoint, "podNamespace");
			name = cJSON_GetObjectItemCaseSensitive(endpoint, "podName");
			snprintf(buf, len, "%s/%s", cJSON_IsString(ns) ? ns->valuestring : "-",
				 cJSON_IsString(name) ? name->valuestring : "-");
			return;
		}
	}
}

static cJSON *end_json(const struct socket_scan *scan, const __u8 addr[16], __u32 port)
{
	char address[INET6_ADDRSTRLEN], pod[520];
	cJSON *out = cJSON_CreateObject();

	addr_text(addr, address, sizeof(address));
	pod_of(scan, address, pod, sizeof(pod));
	if (!out || !cJSON_AddStringToObject(out, "pod", pod) ||
	    !cJSON_AddStringToObject(out, "address", address) ||
	    !cJSON_AddNumberToObject(out, "port", port)) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

/* The VIP the socket with this key dialled, if connect translated it. */
static const struct velo_svc_sk_rec *svc_of(const struct socket_scan *scan,
					    const struct velo_sm_key *key)
{
	for (size_t i = 0; i < scan->n_svc; i++) {
		const struct velo_svc_sk_rec *rec = &scan->svc[i];

		if (rec->netns_cookie == key->netns_cookie && rec->local_port == key->local_port &&
		    rec->remote_port == key->remote_port &&
		    !memcmp(rec->local, key->local, sizeof(rec->local)) &&
		    !memcmp(rec->remote, key->remote, sizeof(rec->remote)))
			return rec;
	}
	return NULL;
}

/* "service": {"clusterIP", "port"} on conn when either end came through one. */
static int add_service(const struct socket_scan *scan, cJSON *conn, const struct velo_sm_key *key,
		       const struct velo_sm_key *peer)
{
	const struct velo_svc_sk_rec *rec = svc_of(scan, key);
	char address[INET6_ADDRSTRLEN];
	cJSON *svc;

	if (!rec && peer)
		rec = svc_of(scan, peer);
	if (!rec)
		return 0;
	addr_text(rec->peer.vip, address, sizeof(address));
	svc = cJSON_AddObjectToObject(conn, "service");
	if (!svc || !cJSON_AddStringToObject(svc, "clusterIP", address) ||
	    !cJSON_AddNumberToObject(svc, "port", ntohs(rec->peer.vip_port)))
		return -ENOMEM;
	return 0;
}

/* The translated sockets of every pod with an endpoint record (its "netns"). */
static int read_services(const struct ctl *ctl, struct socket_scan *scan)
{
	size_t n = (size_t)cJSON_GetArraySize(scan->endpoints), n_netns = 0;
	char **netns = calloc(n ? n : 1, sizeof(*netns));
	const cJSON *endpoint;
	int ret;

	if (!netns)
		return -ENOMEM;
	cJSON_ArrayForEach (endpoint, scan->endpoints) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(endpoint, "netns");

		if (cJSON_IsString(path) && path->valuestring[0] && n_netns < n)
			netns[n_netns++] = path->valuestring;
	}
	ret = velo_svc_sockets_read(&ctl->paths, netns, n_netns, &scan->svc, &scan->n_svc);
	free(netns);
	return ret;
}

/*
 * One entry per connection: both ends in the sockhash (accelerated), listed
 * once from the end whose key sorts first, or one end only (its peer closed,
 * or isn't in yet).
 */
static int connections_json(const struct socket_scan *scan, cJSON *list)
{
	for (size_t i = 0; i < scan->n; i++) {
		const struct velo_sm_key *key = &scan->keys[i];
		struct velo_sm_key peer;
		bool both = peer_key(scan, key, &peer) && has_key(scan, &peer);
		cJSON *conn;

		if (both && compare_keys(&peer, key) < 0)
			continue; /* listed from the peer's key */
		conn = cJSON_CreateObject();
		if (!conn ||
		    !cJSON_AddItemToObject(conn, "local",
					   end_json(scan, key->local, key->local_port)) ||
		    !cJSON_AddItemToObject(conn, "peer",
					   end_json(scan, key->remote, key->remote_port)) ||
		    !cJSON_AddBoolToObject(conn, "accelerated", both) ||
		    add_service(scan, conn, key, both ? &peer : NULL)) {
			cJSON_Delete(conn);
			return -ENOMEM;
		}
		cJSON_AddItemToArray(list, conn);
	}
	return 0;
}

/* velo_smstat_v2 summed over CPUs; {} when the map isn't pinned. */
static cJSON *counters_json(const struct ctl *ctl)
{
	int fd = velo_map_pin_open(&ctl->paths, VELO_MAP_SM_STATS);
	cJSON *out = cJSON_CreateObject();
	uint64_t sum;

	for (__u32 stat = 0; fd >= 0 && out && stat < VELO_SM_STAT_MAX; stat++)
		if (!velo_percpu_u64_sum(fd, stat, &sum))
			cJSON_AddNumberToObject(out, velo_sm_stat_names[stat], (double)sum);
	if (fd >= 0)
		close(fd);
	return out;
}

static void print_text(const cJSON *json)
{
	const cJSON *conn, *counters = cJSON_GetObjectItemCaseSensitive(json, "counters");
	unsigned accelerated = 0, one_end = 0;
	const cJSON *counter;
	char local[80], peer[80];

	printf("%-28s %-22s %-28s %-22s %-22s %s\n", "POD", "ADDRESS", "PEER POD", "PEER ADDRESS",
	       "VIA SERVICE", "STATE");
	cJSON_ArrayForEach (conn, cJSON_GetObjectItemCaseSensitive(json, "connections")) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(conn, "local");
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(conn, "peer");
		const cJSON *svc = cJSON_GetObjectItemCaseSensitive(conn, "service");
		bool both = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(conn, "accelerated"));
		char via[80] = "-";
		const char *la = cJSON_GetObjectItemCaseSensitive(l, "address")->valuestring;
		const char *pa = cJSON_GetObjectItemCaseSensitive(p, "address")->valuestring;

		snprintf(local, sizeof(local), strchr(la, ':') ? "[%s]:%d" : "%s:%d", la,
			 cJSON_GetObjectItemCaseSensitive(l, "port")->valueint);
		snprintf(peer, sizeof(peer), strchr(pa, ':') ? "[%s]:%d" : "%s:%d", pa,
			 cJSON_GetObjectItemCaseSensitive(p, "port")->valueint);
		if (svc) {
			const char *va =
				cJSON_GetObjectItemCaseSensitive(svc, "clusterIP")->valuestring;

			snprintf(via, sizeof(via), strchr(va, ':') ? "[%s]:%d" : "%s:%d", va,
				 cJSON_GetObjectItemCaseSensitive(svc, "port")->valueint);
		}
		printf("%-28s %-22s %-28s %-22s %-22s %s\n",
		       cJSON_GetObjectItemCaseSensitive(l, "pod")->valuestring, local,
		       cJSON_GetObjectItemCaseSensitive(p, "pod")->valuestring, peer, via,
		       both ? "accelerated" : "one end (peer closed or not in yet)");
		if (both)
			accelerated++;
		else
			one_end++;
	}
	printf("\n%u accelerated, %u with one end in the sockhash. Since load:", accelerated,
	       one_end);
	cJSON_ArrayForEach (counter, counters)
		printf(" %s %.0f", counter->string, counter->valuedouble);
	printf("\n");
}

int cmd_ctl_sockets(struct ctl *ctl)
{
	struct socket_scan scan = { .pods_fd = -1 };
	cJSON *json = NULL, *list;
	int fd, err, ret = CTL_EXIT_FAILED;

	json = cJSON_CreateObject();
	list = json ? cJSON_AddArrayToObject(json, "connections") : NULL;
	if (!list) {
		ctl_error(ctl, "out of memory");
		goto out;
	}
	fd = velo_map_pin_open(&ctl->paths, VELO_MAP_SOCKHASH);
	if (fd == -ENOENT) {
		/* No pod opted in since the bpffs was mounted: nothing to list. */
	} else if (fd < 0) {
		ctl_error(ctl, "open %s/%s: %s", ctl->paths.bpffs_dir, VELO_MAP_SOCKHASH,
			  strerror(-fd));
		goto out;
	} else {
		err = read_keys(fd, &scan);
		close(fd);
		if (err) {
			ctl_error(ctl, "read %s: %s", VELO_MAP_SOCKHASH, strerror(-err));
			goto out;
		}
		scan.pods_fd = velo_map_pin_open(&ctl->paths, VELO_MAP_SM_PODS);
		scan.endpoints = ctl_endpoints_json(ctl, &err);
		if (scan.endpoints && (err = read_services(ctl, &scan)) && err != -ENOENT)
			/* The connections are still worth listing, without their Services. */
			fprintf(stderr, "veloctl: which connections came through a Service: %s\n",
				strerror(-err));
		if (!scan.endpoints || connections_json(&scan, list)) {
			ctl_error(ctl, "read endpoint records under %s: %s", ctl->paths.state_dir,
				  strerror(scan.endpoints ? ENOMEM : -err));
			goto out;
		}
	}
	if (!cJSON_AddItemToObject(json, "counters", counters_json(ctl))) {
		ctl_error(ctl, "out of memory");
		goto out;
	}
	if (ctl->json) {
		ret = ctl_print_json(ctl, json) ? CTL_EXIT_FAILED : CTL_EXIT_OK;
		json = NULL; /* freed by ctl_print_json */
	} else {
		print_text(json);
		ret = CTL_EXIT_OK;
	}
out:
	cJSON_Delete(json);
	cJSON_Delete(scan.endpoints);
	if (scan.pods_fd >= 0)
		close(scan.pods_fd);
	free(scan.keys);
	free(scan.svc);
	return ret;
}
