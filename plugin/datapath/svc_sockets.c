// SPDX-License-Identifier: Apache-2.0
/* The translated TCP sockets, read with a TCP socket iterator per netns (svc_sockets.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "datapath/pins.h"
#include "datapath/svc_sockets.h"
#include "net/netns.h"
#include "iter_svc_sk.skel.h"

struct rec_buf {
	char *data;
	size_t len, cap;
};

/* Appends all one iterator instance writes; a read may end mid-record, the whole is aligned. */
static int read_all(int fd, struct rec_buf *buf)
{
	ssize_t got;

	for (;;) {
		if (buf->cap - buf->len < 4096) {
			size_t cap = buf->cap ? buf->cap * 2 : 16384;
			char *grown = realloc(buf->data, cap);

			if (!grown)
				return -ENOMEM;
			buf->data = grown;
			buf->cap = cap;
		}
		got = read(fd, buf->data + buf->len, buf->cap - buf->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			return 0;
		buf->len += (size_t)got;
	}
}

/* The iterator walks the sockets of the netns its instance is created in. */
static int read_netns(struct bpf_link *link, const char *netns, struct rec_buf *buf)
{
	bool had_error = cni_error_is_set();
	struct netns_guard guard;
	int fd, ret;

	if (netns_enter(netns, &guard)) {
		if (!had_error)
			cni_error_reset(); /* a pod that went away meanwhile */
		return 0;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	ret = fd < 0 ? -errno : read_all(fd, buf);
	if (fd >= 0)
		close(fd);
	netns_leave(&guard);
	return ret;
}

int velo_svc_sockets_read(const struct velo_paths *paths, char *const *netns, size_t n_netns,
			  struct velo_svc_sk_rec **out, size_t *n)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = paths->bpffs_dir);
	struct iter_svc_sk *skel = NULL;
	struct bpf_link *link = NULL;
	struct rec_buf buf = { 0 };
	int map_fd, ret = 0;

	*out = NULL;
	*n = 0;
	/* Only an existing map is reused: loading with pin_root_path would create and pin one. */
	map_fd = velo_map_pin_open(paths, VELO_MAP_SVC_SK);
	if (map_fd < 0)
		return map_fd;
	close(map_fd);
	skel = iter_svc_sk__open_opts(&opts);
	if (!skel)
		return -errno;
	ret = iter_svc_sk__load(skel);
	if (!ret) {
		link = bpf_program__attach_iter(skel->progs.velo_svc_sk_dump, NULL);
		if (!link)
			ret = -errno;
	}
	for (size_t i = 0; !ret && i < n_netns; i++)
		ret = read_netns(link, netns[i], &buf);
	bpf_link__destroy(link);
	iter_svc_sk__destroy(skel);
	if (ret) {
		free(buf.data);
		return ret;
	}
	*out = (struct velo_svc_sk_rec *)buf.data;
	*n = buf.len / sizeof(**out);
	return 0;
}
