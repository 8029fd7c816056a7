// SPDX-License-Identifier: Apache-2.0
/* The TCP and UDP socket iterators that close sockets connected to gone backends (svc_reap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "base/log.h"
#include "datapath/svc_reap.h"
#include "net/netns.h"
#include "iter_tcp.skel.h"

struct velo_svc_reap {
	struct iter_tcp *skel;
	struct bpf_link *link, *udp_link;
};

int velo_svc_reap_open(const struct velo_paths *paths, struct velo_svc_reap **out)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = paths->bpffs_dir);
	struct velo_svc_reap *reap = calloc(1, sizeof(*reap));
	int ret;

	if (!reap)
		return -ENOMEM;
	reap->skel = iter_tcp__open_opts(&opts);
	if (!reap->skel) {
		ret = -errno;
		free(reap);
		return ret;
	}
	ret = iter_tcp__load(reap->skel);
	if (!ret) {
		reap->link = bpf_program__attach_iter(reap->skel->progs.velo_svc_reap, NULL);
		reap->udp_link = reap->link ? bpf_program__attach_iter(
						      reap->skel->progs.velo_svc_reap_udp, NULL)
					    : NULL;
		if (!reap->link || !reap->udp_link)
			ret = -errno;
	}
	if (ret) {
		velo_svc_reap_close(reap);
		return ret;
	}
	*out = reap;
	return 0;
}

/* Reads an iterator to its end in the current netns: the program runs once per socket. */
static int run_here(struct bpf_link *link)
{
	char buf[256];
	ssize_t n;
	int fd = bpf_iter_create(bpf_link__fd(link));

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0 ? -errno : 0;
}

int velo_svc_reap_run(struct velo_svc_reap *reap, const struct velo_svc_bc_key *gone,
		      unsigned n_gone, char *const *netns, unsigned n_netns)
{
	int gone_fd = bpf_map__fd(reap->skel->maps.velo_svc_gone), ret = 0;
	__u64 before = reap->skel->bss->destroyed;
	__u8 one = 1;

	for (unsigned i = 0; i < n_gone; i++)
		if (bpf_map_update_elem(gone_fd, &gone[i], &one, BPF_ANY))
			ret = -errno;
	/* The iterator walks the sockets of the netns it is created in. */
	for (unsigned i = 0; !ret && i < n_netns; i++) {
		struct netns_guard guard;
		bool had_error = cni_error_is_set();

		if (netns_enter(netns[i], &guard)) {
			if (!had_error)
				cni_error_reset(); /* a pod that went away meanwhile */
			continue;
		}
		ret = run_here(reap->link);
		if (!ret)
			ret = run_here(reap->udp_link);
		netns_leave(&guard);
	}
	for (unsigned i = 0; i < n_gone; i++)
		bpf_map_delete_elem(gone_fd, &gone[i]);
	return ret ? ret : (int)(reap->skel->bss->destroyed - before);
}

void velo_svc_reap_close(struct velo_svc_reap *reap)
{
	if (!reap)
		return;
	bpf_link__destroy(reap->udp_link);
	bpf_link__destroy(reap->link);
	iter_tcp__destroy(reap->skel);
	free(reap);
}
