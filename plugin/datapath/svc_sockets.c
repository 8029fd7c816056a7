// SPDX-License-Identifier: Apache-2.0
/* The translated TCP sockets, read with an sk_storage map iterator (svc_sockets.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "datapath/bpf_pins.h"
#include "datapath/svc_sockets.h"
#include "iter_svc_sk.skel.h"

/* All the iterator writes; its records are whole only at the end (a read may split one). */
static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 0;
	ssize_t got;

	*buf = NULL;
	*len = 0;
	for (;;) {
		if (cap - *len < 4096) {
			char *grown = realloc(*buf, cap ? cap * 2 : 16384);

			if (!grown)
				return -ENOMEM;
			*buf = grown;
			cap = cap ? cap * 2 : 16384;
		}
		got = read(fd, *buf + *len, cap - *len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			return 0;
		*len += (size_t)got;
	}
}

int velo_svc_sockets_read(const struct velo_paths *paths, struct velo_svc_sk_rec **out, size_t *n)
{
	union bpf_iter_link_info info = { 0 };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));
	struct iter_svc_sk *skel = NULL;
	struct bpf_link *link = NULL;
	int map_fd, iter_fd = -1, ret;
	char *buf = NULL;
	size_t len = 0;

	*out = NULL;
	*n = 0;
	map_fd = velo_map_pin_open(paths, VELO_MAP_SVC_SK);
	if (map_fd < 0)
		return map_fd;
	skel = iter_svc_sk__open_and_load();
	if (!skel) {
		ret = -errno;
		goto out;
	}
	info.map.map_fd = (__u32)map_fd;
	link = bpf_program__attach_iter(skel->progs.velo_svc_sk_dump, &opts);
	if (!link) {
		ret = -errno;
		goto out;
	}
	iter_fd = bpf_iter_create(bpf_link__fd(link));
	if (iter_fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = read_all(iter_fd, &buf, &len);
	if (!ret) {
		*out = (struct velo_svc_sk_rec *)buf;
		*n = len / sizeof(**out);
		buf = NULL;
	}
out:
	free(buf);
	if (iter_fd >= 0)
		close(iter_fd);
	bpf_link__destroy(link);
	iter_svc_sk__destroy(skel);
	close(map_fd);
	return ret;
}
