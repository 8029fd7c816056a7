/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The per-socket reverse state of service translation, shared by the
 * sock_addr programs (bpf/cgroup_sock_addr.bpf.c, which write it) and the
 * socket iterator (bpf/iter_tcp.bpf.c, which reads it): pinned by name, so
 * both objects use the one map.
 */
#ifndef VELO_BPF_SVC_SOCK_H
#define VELO_BPF_SVC_SOCK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/velo_svc.h"

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct velo_svc_sock);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_svc_sk_v2 SEC(".maps");

#endif
