// SPDX-License-Identifier: Apache-2.0
/*
 * bench/svc_sync.sh's driver: the time velod's services sync takes for a
 * large services file, and for the same file with one endpoint changed. Each
 * sync is what velod does when servicesFile changes: parse the file, build
 * the node's service table, write it with velo_svc_maps_sync. The maps are
 * BPF hash maps of the pinned maps' types and sizes, created here and never
 * pinned (they go when the driver exits). No traffic, no namespaces.
 *
 * Usage (root): svc_sync [-s SERVICES] [-b BACKENDS_PER_SERVICE] [-r CHANGES]
 * Prints CSV: phase,rep,parse_ms,build_ms,maps_ms,total_ms,cpu_ms,added,changed,removed,
 * unchanged (cpu_ms: the process's user and system time over the whole sync).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "datapath/svc_maps.h"

struct text {
	char *buf;
	size_t len, cap;
};

static int append(struct text *text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int append(struct text *text, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(text->buf + text->len, text->cap - text->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (text->len + (size_t)n < text->cap)
			break;
		text->cap = text->cap * 2 + (size_t)n + 1;
		text->buf = realloc(text->buf, text->cap);
		if (!text->buf)
			return -ENOMEM;
	}
	text->len += (size_t)n;
	return 0;
}

/*
 * The services file: services svc-N (ClusterIP 10.96.N/256.N%256, TCP 80 named
 * http), each with one EndpointSlice of per endpoints (10.244.K/256.K%256:8080).
 * variant moves the second endpoint of the middle service to 10.245.0.variant.
 */
static int services_file(unsigned services, unsigned per, unsigned variant, struct text *text)
{
	int ret;

	text->len = 0;
	ret = append(text, "{\"services\": [");
	for (unsigned i = 0; !ret && i < services; i++)
		ret = append(text,
			     "%s{\"metadata\": {\"name\": \"svc-%u\", \"namespace\": \"bench\"},"
			     " \"spec\": {\"clusterIPs\": [\"10.96.%u.%u\"], \"ports\": [{\"name\":"
			     " \"http\", \"protocol\": \"TCP\", \"port\": 80}]}}",
			     i ? ", " : "", i, i / 256, i % 256);
	if (!ret)
		ret = append(text, "], \"endpointSlices\": [");
	for (unsigned i = 0; !ret && i < services; i++) {
		ret = append(text,
			     "%s{\"metadata\": {\"name\": \"svc-%u-a\", \"namespace\": \"bench\","
			     " \"labels\": {\"kubernetes.io/service-name\": \"svc-%u\"}},"
			     " \"addressType\": \"IPv4\", \"ports\": [{\"name\": \"http\","
			     " \"protocol\": \"TCP\", \"port\": 8080}], \"endpoints\": [",
			     i ? ", " : "", i, i);
		for (unsigned j = 0; !ret && j < per; j++) {
			unsigned k = i * per + j;

			if (variant && i == services / 2 && j == 1)
				ret = append(text, "%s{\"addresses\": [\"10.245.0.%u\"]}",
					     j ? ", " : "", variant);
			else
				ret = append(text, "%s{\"addresses\": [\"10.%u.%u.%u\"]}",
					     j ? ", " : "", 244 + k / 65536, k / 256 % 256,
					     k % 256);
		}
		if (!ret)
			ret = append(text, "]}");
	}
	if (!ret)
		ret = append(text, "]}");
	return ret;
}

static double clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int map(const char *name, size_t key, size_t value, unsigned max)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, name, key, value, max, NULL);

	return fd < 0 ? -errno : fd;
}

/*
 * One sync of text, as velod's sync_file and write_table do it; one CSV line.
 * written: what the last sync wrote (velod keeps it); NULL: the maps are read
 * back, as after velod starts.
 */
static int sync_once(const struct velo_svc_bpf *bpf, struct velo_svc_written *written,
		     const struct text *text, const char *phase, unsigned rep)
{
	struct velo_svc_state state;
	struct velo_svc_table table;
	struct velo_svc_sync sync;
	double t0, t1, t2, t3, cpu0;
	char why[256] = "";
	int ret;

	cpu0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	t0 = clock_ms(CLOCK_MONOTONIC);
	ret = velo_svc_state_parse(text->buf, text->len, &state, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "svc_sync: parse: %s\n", why);
		return ret;
	}
	t1 = clock_ms(CLOCK_MONOTONIC);
	ret = velo_svc_table_build(&state, "bench", &table);
	velo_svc_state_free(&state);
	if (ret)
		return ret;
	t2 = clock_ms(CLOCK_MONOTONIC);
	ret = velo_svc_maps_update(bpf, &table, written, &sync);
	velo_svc_sync_free(&sync);
	t3 = clock_ms(CLOCK_MONOTONIC);
	cpu0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	velo_svc_table_free(&table);
	if (ret) {
		fprintf(stderr, "svc_sync: sync: %s\n", strerror(-ret));
		return ret;
	}
	printf("%s,%u,%.2f,%.2f,%.2f,%.2f,%.2f,%u,%u,%u,%u\n", phase, rep, t1 - t0, t2 - t1,
	       t3 - t2, t3 - t0, cpu0, sync.added, sync.changed, sync.removed, sync.unchanged);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned services = 10000, per = 5, changes = 5;
	struct velo_svc_bpf bpf = { .aff_fd = -1, .sk_fd = -1 };
	struct velo_svc_written written = {};
	struct text text = {};
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "s:b:r:")) != -1) {
		switch (opt) {
		case 's':
			services = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'b':
			per = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			changes = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: svc_sync [-s SERVICES] [-b PER] [-r CHANGES]\n");
			return 2;
		}
	}
	if (!services || services > 65535 || !per || per > 1000 || changes > 200) {
		fprintf(stderr, "svc_sync: bad sizes\n");
		return 2;
	}
	bpf.svc_fd = map("velobench_svc", sizeof(struct velo_svc_key), sizeof(struct velo_svc),
			 VELO_MAX_SVC);
	bpf.be_fd = map("velobench_be", sizeof(struct velo_svc_be_key), sizeof(struct velo_svc_be),
			VELO_MAX_SVC_BE);
	bpf.cnt_fd = map("velobench_cnt", sizeof(struct velo_svc_key),
			 sizeof(struct velo_svc_counters), VELO_MAX_SVC);
	bpf.bc_fd =
		map("velobench_bc", sizeof(struct velo_svc_bc_key), sizeof(__u64), VELO_MAX_SVC_BE);
	if (bpf.svc_fd < 0 || bpf.be_fd < 0 || bpf.cnt_fd < 0 || bpf.bc_fd < 0) {
		fprintf(stderr, "svc_sync: map create: %s (root?)\n", strerror(EPERM));
		return 1;
	}
	printf("phase,rep,parse_ms,build_ms,maps_ms,total_ms,cpu_ms,added,changed,removed,"
	       "unchanged\n");
	ret = services_file(services, per, 0, &text);
	if (!ret)
		ret = sync_once(&bpf, &written, &text, "full", 1);
	if (!ret)
		ret = sync_once(&bpf, &written, &text, "same", 1);
	/*
	 * One endpoint moves there and back: every sync changes one backend set.
	 * First as velod syncs (from what it wrote last), then reading the maps
	 * back (velod's first sync after a restart; every sync before issue 31).
	 */
	for (unsigned rep = 1; !ret && rep <= 2 * changes; rep++) {
		bool cold = rep > changes;

		ret = services_file(services, per, rep % 2 ? 1 + rep : 0, &text);
		if (!ret)
			ret = sync_once(&bpf, cold ? NULL : &written, &text,
					cold ? "one-change-read-back" : "one-change",
					cold ? rep - changes : rep);
	}
	velo_svc_written_free(&written);
	free(text.buf);
	close(bpf.svc_fd);
	close(bpf.be_fd);
	close(bpf.cnt_fd);
	close(bpf.bc_fd);
	return ret ? 1 : 0;
}
